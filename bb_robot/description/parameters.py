"""The description node's parameters: one table for the node, its launch file, its docs and tests.

``use_sim_time`` is not listed: rclpy declares it on every node.  ``source_list`` and
``model_dirs`` are read-only (set them at start-up, from YAML or ``--ros-args``): any peer on
the DDS graph can set parameters, and ``model_dirs`` is what keeps such a peer from making the
node read, or (for xacro) evaluate, an arbitrary file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bb_robot.resources import share_directories

ParameterValue = str | float | bool | tuple[str, ...] | tuple[float, ...]


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: its name, default (``None``: computed at start-up), description, and
    whether it can change while the node runs."""

    name: str
    default: ParameterValue | None
    description: str
    read_only: bool = False
    #: The ROS parameter type: "string", "double", "bool", "string_array" or "double_array".
    type: str = "string"
    #: For ``double``: the inclusive range allowed, as ``(low, high)``.
    range: tuple[float, float] | None = None


#: The highest ``publish_frequency`` accepted (Hz); above it, publishing on every message is the cap.
MAX_PUBLISH_FREQUENCY = 10000.0

PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "model",
        "",
        "Robot model to load: a URDF, xacro or SDF (model or world) file, as a path or a "
        "package:// or model:// URI. It must resolve inside one of model_dirs; a relative path is "
        "looked up in model_dirs in order. Changing it reloads the model (rejected, keeping the old "
        "model, if the new one cannot be loaded). Leave empty to use robot_description.",
    ),
    ParameterSpec(
        "model_scope",
        "",
        "SDF only: '::'-separated names of nested models, from a top-level model of the world down to "
        "the robot (e.g. 'arm_stand::ur3e'). Empty: the single model that has links and joints.",
    ),
    ParameterSpec(
        "tip_link",
        "",
        "Link at the end of the serial manipulator published on ~/serial_manipulator and whose pose "
        "goes on ~/tip_pose. Empty: the end of the robot's only chain, if it has one.",
    ),
    ParameterSpec(
        "robot_description",
        "",
        "URDF text to publish, as with robot_state_publisher (plain URDF: no xacro, no SDF). Used when "
        "model is empty; setting it while the node runs reloads.",
    ),
    ParameterSpec(
        "frame_prefix",
        "",
        "Text put in front of every frame id in /tf, /tf_static, ~/tip_pose and ~/serial_manipulator "
        "(e.g. 'left/'). It does not change topic names: use the node namespace for those.",
    ),
    ParameterSpec(
        "parent_frame",
        "",
        "Frame the robot stands in, shared by several robots (e.g. 'world'; not prefixed). Set: "
        "/tf_static also carries parent_frame -> the robot's top frame (frame_prefix + its root link, "
        "or + 'world' for a model of an SDF world) at base_pose. Empty: no such transform.",
    ),
    ParameterSpec(
        "base_pose",
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        "[x, y, z, roll, pitch, yaw] (m, rad; fixed-axis roll, pitch, yaw as URDF's <origin>) of the "
        "robot's top frame in parent_frame. Used only when parent_frame is set.",
        type="double_array",
    ),
    ParameterSpec(
        "publish_frequency",
        0.0,
        "0: publish /tf for every joint-state message. Above 0: at most this many /tf messages per "
        "second; joint states received in between are merged, none is dropped from the latest state.",
        type="double",
        range=(0.0, MAX_PUBLISH_FREQUENCY),
    ),
    ParameterSpec(
        "ignore_timestamp",
        False,
        "Stamp /tf with the node's clock at publication instead of the joint-state message's stamp "
        "(for sources that do not stamp their messages).",
        type="bool",
    ),
    ParameterSpec(
        "source_list",
        ("joint_states",),
        "sensor_msgs/JointState topics to subscribe to and merge, as joint_state_publisher's "
        "source_list (relative names follow the node namespace). Read-only.",
        read_only=True,
        type="string_array",
    ),
    ParameterSpec(
        "model_dirs",
        None,
        "Directories a model file may be loaded from (after resolving symbolic links). Default: the "
        "models/ directory of bb_robot's share directory. Read-only.",
        read_only=True,
        type="string_array",
    ),
)

PARAMETER_NAMES: frozenset[str] = frozenset(spec.name for spec in PARAMETERS)
#: Parameters whose change reloads the model.
RELOAD_PARAMETERS: frozenset[str] = frozenset({"model", "model_scope", "tip_link", "robot_description"})


def spec(name: str) -> ParameterSpec:
    """Return the specification of parameter ``name`` (``KeyError`` for an unknown one)."""
    for item in PARAMETERS:
        if item.name == name:
            return item
    raise KeyError(name)


def default_model_dirs() -> tuple[str, ...]:
    """The default ``model_dirs``: ``models/`` of the first bb_robot share directory that has one
    (an installed package, else the source tree)."""
    for directory in share_directories():
        if (directory / "models").is_dir():
            return (str((directory / "models").resolve()),)
    return (str(Path(share_directories()[0]) / "models"),)
