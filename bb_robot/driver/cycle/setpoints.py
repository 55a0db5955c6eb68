"""Each joint's mode and target, and the command they make each cycle (the core's step 4 and 5).

:class:`Setpoints` belongs to the core's loop thread (and an immediate command's thread, under
the core's cycle lock): it is never touched by two threads at once.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import BackendCommand, JointSample
from bb_robot.driver.commands.commands import MODE_NAMES, CommandMode
from bb_robot.driver.commands.limits import JointLimitTable, braking_speeds
from bb_robot.driver.cycle.execution import Execution, Feedback

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

#: The late cycle (seconds) a velocity command must survive near a limit on a backend that does not
#: stop velocities at the command range itself (``Capabilities.bounds_velocity``).
STALL_ALLOWANCE = 0.1

#: Internal mode of a joint driven by the active trajectory.
TRAJECTORY = 4
#: Internal mode of a joint driven by the servo (a position target with velocity feed-forward).
SERVO = 5
MODE_LABELS = {**{int(m): name for m, name in MODE_NAMES.items()}, TRAJECTORY: "trajectory", SERVO: "servo"}


class Streamer(Protocol):
    """What moves the :data:`SERVO` joints each cycle (:class:`bb_robot.driver.servo.servo.Servo`)."""

    def update(self, setpoints: Setpoints, sample: JointSample, now: int, period: float) -> None:
        """Set ``setpoints.targets`` and ``setpoints.feedforward`` of the servo's joints for this cycle."""


class ModeMasks:
    """Which joints are in which mode (recomputed only when a mode changes).

    Args:
        modes: Each joint's mode (a :class:`CommandMode` or :data:`TRAJECTORY`).
    """

    def __init__(self, modes: npt.NDArray[np.int8]) -> None:
        self.hold = modes == int(CommandMode.HOLD)
        self.pos = modes == int(CommandMode.POSITION)
        self.vel = modes == int(CommandMode.VELOCITY)
        self.eff = modes == int(CommandMode.EFFORT)
        self.traj = modes == TRAJECTORY
        self.servo = modes == SERVO
        self.any_hold, self.any_vel = bool(self.hold.any()), bool(self.vel.any())
        self.any_eff, self.any_traj = bool(self.eff.any()), bool(self.traj.any())
        self.position_like = self.hold | self.pos | self.traj | self.servo
        self.backend_modes = np.where(self.traj | self.servo, np.int8(CommandMode.POSITION), modes).astype(np.int8)
        self.labels = tuple(MODE_LABELS[int(m)] for m in modes)


