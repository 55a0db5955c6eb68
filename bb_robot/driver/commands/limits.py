"""Joint limits as the driver enforces them: the model's, tightened by MoveIt-style overrides.

Where each limit comes from, in order:

1. the robot model (URDF ``<limit>``, ``<safety_controller>``; SDF ``<limit>``), including any
   value changed at run time through the model's bound parameters
   (``joints.<joint>.limit.lower|upper|velocity|effort``, see
   :attr:`bb_robot.model.robot.Robot.param_subscriptions`);
2. overrides in the layout of MoveIt's ``joint_limits.yaml`` (also that of ros2_control's
   ``joint_limits`` parameters)::

       joint_limits:
         elbow_joint:
           has_velocity_limits: true
           max_velocity: 1.5
           has_acceleration_limits: true
           max_acceleration: 4.0

   ``has_position_limits`` / ``min_position`` / ``max_position``, ``has_velocity_limits`` /
   ``max_velocity``, ``has_acceleration_limits`` / ``max_acceleration`` and
   ``has_effort_limits`` / ``max_effort`` are read; a value counts only where its ``has_*``
   flag is true.  Other keys (jerk, the scaling factors) are accepted and ignored.

An override may only *tighten* a limit the model has (as ros2_control's joint_limits do): a
wider value is ignored with a warning.  Acceleration limits, which URDF and SDF lack, come
from the overrides alone; a joint without one accelerates without limit.

Position commands are bounded by the *command range*: the hard limits, narrowed to the
``<safety_controller>`` soft limits where the model has them.  How far outside its limits a
command may be and still be clamped, instead of rejected, is a :class:`ClampMargins`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.driver.errors import LimitsFileError
from bb_robot.model import compiled
from bb_robot.model.robot import Robot

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: The keys of one joint's entry in a MoveIt ``joint_limits.yaml`` that the driver reads, and
#: their types (``bool`` flags and ``float`` values).
OVERRIDE_KEYS: Mapping[str, type] = {
    "has_position_limits": bool,
    "min_position": float,
    "max_position": float,
    "has_velocity_limits": bool,
    "max_velocity": float,
    "has_acceleration_limits": bool,
    "max_acceleration": float,
    "has_effort_limits": bool,
    "max_effort": float,
}
#: Keys MoveIt's files may hold that the driver does not use.
IGNORED_KEYS = frozenset(
    {"has_jerk_limits", "max_jerk", "has_deceleration_limits", "max_deceleration", "angle_wraparound"}
)


@dataclass(frozen=True)
class LimitOverride:
    """One joint's entry of a MoveIt-style limits file (``None``: key absent)."""

    has_position_limits: bool | None = None
    min_position: float | None = None
    max_position: float | None = None
    has_velocity_limits: bool | None = None
    max_velocity: float | None = None
    has_acceleration_limits: bool | None = None
    max_acceleration: float | None = None
    has_effort_limits: bool | None = None
    max_effort: float | None = None


@dataclass(frozen=True, eq=False)
class JointLimitTable:
    """Per-joint limits of the driven joints, as arrays in ``names`` order.

    Missing limits are ``-inf`` / ``inf``.  ``soft_lower`` / ``soft_upper`` are the
    ``<safety_controller>`` limits (``-inf`` / ``inf`` where absent); ``command_lower`` /
    ``command_upper`` the range position commands are clamped to (or rejected outside).
    """

    names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    soft_lower: FloatArray
    soft_upper: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    effort: FloatArray
    #: Which limit of each joint came from where, for diagnostics (``{"elbow_joint": {"velocity": "urdf"}}``).
    sources: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: The joints' types (``revolute``, ``continuous``, ``prismatic``), in ``names`` order (empty: unknown).
    kinds: tuple[str, ...] = ()

    @property
    def command_lower(self) -> FloatArray:
        return np.maximum(self.lower, self.soft_lower)

    @property
    def command_upper(self) -> FloatArray:
        return np.minimum(self.upper, self.soft_upper)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def position_margins(self, margins: ClampMargins) -> FloatArray:
        """Per joint, how far outside its command range a position is still clamped (rad or m).

        Args:
            margins: The margins by joint type.

        Returns:
            ``margins.prismatic`` for prismatic joints, ``margins.revolute`` for the others.
        """
        kinds = self.kinds or ("revolute",) * len(self.names)
        return np.array([margins.prismatic if kind == "prismatic" else margins.revolute for kind in kinds])

    def describe(self, name: str) -> str:
        """One line: ``elbow_joint: position [-2.6, 2.6] (soft [-2.5, 2.5]), velocity 2.5, ...``."""
        i = self.index(name)
        parts = [f"position [{_fmt(self.lower[i])}, {_fmt(self.upper[i])}]"]
        if np.isfinite(self.soft_lower[i]) or np.isfinite(self.soft_upper[i]):
            parts[0] += f" (soft [{_fmt(self.soft_lower[i])}, {_fmt(self.soft_upper[i])}])"
        parts += [
            f"velocity {_fmt(self.velocity[i])}",
            f"acceleration {_fmt(self.acceleration[i])}",
            f"effort {_fmt(self.effort[i])}",
        ]
        return f"{name}: " + ", ".join(parts)


