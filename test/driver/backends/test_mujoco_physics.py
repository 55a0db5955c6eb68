"""``backend: mujoco`` against physics: analytic pendulum and damper, Pinocchio's gravity torques.

Everything runs in lockstep on a simulated clock (:mod:`mujoco_rig`): the results do not depend on
the machine's speed or load.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("mujoco")

from helpers.mujoco_rig import make_rig  # noqa: E402

from bb_robot.authoring import Dynamics, Inertial, Joint, Limit, Link, Origin, Robot  # noqa: E402
from bb_robot.driver.commands.commands import CommandMode  # noqa: E402
from bb_robot.driver.errors import CommandRejected  # noqa: E402
from bb_robot.resources import bundled_model  # noqa: E402
from bb_robot.urdf.builder import load_urdf  # noqa: E402

G = 9.81


def pendulum(
    length: float, mass: float, radius: float, *, damping: float = 0.0, axis: tuple = (0, 1, 0), kind: str = "revolute"
) -> Robot:
    """A bob of ``mass`` (a solid sphere of ``radius``) ``length`` below a ``kind`` joint about ``axis``."""
    base = Link("base")
    bob = Link("bob", inertial=Inertial.from_sphere(mass, radius, Origin((0.0, 0.0, -length))))
    joint = Joint(
        "swing",
        kind,
        base,
        bob,
        Origin((0.0, 0.0, 2.0)),
        axis=axis,
        limit=Limit(lower=-3.0, upper=3.0, effort=50.0, velocity=20.0)
        if kind == "revolute"
        else Limit(effort=50.0, velocity=20.0),
        dynamics=Dynamics(damping=damping) if damping else None,
    )
    return Robot("pendulum", links=[base, bob], joints=[joint])


def crossings(times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Times of the upward zero crossings of ``values``, interpolated linearly."""
    index = np.flatnonzero((values[:-1] < 0) & (values[1:] >= 0))
    fraction = -values[index] / (values[index + 1] - values[index])
    return times[index] + fraction * (times[index + 1] - times[index])


def test_a_limp_pendulum_swings_with_the_small_angle_period() -> None:
    length, mass, radius = 0.5, 1.2, 0.03
    rig = make_rig(pendulum(length, mass, radius).to_model(), {"initial_positions": [0.05]}, armed=False)
    times, positions, _ = rig.record(6.0)
    pivot_inertia = 2.0 / 5.0 * mass * radius**2 + mass * length**2
    expected = 2.0 * math.pi * math.sqrt(pivot_inertia / (mass * G * length))
    ups = crossings(times, positions[:, 0])
    assert len(ups) >= 4
    measured = float(np.mean(np.diff(ups)))
    assert measured == pytest.approx(expected, rel=0.01)
    # a free swing: no actuator force while disarmed
    assert np.abs(rig.sample.efforts).max() == 0.0


def test_a_joint_with_damping_only_decays_at_the_analytic_rate() -> None:
    mass, radius, damping = 2.0, 0.1, 0.01
    # about a vertical axis through the bob's centre: no gravity torque, inertia 2/5 m r²
    robot = pendulum(0.0, mass, radius, damping=damping, axis=(0, 0, 1), kind="continuous").to_model()
    rig = make_rig(robot)
    rig.command(CommandMode.VELOCITY, [2.0])
    rig.run(1.0)
    # the velocity servo kv·(v - ω) against the damper b·ω settles at kv·v / (kv + b)
    kv = float(rig.backend.gains.kv[0])
    assert rig.sample.velocities[0] == pytest.approx(kv * 2.0 / (kv + damping), rel=1e-3)
    rig.arm(False)  # limp: only the joint's damping acts
    rig.run(0.01)
    times, _, velocities = rig.record(1.5)
    inertia = 2.0 / 5.0 * mass * radius**2
    rate = -np.polyfit(times, np.log(velocities[:, 0]), 1)[0]
    assert rate == pytest.approx(damping / inertia, rel=0.01)
    ratio = velocities[-1, 0] / velocities[0, 0]
    assert ratio == pytest.approx(math.exp(-damping / inertia * (times[-1] - times[0])), rel=0.01)


