"""Joint commands: what a command is, and checking and limiting one before it reaches the loop.

A command names joints of the driver (by index) and gives each one a target in one mode:
position, velocity or effort.  :class:`CommandValidator` turns the raw arrays of a message
into a :class:`JointCommand` or raises :class:`~bb_robot.driver.errors.CommandRejected`
saying why; a rejected command changes nothing.

Always rejected: a NaN or infinite value; an array of the wrong length; an unknown, repeated
or mimic joint name; an empty command; a mode the backend does not support (e.g. effort on
the simulator).  Outside the limits (position: the command range of
:class:`~bb_robot.driver.commands.limits.JointLimitTable`, i.e. the soft limits where present;
velocity and effort: their maxima), by ``limit_policy``:

- ``clamp_near`` (the default): a value within the :class:`~bb_robot.driver.commands.limits.ClampMargins`
  of its limit (0.1 rad, 0.01 m, 10 % of a velocity or effort limit) is clamped to it; one
  further out is garbage or a unit mistake and the whole command is rejected;
- ``clamp``: clamped at any distance;
- ``reject``: the whole command is rejected.

A clamped value is reported in :attr:`JointCommand.clamped`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from bb_robot.driver.commands.limits import ClampMargins, JointLimitTable
from bb_robot.driver.errors import CommandRejected

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

LIMIT_POLICIES = ("clamp_near", "clamp", "reject")
DEFAULT_MARGINS = ClampMargins()


class CommandMode(IntEnum):
    """How the backend is asked to drive a joint.

    ``HOLD``: stay at (or stop at) a position, the driver's own choice (no command, watchdog,
    disarmed, end of a trajectory).  Backends receive HOLD as a position target.
    """

    HOLD = 0
    POSITION = 1
    VELOCITY = 2
    EFFORT = 3


MODE_NAMES: Mapping[CommandMode, str] = {
    CommandMode.HOLD: "hold",
    CommandMode.POSITION: "position",
    CommandMode.VELOCITY: "velocity",
    CommandMode.EFFORT: "effort",
}
#: The modes as plain ints, for backends' hot paths (they compare the items of ``command.modes.tolist()``).
HOLD_MODE, POSITION_MODE, VELOCITY_MODE, EFFORT_MODE = (
    int(m) for m in (CommandMode.HOLD, CommandMode.POSITION, CommandMode.VELOCITY, CommandMode.EFFORT)
)
_UNITS = {CommandMode.POSITION: "position", CommandMode.VELOCITY: "velocity", CommandMode.EFFORT: "effort"}


@dataclass(frozen=True, eq=False)
class JointCommand:
    """A checked command: ``values[k]`` for joint ``indices[k]`` of the driver, in ``mode``.

    ``source`` names where it came from (the topic); ``received_ns`` when (the driver's
    monotonic clock, ``time.monotonic_ns``); ``clamped`` the joints whose value was clamped to
    a limit, as ``(name, requested, applied)``.
    """

    mode: CommandMode
    indices: IntArray
    values: FloatArray
    source: str
    received_ns: int
    clamped: tuple[tuple[str, float, float], ...] = ()


class CommandValidator:
    """Checks commands for the joints ``limits.names`` (see the module docstring).

    ``supported`` are the modes the backend accepts; ``backend`` its name (for messages);
    ``mimic`` maps each mimic joint of the robot to the joint it follows (named in the
    rejection).  ``limits`` and ``policy`` may be replaced at any time (:meth:`update`).
    """

    def __init__(
        self,
        limits: JointLimitTable,
        supported: frozenset[CommandMode],
        *,
        policy: str = "clamp_near",
        margins: ClampMargins = DEFAULT_MARGINS,
        backend: str = "backend",
        mimic: Mapping[str, str] | None = None,
    ) -> None:
        self.names = limits.names
        self.index = {name: i for i, name in enumerate(self.names)}
        self.supported = supported
        self.backend = backend
        self.mimic = dict(mimic or {})
        self._cache: dict[tuple[str, ...], IntArray | CommandRejected] = {}
        self.margins = margins
        self.limits: JointLimitTable = limits
        self.update(limits, policy)

    def update(
        self, limits: JointLimitTable | None = None, policy: str | None = None, margins: ClampMargins | None = None
    ) -> None:
        """Replace the limits, the policy or the clamp margins (``None``: keep).

        Raises:
            ValueError: The limits are for other joints, or the policy is not one of :data:`LIMIT_POLICIES`.
        """
        if margins is not None:
            self.margins = margins
            limits = limits if limits is not None else self.limits
        if limits is not None:
            if limits.names != self.names:
                raise ValueError("the limits are for other joints")
            self.limits = limits
            self._bounds = {
                CommandMode.POSITION: (limits.command_lower, limits.command_upper),
                CommandMode.VELOCITY: (-limits.velocity, limits.velocity),
                CommandMode.EFFORT: (-limits.effort, limits.effort),
            }
            relative = self.margins.relative
            self._margin = {
                CommandMode.POSITION: limits.position_margins(self.margins),
                CommandMode.VELOCITY: relative * limits.velocity,
                CommandMode.EFFORT: relative * limits.effort,
            }
        if policy is not None:
            if policy not in LIMIT_POLICIES:
                raise ValueError(f"limit_policy must be one of {', '.join(LIMIT_POLICIES)}, not {policy!r}")
            self.policy = policy

    # ------------------------------------------------------------------ entry points
    def from_array(self, mode: CommandMode, data: Sequence[float], source: str, received_ns: int) -> JointCommand:
        """A command for every joint, in the driver's joint order (the sas ``set/target_joint_*`` arrays)."""
        self._check_mode(mode)
        values = np.asarray(data, dtype=np.float64)
        if values.ndim != 1 or len(values) != len(self.names):
            raise CommandRejected(
                "length",
                f"{len(values)} values for {len(self.names)} joints; the array must hold one value per "
                f"joint, in this order: {', '.join(self.names)}",
            )
        return self._finish(mode, np.arange(len(self.names), dtype=np.intp), values, source, received_ns)

    def from_joint_state(
        self,
        names: Sequence[str],
        position: Sequence[float],
        velocity: Sequence[float],
        effort: Sequence[float],
        source: str,
        received_ns: int,
    ) -> JointCommand:
        """A command for the named joints (a ``sensor_msgs/JointState`` used as a command).

        The mode is position if ``position`` is given, else velocity if ``velocity`` is, else
        effort; the other arrays must be empty or as long as ``names`` and are not used.
        """
        if not len(names):
            raise CommandRejected("empty", "no joint names")
        arrays = {"position": position, "velocity": velocity, "effort": effort}
        for label, array in arrays.items():
            if len(array) and len(array) != len(names):
                raise CommandRejected(
                    "length", f"{len(names)} names but {len(array)} {label} values (must be equal, or none)"
                )
        if len(position):
            mode, data = CommandMode.POSITION, position
        elif len(velocity):
            mode, data = CommandMode.VELOCITY, velocity
        elif len(effort):
            mode, data = CommandMode.EFFORT, effort
        else:
            raise CommandRejected("empty", "no position, velocity or effort values")
        self._check_mode(mode)
        indices = self._indices(tuple(names))
        return self._finish(mode, indices, np.asarray(data, dtype=np.float64), source, received_ns)

    # ------------------------------------------------------------------ helpers
    def _check_mode(self, mode: CommandMode) -> None:
        if mode not in self.supported:
            supported = ", ".join(MODE_NAMES[m] for m in sorted(self.supported)) or "none"
            raise CommandRejected(
                "unsupported",
                f"backend '{self.backend}' does not support {MODE_NAMES[mode]} commands (it supports: {supported})",
            )

    def _indices(self, names: tuple[str, ...]) -> IntArray:
        cached = self._cache.get(names)
        if cached is None:
            cached = self._resolve(names)
            if len(self._cache) >= 64:
                self._cache.clear()
            self._cache[names] = cached
        if isinstance(cached, CommandRejected):
            raise CommandRejected(cached.kind, cached.reason)
        return cached

    def _resolve(self, names: tuple[str, ...]) -> IntArray | CommandRejected:
        seen: set[str] = set()
        indices = []
        for name in names:
            if name in seen:
                return CommandRejected("duplicate", f"joint '{name}' is named twice")
            seen.add(name)
            i = self.index.get(name)
            if i is None:
                if name in self.mimic:
                    return CommandRejected(
                        "mimic", f"joint '{name}' mimics '{self.mimic[name]}' and cannot be commanded; command that one"
                    )
                return CommandRejected(
                    "unknown_joint", f"unknown joint '{name}' (the driver's joints: {', '.join(self.names)})"
                )
            indices.append(i)
        return np.array(indices, dtype=np.intp)

    def _finish(
        self, mode: CommandMode, indices: IntArray, values: FloatArray, source: str, received_ns: int
    ) -> JointCommand:
        finite = np.isfinite(values)
        if not finite.all():
            bad = [f"{self.names[indices[k]]}={values[k]}" for k in np.flatnonzero(~finite)[:5]]
            raise CommandRejected("non_finite", f"non-finite {_UNITS[mode]} values: {', '.join(bad)}")
        low, high = self._bounds[mode]
        low, high = low[indices], high[indices]
        outside = (values < low) | (values > high)
        clamped: tuple[tuple[str, float, float], ...] = ()
        if outside.any():
            applied = np.clip(values, low, high)
            details = tuple(
                (self.names[indices[k]], float(values[k]), float(applied[k])) for k in np.flatnonzero(outside)
            )
            if self.policy == "reject":
                text = ", ".join(
                    f"{name} {value:g} outside [{_bound(low[k]):s}, {_bound(high[k]):s}]"
                    for k, (name, value, _) in zip(np.flatnonzero(outside), details, strict=True)
                )
                raise CommandRejected(
                    "limit", f"{_UNITS[mode]} outside the joint limits (limit_policy: reject): {text}"
                )
            if self.policy == "clamp_near":
                margin = self._margin[mode][indices]
                far = (values < low - margin) | (values > high + margin)
                if far.any():
                    text = ", ".join(
                        f"{self.names[indices[k]]} {values[k]:g} outside [{_bound(low[k]):s}, {_bound(high[k]):s}] "
                        f"by more than {margin[k]:g}"
                        for k in np.flatnonzero(far)
                    )
                    raise CommandRejected(
                        "limit",
                        f"{_UNITS[mode]} too far outside the joint limits to be clamped (limit_policy: clamp_near, "
                        f"clamp_margin.*): {text}; a unit mistake (degrees for radians)?",
                    )
            values, clamped = applied, details
        return JointCommand(mode, indices, values, source, received_ns, clamped)


def _bound(value: float) -> str:
    return f"{value:g}" if math.isfinite(value) else ("-inf" if value < 0 else "inf")


def describe_clamped(command: JointCommand) -> str:
    """``clamped elbow_joint 3 → 2.5, ...`` for a log line."""
    unit = _UNITS.get(command.mode, "value")
    items = ", ".join(f"{name} {requested:g} → {applied:g}" for name, requested, applied in command.clamped)
    return f"clamped {unit} to the joint limits: {items}"
