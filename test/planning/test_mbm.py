"""MotionBenchMaker problems solved, each trajectory re-checked independently (Pinocchio + coal on the meshes).

Four problems of each of the seven sets of each robot (the Panda, the UR5): numbers 1, 4, 7 and 10 of
each set's first ten.  The test samples; ``benchmarks/bench_plan.py`` plans and re-checks all 100 of
each set the same way (all ten cost 98 s of CPU here, a tenth of the in-process tests' time: too much
for what the sample does not already prove; docs/testing.md, "CI's time").  A problem whose start or
goal is in collision under our model is not valid and is not asked to be solved (the benchmark counts
them).  Every valid one must be solved (the issue's requirement), and each plan is checked twice:

- its timed trajectory, sampled so that no joint moves more than 0.01 rad between two checks, must
  be free in Pinocchio's own model with its own meshes and the obstacles placed from the scene YAML
  (:class:`helpers.mbm_planning.IndependentCheck`);
- its simplified path (which the trajectory follows exactly) must keep the planning clearance
  continuously under coal's hull distances on every checked pair
  (:func:`bb_robot.planning.exact.check_planned_path`, conservative advancement per pair).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.mbm_planning import SETS, IndependentCheck, extract, load_problem

from bb_robot.planning.errors import GoalInCollision, StartInCollision
from bb_robot.planning.exact import check_planned_path
from bb_robot.planning.plan import plan
from bb_robot.planning.validity import StateChecker

pytest.importorskip("pinocchio")
pytest.importorskip("coal")
pytestmark = pytest.mark.filterwarnings("ignore:You passed package dir")

PROBLEMS = (1, 4, 7, 10)
#: Seconds per problem at most: only a limit against a hang (the search is bounded by its iterations).
TIMEOUT = 30.0


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mbm")
    return {robot: extract(robot, PROBLEMS, root / robot) for robot in ("panda", "ur5")}


@pytest.mark.parametrize("problem_set", SETS)
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_valid_problems_are_solved_and_independently_free(
    robot: str, problem_set: str, problems: dict[str, Path]
) -> None:
    unsolved, contacts, exact_refusals, solved = [], [], [], 0
    for number in PROBLEMS:
        problem = load_problem(robot, problem_set, number, problems[robot])
        joints = tuple(problem.goal)
        # within the model's limits, as the peers plan these problems (some goals lie past the soft limits)
        result = plan(
            problem.scene, problem.start, problem.goal, joints=joints, seed=number, timeout=TIMEOUT,
            command_range_only=False,
        )  # fmt: skip
        if isinstance(result.error, (StartInCollision, GoalInCollision)):
            continue  # not a valid problem under our model
        if not result.success:
            unsolved.append((problem.name, str(result.error)))
            continue
        solved += 1
        assert result.trajectory is not None
        check = IndependentCheck(robot, problem.scene_file)
        found = check.contacts(tuple(result.trajectory.names), np.asarray(result.trajectory.positions))
        if found:
            contacts.append((problem.name, found[:3]))
        checker = StateChecker(problem.scene, joints, problem.start, result.clearance)
        verdict = check_planned_path(checker, result.simplified_path)
        if not verdict.ok:
            exact_refusals.append((problem.name, verdict.contact))
    assert not unsolved, f"valid problems unsolved: {unsolved}"
    assert not contacts, contacts
    assert not exact_refusals, exact_refusals
    assert solved > 0
