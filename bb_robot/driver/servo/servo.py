"""The Cartesian servo: twist and pose streams followed inside the control loop.

The servo moves the serial chain from the robot's root link to ``servo.tip``
(:class:`~bb_robot.model.serial.SerialManipulator`).  Inputs (:mod:`bb_robot.driver.servo.servo_inputs`)
reach the loop through the core's inbox; :meth:`Servo.take` puts the chain's joints in the
:data:`~bb_robot.driver.cycle.setpoints.SERVO` mode and :meth:`Servo.update`, called by
:meth:`~bb_robot.driver.cycle.setpoints.Setpoints.command` every cycle, sets their position targets
and velocity feed-forward.  They then pass the core's last guard, the collision guard's filter
and the backend like any joint command.

Each cycle:

1. **The tool velocity wanted.**  A twist: its velocity (the tip point's linear velocity and the
   angular velocity, turned into base axes with the frame's current orientation), scaled down
   to the maximum speeds (direction kept), plus ``gain`` times the error from the *measured*
   tool pose to a reference pose that advances with the motion actually commanded: what the
   linearisation, tracking lag or a sagging joint lose is caught up, so the tool does not drift.
   A pose: a speed towards the target from the measured pose, ``min(max, sqrt(2 a d), gain d)``
   for the distance and the angle each; a stream of poses adds its own motion and carries its
   last pose forward from its ``header.stamp`` where plausible, else from its arrival
   (:func:`~bb_robot.driver.servo.servo_inputs.stamp_origin`).  No input, a stale twist or a silent
   stream of poses (none for ``command_timeout``), or a rejected message: zero.
2. The wanted velocity changes by at most the tool accelerations per cycle.
3. **Joint velocities**: least squares on the Jacobian at the setpoint (all six rows; with fewer
   than six joints the three linear rows: position only, in the least-squares sense).  Below
   ``singularity_slowdown`` the solution is scaled as a whole within the joint speed damped least
   squares allows, so that near a singularity the tool slows in the direction asked for
   instead of turning away from it (:func:`~bb_robot.driver.servo.servo_math.joint_velocities`).
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

A twist or a stream of poses stopped (stale or silent, rejected) decelerates within the same
limits, never back towards the last pose received; once still, the joints are handed back to the
core to hold where they stopped.  A single pose is a target: it is reached and held.  A joint
command or trajectory on any of the chain's joints takes them over at once (the core's modes say
who drives them).

The steps' arithmetic is :mod:`bb_robot.driver.servo.servo_math`'s.  Where numba runs, a cycle is
one compiled call with its own forward kinematics (:func:`~bb_robot.driver.servo.chain.load_kernel`);
else the same steps run with numpy and the chain's kinematics.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.tolerances import Outcome
from bb_robot.driver.cycle.inbox import ServoInput
from bb_robot.driver.cycle.setpoints import SERVO, Setpoints
from bb_robot.driver.errors import INVALID_GOAL
from bb_robot.driver.servo import servo_math as sm
from bb_robot.driver.servo.chain import build_chain, load_kernel
from bb_robot.driver.servo.servo_inputs import FrameNames, ServoSettings, stamp_origin
from bb_robot.driver.servo.stream import PoseStream
from bb_robot.driver.state.arming import Arming
from bb_robot.driver.timing.staleness import StaleWatch
from bb_robot.model.dexterity import reach, singularity_measure
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot

FloatArray = npt.NDArray[np.float64]
LogFunction = Callable[[str, str], None]

#: How a trajectory on the servo's joints ends when a servo input arrives.
PREEMPTED = Outcome("aborted", INVALID_GOAL, "preempted by a servo input")
_log = logging.getLogger(__name__)


class Gate(Protocol):
    """What the servo asks the core before taking an input."""

    arming: Arming
    stale_watch: StaleWatch


#: The key of :attr:`ServoStatus.stream_silences` among the servo's /diagnostics values.
STREAM_SILENCES = "pose stream silences"


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
        stamps_rejected: poses whose ``header.stamp`` was not plausible
            (:func:`~bb_robot.driver.servo.servo_inputs.stamp_origin`), carried forward from their arrival.
        stream_silences: how often a stream of poses fell silent here while its sender went on
            (since the servo started): no pose received for longer than ``command_timeout``, then
            one stamped within ``command_timeout`` of the pose before it.  The servo stopped the
            tool meanwhile, and caught up once poses came again.  A pause of the sender's own
            (its stamps pause too), a stream's end and unstamped poses are not counted.
    """

    state: str
    reason: str
    mode: str
    scale: float
    singularity: float
    position_only: bool
    stamps_rejected: int = 0
    stream_silences: int = 0


