"""The move_group node's parameters (docs/nodes/move_group.md): one table, without ROS.

The node declares each with its description and range (:func:`bb_robot.ros.parameters.descriptor`);
all are read once, at start (``when="start"``: read-only).
"""

from __future__ import annotations

from bb_robot.common.parameters import ParameterSpec
from bb_robot.planning.validity import DRIVER_CLEARANCE

PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "model",
        "",
        "The robot file (URDF, xacro or SDF; a path, package:// or model:// URI). Empty: the robot the "
        "description node publishes on robot_description, so the planner and the driver never disagree.",
        when="start",
    ),
    ParameterSpec(
        "model_dirs",
        None,
        "Where model files, meshes, the SRDF and the world file may be read from. Default: the package's models/.",
        type="string_array",
        when="start",
    ),
    ParameterSpec(
        "collision.srdf",
        "",
        "An SRDF (groups and the allowed-collision matrix). Empty: <model>.srdf beside the model, as the driver "
        "finds it.",
        when="start",
    ),
    ParameterSpec(
        "collision.world",
        "",
        "The configured obstacles (an SDF world, obstacle YAML, a MoveIt PlanningScene YAML or .scene file), "
        "as the driver's collision.world. Empty: none. They cannot be removed at run time.",
        when="start",
    ),
    ParameterSpec(
        "collision.clearance",
        DRIVER_CLEARANCE,
        "The least distance a plan keeps between checked pairs (m): the driver's default clearance plus 1 mm, "
        "so the driver's guard accepts every plan.",
        type="double",
        when="start",
        range=(0.0, 0.1),
    ),
    ParameterSpec(
        "planning.group_name",
        "arm",
        "The name the driven chain is served under when the SRDF has no <group> (requests with an empty "
        "group_name plan it).",
        when="start",
    ),
    ParameterSpec(
        "planning.tip",
        "",
        "That group's tip link (pose goals and Cartesian paths move it when a request names no link). "
        "Empty: the deepest tool frame, as bb-robot show names the end effector.",
        when="start",
    ),
    ParameterSpec(
        "planning.timeout",
        5.0,
        "The planning time when a request's allowed_planning_time is 0 (s).",
        type="double",
        when="start",
        range=(0.01, 600.0),
    ),
    ParameterSpec(
        "planning.seed",
        0,
        "The first random seed of the search (attempt k uses seed + k): the same scene and request give the same plan.",
        type="integer",
        when="start",
    ),
    ParameterSpec(
        "planning.joint_limits_file",
        "",
        "Velocity and acceleration limits that narrow the model's: the driver's parameter file "
        "(joint_limits) or MoveIt's joint_limits.yaml. Empty: the model's limits, conservative "
        "acceleration defaults (named in the log).",
        when="start",
    ),
    ParameterSpec(
        "execution.action",
        "driver/follow_joint_trajectory",
        "The FollowJointTrajectory action that executes plans (the driver's, with all its checks).",
        when="start",
    ),
    ParameterSpec(
        "execution.server_timeout",
        5.0,
        "How long an execution waits for that action server to appear before it fails with CONTROL_FAILED (s).",
        type="double",
        when="start",
        range=(0.0, 600.0),
    ),
    ParameterSpec(
        "scene.publish_period",
        0.1,
        "The shortest time between two /monitored_planning_scene messages (s): a flood of updates is "
        "applied one by one and published at most this often.",
        type="double",
        when="start",
        range=(0.0, 10.0),
    ),
)
