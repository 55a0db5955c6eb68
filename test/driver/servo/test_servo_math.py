"""The servo's compiled cycle (bb_robot.driver.servo._servo_numba) against its numpy path, and the
compiled linear algebra against numpy's."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from helpers.servo_rig import READY, Rig, make_rig

from bb_robot.driver.servo import servo_math as sm
from bb_robot.driver.servo.chain import load_kernel
from bb_robot.driver.servo.servo_inputs import ServoSettings
from bb_robot.driver.servo.servo_math import rotation_matrix

numba_kernel = pytest.importorskip("bb_robot.driver.servo._servo_numba", reason="numba is in requirements/python.txt")


def twin(**options: object) -> tuple[Rig, Rig]:
    """The same rig twice: the compiled cycle and the numpy path."""
    compiled, numpy = make_rig(**options, kernel=True), make_rig(**options, kernel=False)  # type: ignore[arg-type]
    assert compiled.servo.compiled and not numpy.servo.compiled
    return compiled, numpy


def run_both(rigs: tuple[Rig, Rig], seconds: float, each: Callable[[Rig], None]) -> set[str]:
    """Run both rigs cycle by cycle with the same inputs; every command and status must agree.

    Returns the reasons (up to their colon) the servo gave for slowing or halting.
    """
    compiled, numpy = rigs
    reasons = set()
    for _ in range(int(round(seconds / 0.002))):
        for rig in rigs:
            each(rig)
            rig.run(0.002)
        a, b = compiled.written[-1][1], numpy.written[-1][1]
        np.testing.assert_allclose(a.position, b.position, rtol=0, atol=1e-9)
        np.testing.assert_allclose(a.velocity, b.velocity, rtol=0, atol=1e-8)
        s, t = compiled.servo.status, numpy.servo.status
        assert (s.state, s.reason.split(":")[0], s.mode) == (t.state, t.reason.split(":")[0], t.mode)
        assert s.scale == pytest.approx(t.scale, abs=1e-7) and s.singularity == pytest.approx(t.singularity, abs=1e-9)
        reasons.add(s.reason.split(":")[0])
    return reasons


def test_twists_in_the_base_the_tool_and_an_off_chain_frame_then_a_stale_stop():
    rigs = twin()
    run_both(rigs, 0.4, lambda r: r.twist((0.05, -0.02, 0.03), (0.2, 0.0, -0.3)))
    run_both(rigs, 0.3, lambda r: r.twist((0.0, 0.04, 0.0), (0.0, 0.5, 0.0), frame="tcp"))
    run_both(rigs, 0.3, lambda r: r.twist((0.02, 0.0, 0.0), (0.0, 0.0, 0.4), frame="forearm_link"))
    run_both(rigs, 0.3, lambda r: r.twist((0.0, 0.0, 0.03), frame="left_finger"))  # a link off the chain
    run_both(rigs, 0.5, lambda r: None)  # stale: decelerates, then holds
    assert rigs[0].servo.status.state == "idle"


def test_a_pose_target_and_a_pose_stream():
    rigs = twin()
    target = rigs[0].tool().copy()
    target[:3, 3] += (0.04, -0.03, 0.02)
    target[:3, :3] = rotation_matrix(np.array([0.1, -0.2, 0.15])) @ target[:3, :3]
    run_both(rigs, 0.02, lambda r: r.pose(target))
    run_both(rigs, 1.0, lambda r: None)
    start = target.copy()

    def stream(rig: Rig) -> None:
        moved = start.copy()
        moved[:3, 3] += (0.0, 0.05 * np.sin(rig.clock.now * 1e-9 * 3.0), 0.0)
        rig.pose(moved)

    run_both(rigs, 0.6, stream)


def test_a_singularity_a_joint_limit_and_proximity():
    rigs = twin(initial=[0.0, -1.2, 0.35, -1.9, -1.5708, 0.0])  # the elbow nearly straight
    assert "singularity" in run_both(rigs, 1.0, lambda r: r.twist((0.0, 0.0, 0.15)))
    near = list(READY)
    near[5] = 6.28318 - 0.3  # wrist_3 near its upper end

    def wrist_3(rig: Rig) -> None:  # the tool twist that turns wrist_3 alone
        column = rig.servo.chain.jacobian(rig.q)[:, 5] * 0.5
        rig.twist(column[:3], column[3:])

    rigs = twin(initial=near)
    assert "joint limit" in run_both(rigs, 1.5, wrist_3)
    scale = [0.5]
    rigs = twin(proximity=lambda: scale[0])
    assert "collision" in run_both(rigs, 0.3, lambda r: r.twist((0.03, 0.0, 0.0)))


def test_a_turn_about_the_tool_below_the_stop_measure_then_halted():
    """bb_arm's shoulder singularity (measure 0.0084): the exact solution, scaled as damping would, then the halt."""
    rigs = twin(initial=[0.3, -0.5, 1.2, -0.7, 0.9, 0.2])
    assert "singularity" in run_both(rigs, 3.5, lambda r: r.twist((0.0, 0.0, 0.0), (0.0, 0.0, 0.3), frame="tcp"))
    assert rigs[0].servo.status.state == "halted"


