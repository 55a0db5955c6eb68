"""The joint limits a plan is timed with: the model's, narrowed by a driver configuration's.

Where each limit of a planned joint comes from, in order:

1. the robot model: position (``<limit lower upper>``, continuous joints unbounded) and velocity
   (``<limit velocity>``; 0 or absent means "not given", as the driver reads it);
2. overrides in the layout of MoveIt's ``joint_limits.yaml``, which is also the layout of the
   driver's ``joint_limits`` parameter (``config/*.yaml``)::

       elbow_joint: {has_velocity_limits: true, max_velocity: 1.5,
                     has_acceleration_limits: true, max_acceleration: 4.0,
                     has_jerk_limits: true, max_jerk: 40.0}

   ``has_position_limits`` / ``min_position`` / ``max_position``, ``has_velocity_limits`` /
   ``max_velocity``, ``has_acceleration_limits`` / ``max_acceleration`` and ``has_jerk_limits`` /
   ``max_jerk`` are read; a value counts only where its flag is true.  An override only
   *narrows* a limit the model gives (a wider one is ignored, with a note in
   :attr:`JointLimits.notes`), as the driver applies it, so a plan timed here is never faster than
   the driver allows;
3. where neither gives a velocity or an acceleration limit, a conservative default
   (:data:`DEFAULT_VELOCITY`, :data:`DEFAULT_ACCELERATION`: MoveIt's 1 rad/s and 1 rad/s² for a
   revolute joint; 0.1 m/s and 0.5 m/s² for a prismatic one).  URDF has no acceleration limits,
   so without a configuration every joint uses the default acceleration; the joints that used a
   default are named in :attr:`JointLimits.defaulted`.

Jerk is limited only where an override gives it (:attr:`JointLimits.jerk` is ``None`` when no
planned joint has one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.model.robot import Robot
from bb_robot.planning.errors import InvalidRequest

FloatArray = npt.NDArray[np.float64]

#: Velocity limit of a joint whose model and configuration give none: revolute rad/s, prismatic m/s.
DEFAULT_VELOCITY: Mapping[str, float] = {"revolute": 1.0, "continuous": 1.0, "prismatic": 0.1}
#: Acceleration limit of a joint whose configuration gives none: revolute rad/s², prismatic m/s².
DEFAULT_ACCELERATION: Mapping[str, float] = {"revolute": 1.0, "continuous": 1.0, "prismatic": 0.5}

#: The keys of one joint's override entry that are read (flags and values).
OVERRIDE_KEYS = (
    ("has_position_limits", "min_position", "max_position"),
    ("has_velocity_limits", "max_velocity"),
    ("has_acceleration_limits", "max_acceleration"),
    ("has_jerk_limits", "max_jerk"),
)


@dataclass(frozen=True, eq=False)
class JointLimits:
    """Per-joint limits of the planned joints, as arrays in ``names`` order.

    Attributes:
        names: the joints.
        lower, upper: position limits (rad or m; ``-inf`` / ``inf`` for a continuous joint).
        velocity: velocity limits (> 0, finite).
        acceleration: acceleration limits (> 0, finite).
        jerk: jerk limits (> 0; ``inf`` for a joint without one), or ``None`` when no joint has one.
        defaulted: the joints whose velocity or acceleration limit is a default, by name: the
            limits defaulted (``{"elbow": ("acceleration",)}``).
        notes: overrides that were ignored (they would widen a limit, or are inconsistent).
    """

    names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    jerk: FloatArray | None = None
    defaulted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.names)
        for label in ("lower", "upper", "velocity", "acceleration", "jerk"):
            value = getattr(self, label)
            if value is None:
                continue
            array = np.array(value, dtype=float)
            if array.shape != (n,):
                raise InvalidRequest(f"joint limits: {label} has shape {array.shape}, expected ({n},) for {self.names}")
            array.setflags(write=False)
            object.__setattr__(self, label, array)
        for label in ("velocity", "acceleration"):
            bad = [
                name
                for name, v in zip(self.names, getattr(self, label), strict=True)
                if not (math.isfinite(v) and v > 0)
            ]
            if bad:
                raise InvalidRequest(f"joint limits: the {label} limit of {bad} must be a finite number > 0")
        if self.jerk is not None and not bool(np.all(self.jerk > 0)):
            raise InvalidRequest(f"joint limits: the jerk limits {self.jerk.tolist()} must be > 0 (inf: none)")

    @property
    def dof(self) -> int:
        """The number of joints."""
        return len(self.names)

    @classmethod
    def from_robot(
        cls,
        robot: Robot,
        joints: Sequence[str],
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        source: str = "joint_limits",
    ) -> JointLimits:
        """The limits of ``joints``: the model's, narrowed by ``overrides``, defaults where none is given.

        Args:
            robot: the model.
            joints: the planned joints (revolute, continuous or prismatic), in the plan's order.
            overrides: per joint, an entry in MoveIt's ``joint_limits.yaml`` layout (the driver's
                ``joint_limits`` parameter; :func:`read_overrides` reads one from a file). Entries of
                joints not planned are ignored.
            source: names the overrides in notes and errors (a file name).

        Returns:
            The limits (see the module docstring for the order of sources).

        Raises:
            InvalidRequest: a joint the robot does not have, or cannot move (fixed, floating, planar,
                a mimic); an override entry of the wrong type or with a non-finite or negative value.
        """
        n = len(joints)
        lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
        velocity, acceleration, jerk = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.inf)
        notes: list[str] = []
        defaulted: dict[str, tuple[str, ...]] = {}
        for i, name in enumerate(joints):
            joint = robot.joints.get(name)
            if joint is None:
                raise InvalidRequest(
                    f"robot '{robot.name}' has no joint '{name}'; its joints: {', '.join(sorted(robot.joints))}"
                )
            if joint.type not in DEFAULT_VELOCITY or joint.mimic is not None:
                raise InvalidRequest(
                    f"robot '{robot.name}': joint '{name}' ({joint.type}{', a mimic' if joint.mimic else ''}) "
                    "cannot be planned: only revolute, continuous and prismatic joints that follow no other"
                )
            limits = joint.limits
            if limits is not None:
                if joint.type != "continuous":
                    lower[i] = -np.inf if limits.lower is None else float(limits.lower)
                    upper[i] = np.inf if limits.upper is None else float(limits.upper)
                if limits.velocity is not None and limits.velocity > 0:
                    velocity[i] = float(limits.velocity)
            entry = (overrides or {}).get(name)
            if entry is not None:
                _apply(entry, f"{source}.{name}", i, lower, upper, velocity, acceleration, jerk, notes)
            missing = []
            if np.isnan(velocity[i]):
                velocity[i] = DEFAULT_VELOCITY[joint.type]
                missing.append("velocity")
            if np.isnan(acceleration[i]):
                acceleration[i] = DEFAULT_ACCELERATION[joint.type]
                missing.append("acceleration")
            if missing:
                defaulted[name] = tuple(missing)
        return cls(
            names=tuple(joints),
            lower=lower,
            upper=upper,
            velocity=velocity,
            acceleration=acceleration,
            jerk=jerk if bool(np.isfinite(jerk).any()) else None,
            defaulted=defaulted,
            notes=tuple(notes),
        )

    def scaled(self, velocity_scale: float, acceleration_scale: float) -> JointLimits:
        """These limits with velocity times ``velocity_scale``, acceleration and jerk times ``acceleration_scale``.

        Args:
            velocity_scale: in (0, 1].
            acceleration_scale: in (0, 1].

        Returns:
            The scaled limits (positions unchanged).

        Raises:
            InvalidRequest: a factor outside (0, 1].
        """
        for label, factor in (("velocity_scale", velocity_scale), ("acceleration_scale", acceleration_scale)):
            if not 0.0 < factor <= 1.0:
                raise InvalidRequest(f"{label} {factor} is outside (0, 1]")
        return JointLimits(
            names=self.names,
            lower=self.lower,
            upper=self.upper,
            velocity=self.velocity * velocity_scale,
            acceleration=self.acceleration * acceleration_scale,
            jerk=None if self.jerk is None else self.jerk * acceleration_scale,
            defaulted=self.defaulted,
            notes=self.notes,
        )

    def describe(self) -> str:
        """One line per joint: its limits, a default marked ``(default)``."""
        lines = []
        for i, name in enumerate(self.names):
            used = self.defaulted.get(name, ())
            parts = [
                f"velocity {self.velocity[i]:g}{' (default)' if 'velocity' in used else ''}",
                f"acceleration {self.acceleration[i]:g}{' (default)' if 'acceleration' in used else ''}",
            ]
            if self.jerk is not None and math.isfinite(self.jerk[i]):
                parts.append(f"jerk {self.jerk[i]:g}")
            lines.append(f"{name}: " + ", ".join(parts))
        return "\n".join(lines)


def _number(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    raw = entry.get(key)
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InvalidRequest(f"{where}.{key}: expected a number, got {raw!r}")
    value = float(raw)
    if not math.isfinite(value):
        raise InvalidRequest(f"{where}.{key}: expected a finite number, got {raw!r}")
    return value


def _flag(entry: Mapping[str, Any], key: str, where: str) -> bool:
    raw = entry.get(key, False)
    if not isinstance(raw, bool):
        raise InvalidRequest(f"{where}.{key}: expected true or false, got {raw!r}")
    return raw


def _apply(
    entry: Mapping[str, Any],
    where: str,
    i: int,
    lower: FloatArray,
    upper: FloatArray,
    velocity: FloatArray,
    acceleration: FloatArray,
    jerk: FloatArray,
    notes: list[str],
) -> None:
    """Narrow joint ``i``'s limits by one override entry (see :meth:`JointLimits.from_robot`)."""
    if not isinstance(entry, Mapping):
        raise InvalidRequest(f"{where}: expected a mapping of MoveIt joint_limits keys, got {entry!r}")
    if _flag(entry, "has_position_limits", where):
        low, high = _number(entry, "min_position", where), _number(entry, "max_position", where)
        low = lower[i] if low is None else max(low, lower[i])
        high = upper[i] if high is None else min(high, upper[i])
        if low > high:
            notes.append(f"{where}: min_position is above max_position (within the model's limits); ignored")
        else:
            lower[i], upper[i] = low, high
    for flag, key, array, label in (
        ("has_velocity_limits", "max_velocity", velocity, "velocity"),
        ("has_acceleration_limits", "max_acceleration", acceleration, "acceleration"),
        ("has_jerk_limits", "max_jerk", jerk, "jerk"),
    ):
        if not _flag(entry, flag, where):
            continue
        value = _number(entry, key, where)
        if value is None or value <= 0:
            notes.append(f"{where}: {flag} is true but {key} is not given (or not above 0); ignored")
            continue
        current = array[i]
        if not np.isnan(current) and value > current:
            notes.append(
                f"{where}: {key} {value:g} would widen the model's {label} limit {current:g}; kept {current:g}"
            )
            continue
        array[i] = value


