"""The driver node's parameters: one table for the node, its launch file, its docs and tests.

Three kinds:

- :data:`PARAMETERS`: declared when the node starts.  ``read_only`` ones are fixed from then
  on (``backend`` and ``model`` name code and files the node runs or reads, so no peer on the
  DDS graph may change them); ``when == "configure"`` ones are read at configure and
  ``"activate"`` ones at activate (a change while the node is past that state is refused);
  the others take effect at once.
- :data:`JOINT_PARAMETERS`: declared at configure, once the joints are known, for each joint
  (``<joint>`` in the name): joint-limit overrides in MoveIt's ``joint_limits.yaml`` layout
  and ``FollowJointTrajectory`` default tolerances in ros2_control's ``constraints`` layout.
- the robot model's bound parameters (``joints.<joint>.limit.lower|upper|velocity|effort``,
  ``transmissions.<actuator>.reduction|offset``; see
  :attr:`bb_robot.model.robot.Robot.param_subscriptions`), declared at configure with the
  model's values, and a backend's own parameters, declared at start-up as
  ``<backend>.<name>`` (:meth:`bb_robot.driver.backends.base.Backend.parameters`).

All of them take effect while the node runs unless said otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bb_robot.common.parameters import ParameterSpec
from bb_robot.driver.servo.servo_inputs import SERVO_PARAMETERS

PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "backend",
        "sim",
        "What moves the joints: 'sim' (the embedded kinematic simulator), another backend shipped in "
        "bb_robot.driver.backends, or 'package.module:Class' naming a Backend subclass. Read-only.",
        when="start",
    ),
    ParameterSpec(
        "model",
        "",
        "Robot model file (URDF, xacro, or an SDF model or world) to drive. Empty: the URDF published on the "
        "robot_description topic (latched), as the description node publishes it. Read-only.",
        when="start",
    ),
    ParameterSpec(
        "model_dirs",
        None,
        "Directories a relative model name, or a package:// / model:// URI, is looked up in and must lie in, as "
        "for the description node (an absolute model path is accepted anywhere: model is read-only). Default: "
        "the models/ directory of bb_robot's share directory. Read-only.",
        type="string_array",
        when="start",
    ),
    ParameterSpec(
        "model_scope",
        "",
        "SDF only: the '::'-separated scoped name of the model to drive in a world (empty: the single model "
        "with movable joints). Read-only.",
        when="start",
    ),
    ParameterSpec(
        "robot_name",
        "",
        "Prefix of the sas_robot_driver-compatible topics (<robot_name>/set/..., <robot_name>/get/...), "
        "relative to the node's namespace. Empty: the model's name. Read-only.",
        when="start",
    ),
    ParameterSpec(
        "joints",
        [],
        "The joints to drive, in the order of the sas arrays and of joint_states. Empty: every movable "
        "single-axis joint of the model that does not mimic another, in tree order. Read-only.",
        type="string_array",
        when="start",
    ),
    ParameterSpec(
        "joint_limits_file",
        "",
        "A joint_limits.yaml in MoveIt's layout (joint_limits.<joint>.has_acceleration_limits, "
        "max_acceleration, ...). Its values become the defaults of the joint_limits.<joint>.* parameters. "
        "Read-only.",
        when="start",
    ),
    ParameterSpec(
        "description_timeout",
        10.0,
        "Configure waits this long (seconds) for a message on robot_description when model is empty, then fails.",
        type="double",
        range=(0.0, 3600.0),
    ),
    ParameterSpec(
        "connect_timeout",
        10.0,
        "Configure gives the backend this long (seconds) to connect, then fails.",
        type="double",
        range=(0.0, 3600.0),
    ),
    ParameterSpec(
        "rate",
        500.0,
        "Control loop rate (Hz): each cycle reads the backend, applies the latest command and writes it. "
        "Read at activate.",
        type="double",
        when="activate",
        range=(1.0, 10000.0),
    ),
    ParameterSpec(
        "realtime_priority",
        50,
        "Real-time priority (SCHED_FIFO, 1-99) asked for the control loop thread, as ros2_control's controller "
        "manager does; where Linux does not permit it the loop runs with normal priority and /diagnostics says "
        "why. 0: do not ask. Read at activate.",
        type="integer",
        when="activate",
        range=(0, 99),
    ),
    ParameterSpec(
        "publish_rate",
        100.0,
        "Rate (Hz) of joint_states and the sas get/ topics, independent of rate. A backend sample is "
        "published once at most. 0: every new sample at once (as a Gazebo message arrives, or after each "
        "control cycle for backends that are read by the loop), for the lowest latency.",
        type="double",
        range=(0.0, 10000.0),
    ),
    ParameterSpec(
        "immediate_commands",
        True,
        "Write a command from set/target_joint_* or ~/joint_commands to the backend at once, in the callback "
        "that received it, instead of at the next control cycle (the loop keeps sending it every cycle). "
        "false: commands wait for the next cycle.",
        type="bool",
    ),
    ParameterSpec(
        "action_monitor_rate",
        20.0,
        "Rate (Hz) of FollowJointTrajectory feedback.",
        type="double",
        range=(0.1, 1000.0),
    ),
    ParameterSpec(
        "command_timeout",
        0.5,
        "Watchdog: when no command arrives for this long (seconds) while joints are driven by commands, "
        "watchdog_action is taken. An executing trajectory or goal counts as a live command. 0: off.",
        type="double",
        range=(0.0, 3600.0),
    ),
    ParameterSpec(
        "watchdog_action",
        "hold",
        "What the watchdog does: 'hold' (the joints stop and hold) or 'disarm' (and the driver disarms).",
        choices=("hold", "disarm"),
    ),
    ParameterSpec(
        "limit_policy",
        "clamp_near",
        "A position, velocity or effort command outside the joint limits (position: the soft limits where the "
        "model has them): 'clamp_near' clamps it to them (logged) when it is within clamp_margin.* of the limit "
        "and rejects the whole command when it is further out (garbage or a unit mistake); 'clamp' clamps at any "
        "distance; 'reject' rejects it. Trajectory points likewise: the goal is rejected, or its positions are "
        "clamped while executing.",
        choices=("clamp_near", "clamp", "reject"),
    ),
    ParameterSpec(
        "clamp_margin.revolute",
        0.1,
        "With limit_policy clamp_near: how far (rad) outside its limits a revolute joint's position command is "
        "still clamped; further out it is rejected.",
        type="double",
        range=(0.0, 1e6),
    ),
    ParameterSpec(
        "clamp_margin.prismatic",
        0.01,
        "With limit_policy clamp_near: how far (m) outside its limits a prismatic joint's position command is "
        "still clamped; further out it is rejected.",
        type="double",
        range=(0.0, 1e6),
    ),
    ParameterSpec(
        "clamp_margin.relative",
        0.1,
        "With limit_policy clamp_near: how far beyond its limit, as a fraction of it, a velocity or effort "
        "command is still clamped; further out it is rejected.",
        type="double",
        range=(0.0, 1e6),
    ),
    ParameterSpec(
        "stale_timeout",
        0.1,
        "A joint whose latest backend value is older than this (seconds) is stale: flagged in /diagnostics and "
        "left out of joint_states (never republished as fresh). 0: never stale.",
        type="double",
        range=(0.0, 3600.0),
    ),
    ParameterSpec(
        "stale_action",
        "hold",
        "What the driver does when a joint goes stale (a servo, bridge or link that stopped reporting): 'hold' (a "
        "running goal is aborted, every joint holds where it was last reported, commands are refused until every "
        "joint reports again) or 'disarm' (the same, and the driver disarms: ~/arm is needed afterwards).",
        choices=("hold", "disarm"),
    ),
    ParameterSpec(
        "auto_arm",
        False,
        "Arm when activated. Otherwise commands are refused until ~/arm (or ~/set_armed true) is called.",
        type="bool",
    ),
    ParameterSpec(
        "respawn",
        False,
        "Set by a launch that respawns the driver (bringup.launch.py respawn:=true): a start after the first under "
        "the same launch process is a restart, which comes back disarmed whatever auto_arm says and is reported "
        "on /diagnostics. Read-only.",
        type="bool",
        when="start",
    ),
    ParameterSpec(
        "autostart",
        False,
        "Configure and activate at start-up, without a lifecycle manager (the launch file sets it).",
        type="bool",
        when="start",
    ),
    ParameterSpec(
        "trajectory.start_tolerance",
        0.05,
        "A trajectory whose first point is due at once must start within this distance (rad or m) of each "
        "joint's current position, or it is rejected.",
        type="double",
        range=(0.0, 1e6),
    ),
    ParameterSpec(
        "trajectory.limit_margin",
        0.02,
        "A trajectory is rejected when its interpolated velocity or acceleration exceeds a joint's limit by "
        "more than this fraction.",
        type="double",
        range=(0.0, 10.0),
    ),
    ParameterSpec(
        "allow_partial_joints_goal",
        False,
        "Accept trajectories naming only some of the joints (the others keep their command), as "
        "ros2_control's joint_trajectory_controller parameter of the same name.",
        type="bool",
    ),
    ParameterSpec(
        "allow_nonzero_velocity_at_trajectory_end",
        False,
        "Accept trajectories whose last point has a non-zero velocity.",
        type="bool",
    ),
    ParameterSpec(
        "constraints.goal_time",
        0.0,
        "Default goal time tolerance (seconds) of FollowJointTrajectory goals: how long after the trajectory's "
        "end the goal tolerances may take to be met. 0: no limit.",
        type="double",
        range=(0.0, 3600.0),
    ),
    ParameterSpec(
        "constraints.stopped_velocity_tolerance",
        0.01,
        "Default goal velocity tolerance of FollowJointTrajectory goals (every joint). 0: not checked.",
        type="double",
        range=(0.0, 1e6),
    ),
    # Collision checking (bb_robot.driver.guard.collision_guard, docs/collision.md).
    ParameterSpec(
        "collision.check",
        True,
        "Check trajectories before accepting them and slow streamed commands near contact, from the model's "
        "<collision> geometry (only where it has some). With it on, a missing 'coal' package or an unreadable "
        "mesh fails configure, naming the file and the link. Read at configure.",
        type="bool",
        when="configure",
    ),
    ParameterSpec(
        "collision.srdf",
        "",
        "An SRDF whose <disable_collisions> pairs are not checked. Empty: <model>.srdf beside the model file, "
        "else the cache `bb-robot collisions` writes, else adjacent and default-pose pairs only. Read at configure.",
        when="configure",
    ),
    ParameterSpec(
        "collision.trust_srdf",
        False,
        "Keep every pair the SRDF disables unchecked, even those verification finds can touch (a warning still names "
        "each once, with the file and a witness configuration). False: such pairs are checked anyway. Read at "
        "configure.",
        type="bool",
        when="configure",
    ),
    ParameterSpec(
        "collision.compute_matrix",
        False,
        "With no SRDF and no cached matrix: compute the allowed-collision matrix at configure (10,000 samples, "
        "seconds to tens of seconds) and cache it. Read at configure.",
        type="bool",
        when="configure",
    ),
    ParameterSpec(
        "collision.world",
        "",
        "Static obstacles: an SDF world (its other models) or a YAML file (floor, sdf, obstacles), as "
        "docs/collision.md describes; the view shows the same. Empty: none. Read at configure.",
        when="configure",
    ),
    ParameterSpec(
        "collision.clearance",
        0.002,
        "A trajectory whose links (or a link and an obstacle) come nearer than this (m) is refused. Read at configure.",
        type="double",
        when="configure",
        range=(0.0001, 1.0),
    ),
    ParameterSpec(
        "collision.slowdown_distance",
        0.02,
        "Streamed commands slow down when the nearest checked pair is nearer than this (m), unless they move it "
        "apart. Read at configure.",
        type="double",
        when="configure",
        range=(0.0, 10.0),
    ),
    ParameterSpec(
        "collision.stop_distance",
        0.005,
        "Streamed commands stop at this distance (m) unless they move the pair apart. Read at configure.",
        type="double",
        when="configure",
        range=(0.0, 10.0),
    ),
    ParameterSpec(
        "collision.check_rate",
        100.0,
        "How often (Hz) the collision checker (a process of its own) measures while nothing is within the "
        "slowdown distance; while streamed motion is slowed it measures every cycle. Read at configure.",
        type="double",
        when="configure",
        range=(1.0, 10000.0),
    ),
    ParameterSpec(
        "gripper.joints",
        [],
        "The joints ~/gripper_cmd (control_msgs/GripperCommand) commands, each to the goal's position; their "
        "mimic joints follow. Empty: no gripper (goals are refused). Read at configure.",
        type="string_array",
        when="configure",
    ),
    ParameterSpec(
        "gripper.tolerance",
        0.001,
        "A gripper goal is reached (reached_goal) within this of its position (joint units). Read at configure.",
        type="double",
        when="configure",
        range=(1e-6, 1.0),
    ),
    ParameterSpec(
        "gripper.stall_time",
        0.3,
        "Seconds the gripper joints may stand still short of the goal before it counts as stalled (an object "
        "between the fingers). Read at configure.",
        type="double",
        when="configure",
        range=(0.01, 60.0),
    ),
    *SERVO_PARAMETERS,  # the Cartesian servo (docs/nodes/servo.md)
)

#: Declared at configure for each driven joint; ``<joint>`` stands for its name.
JOINT_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "joint_limits.<joint>.has_position_limits",
        False,
        "Override the joint's position limits with min_position/max_position (tightening only).",
        type="bool",
    ),
    ParameterSpec("joint_limits.<joint>.min_position", 0.0, "Lower position override (rad or m).", type="double"),
    ParameterSpec("joint_limits.<joint>.max_position", 0.0, "Upper position override (rad or m).", type="double"),
    ParameterSpec(
        "joint_limits.<joint>.has_velocity_limits",
        False,
        "Override the joint's velocity limit with max_velocity (tightening only).",
        type="bool",
    ),
    ParameterSpec("joint_limits.<joint>.max_velocity", 0.0, "Velocity limit override (above 0).", type="double"),
    ParameterSpec(
        "joint_limits.<joint>.has_acceleration_limits",
        False,
        "Limit the joint's acceleration to max_acceleration (URDF and SDF have no acceleration limits).",
        type="bool",
    ),
    ParameterSpec("joint_limits.<joint>.max_acceleration", 0.0, "Acceleration limit (above 0).", type="double"),
    ParameterSpec(
        "joint_limits.<joint>.has_effort_limits",
        False,
        "Override the joint's effort limit with max_effort (tightening only).",
        type="bool",
    ),
    ParameterSpec("joint_limits.<joint>.max_effort", 0.0, "Effort limit override (above 0).", type="double"),
    ParameterSpec(
        "constraints.<joint>.trajectory",
        0.0,
        "Default path position tolerance of FollowJointTrajectory goals for the joint. 0: not checked.",
        type="double",
        range=(0.0, 1e6),
    ),
    ParameterSpec(
        "constraints.<joint>.goal",
        0.0,
        "Default goal position tolerance of FollowJointTrajectory goals for the joint. 0: not checked.",
        type="double",
        range=(0.0, 1e6),
    ),
)

#: The model's bound parameters (Robot.param_subscriptions), with ``<joint>`` / ``<actuator>``.
MODEL_PARAMETER_PATTERNS: tuple[str, ...] = (
    "joints.<joint>.limit.lower",
    "joints.<joint>.limit.upper",
    "joints.<joint>.limit.velocity",
    "joints.<joint>.limit.effort",
    "transmissions.<actuator>.reduction",
    "transmissions.<actuator>.offset",
)

PARAMETER_NAMES: frozenset[str] = frozenset(spec.name for spec in PARAMETERS)


def spec(name: str) -> ParameterSpec:
    """The specification of a fixed parameter (``KeyError`` for an unknown one)."""
    for item in PARAMETERS:
        if item.name == name:
            return item
    raise KeyError(name)


def joint_parameter(pattern: str, joint: str) -> str:
    return pattern.replace("<joint>", joint)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(<joint>|<actuator>)", pattern)
    return re.compile("".join("(?P<name>.+)" if p in ("<joint>", "<actuator>") else re.escape(p) for p in parts))


_JOINT_PATTERNS = tuple((spec, _pattern_regex(spec.name)) for spec in JOINT_PARAMETERS)
_MODEL_PATTERNS = tuple((pattern, _pattern_regex(pattern)) for pattern in MODEL_PARAMETER_PATTERNS)


def is_declared(
    name: str,
    joints: Iterable[str] | None = None,
    *,
    backend_parameters: Iterable[str] = (),
    actuators: Iterable[str] | None = None,
) -> bool:
    """Whether the driver declares parameter ``name`` (for the launch and config file checks).

    ``joints`` / ``actuators`` limit the per-joint and model parameters to those names
    (``None``: any name); ``backend_parameters`` are the backend's full names.
    """
    if name in PARAMETER_NAMES or name in set(backend_parameters) or name == "use_sim_time":
        return True
    if name.startswith("qos_overrides."):
        return True
    joint_set = set(joints) if joints is not None else None
    actuator_set = set(actuators) if actuators is not None else None
    for _, regex in _JOINT_PATTERNS:
        match = regex.fullmatch(name)
        if match and (joint_set is None or match.group("name") in joint_set):
            return True
    for pattern, regex in _MODEL_PATTERNS:
        match = regex.fullmatch(name)
        if match:
            allowed = actuator_set if pattern.startswith("transmissions.") else joint_set
            if allowed is None or match.group("name") in allowed:
                return True
    return False