class Setpoints:
    """Modes, streaming targets and hold positions of the driven joints (all holding at first).

    Args:
        limits: The effective limits (of every driven joint, in order).
        bounded: Whether the backend stops velocities at the command range itself; if not,
            :meth:`stoppable` reserves :data:`STALL_ALLOWANCE` of travel instead of one period's.
    """

    def __init__(self, limits: JointLimitTable, bounded: bool = True) -> None:
        count = len(limits.names)
        self.bounded = bounded
        self.use_limits(limits)
        self.modes = np.full(count, int(CommandMode.HOLD), dtype=np.int8)
        self.targets = np.zeros(count)
        #: Velocity feed-forward of the :data:`SERVO` joints.
        self.feedforward = np.zeros(count)
        #: Hold positions (NaN: hold where the joint is next reported).
        self.hold = np.full(count, np.nan)
        self._masks: ModeMasks | None = None

    def use_limits(self, limits: JointLimitTable) -> None:
        """New effective limits."""
        self.limits = limits
        self.lower, self.upper = limits.command_lower, limits.command_upper

    def set_modes(self, indices: IndexArray, mode: int) -> None:
        """Put joints ``indices`` in ``mode``."""
        if (self.modes[indices] != mode).any():
            self.modes[indices] = mode
            self._masks = None

    def masks(self) -> ModeMasks:
        """The masks of the current modes."""
        masks = self._masks
        if masks is None:
            masks = self._masks = ModeMasks(self.modes)
        return masks

    def keep_command(self, indices: IndexArray, positions: npt.NDArray[np.float64]) -> bool:
        """Joints ``indices``, if they are still in position mode at ``positions``, hold there instead
        (the same target, no longer a stream the watchdog watches).

        Returns:
            Whether they did (False: another command has taken them since).
        """
        if not len(indices):
            return False
        mine = (self.modes[indices] == int(CommandMode.POSITION)) & (self.targets[indices] == positions)
        if not mine.all():
            return False
        self.hold[indices] = np.clip(positions, self.lower[indices], self.upper[indices])
        self.set_modes(indices, int(CommandMode.HOLD))
        return True

    def hold_joints(self, indices: IndexArray, sample: JointSample | None) -> None:
        """Hold ``indices`` where they stop when braking from their current velocity.

        Args:
            indices: The joints.
            sample: Their latest state; ``None`` (the backend gave none): each holds where it is
                next reported.
        """
        if not len(indices):
            return
        if sample is None:
            self.hold[indices] = np.nan
            self.set_modes(indices, int(CommandMode.HOLD))
            return
        position = sample.positions[indices]
        velocity = np.nan_to_num(sample.velocities[indices])
        accel = self.limits.acceleration[indices]
        with np.errstate(invalid="ignore", divide="ignore"):
            distance = np.where(np.isfinite(accel), velocity * np.abs(velocity) / (2.0 * accel), 0.0)
        target = np.where(np.isfinite(position), position + distance, self.hold[indices])
        self.hold[indices] = np.clip(target, self.lower[indices], self.upper[indices])
        self.set_modes(indices, int(CommandMode.HOLD))

    def command(
        self,
        sample: JointSample,
        now: int,
        execution: Execution | None,
        period: float,
        servo: Streamer | None = None,
    ) -> BackendCommand:
        """This cycle's command, within the limits (the trajectory's feedback is updated on the way).

        Args:
            sample: The joints' latest state.
            now: The cycle's time (monotonic ns).
            execution: The active trajectory, if any.
            period: The loop period (seconds), for :meth:`stoppable`.
            servo: What moves the :data:`SERVO` joints (first, when there are any).

        Returns:
            The command for the backend.
        """
        n = len(self.modes)
        limits, lower, upper = self.limits, self.lower, self.upper
        masks = self.masks()
        if servo is not None:
            servo.update(self, sample, now, period)
            masks = self.masks()  # the servo may have handed its joints back (hold)
        if masks.any_hold:
            # A joint whose position was never reported keeps no hold target (NaN reaches the
            # backend, which sends nothing for it) until its position is known: holding it at 0
            # would move it there once it reports (a simulator started after the driver).
            unset = masks.hold & np.isnan(self.hold) & np.isfinite(sample.positions)
            if unset.any():
                self.hold[unset] = np.clip(sample.positions[unset], lower[unset], upper[unset])
        position = np.where(masks.hold, self.hold, self.targets)
        velocity = np.zeros(n)
        acceleration = np.zeros(n)
        effort = np.full(n, np.nan)
        velocity[masks.servo] = self.feedforward[masks.servo]
        if masks.any_vel:
            vel = masks.vel
            velocity[vel] = self.stoppable(
                self.targets[vel],
                sample.positions[vel],
                np.nan_to_num(sample.velocities[vel]),
                np.flatnonzero(vel),
                period,
            )
        if masks.any_eff:
            effort[masks.eff] = np.clip(self.targets[masks.eff], -limits.effort[masks.eff], limits.effort[masks.eff])
        if masks.any_traj and execution is not None:
            p, v, a = execution.trajectory.sample(now)
            indices = execution.trajectory.indices
            position[indices] = p
            velocity[indices] = v
            acceleration[indices] = a
            execution.feedback = Feedback(
                now,
                (p, v, a),
                (sample.positions[indices], np.nan_to_num(sample.velocities[indices])),
                execution.trajectory.point_index(now),
            )
        # The last guard: nothing outside the limits reaches the backend.
        clipped = np.minimum(np.maximum(position, lower), upper)
        at_limit = (clipped != position) & masks.position_like
        position = np.where(masks.position_like, clipped, np.nan)
        velocity = np.minimum(np.maximum(velocity, -limits.velocity), limits.velocity)
        if at_limit.any():
            velocity[at_limit] = 0.0
            acceleration[at_limit] = 0.0
        followed = None
        if masks.any_traj and execution is not None and not at_limit.any():
            indices = execution.trajectory.indices
            if (self.modes[indices] == TRAJECTORY).all():
                followed = execution.trajectory
        return BackendCommand(masks.backend_modes, position, velocity, acceleration, effort, followed)

    def stoppable(
        self,
        velocity: FloatArray,
        position: FloatArray,
        current: FloatArray,
        indices: IndexArray,
        period: float,
    ) -> FloatArray:
        """Velocities slowed so that each joint can stop inside its command range, braking at its
        acceleration limit in steps of one loop period.

        The distance left is shortened by what the joint covers in one period at its current
        velocity: a late cycle does not carry it past the limit, and the backends that bound
        velocities themselves hold through a stall of any length.  On a backend that does not
        (``bounded`` false), each velocity is also one the joint can keep for
        :data:`STALL_ALLOWANCE` and still brake before the limit (``v T + v² / 2a ≤ d``).  A
        stopped joint may then creep the rest of the way.

        Args:
            velocity: The commanded velocities of joints ``indices``.
            position: Their positions.
            current: Their current velocities.
            indices: The joints.
            period: The loop period in seconds.

        Returns:
            The velocities to command.
        """
        accel = self.limits.acceleration[indices]
        finite = np.isfinite(accel)
        reach = np.abs(current) * period
        left = np.concatenate((self.upper[indices] - position, position - self.lower[indices]))
        distances = np.maximum(left - np.concatenate((reach, reach)), 0.0)
        safe = np.concatenate((np.where(finite, accel, 1.0),) * 2)
        finite2 = np.concatenate((finite, finite))
        speeds = braking_speeds(distances, safe, finite2, period)
        if not self.bounded:
            stall, left = STALL_ALLOWANCE, np.maximum(left, 0.0)
            with np.errstate(invalid="ignore"):
                through = np.where(finite2, safe * (np.sqrt(stall * stall + 2.0 * left / safe) - stall), left / stall)
            speeds = np.minimum(speeds, through)
        n = len(indices)
        return np.minimum(np.maximum(velocity, -speeds[n:]), speeds[:n])