def test_a_chain_of_five_joints_tracks_the_position():
    rigs = twin(settings=ServoSettings(tip="wrist_2_link"))
    target = rigs[0].tool().copy()
    target[:3, 3] += (0.03, 0.02, -0.02)
    run_both(rigs, 0.02, lambda r: r.pose(target))
    run_both(rigs, 0.8, lambda r: None)


@pytest.mark.parametrize("shape", [(6, 6), (6, 7), (3, 7), (6, 5), (3, 3)])
def test_the_compiled_singular_values_and_solve_match_numpy(shape: tuple[int, int]):
    random = np.random.default_rng(7)
    for _ in range(50):
        a = random.normal(size=shape)
        if random.random() < 0.3:  # rank-deficient: a column repeated
            a[:, -1] = a[:, 0]
        expected = np.linalg.svd(a, compute_uv=False)
        np.testing.assert_allclose(numba_kernel.singular_values(a), expected, rtol=1e-10, atol=1e-12)
        m = a @ a.T + 0.1 * np.eye(shape[0])
        b = random.normal(size=shape[0])
        np.testing.assert_allclose(numba_kernel.solve(m, b), np.linalg.solve(m, b), rtol=1e-9, atol=1e-12)
        x = random.normal(size=shape[1])
        np.testing.assert_allclose(numba_kernel.matvec(a, x), a @ x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(numba_kernel.matmul(a, a.T), a @ a.T, rtol=1e-12, atol=1e-12)


def test_the_numpy_mode_and_a_mismatched_argument_never_compile_in_the_loop(monkeypatch: pytest.MonkeyPatch):
    from bb_robot.model import compiled

    monkeypatch.setattr(compiled, "_mode", ["numpy"])
    assert load_kernel() is None
    monkeypatch.setattr(compiled, "_mode", ["batch"])  # what the nodes choose: the servo still compiles
    assert load_kernel() is numba_kernel.cycle
    with pytest.raises(TypeError):  # one signature: an argument of another type raises, it is not compiled
        numba_kernel.cycle(*([np.zeros(3, dtype=np.float32)] * len(numba_kernel.SIGNATURE.args)))
    assert len(numba_kernel.cycle.signatures) == 1


def test_settings_vector_follows_the_indices():
    settings = ServoSettings(max_linear_speed=0.3, gain=7.0, singularity_stop=0.02, joint_limit_margin=0.2)
    s = sm.settings_vector(settings)
    assert (s[sm.S_LINEAR_SPEED], s[sm.S_GAIN], s[sm.S_STOP], s[sm.S_MARGIN]) == (0.3, 7.0, 0.02, 0.2)


def test_an_input_array_of_another_type_is_taken_as_float64():
    """An input built elsewhere with float32 or read-only values still runs the compiled cycle."""
    from dataclasses import replace

    from bb_robot.driver.servo.servo_inputs import check_twist

    rig = make_rig()
    start = rig.tool()[:3, 3].copy()
    twist = check_twist("/odd", rig.frames, rig.servo.settings, "", (0.05, 0.0, 0.0), (0.0, 0.0, 0.0), rig.clock.now)
    values = twist.values.astype(np.float32)
    values.flags.writeable = False

    def odd() -> None:
        rig.core.submit(replace(twist, values=values, received_ns=rig.clock.now))

    rig.run(0.5, each=odd)
    assert rig.servo.compiled and rig.servo.status.state == "tracking"
    assert rig.tool()[0, 3] - start[0] > 0.01
