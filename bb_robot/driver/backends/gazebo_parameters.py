"""The gazebo backend's own parameters (``gazebo.<name>``; all apply at configure)."""

from __future__ import annotations

from bb_robot.common.parameters import ParameterSpec
from bb_robot.common.parameters import configure_parameter as spec

GAZEBO_PARAMETERS: tuple[ParameterSpec, ...] = (
    spec(
        "gz_transport",
        "builtin",
        "The gz-transport implementation: 'builtin' (this project's client, no Gazebo library needed; "
        "diagnoses partition and type mismatches) or 'official' (Gazebo Harmonic's gz.transport13 bindings).",
    ),
    spec("partition", "", "gz-transport partition. Empty: GZ_PARTITION, else <hostname>:<username>."),
    spec("ip", "", "Host address for gz-transport (built-in client). Empty: GZ_IP, else every interface."),
    spec(
        "world_file",
        "",
        "SDF world (or model) file whose plugins give the topics. Empty: the driver's model file.",
    ),
    spec(
        "model_scope",
        "",
        "Scoped name of the robot's model in world_file. Empty: the driver's model_scope (its selection).",
    ),
    spec("world_name", "", "The world's name in Gazebo. Empty: the file's (required for a model file)."),
    spec(
        "model_name",
        "",
        "The name the top-level model was spawned under in Gazebo, if not the file's.",
    ),
    spec(
        "position_topics",
        [],
        "Explicit position command topics, 'joint=/topic' (gz.msgs.Double) or 'joint=/topic@N' "
        "(gz.msgs.Actuators position[N]); each replaces what the world gives for that joint.",
        "string_array",
    ),
    spec("velocity_topics", [], "Explicit velocity command topics (as position_topics).", "string_array"),
    spec("effort_topics", [], "Explicit effort command topics, 'joint=/topic'.", "string_array"),
    spec(
        "joint_state_topics",
        [],
        "Explicit gz.msgs.Model joint-state topics (joints by their own names); replace the derived ones.",
        "string_array",
    ),
    spec(
        "command_rate",
        0.0,
        "Rate (Hz) at which unchanged commands are sent again. 0: every control loop cycle. A changed "
        "command is always sent at once.",
        "double",
    ),
    spec(
        "silence_timeout",
        1.0,
        "Seconds without a joint state after which Gazebo counts as gone (stopped or restarted).",
        "double",
    ),
    spec(
        "require_gazebo",
        False,
        "Fail configure when Gazebo's joint states do not arrive within connect_timeout (default: "
        "configure, say so, and connect when Gazebo appears).",
        "bool",
    ),
    spec(
        "wait_at_configure",
        2.0,
        "Seconds configure waits for Gazebo's first joint states (at most connect_timeout) before going on.",
        "double",
    ),
    spec(
        "fault_on_disconnect",
        False,
        "Report a missing Gazebo (not started, stopped, restarting) as a lost connection, which puts the "
        "driver in error until ~/reset (as with hardware). Default: a warning; the driver waits and "
        "Gazebo gets the latest command when it is back.",
        "bool",
    ),
    spec("publish_clock", False, "Republish Gazebo's world clock on ROS /clock (rosgraph_msgs/Clock).", "bool"),
    spec("clock_topic", "", "Gazebo's gz.msgs.Clock topic. Empty: /world/<world>/clock."),
    spec(
        "check_limits",
        True,
        "Compare the joint limits Gazebo reports with the driver's, once per connection.",
        "bool",
    ),
)
