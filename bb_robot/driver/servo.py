"""The Cartesian servo: twist and pose streams followed inside the control loop.

The servo moves the serial chain from the robot's root link to ``servo.tip``
(:class:`~bb_robot.model.serial.SerialManipulator`).  Inputs (:mod:`bb_robot.driver.servo_inputs`)
reach the loop through the core's inbox; :meth:`Servo.take` puts the chain's joints in the
:data:`~bb_robot.driver.setpoints.SERVO` mode and :meth:`Servo.update`, called by
:meth:`~bb_robot.driver.setpoints.Setpoints.command` every cycle, sets their position targets
and velocity feed-forward.  They then pass the core's last guard, the collision guard's filter
and the backend like any joint command.

Each cycle:

1. **The tool velocity wanted.**  A twist: its velocity (the tip point's linear velocity and the
   angular velocity, turned into base axes with the frame's current orientation), scaled down
   to the maximum speeds (direction kept), plus ``gain`` times the error from the *measured*
   tool pose to a reference pose that advances with the motion actually commanded: what the
   linearisation, tracking lag or a sagging joint lose is caught up, so the tool does not drift.
   A pose: a speed towards the target from the measured pose, ``min(max, sqrt(2 a d), gain d)``
   for the distance and the angle each.  No input, a stale twist (older than
   ``command_timeout``) or a rejected message: zero.
2. The wanted velocity changes by at most the tool accelerations per cycle.
3. **Joint velocities**: damped least squares on the Jacobian at the setpoint (all six rows;
   with fewer than six joints the three linear rows: position only, in the least-squares sense).
4. **One speed scale**, the smallest of:

   - *singularity*: the measure is the inverse condition number ``σ_min / σ_max`` of the
     Jacobian whose linear rows are divided by the chain's reach (so that metres and radians
     weigh alike); 1 above ``singularity_slowdown``, 0 at ``singularity_stop``, the square root of
     the fraction between (so that the motion stops at the threshold in finite time).
     A motion that raises the measure (checked one small step along it) *moves away* and is not
     slowed, so the arm can always be jogged out;
   - *joint limits*: a joint moving towards its command range's end within
     ``joint_limit_margin`` slows likewise, to 0 at 5 % of the margin; motion away is free;
   - *proximity*: the collision guard's scale, when the driver has one.
5. The joint velocities are kept within the velocity limits (scaled together, direction kept)
   and their change within the acceleration limits (``max_joint_acceleration`` where a joint
   has none) by scaling the change together; then the position target advances by one period.

A twist stopped (stale, rejected) decelerates within the same limits; once still, the joints
are handed back to the core to hold where they stopped.  A joint command or trajectory on any
of the chain's joints takes them over at once (the core's modes say who drives them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from bb_robot.driver.arming import Arming
from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.commands import CommandMode
from bb_robot.driver.errors import INVALID_GOAL
from bb_robot.driver.inbox import ServoInput
from bb_robot.driver.limits import JointLimitTable
from bb_robot.driver.servo_inputs import (
    FrameNames,
    ServoError,
    ServoSettings,
    pose_error,
    rotation_matrix,
)
from bb_robot.driver.setpoints import SERVO, Setpoints
from bb_robot.driver.staleness import StaleWatch
from bb_robot.driver.tolerances import Outcome
from bb_robot.errors import BbRobotError
from bb_robot.model.dexterity import reach, singularity_measure
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.model.serial import SerialManipulator

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]

#: How a trajectory on the servo's joints ends when a servo input arrives.
PREEMPTED = Outcome("aborted", INVALID_GOAL, "preempted by a servo input")
#: Below this joint speed (rad/s or m/s) a stopping servo counts as still.
STILL = 1e-6
#: Time constant (s) of the first-order smoothing of the wanted tool velocity: the acceleration
#: rises over a few hundredths of a second instead of jumping, which a lagging arm follows closely.
SMOOTHING = 0.05
#: The joint-limit scale reaches 0 at this fraction of the margin from the command range's end.
LIMIT_STOP_FRACTION = 0.05


class Gate(Protocol):
    """What the servo asks the core before taking an input."""

    arming: Arming
    stale_watch: StaleWatch


@dataclass(frozen=True)
class ServoStatus:
    """The servo's state for /diagnostics.

    Attributes:
        state: ``"idle"``, ``"tracking"``, ``"slowed"`` or ``"halted"``.
        reason: why slowed or halted (or what stopped it last), ``""`` otherwise.
        mode: ``"twist"``, ``"pose"`` or ``""``.
        scale: the speed scale applied in the last cycle (0 to 1).
        singularity: the singularity measure at the setpoint.
        position_only: the chain has fewer than six joints (it tracks the position only).
    """

    state: str
    reason: str
    mode: str
    scale: float
    singularity: float
    position_only: bool


def build_chain(robot: Robot, tip: str, joint_names: Sequence[str]) -> SerialManipulator:
    """The serial chain from the root link to ``tip`` (``""``: the single tool frame of the chain).

    Args:
        robot: the model.
        tip: ``servo.tip``.
        joint_names: the driven joints (every chain joint must be one).

    Returns:
        The chain.

    Raises:
        ServoError: no such link, the tree branches without a tip (naming the candidates), a
            chain joint is not driven, or the chain has no joint.
    """
    try:
        chain = SerialManipulator.from_robot(robot, tip or None, strict=False)
    except BbRobotError as error:
        what = f"servo.tip '{tip}'" if tip else "servo.tip is empty and the driven chain has no single tool frame"
        raise ServoError(f"{what}: {error}") from None
    missing = [name for name in chain.joint_names if name not in joint_names]
    if missing:
        raise ServoError(f"servo.tip '{chain.tip_link}': chain joints {missing} are not driven by this driver")
    if chain.dof == 0:
        raise ServoError(f"servo.tip '{chain.tip_link}': the chain from '{chain.base_link}' has no movable joint")
    return chain


class Servo:
    """The servo of one driver (see the module docstring).

    Args:
        robot: the model.
        joint_names: the driver's joints, in its order.
        limits: their effective limits.
        settings: the ``servo.*`` settings.
        log: ``log(level, text)``, called from the loop thread.
        proximity: the collision guard's speed scale now (0 to 1), when there is a guard.

    Raises:
        ServoError: as :func:`build_chain`.
    """

    def __init__(
        self,
        robot: Robot,
        joint_names: Sequence[str],
        limits: JointLimitTable,
        settings: ServoSettings,
        *,
        log: LogFunction | None = None,
        proximity: Callable[[], float] | None = None,
    ) -> None:
        self.chain = chain = build_chain(robot, settings.tip, joint_names)
        self.settings = settings
        self.joint_names = tuple(joint_names)
        self.indices = np.array([self.joint_names.index(name) for name in chain.joint_names], dtype=np.intp)
        self.position_only = chain.dof < 6
        self.rows = 3 if self.position_only else 6
        self.frames = FrameNames(robot.links, chain.base_link, settings.frame_prefix)
        self._fk = ForwardKinematics(robot)
        self._log = log or (lambda level, text: None)
        self.proximity = proximity
        self.reach = reach(chain)
        self.use_limits(limits)
        self._input: ServoInput | None = None
        self._active = False
        self._q = np.zeros(chain.dof)
        self._qd = np.zeros(chain.dof)
        self._twist = np.zeros(6)
        #: The smoothed feedback part of the tool velocity (:meth:`_ramp`).
        self._smoothed = np.zeros(6)
        #: The velocity of the pose stream being tracked (base axes; zero for a single pose).
        self._target_velocity = np.zeros(6)
        self._reference: FloatArray | None = None
        self._status = ServoStatus("idle", "", "", 1.0, 1.0, self.position_only)
        self._stop_reason = ""

    # --------------------------------------------------------------- set-up
    def use_limits(self, limits: JointLimitTable) -> None:
        """New effective limits (the loop thread's, or before it starts).

        Args:
            limits: of every driven joint, in the driver's order.
        """
        i = self.indices
        self.lower, self.upper = limits.command_lower[i], limits.command_upper[i]
        self.velocity = limits.velocity[i]
        self.acceleration = limits.acceleration[i]

    def use_settings(self, settings: ServoSettings) -> None:
        """New settings (any thread; the tip stays as configured).

        Args:
            settings: the ``servo.*`` values.
        """
        self.settings = settings
        self.frames = FrameNames(self.frames.links, self.frames.base, settings.frame_prefix)

    @property
    def status(self) -> ServoStatus:
        """The state of the last cycle (any thread)."""
        return self._status

    def describe(self) -> str:
        """One line for the configure log: the chain and what it can track."""
        chain = self.chain
        tracks = "position only (fewer than 6 joints)" if self.position_only else "position and orientation"
        return f"servo: {chain.base_link} -> {chain.tip_link}, {chain.dof} joints, tracks {tracks}"

    # -------------------------------------------------------------- inputs
    def take(self, message: ServoInput, setpoints: Setpoints, sample: JointSample | None, gate: Gate) -> bool:
        """Take an input at the start of a cycle (the core's inbox).

        Args:
            message: the checked input.
            setpoints: the core's setpoints (the chain's joints go to the servo mode).
            sample: the joints' latest state (``None``: dropped).
            gate: the core (an input is dropped while disarmed or a joint is stale).

        Returns:
            Whether a trajectory running on the chain's joints must end.
        """
        if message.kind == "stop":
            if self._input is not None and self._active:
                self._stop(f"input on {message.source} rejected: {message.frame}")
            return False
        if sample is None:
            source = message.source
            self._log("warning", f"a servo input on {source} arrived while the backend gives no joint state: dropped")
            return False
        if not gate.arming.armed or gate.stale_watch.holding:
            return False  # disarmed, or a joint went stale, after it was queued: dropped (the joints hold)
        i = self.indices
        masks = setpoints.masks()
        preempts = bool(masks.traj[i].any())
        if not self._active or not masks.servo[i].all():
            self._start(setpoints, sample)
        if message.kind == "pose":
            target = self._frame_pose(message.frame, self._q) @ message.values
            fixed = message.frame == self.chain.base_link  # a target in a moving frame has no stream velocity
            message = ServoInput(
                "pose", self.chain.base_link, target, message.received_ns, message.source, message.stamp_ns
            )
            self._target_velocity = self._stream_velocity(message) if fixed else np.zeros(6)
        elif self._input is None or self._input.kind != "twist":
            self._reference = None  # restarted from the measured pose at the next cycle
        self._input = message
        self._stop_reason = ""
        return preempts

    def _stream_velocity(self, message: ServoInput) -> FloatArray:
        """The velocity of a stream of poses: from the previous pose to this one over their stamps.

        Timed by the header stamps where both have one (their arrival jitters), else by the
        arrival times; none when the two are further apart than ``command_timeout`` (not a stream).
        """
        previous = self._input
        if previous is None or previous.kind != "pose":
            return np.zeros(6)
        if message.stamp_ns and previous.stamp_ns:
            elapsed = (message.stamp_ns - previous.stamp_ns) * 1e-9
        else:
            elapsed = (message.received_ns - previous.received_ns) * 1e-9
        if not 0.0 < elapsed <= self.settings.command_timeout:
            return np.zeros(6)
        velocity = pose_error(message.values, previous.values) / elapsed
        return velocity * self._speed_factor(velocity, self.settings)

    def _start(self, setpoints: Setpoints, sample: JointSample) -> None:
        """Take the chain's joints over where they are commanded now (no jump)."""
        i = self.indices
        masks = setpoints.masks()
        measured = sample.positions[i]
        current = np.where(masks.hold[i], setpoints.hold[i], np.where(masks.pos[i], setpoints.targets[i], measured))
        current = np.where(np.isfinite(current), current, measured)
        self._q = np.clip(np.nan_to_num(current), self.lower, self.upper)
        velocity = np.where(masks.servo[i], setpoints.feedforward[i], np.nan_to_num(sample.velocities[i]))
        self._qd = np.where(masks.vel[i], setpoints.targets[i], velocity)
        self._twist = np.zeros(6)
        self._twist[: self.rows] = self._jacobian(self._q) @ self._qd
        self._smoothed = self._twist.copy()
        self._reference = None
        setpoints.set_modes(i, SERVO)
        setpoints.targets[i] = self._q
        setpoints.feedforward[i] = self._qd
        self._active = True

    def _stop(self, reason: str) -> None:
        """Stop following the input: decelerate to a stop (reason kept for /diagnostics)."""
        self._input = None
        self._stop_reason = reason
        self._log("warning" if "rejected" in reason else "info", f"servo stopping: {reason}")

    # --------------------------------------------------------------- frames
    def _frame_pose(self, link: str, q: FloatArray) -> FloatArray:
        """The pose of ``link`` in the chain's base frame at chain configuration ``q``."""
        chain = self.chain
        if link == chain.base_link:
            return np.eye(4)
        if link == chain.tip_link:
            return chain.end_effector_pose(q)
        if link in chain.link_names:
            return np.asarray(chain.link_poses(q)[chain.link_names.index(link)], dtype=float)
        poses = self._fk.poses(dict(zip(chain.joint_names, (float(v) for v in q), strict=True)))
        return np.asarray(np.linalg.solve(poses[chain.base_link], poses[link]))

    def _jacobian(self, q: FloatArray) -> FloatArray:
        return np.asarray(self.chain.jacobian(q))[: self.rows]

    def measure(self, q: FloatArray) -> float:
        """The singularity measure at ``q``: the inverse condition number of the scaled Jacobian.

        Args:
            q: the chain's joint positions.

        Returns:
            ``σ_min / σ_max`` (0 singular, 1 isotropic), of the Jacobian whose linear rows are
            divided by the chain's reach (with fewer than six joints: of the linear rows alone).
        """
        return singularity_measure(self._jacobian(q), self.reach)

    # ----------------------------------------------------------------- cycle
    def update(self, setpoints: Setpoints, sample: JointSample, now: int, period: float) -> None:
        """One cycle: set the chain joints' targets and feed-forward (the loop thread's).

        Args:
            setpoints: the core's setpoints.
            sample: the joints' latest state.
            now: the cycle's time (monotonic ns).
            period: the loop period (s).
        """
        i = self.indices
        if not self._active:
            return
        if not setpoints.masks().servo[i].all():  # a joint command or trajectory took over
            self._active, self._input = False, None
            measure = self._status.singularity
            self._status = ServoStatus("idle", "joint commands took over", "", 1.0, measure, self.position_only)
            return
        settings = self.settings
        measured = np.where(np.isfinite(sample.positions[i]), sample.positions[i], self._q)
        current = self.chain.end_effector_pose(measured)
        wanted, correction, feedforward = self._wanted(current, now, settings)
        twist = self._ramp(wanted, period, settings, feedforward)
        jacobian = self._jacobian(self._q)
        measure = self.measure(self._q)
        free = self._solve(jacobian, (twist + correction)[: self.rows], measure, settings)
        scale, why = self._scale(free, measure, settings)
        qd = self._limit(free * scale, period, settings)
        self._q = np.clip(self._q + qd * period, self.lower, self.upper)
        self._qd = qd
        # The reference advances by the commanded twist as far as the limits let it (never by the
        # correction, else the correction would chase itself).
        size = float(free @ free)
        kept = min(max(float(qd @ free) / size, 0.0), 1.0) if size > 0.0 else 0.0
        self._advance(twist * kept, period)
        still = float(np.abs(qd).max()) < STILL and not twist.any()
        if self._input is None and still:
            setpoints.hold[i] = self._q
            setpoints.set_modes(i, int(CommandMode.HOLD))
            self._active = False
            setpoints.feedforward[i] = 0.0
        else:
            setpoints.targets[i] = self._q
            setpoints.feedforward[i] = qd
        self._report(scale, why, measure)

    def _wanted(
        self, current: FloatArray, now: int, settings: ServoSettings
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Step 1: the tool velocity wanted this cycle, the closed-loop correction and the feed-forward (base axes).

        A stream of poses is tracked with its own velocity as feed-forward, towards the last pose
        carried forward at that velocity to now (for at most ``command_timeout``: a stream that
        stops leaves its last pose to reach and hold); the approach speed corrects the rest.
        """
        none = np.zeros(6)
        message = self._input
        timeout = settings.command_timeout
        if message is not None and message.kind == "twist" and now - message.received_ns > timeout * 1e9:
            self._stop(f"the twist on {message.source} is stale (none for {settings.command_timeout:g} s)")
            message = None
        wanted = np.zeros(6)
        if message is None:
            self._reference = None  # decelerating to a stop: a new twist starts from the measured pose
            return wanted, none, none
        if message.kind == "twist":
            rotation = self._frame_pose(message.frame, self._q)[:3, :3]
            wanted[:3] = rotation @ message.values[:3]
            wanted[3:] = rotation @ message.values[3:]
            wanted *= self._speed_factor(wanted, settings)
            if self._reference is None:
                self._reference = current.copy()
            return wanted, self._correction(current, settings), none
        since = (now - message.received_ns) * 1e-9
        feedforward = self._target_velocity if 0.0 <= since <= settings.command_timeout else none
        target = message.values
        if feedforward.any():
            target = message.values.copy()
            target[:3, 3] += feedforward[:3] * since
            target[:3, :3] = rotation_matrix(feedforward[3:] * since) @ target[:3, :3]
        error = pose_error(target, current)
        for part, top, accel in (
            (slice(0, 3), settings.max_linear_speed, settings.max_linear_acceleration),
            (slice(3, 6), settings.max_angular_speed, settings.max_angular_acceleration),
        ):
            distance = float(np.linalg.norm(error[part]))
            if distance > 0.0:
                speed = min(top, math.sqrt(2.0 * accel * distance) * 0.9, settings.gain * distance)
                wanted[part] = error[part] * (speed / distance)
        factor = self._speed_factor(wanted + feedforward, settings)
        return wanted * factor, none, feedforward * factor

    @staticmethod
    def _speed_factor(twist: FloatArray, settings: ServoSettings) -> float:
        linear = float(np.linalg.norm(twist[:3])) / settings.max_linear_speed
        angular = float(np.linalg.norm(twist[3:])) / settings.max_angular_speed
        return 1.0 / max(linear, angular, 1.0)

    def _correction(self, current: FloatArray, settings: ServoSettings) -> FloatArray:
        """The velocity pulling the measured pose to the reference (bounded to a tenth of the maxima)."""
        assert self._reference is not None
        error = settings.gain * pose_error(self._reference, current)
        for part, top in ((slice(0, 3), settings.max_linear_speed), (slice(3, 6), settings.max_angular_speed)):
            size = float(np.linalg.norm(error[part]))
            if size > 0.1 * top:
                error[part] *= 0.1 * top / size
        if self.position_only:
            error[3:] = 0.0
        return error

    def _advance(self, applied: FloatArray, period: float) -> None:
        """Move the reference pose by the tool velocity actually commanded."""
        reference = self._reference
        if reference is None:
            return
        reference[:3, 3] += applied[:3] * period
        reference[:3, :3] = rotation_matrix(applied[3:] * period) @ reference[:3, :3]

    def _ramp(self, wanted: FloatArray, period: float, settings: ServoSettings, feedforward: FloatArray) -> FloatArray:
        """Step 2: the tool velocity, smoothed (:data:`SMOOTHING`) and changed by at most the tool accelerations.

        The feed-forward of a pose stream is added after the smoothing: it is smooth already,
        and smoothing it would make the tool lag the stream.
        """
        stopping = not wanted.any() and not feedforward.any()  # brakes at the accelerations, unsmoothed
        self._smoothed += (wanted - self._smoothed) * (1.0 if stopping else min(period / SMOOTHING, 1.0))
        change = self._smoothed + feedforward - self._twist
        for part, accel in (
            (slice(0, 3), settings.max_linear_acceleration),
            (slice(3, 6), settings.max_angular_acceleration),
        ):
            size = float(np.linalg.norm(change[part]))
            if size > accel * period:
                change[part] *= accel * period / size
        self._twist = self._twist + change
        return self._twist

    def _solve(self, jacobian: FloatArray, twist: FloatArray, measure: float, settings: ServoSettings) -> FloatArray:
        """Step 3: joint velocities by damped least squares (damped only below the slowdown measure)."""
        scaled = jacobian.copy()
        weights = np.ones(self.rows)
        weights[:3] /= self.reach
        scaled *= weights[:, None]
        damping = 0.0
        if measure < settings.singularity_slowdown:
            sigma_max = float(np.linalg.norm(scaled, 2))
            damping = 0.05 * sigma_max * (1.0 - measure / settings.singularity_slowdown)
        system = scaled @ scaled.T + damping * damping * np.eye(self.rows)
        return np.asarray(scaled.T @ np.linalg.solve(system, twist * weights))

    def _scale(self, qd: FloatArray, measure: float, settings: ServoSettings) -> tuple[float, str]:
        """Step 4: the smallest of the singularity, joint-limit and proximity scales, and why."""
        scales: list[tuple[float, str]] = [(1.0, "")]
        slowdown, stop = settings.singularity_slowdown, settings.singularity_stop
        speed = float(np.linalg.norm(qd))
        if measure < slowdown and speed > 0.0:
            step = qd * (1e-3 / speed)
            if self.measure(self._q + step) <= measure:  # towards the singularity
                value = math.sqrt(min(max((measure - stop) / max(slowdown - stop, 1e-9), 0.0), 1.0))
                why = f"singularity: measure {measure:.4f} (slow below {slowdown:g}, stop at {stop:g})"
                scales.append((value, why))
        margin = settings.joint_limit_margin
        if margin > 0.0:
            room = np.where(qd > 0, self.upper - self._q, np.where(qd < 0, self._q - self.lower, np.inf))
            fractions = (room / margin - LIMIT_STOP_FRACTION) / (1.0 - LIMIT_STOP_FRACTION)
            k = int(np.argmin(fractions))
            if fractions[k] < 1.0:
                name = self.chain.joint_names[k]
                value = math.sqrt(min(max(float(fractions[k]), 0.0), 1.0))
                scales.append((value, f"joint limit: {name} within {margin:g} of its command range's end"))
        if self.proximity is not None:
            value = min(max(float(self.proximity()), 0.0), 1.0)
            if value < 1.0:
                scales.append((value, "collision: an obstacle is near"))
        return min(scales, key=lambda item: item[0])

    def _limit(self, qd: FloatArray, period: float, settings: ServoSettings) -> FloatArray:
        """Step 5: within the velocity limits (together) and the acceleration limits (the change together)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = float(np.nanmax(np.abs(qd) / self.velocity, initial=0.0))
        if ratio > 1.0:
            qd = qd / ratio
        accel = np.where(np.isfinite(self.acceleration), self.acceleration, settings.max_joint_acceleration)
        change = qd - self._qd
        ratio = float(np.max(np.abs(change) / (accel * period), initial=0.0))
        if ratio > 1.0:
            qd = self._qd + change / ratio
        # Never past the command range: the speed a joint can still brake from before its end.
        room = np.where(qd > 0, self.upper - self._q, self._q - self.lower)
        cap = np.sqrt(2.0 * accel * np.maximum(room, 0.0))
        return np.asarray(np.clip(qd, -cap, cap))

    def _report(self, scale: float, why: str, measure: float) -> None:
        message = self._input
        mode = message.kind if message is not None else ""
        if not self._active:
            state, reason = "idle", self._stop_reason
        elif message is None:
            state, reason = "halted", self._stop_reason
        elif scale <= 0.0:
            state, reason = "halted", why
        elif scale < 1.0:
            state, reason = "slowed", why
        else:
            state, reason = "tracking", ""
        if state != self._status.state or reason.split(":")[0] != self._status.reason.split(":")[0]:
            if state in ("slowed", "halted") and message is not None:
                self._log("info", f"servo {state}: {reason}")
        self._status = ServoStatus(state, reason, mode, scale, measure, self.position_only)