@dataclass(frozen=True)
class ClampMargins:
    """How far outside its limits a command may be and still be clamped (``limit_policy: clamp_near``).

    Beyond these a command is garbage or a unit mistake (degrees for radians) and is rejected
    whole; within them it is clamped to the limit.  ``revolute`` (rad) and ``prismatic`` (m) apply
    to positions; ``relative`` to velocities and efforts, as a fraction of the limit.
    """

    revolute: float = 0.1
    prismatic: float = 0.01
    relative: float = 0.1


def _fmt(value: float) -> str:
    return "none" if not math.isfinite(value) else f"{value:g}"


def _value(value: float | None, default: float) -> float:
    return default if value is None else float(value)


def from_robot(robot: Robot, names: Sequence[str]) -> JointLimitTable:
    """The limits the model gives the joints ``names`` (no acceleration limits)."""
    n = len(names)
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    soft_lower, soft_upper = np.full(n, -np.inf), np.full(n, np.inf)
    velocity, effort = np.full(n, np.inf), np.full(n, np.inf)
    sources: dict[str, dict[str, str]] = {}
    for i, name in enumerate(names):
        joint = robot.get_joint(name)
        limits = joint.limits
        source: dict[str, str] = {}
        sources[name] = source
        if limits is None:
            continue
        if joint.type != "continuous":
            lower[i] = _value(limits.lower, -np.inf)
            upper[i] = _value(limits.upper, np.inf)
            soft_lower[i] = _value(limits.soft_lower, -np.inf)
            soft_upper[i] = _value(limits.soft_upper, np.inf)
            if limits.lower is not None or limits.upper is not None:
                source["position"] = "model"
        # A zero or negative velocity/effort in a description means "not given" (URDF writers
        # use 0 for "unknown"); such a joint could never move if it were taken as a limit.
        if limits.velocity is not None and limits.velocity > 0:
            velocity[i] = limits.velocity
            source["velocity"] = "model"
        if limits.effort is not None and limits.effort > 0:
            effort[i] = limits.effort
            source["effort"] = "model"
    # Hard limits given in the wrong order would make every command invalid: keep the model's
    # values but never let the command range invert.
    return JointLimitTable(
        kinds=tuple(robot.get_joint(name).type for name in names),
        names=tuple(names),
        lower=lower,
        upper=upper,
        soft_lower=soft_lower,
        soft_upper=soft_upper,
        velocity=velocity,
        acceleration=np.full(n, np.inf),
        effort=effort,
        sources=sources,
    )


