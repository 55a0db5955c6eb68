"""bench_plan's constrained problems: MotionBenchMaker's Panda ``box`` problems with the hand kept level.

- **Problems**: the ``box`` set's problems (the hand reaches into a box from above: start and goal
  have it pointing down) whose start and goal are free at clearance 0 and keep the constraint.
- **The constraint**: ``panda_hand`` within 0.1 rad about x and y of pointing straight down, any
  turn about z (:class:`~bb_robot.planning.constraints.OrientationConstraint`, MoveIt's measure:
  the XYZ Euler angles of ``R_refᵀ R``), along the whole path.
- **Ours**: :func:`bb_robot.planning.plan.plan` with ``path_constraints`` (projection, every edge
  checked for the constraint and continuously for collisions), seed = the problem's number.
- **OMPL 2.0.1**: RRTConnect on a ``ProjectedStateSpace`` (OMPL's projection-based constrained
  planning) over the same joints and bounds; its ``Constraint`` is the same measure as equations,
  ``e - clip(e, -b, b)`` about x and y with their Jacobian, ``b`` the band ours' edge samples keep
  (0.1 rad less :data:`~bb_robot.planning.constraints.MARGIN`)
  (:meth:`~bb_robot.planning.constraints.ConstraintModel.residual`), its validity checker ours'
  single-state check at the same clearance; ``simplifySolution``, then ``interpolate`` (the
  manifold's own steps, as a user of it executes the path).
- **Judged independently**: each path, straight between its rows and checked so no joint moves over
  0.01 rad, placed by Pinocchio: the hand's largest tilt (scipy's angles) and any contact (coal on
  the meshes, :class:`helpers.mbm_planning.IndependentCheck`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from _plan_common import Run, ompl_joint_space, ompl_validity
from helpers.mbm_planning import IndependentCheck, Problem, extract, load_problem

from bb_robot.model.transforms import rpy_to_matrix
from bb_robot.planning.constraints import MARGIN, ConstraintModel, OrientationConstraint
from bb_robot.planning.plan import plan
from bb_robot.planning.shortcut import path_length
from bb_robot.planning.validity import StateChecker

SET = "box"
LINK = "panda_hand"
#: The hand pointing straight down (its z axis along the world's -z).
DOWN = rpy_to_matrix([math.pi, 0.0, 0.0])
LEVEL = (0.1, 0.1, math.pi)
#: Seconds each party gets per problem (solving; OMPL gets as much again to simplify).
TIMEOUT = 5.0


def constraint() -> OrientationConstraint:
    """The hand level within 0.1 rad about x and y, any turn about z."""
    return OrientationConstraint(LINK, DOWN, LEVEL)


def _constraint_model(problem: Problem, checker: StateChecker) -> ConstraintModel:
    scene = problem.scene
    return ConstraintModel(scene.model.robot, checker.joints, problem.start, scene.model.fk.joint_names, constraint())


def _ompl(problem: Problem, checker: StateChecker, model: ConstraintModel, party: Run) -> np.ndarray | None:
    from ompl import base as ob
    from ompl import geometric as og

    n = len(checker.joints)
    band = np.array([LEVEL[0] - MARGIN, LEVEL[1] - MARGIN, math.pi])  # the band ours' edge samples keep

    class Level(ob.Constraint):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(n, 2)

        def function(self, x: np.ndarray, out: np.ndarray) -> None:
            _, residual, _ = model.residual(np.asarray(x), band)
            out[:] = residual[:2]

        def jacobian(self, x: np.ndarray, out: np.ndarray) -> None:
            _, residual, jacobian = model.residual(np.asarray(x), band)
            jacobian[residual == 0.0] = 0.0  # the residual is flat inside the band
            out[:, :] = jacobian[:2]

    level = Level()
    space = ob.ProjectedStateSpace(ompl_joint_space(checker), level)
    info = ob.ConstrainedSpaceInformation(space)
    setup = og.SimpleSetup(info)
    setup.setStateValidityChecker(ompl_validity(checker))
    setup.setPlanner(og.RRTConnect(info))
    start, goal = space.allocState(), space.allocState()
    start.copy([float(v) for v in problem.start[checker.active]])
    goal.copy([float(problem.goal[j]) for j in checker.joints])
    setup.setStartAndGoalStates(start, goal)
    party.asked += 1
    began = time.perf_counter()
    status = setup.solve(TIMEOUT)
    if not (bool(status) and setup.haveExactSolutionPath()):
        return None
    setup.simplifySolution(TIMEOUT)
    path = setup.getSolutionPath()
    path.interpolate()
    party.total.append(time.perf_counter() - began)
    party.solved += 1
    rows = np.array([[path.getState(k)[i] for i in range(n)] for k in range(path.getStateCount())])
    party.short.append(path_length(rows))
    return rows


def bench(numbers: range, root: Path, ompl: bool) -> dict[str, Run]:
    """Both parties on the valid constrained problems among ``numbers`` of the box set."""
    extract("panda", numbers, root / "panda", (SET,))
    parties = {"ours": Run(), "ompl": Run()}
    for number in numbers:
        problem = load_problem("panda", SET, number, root / "panda")
        joints = tuple(problem.goal)
        checker = StateChecker(problem.scene, joints, problem.start, 0.0)
        model = _constraint_model(problem, checker)
        start = problem.start[checker.active]
        goal = np.array([problem.goal[j] for j in joints])
        if not all(checker.valid(x) and model.satisfied(x, MARGIN) for x in (start, goal)):
            continue
        independent = IndependentCheck("panda", problem.scene_file)
        began = time.perf_counter()
        result = plan(
            problem.scene, problem.start, problem.goal, joints=joints, seed=number, timeout=TIMEOUT,
            path_constraints=constraint(), command_range_only=False,
        )  # fmt: skip
        seconds = time.perf_counter() - began
        ours = parties["ours"]
        ours.asked += 1
        paths: dict[str, np.ndarray | None] = {"ours": None, "ompl": None}
        if result.success and result.trajectory is not None:
            ours.solved += 1
            ours.total.append(seconds)
            ours.short.append(result.simplified_length)
            columns = [result.trajectory.names.index(j) for j in joints]
            paths["ours"] = np.asarray(result.trajectory.positions)[:, columns]
        if ompl:
            paths["ompl"] = _ompl(problem, checker, model, parties["ompl"])
        for name, rows in paths.items():
            if rows is not None:
                parties[name].tilt.append(independent.tilt(joints, rows, LINK, DOWN))
                parties[name].contacts += bool(independent.contacts(joints, rows))
    return parties


def rows(parties: dict[str, Run]) -> list[list[str]]:
    """The table's rows: party, solved, seconds (median / p95 / max), length, largest tilt, contacts."""
    out = []
    for name, label in (("ours", "ours"), ("ompl", "OMPL RRTConnect, ProjectedStateSpace")):
        party = parties[name]
        if not party.asked:
            continue
        seconds = np.asarray(party.total) * 1e3
        timing = (
            " / ".join(f"{v:.0f}" for v in (np.median(seconds), np.percentile(seconds, 95), seconds.max()))
            if party.total
            else "–"
        )
        out.append(
            [
                label, f"{party.solved}/{party.asked}", timing,
                f"{np.mean(party.short):.2f}" if party.short else "–",
                f"{max(party.tilt):.4f}" if party.tilt else "–",
                f"{sum(t > LEVEL[0] + 1e-6 for t in party.tilt)}", f"{party.contacts}",
            ]
        )  # fmt: skip
    return out


HEADERS = [
    "party", "solved", "ms (median / p95 / max)", "mean length (rad)", "largest tilt (rad)",
    "paths over 0.1 rad", "paths with a contact",
]  # fmt: skip