class Servo:
    """The servo of one driver (see the module docstring).

    Args:
        robot: the model.
        joint_names: the driver's joints, in its order.
        limits: their effective limits.
        settings: the ``servo.*`` settings.
        log: ``log(level, text)``, called from the loop thread.
        proximity: the collision guard's speed scale now (0 to 1), when there is a guard.
        kernel: run each cycle as one compiled call (:func:`load_kernel`) where it can; ``False``:
            the numpy path.

    Raises:
        ServoError: as :func:`~bb_robot.driver.servo.chain.build_chain`.
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
        kernel: bool = True,
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
        n = chain.dof
        #: The state the compiled cycle changes, in one vector: the setpoint, its velocity, the
        #: commanded tool velocity, its smoothed feedback part and the twist's reference pose.
        self._state = np.zeros(2 * n + 28)
        self._q, self._qd, self._twist = self._state[:n], self._state[n : 2 * n], self._state[2 * n : 2 * n + 6]
        #: The smoothed feedback part of the tool velocity (:meth:`_ramp`).
        self._smoothed = self._state[2 * n + 6 : 2 * n + 12]
        #: The motion of the pose stream being tracked (zero for a single pose), and its latest poses.
        self._stream = np.zeros(12)
        self._poses = PoseStream()
        #: Whether the pose input is one of a stream (stopped, not held, when the stream falls silent).
        self._streaming = False
        #: When the pose input held on the monotonic clock (its plausible stamp, else its arrival).
        self._origin_ns = 0
        #: Poses whose stamp was not plausible, and why the last one's was not ("": it was).
        self._stamps_rejected, self._stamp_rejected = 0, ""
        self._silences = 0
        #: The stamp and arrival (ns) of the latest pose taken (zeros: none yet).
        self._last_pose = (0, 0)
        #: The twist's reference pose (base frame); ``[3, 3]`` is 0 while there is none.
        self._reference = self._state[2 * n + 12 :].reshape(4, 4)
        #: The twist frame's index among the chain's compiled frames (-1: the base, or off the chain).
        self._frame = -1
        self._frame_indices: dict[str, int] = {}
        self._s = sm.settings_vector(settings)
        self._none, self._eye, self._eye3 = np.zeros(6), np.eye(4), np.eye(3)
        self._out = np.zeros(4)
        self._positions = np.zeros(len(self.joint_names))
        program, spec, tip, _ = chain.compiled_parts(chain.tip_link)
        self._program = (program.code, spec, tip)  # what the compiled cycle runs the kinematics with
        self._work = np.empty_like(program.work)
        self._kernel = load_kernel() if kernel else None
        if self._kernel is not None and not self._warm_up():
            self._kernel = None
        #: The last cycle's (state, reason, mode, scale, singularity measure): :attr:`status`.
        self._last: tuple[str, str, str, float, float] = ("idle", "", "", 1.0, 1.0)
        self._stop_reason = ""
        #: The modes last seen (:class:`~bb_robot.driver.cycle.setpoints.ModeMasks`, replaced when a mode
        #: changes) and, for the chain: all in the servo mode, any following a trajectory.
        self._masks: object = None
        self._chain_modes = (False, False)

    def _warm_up(self) -> bool:
        """Compile (or load from numba's cache) the kernel now, not in the first cycle: whether it runs."""
        assert self._kernel is not None
        n = self.chain.dof
        state = np.zeros_like(self._state)
        state[:n] = np.clip(state[:n], self.lower, self.upper)
        try:
            self._kernel(
                *self._program, -1, self._work, state[:n].copy(), self.indices, np.zeros(n), np.zeros(n), state,
                self._limits, sm.TWIST, self._eye3, np.zeros(6), self._eye, np.zeros(12), 0.0, self.rows,
                self.reach, 1.0, 0.002, self._s, np.zeros(4),
            )  # fmt: skip
        except Exception as error:  # noqa: BLE001 - numba fails in many ways; the numpy path still works
            _log.warning("numba could not compile the servo's cycle (%s: %s); using numpy", type(error).__name__, error)
            return False
        return True

    # --------------------------------------------------------------- set-up
    def use_limits(self, limits: JointLimitTable) -> None:
        """New effective limits (the loop thread's, or before it starts).

        Args:
            limits: of every driven joint, in the driver's order.
        """
        i = self.indices
        table = np.array([limits.command_lower[i], limits.command_upper[i], limits.velocity[i], limits.acceleration[i]])
        self.lower, self.upper, self.velocity, self.acceleration = table
        self._limits = table  # the compiled cycle's (a new array: one the loop may be reading is left alone)

    def use_settings(self, settings: ServoSettings) -> None:
        """New settings (any thread; the tip stays as configured).

        Args:
            settings: the ``servo.*`` values.
        """
        self.settings = settings
        self._s = sm.settings_vector(settings)
        self.frames = FrameNames(self.frames.links, self.frames.base, settings.frame_prefix)

    @property
    def status(self) -> ServoStatus:
        """The state of the last cycle (any thread)."""
        state, reason, mode, scale, measure = self._last
        return ServoStatus(
            state, reason, mode, scale, measure, self.position_only, self._stamps_rejected, self._silences
        )

    @property
    def compiled(self) -> bool:
        """Whether each cycle is one compiled call (:func:`load_kernel`); else the numpy path."""
        return self._kernel is not None

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
        servo, preempts = self._modes(setpoints)
        if not self._active or not servo:
            self._start(setpoints, sample)
        if message.kind == "pose":
            self._count_silence(message)
            target = self._frame_pose(message.frame, self._q) @ message.values
            fixed = message.frame == self.chain.base_link  # a target in a moving frame is not a stream
            message = replace(message, frame=self.chain.base_link, values=np.array(target, dtype=float))
            if not fixed:
                self._poses.reset()
            fit = self._stream_motion(message) if fixed else None
            self._streaming = fit is not None
            self._stream = fit[0] if fit is not None else np.zeros(12)
            if fit is not None:
                message = replace(message, values=fit[1])
            self._origin_ns = self._origin(message)
        else:
            values = message.values  # of the compiled cycle's type (float64, contiguous, writeable), whoever made it
            if not (values.dtype == np.float64 and values.flags.c_contiguous and values.flags.writeable):
                message = replace(message, values=np.array(values, dtype=float))
            self._frame = self._frame_index(message.frame)
            if self._input is None or self._input.kind != "twist":
                self._reference[3, 3] = 0.0  # restarted from the measured pose at the next cycle
        self._input = message
        self._stop_reason = ""
        return preempts

    def _count_silence(self, message: ServoInput) -> None:
        """Count a silence of the stream where it was received while its sender went on (:class:`ServoStatus`)."""
        stamp, received = self._last_pose
        self._last_pose = (message.stamp_ns, message.received_ns)
        timeout = self.settings.command_timeout * 1e9
        if stamp and message.stamp_ns and message.received_ns - received > timeout:
            if 0 < message.stamp_ns - stamp <= timeout:
                self._silences += 1

    def _stream_motion(self, message: ServoInput) -> tuple[FloatArray, FloatArray] | None:
        """The motion of a stream of poses at this pose (:class:`~bb_robot.driver.servo.stream.PoseStream`).

        ``None`` when this pose is no part of a stream: the first after another input, a stop or
        a silence, or one further than ``command_timeout`` from the pose before it.
        """
        previous = self._input
        if previous is None or previous.kind != "pose":
            self._poses.reset()
        return self._poses.add(
            message.values, message.stamp_ns, message.received_ns, self.settings.command_timeout, self._s
        )

    def _origin(self, message: ServoInput) -> int:
        """When a pose held (:func:`~bb_robot.driver.servo.servo_inputs.stamp_origin`); a stamp not used is
        counted, and logged when it follows one used."""
        origin, rejected = stamp_origin(message)
        if rejected:
            self._stamps_rejected += 1
            if not self._stamp_rejected:
                self._log(
                    "warning",
                    f"servo: the stamp of a pose on {message.source} not used ({rejected}): poses are carried "
                    "forward from their arrival while their stamps are not plausible",
                )
        self._stamp_rejected = rejected
        return origin

    def _start(self, setpoints: Setpoints, sample: JointSample) -> None:
        """Take the chain's joints over where they are commanded now (no jump)."""
        i = self.indices
        masks = setpoints.masks()
        measured = sample.positions[i]
        current = np.where(masks.hold[i], setpoints.hold[i], np.where(masks.pos[i], setpoints.targets[i], measured))
        current = np.where(np.isfinite(current), current, measured)
        self._q[:] = np.clip(np.nan_to_num(current), self.lower, self.upper)
        velocity = np.where(masks.servo[i], setpoints.feedforward[i], np.nan_to_num(sample.velocities[i]))
        self._qd[:] = np.where(masks.vel[i], setpoints.targets[i], velocity)
        self._twist[:] = 0.0
        self._twist[: self.rows] = self._jacobian(self._q) @ self._qd
        self._smoothed[:] = self._twist
        self._reference[3, 3] = 0.0
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

    def _frame_index(self, link: str) -> int:
        """``link``'s index among the chain's compiled frames; -1 for the base (identity) or a link off the chain."""
        index = self._frame_indices.get(link)
        if index is None:
            index = -1 if link == self.chain.base_link else self.chain.compiled_parts(link)[3]
            self._frame_indices[link] = index
        return index

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
        if not self._modes(setpoints)[0]:  # a joint command or trajectory took over
            self._active, self._input = False, None
            self._last = ("idle", "joint commands took over", "", 1.0, self._last[4])
            return
        mode, values, target, since, frame, rotation = self._cycle_input(now)
        proximity = 1.0 if self.proximity is None else float(self.proximity())
        kernel = self._kernel
        if kernel is not None:  # also writes the chain's targets and feed-forward
            out = self._out
            kernel(
                *self._program,
                frame,
                self._work,
                self._positions_of(sample),
                i,
                setpoints.targets,
                setpoints.feedforward,
                self._state,
                self._limits,
                mode,
                rotation,
                values,
                target,
                self._stream,
                since,
                self.rows,
                self.reach,
                proximity,
                period,
                self._s,
                out,
            )
            scale, measure, why, still = float(out[0]), float(out[1]), int(out[2]), bool(out[3])
        else:
            positions = sample.positions[i]
            measured = np.where(np.isfinite(positions), positions, self._q)
            scale, measure, why, still = self._numpy_cycle(
                measured, mode, values, target, since, frame, rotation, proximity, period
            )
            setpoints.targets[i] = self._q
            setpoints.feedforward[i] = self._qd
        if self._input is None and still:
            setpoints.hold[i] = self._q
            setpoints.set_modes(i, int(CommandMode.HOLD))
            self._active = False
            setpoints.feedforward[i] = 0.0
        self._report(scale, self._why(why, measure) if scale < 1.0 else "", measure)

    def _positions_of(self, sample: JointSample) -> FloatArray:
        """The sample's positions in an array of the compiled cycle's type (float64, contiguous, writeable)."""
        buffer = self._positions
        if buffer.shape != sample.positions.shape:
            buffer = self._positions = np.empty(sample.positions.shape)
        buffer[:] = sample.positions
        return buffer

    def _modes(self, setpoints: Setpoints) -> tuple[bool, bool]:
        """Whether the chain's joints are all in the servo mode, and whether any follows a trajectory.

        Worked out again only when a mode changed (the setpoints then have new masks).
        """
        masks = setpoints.masks()
        if masks is not self._masks:
            i = self.indices
            self._masks, self._chain_modes = masks, (bool(masks.servo[i].all()), bool(masks.traj[i].any()))
        return self._chain_modes

    def _cycle_input(self, now: int) -> tuple[int, FloatArray, FloatArray, float, int, FloatArray]:
        """This cycle's input for :mod:`~bb_robot.driver.servo.servo_math`: mode, twist, pose, age, twist frame.

        A twist, or the last pose of a stream, older than ``command_timeout`` stops the servo here
        (it then decelerates where the tool is).  A pose's age is counted from when it held
        (:meth:`_origin`).  The twist frame is an index among the chain's compiled frames, or -1
        with its orientation.
        """
        message = self._input
        timeout = self.settings.command_timeout
        if message is not None and now - message.received_ns > timeout * 1e9:
            if message.kind == "twist":
                self._stop(f"the twist on {message.source} is stale (none for {timeout:g} s)")
                message = None
            elif self._streaming:
                self._stop(f"the pose stream on {message.source} fell silent (none for {timeout:g} s)")
                message = None
        if message is None:
            return sm.NO_INPUT, self._none, self._eye, 0.0, -1, self._eye3
        if message.kind == "pose":
            return sm.POSE, self._none, message.values, (now - self._origin_ns) * 1e-9, -1, self._eye3
        if self._frame < 0 and message.frame != self.chain.base_link:  # a link off the chain: in Python
            rotation = np.ascontiguousarray(self._frame_pose(message.frame, self._q)[:3, :3])
            return sm.TWIST, message.values, self._eye, 0.0, -1, rotation
        return sm.TWIST, message.values, self._eye, 0.0, self._frame, self._eye3

    def _numpy_cycle(
        self,
        measured: FloatArray,
        mode: int,
        values: FloatArray,
        target: FloatArray,
        since: float,
        frame: int,
        rotation: FloatArray,
        proximity: float,
        period: float,
    ) -> tuple[float, float, int, bool]:
        """The compiled cycle's steps with numpy and the chain's kinematics: ``(scale, measure, why, still)``."""
        chain, s = self.chain, self._s
        if frame >= 0 and self._input is not None:
            rotation = self._frame_pose(self._input.frame, self._q)[:3, :3]
        free, measure, damped = sm.start(
            mode,
            chain.end_effector_pose(measured),
            rotation,
            values,
            target,
            self._stream,
            since,
            self._reference,
            self._smoothed,
            self._twist,
            self._jacobian(self._q),
            self.reach,
            period,
            s,
        )
        point = sm.probe(self._q, free, measure, s)
        ahead = self.measure(point) if point.size else math.nan
        scale, why, still = sm.finish(
            free,
            measure,
            ahead,
            damped,
            self._q,
            self._qd,
            self._twist,
            self._reference,
            self.lower,
            self.upper,
            self.velocity,
            self.acceleration,
            proximity,
            period,
            s,
        )
        return scale, measure, why, still

    def _why(self, why: int, measure: float) -> str:
        """The reason for a speed scale below 1, from :mod:`~bb_robot.driver.servo.servo_math`'s ``WHY_*``."""
        settings = self.settings
        if why == sm.WHY_SINGULARITY:
            slowdown, stop = settings.singularity_slowdown, settings.singularity_stop
            return f"singularity: measure {measure:.4f} (slow below {slowdown:g}, stop at {stop:g})"
        if why == sm.WHY_PROXIMITY:
            return "collision: an obstacle is near"
        if why >= sm.WHY_LIMIT:
            name = self.chain.joint_names[why - sm.WHY_LIMIT]
            return f"joint limit: {name} within {settings.joint_limit_margin:g} of its command range's end"
        return ""

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
        last = self._last
        if state != last[0] or reason.split(":")[0] != last[1].split(":")[0]:
            if state in ("slowed", "halted") and message is not None:
                self._log("info", f"servo {state}: {reason}")
        self._last = (state, reason, mode, scale, measure)