def parse_overrides(data: Any, source: str) -> dict[str, LimitOverride]:
    """The per-joint overrides of a parsed MoveIt ``joint_limits.yaml`` document.

    Accepts the document itself (``{"joint_limits": {...}}``) or a ROS parameters file that
    holds it under ``<node>: ros__parameters:``.  Raises :class:`LimitsFileError` naming the
    file and the key for a value of the wrong type or a non-finite or negative maximum.
    """
    if isinstance(data, Mapping) and "joint_limits" not in data:
        for value in data.values():
            if isinstance(value, Mapping) and isinstance(value.get("ros__parameters"), Mapping):
                if "joint_limits" in value["ros__parameters"]:
                    data = value["ros__parameters"]
                    break
    if not isinstance(data, Mapping) or not isinstance(data.get("joint_limits"), Mapping):
        raise LimitsFileError(f"{source}: no 'joint_limits' mapping (MoveIt's joint_limits.yaml layout)")
    result: dict[str, LimitOverride] = {}
    for joint, entry in data["joint_limits"].items():
        if not isinstance(entry, Mapping):
            raise LimitsFileError(f"{source}: joint_limits.{joint} is not a mapping")
        values: dict[str, Any] = {}
        for key, raw in entry.items():
            where = f"{source}: joint_limits.{joint}.{key}"
            if key in IGNORED_KEYS:
                continue
            kind = OVERRIDE_KEYS.get(str(key))
            if kind is None:
                raise LimitsFileError(f"{where}: unknown key (known: {', '.join(OVERRIDE_KEYS)})")
            values[str(key)] = _typed(raw, kind, where)
        result[str(joint)] = LimitOverride(**values)
    return result