POSE = {"shoulder_lift_joint": 0.7, "elbow_joint": -1.1, "wrist_1_joint": 0.6, "wrist_2_joint": 0.4}


def arm_rig(armed: bool = True, disarmed: str = "limp", extra: dict | None = None):  # type: ignore[no-untyped-def]
    robot = load_urdf(str(bundled_model()))
    from bb_robot.mjcf import actuated_joints

    start = [POSE.get(name, 0.0) for name in actuated_joints(robot)]
    return robot, make_rig(robot, {"initial_positions": start, "disarmed": disarmed, **(extra or {})}, armed=armed)


def pinocchio_at(robot_path: str, rig):  # type: ignore[no-untyped-def]
    """Pinocchio's model, data and configuration of the URDF at MuJoCo's current configuration."""
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(robot_path)
    data = model.createData()
    mj_model, mj_data = rig.backend.model, rig.backend.data
    q = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        name = model.names[joint_id]
        joint = model.joints[joint_id]
        value = float(mj_data.qpos[mj_model.joint(name).qposadr[0]])
        if joint.nq == 2:
            q[joint.idx_q : joint.idx_q + 2] = (math.cos(value), math.sin(value))
        else:
            q[joint.idx_q] = value
    return pin, model, data, q


def gravity_torques(robot_path: str, rig) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Pinocchio's RNEA at zero velocity and acceleration, at MuJoCo's current configuration."""
    pin, model, data, q = pinocchio_at(robot_path, rig)
    tau = pin.rnea(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    return {model.names[j]: float(tau[model.joints[j].idx_v]) for j in range(1, model.njoints)}


def test_the_default_gains_follow_the_inertia_pinocchio_computes_at_the_current_pose() -> None:
    _, rig = arm_rig()
    lift = rig.joints.index("shoulder_lift_joint")
    pan = rig.joints.index("shoulder_pan_joint")
    upright = 0.0
    for target in ([0.0] * 7, [0.3, 1.4, 0.2, 0.4, 0.2, 0.1, 0.02]):  # upright, then stretched out
        rig.command(CommandMode.POSITION, target)
        rig.run(1.5)
        pin, model, data, q = pinocchio_at(str(bundled_model()), rig)
        mass = pin.crba(model, data, q)
        omega = 2 * math.pi * 10.0
        for index, name in enumerate(rig.joints):
            if name == "left_finger_joint":
                continue  # its mimic twin moves with it: MuJoCo's constraint, not Pinocchio's tree
            inertia = mass[model.joints[model.getJointId(name)].idx_v, model.joints[model.getJointId(name)].idx_v]
            assert rig.backend.gains.inertia[index] == pytest.approx(inertia, rel=1e-4), name
            assert rig.backend.gains.kp[index] == pytest.approx(inertia * omega**2, rel=1e-4), name
        upright = upright or float(rig.backend.gains.kp[pan])
    # stretched out, the base joint carries far more than upright
    assert rig.backend.gains.kp[pan] > 10 * upright
    assert rig.sample.positions[lift] == pytest.approx(1.4, abs=1e-3)


@pytest.mark.parametrize("compensation", [True, False], ids=["gravity compensation", "PD alone"])
def test_a_held_arm_pushes_with_pinocchios_gravity_torques(compensation: bool) -> None:
    robot, rig = arm_rig(extra={"gravity_compensation": compensation})
    start = rig.sample.positions.copy()
    rig.run(3.0)
    sample = rig.sample
    assert np.abs(sample.velocities).max() < 1e-6
    expected = gravity_torques(str(bundled_model()), rig)
    checked = 0
    for index, name in enumerate(rig.joints):
        if robot.get_joint(name).type == "prismatic":
            continue  # the gripper: its mimic twin's load reaches it through MuJoCo's equality constraint
        dynamics = robot.get_joint(name).dynamics
        friction = (dynamics.friction or 0.0) if dynamics is not None else 0.0
        tau = expected[name]
        assert sample.efforts[index] == pytest.approx(tau, abs=friction + 1e-3 * abs(tau) + 1e-6), name
        checked += 1
    assert checked == 6
    # the pose is a real load case: the shoulder carries several N·m
    assert abs(expected["shoulder_lift_joint"]) > 5.0
    sag = np.abs(sample.positions - start)
    if compensation:  # the servo adds the gravity torques: no sag
        assert sag.max() < 1e-6
    else:  # the PD spring alone holds the weight: it sags by τ / kp
        kp = rig.backend.gains.kp
        arm = [i for i, name in enumerate(rig.joints) if name != "left_finger_joint"]
        np.testing.assert_allclose(
            (sample.positions - start)[arm], -sample.efforts[arm] / kp[arm], rtol=1e-6, atol=1e-9
        )
        assert sag.max() > 1e-3


def test_the_arm_holds_armed_and_sags_disarmed() -> None:
    _, rig = arm_rig()
    start = rig.sample.positions.copy()
    rig.run(2.0)
    assert np.abs(rig.sample.positions - start).max() < 0.02
    rig.arm(False)
    rig.run(1.0)
    lift = rig.joints.index("shoulder_lift_joint")
    assert abs(rig.sample.positions[lift] - start[lift]) > 0.2
    assert np.abs(rig.sample.efforts).max() == 0.0


def test_disarmed_hold_keeps_the_servos_on() -> None:
    _, rig = arm_rig(armed=False, disarmed="hold")
    start = rig.sample.positions.copy()
    rig.run(2.0)
    assert np.abs(rig.sample.positions - start).max() < 0.02


def test_effort_commands_of_the_gravity_torques_balance_the_arm() -> None:
    _, rig = arm_rig()
    rig.run(2.0)
    expected = gravity_torques(str(bundled_model()), rig)
    arm = [i for i, name in enumerate(rig.joints) if name != "left_finger_joint"]
    efforts = [expected[name] for name in rig.joints]
    efforts[rig.joints.index("left_finger_joint")] = 0.0  # its mimic twin's load is not in the RNEA of the leader
    before = rig.sample.positions.copy()
    rig.command(CommandMode.EFFORT, efforts)
    rig.run(0.3)
    assert np.abs(rig.sample.positions - before)[arm].max() < 5e-3
    # and the same torques halved let it fall
    rig.command(CommandMode.EFFORT, [0.5 * e for e in efforts])
    rig.run(0.3)
    lift = rig.joints.index("shoulder_lift_joint")
    assert abs(rig.sample.positions[lift] - before[lift]) > 0.05


def test_efforts_stay_within_the_effort_limits() -> None:
    robot, rig = arm_rig()
    limits = rig.core.limits.effort
    lift = rig.joints.index("shoulder_lift_joint")
    # a far position step: kp times the error is many times the limit
    target = rig.sample.positions.copy()
    target[lift] = -1.5
    rig.command(CommandMode.POSITION, target)
    peak = np.zeros(len(rig.joints))
    for _ in range(200):
        rig.run(0.002)
        peak = np.maximum(peak, np.abs(rig.sample.efforts))
    assert peak[lift] == pytest.approx(limits[lift], rel=1e-9)
    assert (peak <= limits + 1e-9).all()
    # an effort command just past the limit (within the 10 % clamp margin) is clamped by the core,
    # one far past it is refused, and MuJoCo clamps behind the core too
    efforts = np.zeros(len(rig.joints))
    efforts[lift] = 10 * limits[lift]
    with pytest.raises(CommandRejected, match="too far outside the joint limits"):
        rig.command(CommandMode.EFFORT, efforts)
    efforts[lift] = 1.05 * limits[lift]
    rig.command(CommandMode.EFFORT, efforts)
    rig.run(0.01)
    assert abs(rig.sample.efforts[lift]) == pytest.approx(limits[lift], rel=1e-9)
    command = rig.core._command(rig.sample, rig.clock.now)  # what reaches the backend
    command.effort[lift] = 10 * limits[lift]
    rig.backend.write(command, rig.clock.now)
    rig.backend.step(5)
    assert abs(float(rig.backend.data.actuator_force[lift])) == pytest.approx(limits[lift], rel=1e-9)


def test_bad_commands_are_refused_and_the_arm_keeps_holding() -> None:

    _, rig = arm_rig()
    rig.run(0.5)
    before = rig.sample.positions.copy()
    n = len(rig.joints)
    bad = [
        lambda: rig.command(CommandMode.POSITION, [0.0] * (n - 1)),
        lambda: rig.command(CommandMode.EFFORT, [float("nan")] * n),
        lambda: rig.core.submit(rig.validator.from_joint_state(["no_such_joint"], [0.1], [], [], "/t", 0)),
        lambda: rig.core.submit(rig.validator.from_joint_state(["right_finger_joint"], [0.01], [], [], "/t", 0)),
    ]
    for send in bad:
        with pytest.raises(CommandRejected):
            send()
    rig.run(0.5)
    assert np.abs(rig.sample.positions - before).max() < 1e-3
    # effort is a mode this backend has (the sim backend refuses it)
    assert CommandMode.EFFORT in rig.backend.capabilities.modes and rig.backend.capabilities.effort_feedback


def test_real_time_follows_the_loops_clock_and_lockstep_one_period_per_cycle() -> None:
    import logging

    from bb_robot.driver.backends.base import BackendContext
    from bb_robot.driver.backends.mujoco import MujocoBackend
    from bb_robot.driver.commands import limits as L

    robot = pendulum(0.3, 1.0, 0.02).to_model()
    limits = L.from_robot(robot, ("swing",))

    class ClockHost:
        """The one port of the driver node's host these backends use here: ``/clock``."""

        def __init__(self) -> None:
            self.published: list[int] = []

        def open_clock(self) -> ClockHost:
            return self

        def publish(self, time_ns: int) -> None:
            self.published.append(time_ns)

        def close(self) -> None:
            pass

    def backend(host: ClockHost, **options: object) -> MujocoBackend:
        context = BackendContext(robot, ("swing",), limits, 500.0, logging.getLogger("t"), options, host=host)  # type: ignore[arg-type]
        made = MujocoBackend(context)
        made.connect(1.0)
        return made

    real_host, lockstep_host = ClockHost(), ClockHost()
    real = backend(real_host)
    start = 5_000_000_000
    real.read(start)  # the first read starts the clock
    real.read(start + 7_300_000)  # 7.3 ms: 7 steps of 1 ms, 0.3 ms carried over
    assert real.sim_time_ns() == 7_000_000
    real.read(start + 10_000_000)
    assert real.sim_time_ns() == 10_000_000
    real.read(start + 10_000_000 + 1_500_000_000)  # a gap longer than max_gap (1 s) is not simulated
    assert real.sim_time_ns() == 10_000_000 and real.gaps == 1
    assert real_host.published == []  # real time: /clock is not the simulation's

    lockstep = backend(lockstep_host, lockstep=True, timestep=0.0005)
    for k in range(5):
        lockstep.read(start + k * 123_456_789)  # whatever the wall clock says
    assert lockstep.sim_time_ns() == 4 * 2_000_000
    assert lockstep_host.published and lockstep_host.published[-1] == lockstep.sim_time_ns()
    assert lockstep_host.published == sorted(lockstep_host.published)


def test_an_unstable_simulation_is_reported() -> None:
    from bb_robot.driver.backends.base import HealthLevel

    # a stiff servo without an effort limit worth the name, on a light bob, with a long time step
    stiff = pendulum(0.1, 0.01, 0.01).to_model()
    stiff = stiff.with_parameters({("joints", "swing", "limit", "effort"): 1e12})
    rig = make_rig(stiff, {"kp": [1e12], "kd": [0.0], "timestep": 0.01, "initial_positions": [0.5]})
    assert rig.backend.health().level == HealthLevel.OK
    rig.command(CommandMode.POSITION, [-0.5])
    rig.run(0.5)
    health = rig.backend.health()
    assert health.level == HealthLevel.WARN and "went unstable" in health.message
    assert int(health.values["unstable resets"]) >= 1
