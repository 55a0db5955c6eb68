"""Fuzzing the driver's command checks: arrays, JointState commands and trajectories.

Allowed outcomes: a checked command or trajectory, or :class:`~bb_robot.driver.errors.CommandRejected`
/ :class:`~bb_robot.driver.errors.TrajectoryRejected` with a message.  Whatever is accepted is
finite and within the joint limits; nothing else gets through.
"""

from __future__ import annotations

import numpy as np
from helpers.fuzz_outcomes import OUTCOMES
from helpers.xml_mutations import MODELS_DIR
from hypothesis import given
from hypothesis import strategies as st

from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode, CommandValidator, JointCommand
from bb_robot.driver.commands.trajectory import Trajectory, TrajectoryOptions, TrajectoryPoint, build_trajectory
from bb_robot.driver.errors import CommandRejected, TrajectoryRejected
from bb_robot.urdf.builder import load_urdf

ROBOT = load_urdf(MODELS_DIR / "bb_arm.urdf")
NAMES = tuple(j.name for j in ROBOT.joints.values() if j.type != "fixed" and j.mimic is None)
LIMITS = L.from_robot(ROBOT, NAMES)
# The modes a command topic can carry (HOLD is the driver's own, never received).
ALL_MODES = frozenset((CommandMode.POSITION, CommandMode.VELOCITY, CommandMode.EFFORT))

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from((1e300, -1e300, 5e-324, 180.0, -180.0, 90.0, 0.0, -0.0)),
)
joint_names = st.one_of(
    st.sampled_from(NAMES), st.sampled_from(("", "world", "tcp", "gripper_finger_joint")), st.text(max_size=12)
)
arrays = st.lists(values, max_size=12) | st.lists(values, min_size=len(NAMES), max_size=len(NAMES))
modes = st.sampled_from(sorted(ALL_MODES))
policies = st.sampled_from(("clamp", "reject"))


def _check_accepted(command: JointCommand, mode: CommandMode) -> None:
    assert np.isfinite(command.values).all()
    low, high = {
        CommandMode.POSITION: (LIMITS.command_lower, LIMITS.command_upper),
        CommandMode.VELOCITY: (-LIMITS.velocity, LIMITS.velocity),
        CommandMode.EFFORT: (-LIMITS.effort, LIMITS.effort),
    }[mode]
    assert (command.values >= low[command.indices]).all() and (command.values <= high[command.indices]).all()


@given(modes, arrays, policies)
def test_array_commands(mode: CommandMode, data: list[float], policy: str) -> None:
    validator = CommandValidator(LIMITS, ALL_MODES, policy=policy)
    result = OUTCOMES.run(
        "commands", lambda: validator.from_array(mode, data, "fuzz", 0), (CommandRejected,), f"{mode.name} {data!r}"
    )
    if isinstance(result, JointCommand):
        _check_accepted(result, mode)


@given(st.lists(joint_names, max_size=10), arrays, arrays, arrays, policies)
def test_joint_state_commands(
    names: list[str], position: list[float], velocity: list[float], effort: list[float], policy: str
) -> None:
    validator = CommandValidator(LIMITS, ALL_MODES, policy=policy)
    result = OUTCOMES.run(
        "commands",
        lambda: validator.from_joint_state(names, position, velocity, effort, "fuzz", 0),
        (CommandRejected,),
        f"names={names!r} position={position!r} velocity={velocity!r} effort={effort!r}",
    )
    if isinstance(result, JointCommand):
        mode = CommandMode.POSITION if position else CommandMode.VELOCITY if velocity else CommandMode.EFFORT
        _check_accepted(result, mode)


points = st.builds(
    TrajectoryPoint,
    time=values,
    positions=arrays,
    velocities=st.just(()) | arrays,
    accelerations=st.just(()) | arrays,
)


@st.composite
def near_valid(draw: st.DrawFn) -> list[TrajectoryPoint]:
    """A trajectory that is valid but for what the draw changes: times, a value, a length."""
    lower = np.nan_to_num(LIMITS.command_lower, neginf=-3.0)
    upper = np.nan_to_num(LIMITS.command_upper, posinf=3.0)
    count = draw(st.integers(1, 5))
    times = np.cumsum([draw(st.floats(2.0, 10.0)) for _ in range(count)])
    result, previous = [], np.clip(np.zeros(len(NAMES)), lower, upper)
    for t in times:
        steps = np.array([draw(st.floats(-0.5, 0.5)) for _ in NAMES])
        previous = np.clip(previous + steps * (upper - lower) / 6, lower, upper)
        result.append(TrajectoryPoint(float(t), [float(p) for p in previous]))
    if draw(st.booleans()):  # spoil one thing
        i = draw(st.integers(0, count - 1))
        point = result[i]
        spoiled = list(point.positions)
        spoiled[draw(st.integers(0, len(NAMES) - 1))] = draw(values)
        time = draw(st.sampled_from((point.time, -point.time, 0.0, 1e-12, 1e7))) if draw(st.booleans()) else point.time
        result[i] = TrajectoryPoint(time, spoiled)
    return result


@given(
    st.just(list(NAMES)) | st.lists(joint_names, max_size=10),
    st.lists(points, max_size=6) | near_valid(),
    policies,
    st.booleans(),
)
def test_trajectories(names: list[str], trajectory: list[TrajectoryPoint], policy: str, partial: bool) -> None:
    options = TrajectoryOptions(limit_policy=policy, allow_partial_joints=partial)
    current = np.zeros(len(NAMES))

    def build() -> Trajectory:
        return build_trajectory(
            names, trajectory, LIMITS, current, current, start_ns=0, now_ns=0, options=options, source="fuzz"
        )

    result = OUTCOMES.run("trajectory", build, (TrajectoryRejected,), f"names={names!r} points={trajectory!r}")
    if isinstance(result, Trajectory):
        assert np.isfinite(result.coeffs).all() and np.isfinite(result.knots).all()
        positions, velocities, _ = result.sample_at(float(result.knots[-1]))
        assert np.isfinite(positions).all() and np.isfinite(velocities).all()
        if policy == "reject":
            lower, upper = LIMITS.command_lower[result.indices], LIMITS.command_upper[result.indices]
            assert (positions >= lower - 1e-6).all() and (positions <= upper + 1e-6).all()
