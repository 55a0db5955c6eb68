"""``backend: mujoco``: the driver's joints in a MuJoCo physics simulation of the robot model.

The robot the driver loaded (URDF, xacro, SDF model or world) is written as MJCF
(:mod:`bb_robot.mjcf`) and simulated with gravity, inertia, joint damping and friction, joint
limits, mimic constraints and contact with a floor.  Each driven joint has one actuator, clamped
to its ``<limit effort>`` (the driver's effective effort limit), whose gains follow the joint's
command mode (:mod:`~bb_robot.driver.backends._mujoco_servos`): **position** (and hold) a PD servo
with feed-forward, **velocity** a velocity servo, **effort** a torque or force motor.  A velocity
command of a joint whose command range has an end in its direction is bounded: the PD servo tracks
a reference that starts where the joint is and moves at the commanded speed, braking at the
joint's acceleration limit (every physics step) so that it stops at the range's end, however long
the driver leaves the command in force; the joint is then held there against gravity.  Position
references (a trajectory's, extrapolated with its velocity) stop at the range's ends too.  Samples
carry position, velocity and effort (the actuator's force).  Disarmed, the actuators are off
(``mujoco.disarmed: limp``, the default: the arm sags under gravity, as a robot with its drives
disabled) or keep holding (``hold``).

Time: by default the physics follows the driver's clock (each ``read`` advances the simulation
by the time since the previous one, in steps of ``mujoco.timestep``; a gap longer than
``mujoco.max_gap`` is not simulated).  With ``mujoco.lockstep: true`` each control cycle advances
it by exactly one control period, whatever the wall clock says: a loop that falls behind slows
the simulation down instead of making it jump, and the backend publishes the simulated time
(:meth:`MujocoBackend.sim_time_ns`) on ``/clock`` through the driver node's host.  The real-time
factor is in ``/diagnostics``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bb_robot.common.parameters import configure_parameter
from bb_robot.driver.backends import _mujoco_servos as servos
from bb_robot.driver.backends._mujoco_objects import MujocoObjects
from bb_robot.driver.backends._simulated import INITIAL_POSITIONS, MAX_GAP, start_positions
from bb_robot.driver.backends.base import (
    Backend,
    BackendCommand,
    BackendContext,
    Capabilities,
    Health,
    HealthLevel,
    JointSample,
    ObjectPoses,
    ParameterSpec,
)
from bb_robot.driver.backends.host import ClockOutput
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import JointLimitTable, braking_speeds
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import BackendError
from bb_robot.errors import BbRobotError
from bb_robot.mjcf import MjcfOptions, MjcfWriteError, robot_to_mjcf

if TYPE_CHECKING:
    import mujoco

_POSITION = int(CommandMode.POSITION)
_HOLD = int(CommandMode.HOLD)
_VELOCITY = int(CommandMode.VELOCITY)
_EFFORT = int(CommandMode.EFFORT)


class MujocoBackend(Backend):
    """The robot in MuJoCo (see the module docstring)."""

    name = "mujoco"
    summary = "MuJoCo physics simulation (position, velocity and effort commands; effort feedback)"

    @classmethod
    def parameters(cls) -> Sequence[ParameterSpec]:
        return (
            configure_parameter(
                "lockstep",
                False,
                "true: each control cycle advances the simulation by one control period and /clock carries the "
                "simulated time; false: the simulation follows the driver's clock (real time).",
                "bool",
            ),
            configure_parameter(
                "timestep",
                0.001,
                "Physics time step, in seconds.",
                "double",
                range=(1e-5, 0.05),
            ),
            configure_parameter(
                "bandwidth",
                10.0,
                "Natural frequency (Hz) of the default position servos: kp = I·(2π·bandwidth)², "
                "kd = 2·ζ·I·2π·bandwidth, I the joint's inertia at the current pose (updated every cycle).",
                "double",
                range=(0.01, 1000.0),
            ),
            configure_parameter(
                "damping_ratio",
                1.0,
                "Damping ratio ζ of the default position servos.",
                "double",
                range=(0.0, 100.0),
            ),
            configure_parameter(
                "gravity_compensation",
                True,
                "Whether the position servos add the gravity torques of the current pose (a PD servo with gravity "
                "compensation: no sag at rest); effort commands never get it.",
                "bool",
            ),
            configure_parameter(
                "kp",
                [],
                "Position gains (N·m/rad or N/m), one per driven joint or one for all; empty: from the inertia.",
                "double_array",
            ),
            configure_parameter(
                "kd",
                [],
                "Damping of the position servos (N·m·s/rad or N·s/m), one per joint or one for all; empty: from the "
                "inertia.",
                "double_array",
            ),
            configure_parameter(
                "kv",
                [],
                "Velocity-servo gains (N·m·s/rad or N·s/m), one per joint or one for all; empty: kd.",
                "double_array",
            ),
            configure_parameter(
                "gripper_kp",
                0.0,
                "Position gain (N/m or N·m/rad) of the gripper joints (the driver's gripper.joints), their damping "
                "2·ζ·√(kp·I); 0: as the other joints. A stiffer finger squeezes a grasped object harder: the "
                "squeeze is kp times how far the close command lies beyond where the fingers meet the object.",
                "double",
                range=(0.0, 1e6),
            ),
            INITIAL_POSITIONS,
            configure_parameter(
                "disarmed",
                "limp",
                "What the actuators do while the driver is disarmed: 'limp' (no force: the arm falls under gravity) "
                "or 'hold' (the position servos keep holding).",
                choices=("limp", "hold"),
            ),
            configure_parameter(
                "floor",
                "auto",
                "'auto': add a floor plane at z = 0 when the model has none; 'true' / 'false': always / never.",
                choices=("auto", "true", "false"),
            ),
            configure_parameter(
                "self_collide",
                False,
                "Whether the robot's links collide with each other (as Gazebo's <self_collide>; off by default).",
                "bool",
            ),
            MAX_GAP,
        )

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.lockstep = self.flag_option("lockstep")
        self.timestep = self.number_option("timestep")
        self.bandwidth = self.number_option("bandwidth")
        self.damping_ratio = self.number_option("damping_ratio")
        self.gravity_compensation = self.flag_option("gravity_compensation")
        self._gravity = np.zeros(len(self.joint_names))
        self.disarmed_action = self.text_option("disarmed")
        self.floor = self.text_option("floor")
        self.self_collide = self.flag_option("self_collide")
        self.max_gap = self.number_option("max_gap")
        self.gain_rule = servos.GainRule.from_parameters(
            self.joint_names,
            self.bandwidth,
            self.damping_ratio,
            self.numbers_option("kp"),
            self.numbers_option("kd"),
            self.numbers_option("kv"),
        )
        self._initial = self.numbers_option("initial_positions")
        self.gripper_kp = self.number_option("gripper_kp")
        self._gripper_mask = np.array([name in context.gripper_joints for name in self.joint_names], dtype=bool)
        if self.disarmed_action not in ("limp", "hold"):
            raise BackendError(f"mujoco.disarmed is 'limp' or 'hold', not '{self.disarmed_action}'")
        if self.floor not in ("auto", "true", "false"):
            raise BackendError(f"mujoco.floor is 'auto', 'true' or 'false', not '{self.floor}'")
        n = len(self.joint_names)
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        self.gains: servos.Gains | None = None
        self.warnings: tuple[str, ...] = ()
        self._mj: object = None
        self._armed = False
        self._servo_modes = np.full(n, -1, dtype=np.int8)
        self._q_ref = np.zeros(n)
        self._v_ref = np.zeros(n)
        self._a_ref = np.zeros(n)
        self._ref_time = 0.0
        #: The trajectory the last command was sampled from, its time then (s), and when the
        #: command came (simulated s): followed rather than extrapolated once the next command is
        #: more than two periods late (see BackendCommand).
        self._follow: Trajectory | None = None
        self._follow_t = 0.0
        self._command_time = 0.0
        self._moving_ref = False
        self._position_mask = np.zeros(n, dtype=bool)
        #: Velocity-mode joints tracked as a bounded reference (see the module docstring), and the
        #: end of the command range each moves towards.
        self._bounded = np.zeros(n, dtype=bool)
        self._bound = np.zeros(n)
        self._stamps = np.zeros(n, dtype=np.int64)
        self._step_ns = int(round(self.timestep * 1e9))
        self._period_ns = int(round(1e9 / context.rate)) if context.rate > 0 else 2_000_000
        self._owed_ns = 0
        self._steps = 0
        self._wall_ns: int | None = None
        self._fresh = True
        self.gaps = 0
        self._physics_ns = 0
        self._rtf_mark: tuple[int, int] | None = None
        self._rtf = float("nan")
        #: ``/clock`` through the node's host in lockstep (its ``open_clock`` port).
        self._clock_output: ClockOutput | None = None
        #: The world's objects in the physics (``collision.world``), and their latest poses.
        self.objects: MujocoObjects | None = None
        self._object_poses: ObjectPoses | None = None

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            modes=frozenset({CommandMode.POSITION, CommandMode.VELOCITY, CommandMode.EFFORT}), effort_feedback=True
        )

    # ---------------------------------------------------------------- simulated time
    def sim_time_ns(self) -> int:
        """The simulated time since connect, in nanoseconds (an exact multiple of the time step)."""
        return self._steps * self._step_ns

    @property
    def real_time_factor(self) -> float:
        """Simulated time over wall time between the last two :meth:`health` calls (NaN before)."""
        return self._rtf

    # ---------------------------------------------------------------- lifecycle
    def connect(self, timeout: float) -> None:
        try:
            import mujoco
        except ImportError as error:
            raise BackendError(f"backend 'mujoco' needs the mujoco package (pip install mujoco): {error}") from None
        floor = None if self.floor == "auto" else self.floor == "true"
        try:
            bodies = self.context.world_objects()
        except BbRobotError as error:
            raise BackendError(f"the objects of collision.world cannot be simulated: {error}") from None
        try:
            document = robot_to_mjcf(
                self.robot,
                MjcfOptions(
                    timestep=self.timestep,
                    floor=floor,
                    self_collide=self.self_collide,
                    actuated=self.joint_names,
                    search_dirs=self.context.model_dirs,
                    bodies=bodies,
                ),
            )
        except MjcfWriteError as error:
            raise BackendError(f"the model cannot be simulated: {error}") from None
        self.warnings = document.warnings
        for warning in document.warnings:
            self.logger.warning(f"mujoco: {warning}")
        try:
            model = mujoco.MjModel.from_xml_string(document.text)
        except ValueError as error:
            raise BackendError(f"MuJoCo refused the model of robot '{self.robot.name}': {error}") from None
        # MuJoCo's warnings (an unstable state, a full contact buffer) to the driver's log, not to a
        # MUJOCO_LOG.TXT in the working directory (the handler is the process's: one driver per process).
        logger = self.logger
        mujoco.set_mju_user_warning(lambda text: logger.warning(f"mujoco: {text}"))
        data = mujoco.MjData(model)
        self._scratch = mujoco.MjData(model)  # for the gravity torques (zero velocity)
        self._bias = np.zeros(model.nv)
        # A mimic joint's load reaches its leader through the equality constraint: multiplier · torque.
        self._mimic_loads = [
            (self.joint_names.index(j.mimic.joint), int(model.joint(j.name).dofadr[0]), j.mimic.multiplier)
            for j in self.robot.joints_in_order()
            if j.mimic is not None and j.mimic.joint in self.joint_names and j.name in _joint_names(model)
        ]
        self._mj = mujoco
        self.model, self.data = model, data
        self.objects = MujocoObjects(model, bodies) if bodies else None
        self._object_poses = self.objects.measure(data, 0) if self.objects is not None else None
        self._qadr = np.array([model.joint(n).qposadr[0] for n in self.joint_names], dtype=np.intp)
        self._dadr = np.array([model.joint(n).dofadr[0] for n in self.joint_names], dtype=np.intp)
        self._actuators = np.array([model.actuator(n).id for n in self.joint_names], dtype=np.intp)
        start = start_positions(self._initial, self.limits, self.joint_names, self.name)
        data.qpos[self._qadr] = start
        self._place_mimics(model, data)
        mujoco.mj_forward(model, data)
        self._mass = np.zeros((model.nv, model.nv))
        self.gains = self._gains()
        self._apply_effort_limits()
        self._q_ref = start.copy()
        self._v_ref[:] = 0.0
        self._a_ref[:] = 0.0
        self._servo_modes[:] = -1
        self._set_modes(np.full(len(self.joint_names), servos.POSITION if self._holds_disarmed() else servos.LIMP))
        self._steps = 0
        self._owed_ns = 0
        self._wall_ns = None
        self._fresh = True
        if self.lockstep and self.context.host is not None:  # /clock carries the simulated time
            self._clock_output = self.context.host.open_clock()

    def _place_mimics(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Start each mimic joint where its equality constraint wants it."""
        for joint in self.robot.joints_in_order():
            mimic = joint.mimic
            if mimic is None:
                continue
            try:
                follower, leader = model.joint(joint.name), model.joint(mimic.joint)
            except KeyError:
                continue
            data.qpos[follower.qposadr[0]] = mimic.offset + mimic.multiplier * data.qpos[leader.qposadr[0]]

    def disconnect(self) -> None:
        if self._clock_output is not None:
            self._clock_output.close()
            self._clock_output = None
        self.model = None
        self.data = None

    def start(self) -> None:
        self._wall_ns = None
        self._fresh = True
        self._rtf_mark = None

    def stop(self) -> None:
        self._wall_ns = None

    def health(self) -> Health:
        if self.model is None:
            return Health(connected=False, message="not connected")
        now = time.monotonic_ns()
        sim = self.sim_time_ns()
        mark = self._rtf_mark
        if mark is not None and now > mark[0]:
            self._rtf = (sim - mark[1]) / (now - mark[0])
        self._rtf_mark = (now, sim)
        steps_per_second = self._steps / (self._physics_ns * 1e-9) if self._physics_ns else float("nan")
        resets = self._resets()
        level, message = HealthLevel.OK, f"simulated ({'lockstep' if self.lockstep else 'real time'})"
        if resets:
            level = HealthLevel.WARN
            message = (
                f"the simulation went unstable: MuJoCo reset its state {resets} times (lower mujoco.bandwidth "
                "or mujoco.timestep, or set smaller gains)"
            )
        return Health(
            connected=True,
            level=level,
            message=message,
            values={
                "unstable resets": str(resets),
                "time": "lockstep" if self.lockstep else "real time",
                "real-time factor": f"{self._rtf:.3f}",
                "simulated time (s)": f"{sim * 1e-9:.3f}",
                "physics steps": str(self._steps),
                "physics time step (s)": f"{self.timestep:g}",
                "physics steps per CPU second": f"{steps_per_second:.0f}",
                "integration gaps": str(self.gaps),
                "armed": str(self._armed).lower(),
                "model warnings": str(len(self.warnings)),
                **(self.objects.contact_values() if self.objects is not None else {}),
            },
        )

    def _resets(self) -> int:
        """How many times MuJoCo found a non-finite state and reset the simulation."""
        data, mj = self.data, self._mj
        if data is None:
            return 0
        kinds = mj.mjtWarning  # type: ignore[attr-defined]
        bad = (kinds.mjWARN_BADQACC, kinds.mjWARN_BADQPOS, kinds.mjWARN_BADQVEL)
        return sum(int(data.warning[int(kind)].number) for kind in bad)

    def set_armed(self, armed: bool) -> None:
        self._armed = armed
        if self.model is not None and not armed and not self._holds_disarmed():
            self._set_modes(np.full(len(self.joint_names), servos.LIMP))

    def set_limits(self, limits: JointLimitTable) -> None:
        super().set_limits(limits)
        if self.model is not None:
            self._apply_effort_limits()

    def _holds_disarmed(self) -> bool:
        return self._armed or self.disarmed_action == "hold"

    def _apply_effort_limits(self) -> None:
        model = self.model
        assert model is not None
        effort = self.limits.effort
        finite = np.isfinite(effort) & (effort > 0)
        ids = self._actuators
        model.actuator_forcelimited[ids] = finite.astype(np.uint8)
        model.actuator_forcerange[ids, 0] = np.where(finite, -effort, 0.0)
        model.actuator_forcerange[ids, 1] = np.where(finite, effort, 0.0)

    # --------------------------------------------------------------- loop thread
    def read(self, now_ns: int) -> JointSample:
        data = self.data
        if data is None:
            raise BackendError("the MuJoCo simulation is not connected")
        if self._fresh:
            self._fresh = False
        elif self.lockstep:
            self._owed_ns += self._period_ns
        else:
            elapsed = now_ns - (self._wall_ns if self._wall_ns is not None else now_ns)
            if elapsed > self.max_gap * 1e9:
                self.gaps += 1
            elif elapsed > 0:
                self._owed_ns += elapsed
        self._wall_ns = now_ns
        steps = self._owed_ns // self._step_ns
        if steps:
            self._owed_ns -= steps * self._step_ns
            self._advance(int(steps))
            if self._clock_output is not None:
                self._clock_output.publish(self.sim_time_ns())
        self._stamps[:] = now_ns
        if self.objects is not None:
            self._object_poses = self.objects.measure(data, now_ns)
        return JointSample(
            data.qpos[self._qadr].copy(),
            data.qvel[self._dadr].copy(),
            data.actuator_force[self._actuators].copy(),
            self._stamps.copy(),
            now_ns,
        )

    def object_poses(self) -> ObjectPoses | None:
        return self._object_poses

    def step(self, count: int = 1) -> None:
        """Advance the simulation by ``count`` physics steps with the current command (tests, benchmarks)."""
        if self.data is None:
            raise BackendError("the MuJoCo simulation is not connected")
        self._advance(count)

    def _advance(self, steps: int) -> None:
        started = time.perf_counter_ns()
        if self._moving_ref or self._bounded.any():
            self._advance_references(steps)
        elif self.objects is not None and self.objects.counts_contacts:
            for _ in range(steps):  # one at a time: the static objects' contacts counted at each
                self._mj.mj_step(self.model, self.data)  # type: ignore[attr-defined]
                self.objects.count_contacts(self.data)
            self._steps += steps
        else:
            self._mj.mj_step(self.model, self.data, nstep=steps)  # type: ignore[attr-defined]
            self._steps += steps
        self._physics_ns += time.perf_counter_ns() - started

    def _advance_references(self, steps: int) -> None:
        """``steps`` physics steps, the position servos' controls updated at each.

        Each reference moves at its own velocity: a trajectory's as its samples extrapolate (with
        their velocity and acceleration; along the trajectory itself once the command is more than
        two periods old), a bounded velocity's at the commanded speed; and brakes
        so that it stops at the ends of the command range, at the joint's acceleration limit (or,
        without one, from the speed to rest in 1/ω, ω the servo's natural frequency, which the
        servo follows closely), however many steps the driver leaves it running.
        """
        mj = self._mj
        model, data = self.model, self.data
        assert self.gains is not None and data is not None
        limits = self.limits
        dt = self.timestep
        mask, ids = self._position_mask, self._actuators[self._position_mask]
        bounded = self._bounded
        upper, lower = limits.command_upper, limits.command_lower
        omega = 2.0 * np.pi * self.bandwidth
        fastest = np.maximum(np.abs(self._v_ref), 1e-3)
        accel = np.where(np.isfinite(limits.acceleration), limits.acceleration, omega * fastest)
        finite = np.ones(len(accel), dtype=bool)
        q = self._q_ref.copy()
        v = np.where(bounded, self._v_ref, self._v_ref + (self.sim_time_ns() * 1e-9 - self._ref_time) * self._a_ref)
        # A command more than two periods old: its trajectory's joints go on along the trajectory.
        follow, since = self._follow, self.sim_time_ns() * 1e-9 - self._command_time
        late = 2.0 * self._period_ns * 1e-9
        path = None
        if follow is not None and since + steps * dt > late:
            path = follow.positions_at(self._follow_t + since + dt * np.arange(steps + 1, dtype=np.float64))
        for k in range(steps):
            s = self.sim_time_ns() * 1e-9 - self._ref_time
            # What each reference does over this step unbraked: a sample's exact increment.
            step = np.where(bounded, self._v_ref * dt, dt * (self._v_ref + self._a_ref * (s + 0.5 * dt)))
            if path is not None and follow is not None and since + (k + 1) * dt > late:
                step[follow.indices] = path[k + 1] - path[k]
            wanted = step / dt
            reach = np.maximum(upper - q, 0.0), np.maximum(q - lower, 0.0)
            brake_up = braking_speeds(reach[0], accel, finite, dt)
            brake_down = braking_speeds(reach[1], accel, finite, dt)
            previous, v = v, np.minimum(np.maximum(wanted, -brake_down), brake_up)
            q = q + np.where(v == wanted, step, v * dt)
            controls = servos.position_controls(self.gains, q, v, (v - previous) / dt, self._gravity)
            data.ctrl[ids] = controls[mask]
            mj.mj_step(model, data)  # type: ignore[attr-defined]
            if self.objects is not None:
                self.objects.count_contacts(data)
            self._steps += 1
        # The next read's steps continue from here (the driver's next command resets them).
        self._q_ref, self._v_ref, self._a_ref = (
            q,
            np.where(bounded, self._v_ref, v),
            np.where(bounded, 0.0, self._a_ref),
        )
        self._ref_time = self.sim_time_ns() * 1e-9

    def write(self, command: BackendCommand, now_ns: int) -> None:
        data = self.data
        if data is None:
            raise BackendError("the MuJoCo simulation is not connected")
        gains = self.gains
        assert gains is not None
        modes = command.modes
        position_like = (modes == _POSITION) | (modes == _HOLD)
        wanted = np.full(len(modes), servos.LIMP, dtype=np.int8)
        velocity, acceleration = command.velocity, command.acceleration
        bounded = np.zeros(len(modes), dtype=bool)
        if self._holds_disarmed():
            wanted[position_like & np.isfinite(command.position)] = servos.POSITION
            wanted[modes == _VELOCITY] = servos.VELOCITY
            wanted[modes == _EFFORT] = servos.EFFORT
            bound = np.where(velocity > 0, self.limits.command_upper, self.limits.command_lower)
            bounded = (modes == _VELOCITY) & np.isfinite(bound)
            wanted[bounded] = servos.POSITION
        if self.gain_rule.follows_inertia and (wanted == servos.POSITION).any() | (wanted == servos.VELOCITY).any():
            gains = self.gains = self._gains()
            self._servo_modes[:] = -1  # the actuators take the new gains
        self._set_modes(wanted)
        position = wanted == servos.POSITION
        self._position_mask = position
        self._q_ref = np.where(position, command.position, 0.0)
        self._v_ref = np.where(position & (velocity == velocity), velocity, 0.0)  # (x == x: not NaN)
        self._a_ref = np.where(position & (acceleration == acceleration), acceleration, 0.0)
        self._bounded = bounded
        self._follow = command.trajectory
        if command.trajectory is not None:
            self._follow_t = (now_ns - command.trajectory.start_ns) * 1e-9
        if bounded.any():
            # The bounded velocity's reference starts where the joint is (never beyond the end it
            # moves towards, unless the joint already is).
            q = data.qpos[self._qadr]
            self._bound = np.where(bounded, bound, 0.0)
            self._q_ref[bounded] = q[bounded]
            self._a_ref[bounded] = 0.0
        self._ref_time = self._command_time = self.sim_time_ns() * 1e-9
        self._moving_ref = bool(self._v_ref.any() or self._a_ref.any())
        if self.gravity_compensation and position.any():
            self._gravity = self._gravity_torques()
        ctrl = np.where(
            position, servos.position_controls(gains, self._q_ref, self._v_ref, self._a_ref, self._gravity), 0.0
        )
        ctrl = np.where(wanted == servos.VELOCITY, velocity, ctrl)
        ctrl = np.where(wanted == servos.EFFORT, command.effort, ctrl)
        data.ctrl[self._actuators] = ctrl

    def _gains(self) -> servos.Gains:
        """The servos' gains at the current pose: the rule's, the gripper joints' stiffer with ``gripper_kp``."""
        inertia = self._inertia()
        gains = self.gain_rule.gains(inertia, self.joint_names)
        if self.gripper_kp <= 0.0 or not self._gripper_mask.any():
            return gains
        mask = self._gripper_mask
        kp = np.where(mask, self.gripper_kp, gains.kp)
        kd = np.where(mask, 2.0 * self.damping_ratio * np.sqrt(self.gripper_kp * np.maximum(inertia, 0.0)), gains.kd)
        return servos.Gains(kp, kd, gains.kv, gains.inertia)

    def _inertia(self) -> np.ndarray:
        """Each driven joint's effective inertia at the current pose (the mass matrix's diagonal)."""
        self._mj.mj_fullM(self.model, self.data, self._mass)  # type: ignore[attr-defined]
        return self._mass[self._dadr, self._dadr].copy()

    def _gravity_torques(self) -> np.ndarray:
        """The driven joints' gravity torques at the current pose (MuJoCo's RNE at zero velocity)."""
        mj, model, data, scratch = self._mj, self.model, self.data, self._scratch
        assert data is not None
        scratch.qpos[:] = data.qpos
        scratch.qvel[:] = 0.0
        mj.mj_kinematics(model, scratch)  # type: ignore[attr-defined]
        mj.mj_comPos(model, scratch)  # type: ignore[attr-defined]
        mj.mj_rne(model, scratch, 0, self._bias)  # type: ignore[attr-defined]
        torques = self._bias[self._dadr].copy()
        for leader, dof, multiplier in self._mimic_loads:
            torques[leader] += multiplier * self._bias[dof]
        return torques

    def _set_modes(self, modes: np.ndarray) -> None:
        if np.array_equal(modes, self._servo_modes):
            return
        model = self.model
        assert model is not None and self.gains is not None
        gain, bias = servos.actuator_parameters(modes, self.gains)
        ids = self._actuators
        model.actuator_gainprm[ids, 0] = gain
        model.actuator_biasprm[ids, :3] = bias
        if self.data is not None:
            self.data.ctrl[ids[modes == servos.LIMP]] = 0.0
        self._servo_modes = modes.astype(np.int8).copy()


def _joint_names(model: mujoco.MjModel) -> set[str]:
    return {model.joint(i).name for i in range(model.njnt)}


BACKEND = MujocoBackend