def read_overrides(path: str | Path) -> dict[str, Mapping[str, Any]]:
    """The per-joint limit overrides of a file: a MoveIt ``joint_limits.yaml`` or a driver parameter file.

    Args:
        path: a document ``{joint_limits: {joint: entry}}``, or a ROS parameter file (``config/*.yaml``)
            one of whose node sections holds ``joint_limits`` under ``ros__parameters`` (the driver's
            section is preferred).

    Returns:
        The entries by joint name (empty when the parameter file has no ``joint_limits``).

    Raises:
        InvalidRequest: the file cannot be read, is not YAML, or its ``joint_limits`` is not a mapping.
    """
    import yaml  # type: ignore[import-untyped]

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidRequest(f"{path}: cannot read the joint limits ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        raise InvalidRequest(f"{path}: not valid YAML ({error})") from None
    if not isinstance(data, Mapping):
        raise InvalidRequest(f"{path}: expected a mapping (joint_limits, or ROS parameters), got {type(data).__name__}")
    found: Any = data.get("joint_limits")
    if found is None:
        sections = sorted(
            (key for key, value in data.items() if isinstance(value, Mapping) and "ros__parameters" in value),
            key=lambda key: not str(key).endswith("driver"),
        )
        for key in sections:
            parameters = data[key]["ros__parameters"]
            if isinstance(parameters, Mapping) and "joint_limits" in parameters:
                found = parameters["joint_limits"]
                break
        else:
            return {}
    if not isinstance(found, Mapping):
        raise InvalidRequest(f"{path}: joint_limits is not a mapping of joints")
    return {str(name): entry for name, entry in found.items()}
