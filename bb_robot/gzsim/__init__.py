"""What gz-sim 8 would do with an SDF world: which systems it declares and the topics they use.

ROS-free; sits above :mod:`bb_robot.sdf` (it reads loaded worlds) and beside :mod:`bb_robot.gz`
(the transport, which it does not import).  The driver's gazebo backend uses both.

- :mod:`bb_robot.gzsim.plugins`: which gz-sim system a ``<plugin>`` loads, and its settings;
- :mod:`bb_robot.gzsim.names`: gz-transport's valid topic names, gz-sim's scoped topics;
- :mod:`bb_robot.gzsim.topics`: the command, joint-state and clock topics of a robot's joints
  (:func:`derive_topics`), and the backend's explicit topics in their place (:func:`with_overrides`).

See ``docs/nodes/gazebo.md`` (Topic derivation rules).
"""

from bb_robot.gzsim.names import absolute_topic, as_valid_topic, scoped_topic, valid_topic
from bb_robot.gzsim.plugins import SYSTEMS, PluginError, PluginSettings, read_plugin, system_of
from bb_robot.gzsim.topics import (
    ACTUATORS,
    CLOCK,
    DOUBLE,
    FLOAT,
    INTERFACES,
    JOINT_TRAJECTORY,
    MODEL,
    CommandTopic,
    GazeboTopics,
    Interface,
    StateTopic,
    TopicError,
    derive_topics,
    parse_override,
    with_overrides,
)

__all__ = [
    "ACTUATORS",
    "CLOCK",
    "DOUBLE",
    "FLOAT",
    "INTERFACES",
    "JOINT_TRAJECTORY",
    "MODEL",
    "SYSTEMS",
    "CommandTopic",
    "GazeboTopics",
    "Interface",
    "PluginError",
    "PluginSettings",
    "StateTopic",
    "TopicError",
    "absolute_topic",
    "as_valid_topic",
    "derive_topics",
    "parse_override",
    "read_plugin",
    "scoped_topic",
    "system_of",
    "valid_topic",
    "with_overrides",
]
