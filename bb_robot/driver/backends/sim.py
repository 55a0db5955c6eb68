"""``backend: sim``: the embedded kinematic simulator (the driver's default backend).

Each joint is a point that moves as commanded within its limits, with no dynamics:

- **position** (and hold): it moves to the target as fast as its velocity and acceleration
  limits allow and stops there without overshoot (a time-optimal approach, discretised so
  that it settles exactly); a target that moves (a trajectory, whose samples carry velocity
  and acceleration) is followed from the command's time on, so a feasible trajectory is
  tracked with no lag; when the next command is more than two periods late (a stalled loop),
  the joints go on along the trajectory the command came from, as a controller with the path
  would, not along the sample's extrapolation, which leaves a curved path; an error from the
  moving target (a late cycle integrated in a longer step leaves one of a few mrad) is closed
  with only the acceleration the target leaves free (the limit less the target's own), since a
  correction budgeted the whole limit cannot be braked while the target decelerates at it: a
  plan timed at 99 % of the limits once grew a 6 mrad error into a 0.1 rad overshoot that way;
- **velocity**: it reaches the commanded velocity within the acceleration limit;
- the hard position limits are end stops: a joint that reaches one stops there;
- **the command range bounds every mode**: in position, hold and velocity mode a joint brakes so
  that it stops at the end of its command range (the soft limits where narrower than the hard
  ones), however long the gap between two commands: a driver that stalls for several periods
  during a velocity command or a trajectory (whose reference is extrapolated with its
  velocity) cannot carry a joint past the range.  A joint already outside the range (started
  there) is not pulled in; it only cannot move further out.
- **effort** commands are not supported (a kinematic model has no forces): the driver
  rejects them, and joint states carry no effort.

A joint without an acceleration limit changes velocity at once; without a velocity limit it
reaches a position target in one step.  Time is the driver's monotonic clock: each ``read``
integrates from the previous one to now, in steps of at most ``sim.max_step`` seconds; a gap
longer than ``sim.max_gap`` (1 s: the loop was stopped) is not integrated; a shorter stall of a busy
host is, as a real arm moves on while its driver is late.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bb_robot.common.parameters import configure_parameter
from bb_robot.driver.backends._sim_objects import SimObjects
from bb_robot.driver.backends._simulated import INITIAL_POSITIONS, MAX_GAP, start_positions
from bb_robot.driver.backends.base import (
    Backend,
    BackendCommand,
    BackendContext,
    Capabilities,
    Health,
    JointSample,
    ObjectPoses,
    ParameterSpec,
)
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import JointLimitTable, braking_speeds
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import BackendError

_POSITION = int(CommandMode.POSITION)
_HOLD = int(CommandMode.HOLD)
#: The least share of the acceleration limit an error from a moving target is closed with.
_FREE_FLOOR = 1e-3


class SimBackend(Backend):
    """The embedded kinematic simulator (see the module docstring)."""

    name = "sim"
    summary = "embedded kinematic simulator (position and velocity commands; no effort)"

    @classmethod
    def parameters(cls) -> Sequence[ParameterSpec]:
        return (
            INITIAL_POSITIONS,
            configure_parameter(
                "max_step",
                0.005,
                "Longest integration step of the simulator, in seconds (a loop period longer than this is "
                "integrated in several steps).",
                "double",
            ),
            MAX_GAP,
        )

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        n = len(self.joint_names)
        self._position = np.zeros(n)
        self._velocity = np.zeros(n)
        self._position_mode = np.ones(n, dtype=bool)
        self._target = np.zeros(n)
        self._target_velocity = np.zeros(n)
        self._target_acceleration = np.zeros(n)
        self._command_ns = 0
        #: The trajectory the last command was sampled from, and its time then (s): followed
        #: rather than extrapolated once the next command is late (see BackendCommand).
        self._follow: Trajectory | None = None
        self._follow_t = 0.0
        self._follow_after = 2.0 / context.rate if context.rate > 0 else 0.0
        self._time_ns: int | None = None
        self._stamps = np.zeros(n, dtype=np.int64)
        self._connected = False
        self.objects: SimObjects | None = None  # the world's objects (fingers stop at them, carry them)
        self.gaps = 0
        self.max_step = self.number_option("max_step")
        self.max_gap = self.number_option("max_gap")
        self._initial = self.numbers_option("initial_positions")
        self._prepare_limits()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(modes=frozenset({CommandMode.POSITION, CommandMode.VELOCITY}), effort_feedback=False)

    # ---------------------------------------------------------------- lifecycle
    def connect(self, timeout: float) -> None:
        n = len(self.joint_names)
        start = start_positions(self._initial, self.limits, self.joint_names, self.name)
        self._position = start
        self._velocity = np.zeros(n)
        self._target = start.copy()
        self._target_velocity = np.zeros(n)
        self._target_acceleration = np.zeros(n)
        self._position_mode = np.ones(n, dtype=bool)
        self._time_ns = None
        self.objects = SimObjects.of(self.context)
        self._connected = True

    def disconnect(self) -> None:
        self._connected = False

    def start(self) -> None:
        self._time_ns = None

    def stop(self) -> None:
        self._time_ns = None

    def health(self) -> Health:
        return Health(
            connected=self._connected,
            message="simulated" if self._connected else "not connected",
            values={"simulated joints": str(len(self.joint_names)), "integration gaps": str(self.gaps)},
        )

    # --------------------------------------------------------------- loop thread
    def read(self, now_ns: int) -> JointSample:
        if not self._connected:
            raise BackendError("the simulator is not connected")
        if self._time_ns is None:
            self._time_ns = now_ns
        elapsed = (now_ns - self._time_ns) * 1e-9
        start = self._position
        if elapsed > self.max_gap:
            self.gaps += 1
        elif elapsed > 0:
            steps = max(1, math.ceil(elapsed / self.max_step - 1e-9))
            dt = elapsed / steps
            t = self._time_ns
            for s in range(1, steps + 1):
                self._step(dt, (t - self._command_ns) * 1e-9 + s * dt)
        if self.objects is not None:
            self.objects.constrain(start, self._position, self._velocity, now_ns)
        self._time_ns = now_ns
        self._stamps[:] = now_ns
        return JointSample(self._position.copy(), self._velocity.copy(), None, self._stamps.copy(), now_ns)

    def object_poses(self) -> ObjectPoses | None:
        return self.objects.poses() if self.objects is not None else None

    def write(self, command: BackendCommand, now_ns: int) -> None:
        modes = command.modes
        self._position_mode = (modes == _POSITION) | (modes == _HOLD)
        self._target = np.where(self._position_mode, command.position, 0.0)
        velocity, acceleration = command.velocity, command.acceleration
        self._target_velocity = np.where(np.isnan(velocity), 0.0, velocity)
        self._target_acceleration = np.where(self._position_mode & ~np.isnan(acceleration), acceleration, 0.0)
        self._command_ns = now_ns
        self._follow = command.trajectory
        if command.trajectory is not None:
            self._follow_t = (now_ns - command.trajectory.start_ns) * 1e-9

    def set_limits(self, limits: JointLimitTable) -> None:
        super().set_limits(limits)
        self._prepare_limits()

    def _prepare_limits(self) -> None:
        limits = self.limits
        finite = np.isfinite(limits.acceleration)
        self._accel_finite = np.concatenate((finite, finite, finite))
        self._accel_safe = np.where(self._accel_finite, np.concatenate([limits.acceleration] * 3), 1.0)
        self._accel_step = limits.acceleration
        self._command_upper, self._command_lower = limits.command_upper, limits.command_lower

    # ---------------------------------------------------------------- the model
    def _step(self, dt: float, since_command: float) -> None:
        """Advance by ``dt``; ``since_command`` is the time from the command to the step's end.

        (Written for speed with small arrays: few numpy calls, no temporaries it can avoid.)
        """
        limits = self.limits
        n = len(self._position)
        p, v = self._position, self._velocity
        position_mode = self._position_mode
        # Position mode: the (moving) target at the start and the end of the step; its mean
        # velocity over the step plus the approach speed lands the joint on it when it can.
        v_ref, a_ref = self._target_velocity, self._target_acceleration
        s1 = since_command
        s0 = s1 - dt
        ref_start = self._target + s0 * (v_ref + 0.5 * a_ref * s0)
        ref_v = v_ref + a_ref * (s0 + 0.5 * dt)
        follow = self._follow
        if follow is not None and s1 > self._follow_after:
            # The next command is late: its joints go on along the trajectory itself.
            t = self._follow_t + s1
            ends = follow.positions_at(np.array((t - dt, t)))
            ref_start[follow.indices] = ends[0]
            ref_v[follow.indices] = (ends[1] - ends[0]) / dt
        error = np.where(position_mode, ref_start - p, 0.0)
        # One call for the three braking speeds: towards the target, the upper and the lower stop
        # (the command range's ends; the hard stops where a joint started beyond them).
        upper = np.minimum(np.maximum(self._command_upper, p), limits.upper)
        lower = np.maximum(np.minimum(self._command_lower, p), limits.lower)
        distances = np.concatenate((np.abs(error), upper - p, p - lower))
        np.maximum(distances, 0.0, out=distances)
        accel = self._accel_safe
        if a_ref.any():
            # Closing an error on a target that accelerates itself: only the acceleration it leaves free
            # (module docstring), else the correction cannot be braked and grows into an overshoot.
            accel = accel.copy()
            accel[:n] = np.maximum(accel[:n] - np.abs(a_ref), _FREE_FLOOR * accel[:n])
        brake = braking_speeds(distances, accel, self._accel_finite, dt)
        approach = np.minimum(distances[:n] / dt, brake[:n])
        desired = np.where(position_mode, ref_v + np.copysign(approach, error), self._target_velocity)
        vmax = limits.velocity
        desired = np.minimum(np.minimum(desired, vmax), brake[n : 2 * n])
        desired = np.maximum(np.maximum(desired, -vmax), -brake[2 * n :])
        change = self._accel_step * dt
        new_v = v + np.minimum(np.maximum(desired - v, -change), change)
        new_p = p + new_v * dt
        clipped = np.minimum(np.maximum(new_p, lower), upper)
        new_v[clipped != new_p] = 0.0
        self._position = clipped
        self._velocity = new_v


BACKEND = SimBackend
