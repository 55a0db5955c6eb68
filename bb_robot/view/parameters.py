"""The view node's parameters: one table for the node, its docs and tests.

All are read at start-up and read-only afterwards: ``host``, ``port``, ``record`` and
``model_dirs`` decide what the process exposes and reads, so no peer on the DDS graph may
change them.
"""

from __future__ import annotations

from dataclasses import dataclass

from bb_robot.view.topics import DEFAULT_TOPICS

ParameterValue = str | int | float | bool | tuple[str, ...]


@dataclass(frozen=True)
class ViewParameter:
    """One parameter: name, default (``None``: computed at start-up), description, ROS type
    (``string``, ``integer``, ``double``, ``bool``, ``string_array``) and inclusive range."""

    name: str
    default: ParameterValue | None
    description: str
    type: str = "string"
    range: tuple[float, float] | None = None


#: The default port of the Foxglove WebSocket protocol (what Foxglove's connection dialog proposes).
DEFAULT_PORT = 8765

PARAMETERS: tuple[ViewParameter, ...] = (
    ViewParameter(
        "serve",
        True,
        "Run the Foxglove WebSocket server (false: only record, with 'record').",
        type="bool",
    ),
    ViewParameter(
        "host",
        "127.0.0.1",
        "Address the WebSocket server listens on. The server is UNAUTHENTICATED: anyone who can reach "
        "it sees the robot's topics and can fetch the mesh files in model_dirs. The default, 127.0.0.1, "
        "serves this machine only; 0.0.0.0 shares it on every network the machine is on.",
    ),
    ViewParameter(
        "port",
        DEFAULT_PORT,
        "TCP port of the WebSocket server (0: any free port, printed at start-up).",
        type="integer",
        range=(0, 65535),
    ),
    ViewParameter(
        "record",
        "",
        "MCAP file to record the bridged topics into (cdr messages, ros2msg schemas: Foxglove, "
        "mcap-ros2-support and rosbag2 read it). Empty: no recording. An existing file is not overwritten.",
    ),
    ViewParameter(
        "topics",
        DEFAULT_TOPICS,
        "ROS topics to show and record, those of them that exist (relative names follow the node's "
        "namespace). Each becomes a channel with the topic's name.",
        type="string_array",
    ),
    ViewParameter(
        "model_dirs",
        None,
        "Directories mesh files may be served from (package://, model://, file:// URIs resolve to files "
        "inside them, as the description node's model_dirs); others are refused. Default: bb_robot's models.",
        type="string_array",
    ),
    ViewParameter(
        "collision.world",
        "",
        "The driver's collision.world (an SDF world or a YAML list of obstacles, docs/collision.md): its "
        "obstacles are shown as a Foxglove scene on the channel '<namespace>/collision_world', placed as the "
        "driver's collision checker places them. Empty: none.",
    ),
    ViewParameter(
        "model",
        "",
        "The driver's model parameter (the robot's file; an SDF world places the robot in it): where "
        "collision.world's obstacles are placed, and the kinematics of the planned path. Empty: the robot "
        "comes from the robot_description topic, as the driver's does.",
    ),
    ViewParameter("model_scope", "", "With model: the driver's model_scope ('::'-separated nested model names)."),
    ViewParameter(
        "frame_prefix",
        "",
        "The description node's frame_prefix: the obstacles and the planned path are drawn in the robot's "
        "root-link frame, <frame_prefix><root link>, and run-time objects in <frame_prefix><their frame>.",
    ),
    ViewParameter(
        "planning.tip",
        "",
        "The link whose path is drawn for each plan on display_planned_path (the move_group node's "
        "planning.tip). Empty: the deepest tool frame, as the move_group node's default.",
    ),
    ViewParameter(
        "discovery_period",
        1.0,
        "Seconds between looks at the ROS graph for topics that appeared or went away.",
        type="double",
        range=(0.1, 60.0),
    ),
)