def _typed(raw: Any, kind: type, where: str) -> bool | float:
    if kind is bool:
        if not isinstance(raw, bool):
            raise LimitsFileError(f"{where}: expected true or false, got {raw!r}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise LimitsFileError(f"{where}: expected a number, got {raw!r}")
    value = float(raw)
    if not math.isfinite(value):
        raise LimitsFileError(f"{where}: expected a finite number, got {raw!r}")
    if where.endswith(("max_velocity", "max_acceleration", "max_effort")) and value <= 0:
        raise LimitsFileError(f"{where}: a maximum must be above 0, got {raw!r}")
    return value


def load_overrides(path: str | Path) -> dict[str, LimitOverride]:
    """Read a MoveIt ``joint_limits.yaml`` file (see :func:`parse_overrides`)."""
    import yaml  # type: ignore[import-untyped]

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise LimitsFileError(f"{path}: cannot read the joint limits file ({error.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise LimitsFileError(f"{path}: not valid YAML ({error})") from None
    return parse_overrides(data, str(path))


def apply_overrides(
    table: JointLimitTable,
    overrides: Mapping[str, LimitOverride],
    *,
    source: str = "joint_limits",
    warn: Callable[[str], None] | None = None,
) -> JointLimitTable:
    """``table`` with ``overrides`` applied (tightening only; see the module docstring).

    Overrides for joints the driver does not drive are ignored.  ``warn`` receives one line
    per override that is ignored because it would widen a limit, or is inconsistent.
    """
    lower, upper = table.lower.copy(), table.upper.copy()
    velocity, acceleration, effort = table.velocity.copy(), table.acceleration.copy(), table.effort.copy()
    sources = {name: dict(values) for name, values in table.sources.items()}

    def note(text: str) -> None:
        if warn is not None:
            warn(text)

    for name, entry in overrides.items():
        if name not in table.names:
            continue
        i = table.index(name)
        where = f"{source}.{name}"
        joint_sources = sources.setdefault(name, {})
        if entry.has_position_limits:
            new_lower = _value(entry.min_position, lower[i])
            new_upper = _value(entry.max_position, upper[i])
            if new_lower > new_upper:
                note(f"{where}: min_position {new_lower:g} is above max_position {new_upper:g}; ignored")
            else:
                if new_lower < lower[i]:
                    note(f"{where}: min_position {new_lower:g} would widen the limit {lower[i]:g}; kept {lower[i]:g}")
                elif new_lower != lower[i]:
                    lower[i] = new_lower
                    joint_sources["position"] = source
                if new_upper > upper[i]:
                    note(f"{where}: max_position {new_upper:g} would widen the limit {upper[i]:g}; kept {upper[i]:g}")
                elif new_upper != upper[i]:
                    upper[i] = new_upper
                    joint_sources["position"] = source
        for flag, value, array, label in (
            (entry.has_velocity_limits, entry.max_velocity, velocity, "velocity"),
            (entry.has_effort_limits, entry.max_effort, effort, "effort"),
            (entry.has_acceleration_limits, entry.max_acceleration, acceleration, "acceleration"),
        ):
            if not flag:
                continue
            if value is None or value <= 0:
                note(f"{where}: has_{label}_limits is true but max_{label} is not given (or not above 0); ignored")
                continue
            if value > array[i]:
                note(f"{where}: max_{label} {value:g} would widen the limit {array[i]:g}; kept {array[i]:g}")
                continue
            array[i] = value
            joint_sources[label] = source
    return replace(
        table,
        lower=lower,
        upper=upper,
        velocity=velocity,
        acceleration=acceleration,
        effort=effort,
        sources=sources,
    )


def override_from_parameters(values: Mapping[str, Any], joints: Iterable[str]) -> dict[str, LimitOverride]:
    """Overrides from flat ROS parameters ``joint_limits.<joint>.<key>`` (missing keys: ``None``)."""
    result: dict[str, LimitOverride] = {}
    for joint in joints:
        entry = {
            key: values[f"joint_limits.{joint}.{key}"]
            for key in OVERRIDE_KEYS
            if f"joint_limits.{joint}.{key}" in values
        }
        if entry:
            result[joint] = LimitOverride(**entry)
    return result


def braking_speeds(distance: FloatArray, accel: FloatArray, finite: BoolArray, dt: float) -> FloatArray:
    """The highest speed from which a joint stops within ``distance`` (≥ 0), its speed falling by
    at most ``accel * dt`` per step of ``dt`` (position += speed * dt); ``distance / dt`` where the
    acceleration is not ``finite``, and unlimited for an infinite distance.

    Exact for the discrete motion: with ``n`` full braking steps and the remainder spread
    over the ``n + 1`` steps, the joint covers ``distance`` exactly and stops, so a target is
    reached without overshoot.
    """
    bounded = np.isfinite(distance)
    distance = np.where(bounded, distance, 0.0)
    step = accel * dt
    full = np.floor(np.sqrt(0.25 + 2.0 * distance / (step * dt)) - 0.5)
    remainder = distance - step * dt * full * (full + 1) / 2
    short = remainder < 0  # floating-point rounding put n one too high
    if short.any():
        full = np.where(short, full - 1, full)
        remainder = distance - step * dt * full * (full + 1) / 2
    speed = full * step + np.maximum(remainder, 0.0) / ((full + 1) * dt)
    # Without an acceleration limit the joint can stop at once: it may cover the distance in one step.
    return np.where(bounded, np.where(finite, speed, distance / dt), np.inf)


class SampledMotion:
    """How fast each joint moved lately, as its samples show, and the start of an approach path from it.

    A position servo stepping to the goals it is sent reads its own top speed between two of them (an
    STS3215 on a bus bridge: 5.2 rad/s while following a leader arm at 0.5 rad/s).  Braking from that,
    :func:`approach_path` ran a 2 mrad command's path 0.4 rad past its target, out of what the collision
    guard's last check proved free: 12 % of a teleop stream's commands took a full check of 8 ms on the
    driver's executor thread (issue 39).  A path therefore starts from the slower of the two.  Each
    joint's motion is measured over at least :attr:`WINDOW_NS` (samples that arrive a millisecond apart
    would turn a tick of rounding into 1.5 rad/s).

    Args:
        joints: how many joints.
    """

    #: The shortest time (ns) a joint's velocity is measured over.
    WINDOW_NS = 10_000_000

    def __init__(self, joints: int) -> None:
        self.positions = np.full(joints, np.nan)
        self.stamps = np.zeros(joints, dtype=np.int64)
        #: Each joint's velocity over its latest window (NaN before one).
        self.velocities = np.full(joints, np.nan)
        self.stamp_ns = -1

    def observe(self, positions: FloatArray, stamps: npt.NDArray[np.int64], stamp_ns: int) -> None:
        """Take a sample (each joint's position and when it was measured; ``stamp_ns``: the newest); a joint's
        velocity is measured anew once its stamp is :attr:`WINDOW_NS` past the one it was last measured from."""
        if stamp_ns == self.stamp_ns:
            return
        fresh = stamps >= self.stamps + self.WINDOW_NS
        if not fresh.any():  # (most of the loop's cycles: a window spans two of them at 200 Hz)
            return
        seconds = np.where(fresh, (stamps - self.stamps) * 1e-9, 1.0)
        # (one assignment: a reader on another thread sees the old velocities or the new ones)
        self.velocities = np.where(fresh & (self.stamps > 0), (positions - self.positions) / seconds, self.velocities)
        self.positions = np.where(fresh, positions, self.positions)
        self.stamps, self.stamp_ns = np.where(fresh, stamps, self.stamps), stamp_ns

    def slower(self, measured: FloatArray) -> FloatArray:
        """Each joint's ``measured`` velocity, or how fast it moved over its latest window where slower."""
        seen = self.velocities
        slower = np.isfinite(seen) & (np.abs(seen) < np.abs(measured))
        return np.where(slower, seen, measured)


_approach: list[Callable[..., FloatArray] | None] = []  # empty until first needed


def approach_kernel() -> Callable[..., FloatArray] | None:
    """The compiled approach path (:func:`bb_robot.driver.commands._approach_numba.approach`), or ``None``.

    ``None`` with ``BB_ROBOT_KERNEL=numpy``, or when numba is missing or fails (logged once): the numpy
    path of :func:`approach_path` gives the same rows.  Used in every mode but ``numpy``: the collision
    guard builds a path for each position command it checks.
    """
    if compiled.mode() == "numpy":
        return None
    if not _approach:
        module = compiled.import_kernels(
            "bb_robot.driver.commands._approach_numba", "the approach path kernel", compiled.KERNEL_SECONDS["approach"]
        )
        _approach.append(module.approach if module is not None else None)
    return _approach[0]


def approach_path(
    positions: FloatArray,
    velocities: FloatArray,
    targets: FloatArray,
    limits: JointLimitTable,
    period: float,
    *,
    every: int = 5,
    max_steps: int = 60_000,
) -> FloatArray:
    """The path of joints approaching position targets under their limits, as the sim backend moves them.

    Each joint on its own, in steps of ``period``: towards its target at the highest speed from
    which it can still stop there (:func:`braking_speeds`), at most its velocity limit, changing
    speed by at most its acceleration limit per step.  The collision guard checks a position
    command along this path before it is executed.

    Args:
        positions: where the joints are (every joint of ``limits``).
        velocities: their velocities (NaN as 0; beyond the velocity limit as the limit).
        targets: their targets.
        limits: the effective limits.
        period: the step (the loop period, seconds).
        every: keep one row in ``every`` steps (and the last): the path between rows is nearly straight.
        max_steps: stop after this many steps even if a joint has not arrived.

    Returns:
        ``(rows, joints)``: the start, the kept steps and the end (at rest on the targets).
    """
    p = np.ascontiguousarray(positions, dtype=float).copy()
    # A joint measured faster than its velocity limit starts at its limit: the driver never moves it faster,
    # and a position servo stepping to the goals it is sent reads its own top speed between two of them
    # (an STS3215 on a bus bridge: 5.2 rad/s while following 0.5 rad/s, which made a path braking 4.5 rad).
    v = np.clip(np.nan_to_num(np.asarray(velocities, dtype=float)), -limits.velocity, limits.velocity)
    targets = np.ascontiguousarray(targets, dtype=float)
    finite = np.isfinite(limits.acceleration)
    accel = np.where(finite, limits.acceleration, 1.0)
    kernel = approach_kernel()
    if kernel is not None:
        velocity_limits = np.ascontiguousarray(limits.velocity, dtype=float)
        return kernel(
            p, np.ascontiguousarray(v), targets, velocity_limits, accel, finite, float(period), every, max_steps
        )
    change = np.where(finite, limits.acceleration * period, np.inf)
    rows = [p.copy()]
    for step in range(1, max_steps + 1):
        error = targets - p
        if not (np.abs(error) > 1e-9).any() and not (np.abs(v) > 1e-9).any():
            break
        distance = np.abs(error)
        approach = np.minimum(distance / period, braking_speeds(distance, accel, finite, period))
        desired = np.clip(np.copysign(approach, error), -limits.velocity, limits.velocity)
        v = v + np.clip(desired - v, -change, change)
        p = p + v * period
        if step % every == 0:
            rows.append(p.copy())
    if not np.array_equal(rows[-1], p):
        rows.append(p.copy())
    return np.array(rows)
