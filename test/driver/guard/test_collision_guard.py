"""The driver's collision guard on the real core and simulator (simulated clock, the checker stepped by hand).

The bundled arm stands in a cell: a table (an SDF world) and a post (YAML).  Trajectories are
checked before they are accepted; streamed commands slow before contact, stop short of it, and
moving away continues.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_cell import ARM, Cell, make_cell
from helpers.driver_rig import PERIOD_NS

from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import SampledMotion, approach_path
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.errors import INVALID_GOAL, CommandRejected, TrajectoryRejected
from bb_robot.driver.guard import collision_guard
from bb_robot.driver.guard.build import build_guard
from bb_robot.driver.guard.collision_checker import Measurer
from bb_robot.driver.guard.collision_guard import GuardSettings, speed_scale
from bb_robot.loading import load_file


@pytest.fixture
def cell(tmp_path: Path) -> Cell:
    return make_cell(tmp_path)


def test_a_trajectory_through_the_table_is_refused_one_above_it_accepted(cell: Cell) -> None:
    # Panning from 0 to 2.4 rad straight out passes through the table (at pan π/2, along -y).
    through = [TrajectoryPoint(3.0, [2.4, -math.pi / 2, 0, 0, 0, 0, 0])]
    with pytest.raises(TrajectoryRejected) as refused:
        cell.core.prepare_trajectory(cell.joints, through)
    assert refused.value.code == INVALID_GOAL
    assert "'upper_arm_link' and 'world/table/top'" in refused.value.reason or "world/table/top" in refused.value.reason
    assert "at t = " in refused.value.reason and "collision.clearance" in refused.value.reason
    # Lifted first, then panned: above the table.
    above = [
        TrajectoryPoint(1.5, [0.0, -0.8, 0, 0, 0, 0, 0]),
        TrajectoryPoint(4.0, [2.4, -0.8, 0, 0, 0, 0, 0]),
    ]
    trajectory = cell.core.prepare_trajectory(cell.joints, above)
    execution = cell.core.execute(trajectory)
    cell.run(4.2)
    assert execution.outcome is not None and execution.outcome.status == "succeeded", execution.outcome
    np.testing.assert_allclose(cell.positions[:2], [2.4, -0.8], atol=1e-3)


def test_streamed_motion_slows_before_contact_and_moving_away_continues(cell: Cell) -> None:
    # Pan towards the post at +y (the arm points along +y at pan -π/2): a streamed position target beyond it.
    start = cell.distance()
    assert start > 0.3
    cell.command([-math.pi / 2, -math.pi / 2, 0, 0, 0, 0, 0])
    distances, speeds = [], []
    for _ in range(150):  # 3 s
        cell.run(0.02)
        distances.append(cell.distance())
        speeds.append(abs(float(cell.core.snapshot.sample.velocities[0])))  # type: ignore[union-attr]
    assert min(distances) >= 0.02 - 0.005, "stopped short of the stop distance (within the braking of a cycle)"
    assert distances[-1] < 0.08, "it did approach"
    far = [s for d, s in zip(distances, speeds, strict=True) if d > 0.2]
    near = [s for d, s in zip(distances, speeds, strict=True) if 0.02 < d < 0.05]
    assert far and near and max(near) < 0.5 * max(far), "slower near the post than far from it"
    verdict = cell.guard.verdict
    assert verdict is not None and verdict.nearest is not None and "world/post" in verdict.nearest.links
    level, message, values = cell.guard.diagnostics(cell.clock.now)
    assert level == "warn" and "world/post" in message and "nearest distance (m)" in values
    # Away from the post: not slowed.
    before = cell.positions[0]
    cell.command([0.0, -math.pi / 2, 0, 0, 0, 0, 0])
    cell.run(0.5)
    assert cell.positions[0] > before + 0.2
    assert cell.distance() > distances[-1]


def test_a_checked_trajectory_near_the_post_is_not_slowed_and_not_reported_as_slowed(cell: Cell) -> None:
    # Where streamed motion towards the post ends (inside the slowdown distance) ...
    cell.command([-math.pi / 2, -math.pi / 2, 0, 0, 0, 0, 0])
    cell.run(3.0)
    near = cell.positions.copy()
    assert 0.02 - 0.005 <= cell.distance() < 0.08
    # ... back out, then there again as a trajectory: the path was checked whole, so it runs at its speed.
    cell.command([0.0, -math.pi / 2, 0, 0, 0, 0, 0])
    cell.run(2.0)
    assert cell.distance() > 0.3
    goal = [TrajectoryPoint(2.0, [float(v) for v in near[: len(cell.joints)]])]
    execution = cell.core.execute(cell.core.prepare_trajectory(cell.joints, goal))
    levels = []
    for _ in range(105):
        cell.run(0.02)
        if execution.outcome is None and cell.distance() < 0.08:
            levels.append(cell.guard.diagnostics(cell.clock.now)[:2])
    assert execution.outcome is not None and execution.outcome.status == "succeeded", execution.outcome
    np.testing.assert_allclose(cell.positions, near, atol=1e-3)
    assert levels, "the trajectory came within the slowdown distance"
    assert all(level == "ok" for level, _ in levels), levels


def test_a_position_command_is_checked_along_its_approach_path(cell: Cell) -> None:
    limits = cell.core.limits
    # Straight to the far side of the table: the joints' approach passes through it.
    through = cell.validator.from_array(CommandMode.POSITION, [2.4, -math.pi / 2, 0, 0, 0, 0, 0], "/t", cell.clock.now)
    with pytest.raises(CommandRejected) as refused:
        cell.guard.check_command(through, cell.core.snapshot.sample, limits)
    assert refused.value.kind == "collision" and "world/table/top" in refused.value.reason
    assert "on the way to the target; not executed" in refused.value.reason
    # Lifting clear of it: accepted, and the arm gets there.
    lift = cell.validator.from_array(CommandMode.POSITION, [0.0, -0.8, 0, 0, 0, 0, 0], "/t", cell.clock.now)
    cell.guard.check_command(lift, cell.core.snapshot.sample, limits)
    cell.core.submit(lift)
    cell.run(2.0)
    np.testing.assert_allclose(cell.positions[:2], [0.0, -0.8], atol=1e-3)
    # Velocity commands are left to the slow-down.
    cell.guard.check_command(
        cell.validator.from_array(CommandMode.VELOCITY, [1.0, 0, 0, 0, 0, 0, 0], "/t", cell.clock.now),
        cell.core.snapshot.sample,
        limits,
    )


def test_a_stream_of_nearby_position_commands_is_path_checked_once_in_many(
    cell: Cell, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = cell.core.limits
    checks = []
    real_check_path = collision_guard.check_path

    def counted(*args: object, **kwargs: object) -> object:
        checks.append(1)
        return real_check_path(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(collision_guard, "check_path", counted)
    start = cell.positions.copy()
    for k in range(1, 101):  # 0.1 rad of pan in 1 mrad steps at 200 Hz, as a leader arm streams it, followed
        targets = start.copy()
        targets[0] += 0.001 * k
        command = cell.validator.from_array(CommandMode.POSITION, targets.tolist(), "/t", cell.clock.now)
        cell.guard.check_command(command, cell.core.snapshot.sample, limits)
        cell.core.submit(command)
        cell.run(0.005)
    assert cell.positions[0] > start[0] + 0.09
    assert 1 <= len(checks) <= 20, len(checks)  # (one each: 100)
    # What the last check proved free does not reach through the table: that one is still refused.
    through = cell.validator.from_array(CommandMode.POSITION, [2.4, -math.pi / 2, 0, 0, 0, 0, 0], "/t", cell.clock.now)
    with pytest.raises(CommandRejected, match="world/table/top"):
        cell.guard.check_command(through, cell.core.snapshot.sample, limits)


def test_a_robot_without_checked_pairs_follows_its_position_stream() -> None:
    """The pan-tilt unit's two links are adjacent: its guard checks no pair, and a stream of position
    commands is accepted and followed (the free region of no pairs once raised on every command)."""
    unit = Cell(None, GuardSettings(), robot=ARM.parent / "bb_pan_tilt.urdf", initial=[])
    assert not unit.guard.model.pairs
    limits = unit.core.limits
    for k in range(1, 11):
        command = unit.validator.from_array(CommandMode.POSITION, [0.005 * k, 0.0], "/t", unit.clock.now)
        unit.guard.check_command(command, unit.core.snapshot.sample, limits)
        unit.core.submit(command)
        unit.run(0.01)
    unit.run(0.5)
    assert unit.positions[0] == pytest.approx(0.05, abs=1e-3)


def test_a_joint_measured_beyond_its_velocity_limit_approaches_as_from_its_limit(cell: Cell) -> None:
    limits = cell.core.limits
    start = cell.positions.copy()
    targets = start.copy()
    targets[0] += 0.01
    at_limit, beyond = np.zeros_like(start), np.zeros_like(start)
    at_limit[0], beyond[0] = limits.velocity[0], 5 * limits.velocity[0]
    period = PERIOD_NS * 1e-9
    np.testing.assert_array_equal(
        approach_path(start, beyond, targets, limits, period), approach_path(start, at_limit, targets, limits, period)
    )


def test_the_approach_path_is_the_sim_backends_motion(cell: Cell) -> None:
    # From rest, the sim backend's joints reach the targets on the path approach_path predicts.
    limits = cell.core.limits
    start = cell.positions.copy()
    targets = start.copy()
    targets[:3] += [0.6, -0.3, 0.2]
    rows = approach_path(start, np.zeros_like(start), targets, limits, PERIOD_NS * 1e-9, every=1)
    cell.core.submit(cell.validator.from_array(CommandMode.POSITION, targets.tolist(), "/t", cell.clock.now))
    seen = []
    for _ in range(len(rows) + 50):
        cell.run(PERIOD_NS * 1e-9)
        seen.append(cell.positions.copy())
    np.testing.assert_allclose(seen[-1], targets, atol=1e-6)
    np.testing.assert_allclose(rows[-1], targets, atol=1e-9)
    # Every predicted row lies within one cycle's travel of the path the simulator took.
    travel = float(np.max(limits.velocity[:3])) * PERIOD_NS * 1e-9
    taken = np.array(seen)
    for row in rows[:: max(1, len(rows) // 40)]:
        assert np.min(np.max(np.abs(taken - row), axis=1)) <= 2 * travel


def test_speed_scale() -> None:
    settings = GuardSettings(slowdown_distance=0.05, stop_distance=0.01)
    assert speed_scale(0.1, 0.09, settings) == 1.0
    assert speed_scale(0.005, 0.004, settings) == 0.0
    assert speed_scale(0.005, 0.006, settings) == 1.0  # moving away
    halfway = speed_scale(0.03, 0.029, settings)
    assert 0.0 < halfway < 1.0
    assert speed_scale(0.02, 0.019, settings) < halfway


def test_a_motion_that_leaves_the_nearest_pair_as_it_is_is_never_slowed() -> None:
    # The SO-101's moving jaw stands within the slowdown distance of its wrist at the zero pose; panning
    # the shoulder does not change that distance, which coal measures up to its tolerance apart at the two
    # poses, either way.  Opening or closing the jaw does change it: that one way is slowed.
    loaded = load_file(str(Path(__file__).resolve().parents[3] / "models" / "so101" / "so101_new_calib.urdf"))
    joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    guard = build_guard(loaded, joints, GuardSettings(), 200.0)
    assert guard is not None
    measurer = Measurer(guard.model, joints, guard.settings)
    here = np.zeros(6)
    assert measurer.measure(here, here).distance < guard.settings.slowdown_distance
    scales = []
    for k in range(200):
        position = here.copy()
        position[0] = 0.3 * math.sin(k / 30)
        target = position.copy()
        target[0] += 0.01 * math.cos(k / 30)
        scales.append(measurer.measure(position, target).scale)
    assert scales == [1.0] * len(scales)
    jaw = [measurer.measure(here, np.array([0, 0, 0, 0, 0, step])).scale for step in (-0.05, 0.05)]
    assert min(jaw) < 1.0


def test_no_geometry_no_guard() -> None:
    text_model = load_file(str(ARM))
    bare = text_model.robot.links
    assert any(link.collisions for link in bare.values())
    from bb_robot.loading import load_text

    plain = load_text(
        '<robot name="p"><link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/>'
        '<child link="b"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
    )
    logs: list[tuple[str, str]] = []
    assert (
        build_guard(plain, ("j",), GuardSettings(), 500.0, log=lambda level, text: logs.append((level, text))) is None
    )
    assert any("no <collision> geometry" in text for _, text in logs)


def test_a_joint_never_reported_is_never_commanded(cell: Cell) -> None:
    # Stopped at the post, a joint without a reported position keeps the core's NaN (nothing is sent).
    from bb_robot.driver.backends.base import BackendCommand, JointSample

    n = len(cell.joints)
    at_post = np.array([-math.pi / 2 + 0.08, -math.pi / 2, 0, 0, 0, 0, 0])  # touching it, heading in deeper
    verdict = cell.guard.measure(at_post, at_post - np.array([0.08, 0, 0, 0, 0, 0, 0]), cell.clock.now)
    assert verdict.scale == 0.0
    positions = at_post.copy()
    positions[3] = np.nan
    sample = JointSample(positions, np.zeros(n), None, np.zeros(n, dtype=np.int64), cell.clock.now)
    modes = np.full(n, int(CommandMode.POSITION), dtype=np.int8)
    command = BackendCommand(modes, at_post - 0.08, np.zeros(n), np.zeros(n), np.full(n, np.nan))
    command.position[3] = np.nan
    stopped = cell.guard.filter(command, sample, cell.clock.now, False)
    assert np.isnan(stopped.position[3])
    np.testing.assert_allclose(np.delete(stopped.position, 3), np.delete(at_post, 3))


def test_positions_at_many_times_equal_sample_at(cell: Cell) -> None:
    points = [TrajectoryPoint(1.0, [0.3, -1.2, 0.2, 0, 0, 0, 0]), TrajectoryPoint(2.5, [0.6, -1.0, 0.4, 0.1, 0, 0, 0])]
    trajectory = cell.core.prepare_trajectory(cell.joints, points)
    times = np.linspace(-0.5, 3.0, 71)
    expected = np.array([trajectory.sample_at(float(t))[0] for t in times])
    np.testing.assert_allclose(trajectory.positions_at(times), expected, rtol=0, atol=1e-12)


def test_a_stepping_servo_reading_its_top_speed_is_path_checked_from_how_fast_it_moves(
    cell: Cell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A position servo stepping to each goal reads its own top speed between two of them (an STS3215:
    5.2 rad/s while following 0.5 rad/s).  The approach path of each command starts from how fast the
    joint moved between the loop's samples, not from that reading, which braked a path
    0.4 rad past a 2 mrad command on the SO-101; a command through the table is still refused."""
    limits = cell.core.limits
    starts: list[np.ndarray] = []

    def recorded(positions: np.ndarray, velocities: np.ndarray, *args: object, **kwargs: object) -> np.ndarray:
        starts.append(np.array(velocities))
        return approach_path(positions, velocities, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(collision_guard, "approach_path", recorded)
    start = cell.positions.copy()
    for k in range(1, 101):  # 1 mrad per 5 ms: 0.2 rad/s
        targets = start.copy()
        targets[0] += 0.001 * k
        command = cell.validator.from_array(CommandMode.POSITION, targets.tolist(), "/t", cell.clock.now)
        sample = cell.core.snapshot.sample
        reading = np.zeros_like(sample.velocities)
        reading[0] = (1 if k % 2 else -1) * 5 * limits.velocity[0]  # between goals, at its top speed either way
        cell.guard.check_command(command, dataclasses.replace(sample, velocities=reading), limits)
        cell.core.submit(command)
        cell.run(0.005)
    assert cell.positions[0] > start[0] + 0.09
    assert len(starts) == 100
    # At most a step's 1 mrad in one of the loop's periods (the simulator steps too), and below the limit
    # that the readings (5x it) would be clipped to.
    fastest = max(abs(v[0]) for v in starts)
    assert fastest <= 0.001 / (PERIOD_NS * 1e-9) + 1e-9 and fastest < limits.velocity[0], [v[0] for v in starts]
    through = cell.validator.from_array(CommandMode.POSITION, [2.4, -math.pi / 2, 0, 0, 0, 0, 0], "/t", cell.clock.now)
    with pytest.raises(CommandRejected, match="world/table/top"):
        cell.guard.check_command(through, cell.core.snapshot.sample, limits)


def test_the_sampled_motion_is_each_joints_velocity_over_its_latest_window() -> None:
    motion = SampledMotion(2)
    np.testing.assert_array_equal(motion.slower(np.array([3.0, -3.0])), [3.0, -3.0])  # nothing seen yet
    motion.observe(np.array([0.0, 1.0]), np.array([1_000_000_000, 1_000_000_000]), 1_000_000_000)
    motion.observe(np.array([0.01, 1.0]), np.array([1_010_000_000, 1_000_000_000]), 1_010_000_000)  # joint 1 late
    np.testing.assert_allclose(motion.slower(np.array([3.0, -3.0])), [1.0, -3.0])  # joint 1: one sample only
    motion.observe(np.array([0.02, 0.9]), np.array([1_020_000_000, 1_020_000_000]), 1_020_000_000)
    np.testing.assert_allclose(motion.slower(np.array([3.0, -10.0])), [1.0, -5.0])  # joint 1: -0.1 rad in 20 ms
    np.testing.assert_allclose(motion.slower(np.array([0.5, -3.0])), [0.5, -3.0])  # the reading where slower
    # A sample 1 ms later (a tick of rounding would read 1.5 rad/s): measured over the window, not from it.
    motion.observe(np.array([0.0215, 0.9]), np.array([1_021_000_000, 1_021_000_000]), 1_021_000_000)
    np.testing.assert_allclose(motion.slower(np.array([3.0, -10.0])), [1.0, -5.0])
