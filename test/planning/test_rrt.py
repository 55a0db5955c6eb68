"""The compiled RRT-Connect (bb_robot/planning/_rrt_numba.py): the same search as the Python loop, repeatable,
its local samples kept within the bounds, its paths valid, its limits and counters honoured."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.loading import load_file
from bb_robot.model.geometry import Box
from bb_robot.planning import rrt
from bb_robot.planning.rrt import rrt_connect
from bb_robot.planning.validity import StateChecker

pytest.importorskip("coal")
pytest.importorskip("numba")
ARM = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")
START = {"shoulder_lift_joint": -1.2, "elbow_joint": 1.2}
GOAL = {"shoulder_pan_joint": 2.6, "shoulder_lift_joint": -1.2, "elbow_joint": 1.2}


@pytest.fixture(scope="module")
def scene() -> Scene:
    """The bundled arm, and a post that the straight motion from START to GOAL hits."""
    loaded = load_file(str(BUNDLED_ARM))
    parts = robot_parts(loaded.robot, loaded.source)
    model = CollisionModel(
        loaded.robot, parts, read_srdf(BUNDLED_ARM.with_suffix(".srdf"), loaded.robot.links).disabled
    )
    scene = Scene(model)
    pose = np.eye(4)
    pose[:3, 3] = (0.0, -0.37, 0.5)
    scene.add_object("post", [(Box((0.12, 0.12, 1.0)), np.eye(4))], pose)
    return scene


def _problem(scene: Scene) -> tuple[StateChecker, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    names = scene.model.fk.joint_names
    base = np.array([START.get(n, 0.0) for n in names])
    checker = StateChecker(scene, ARM, base)
    lower, upper = joint_bounds(scene.model.robot, ARM)
    a = base[checker.active]
    b = np.array([GOAL.get(n, 0.0) for n in ARM])
    return checker, a, b, lower, upper


def _search(scene: Scene, seed: int, **options: object) -> rrt.Search:
    checker, a, b, lower, upper = _problem(scene)
    return rrt_connect(a, [b], checker, lower, upper, np.random.default_rng(seed), step=0.5, max_iterations=20_000,
                       **options)  # type: ignore[arg-type]  # fmt: skip


def test_the_compiled_loop_is_the_python_loop_when_every_sample_is_uniform(scene: Scene) -> None:
    # an identity projection sends the search through the Python loop (as the constrained planner does)
    for seed in (0, 1, 2):
        compiled = _search(scene, seed, local=0.0)
        python = _search(scene, seed, project=lambda q: q)
        assert compiled.path is not None and python.path is not None
        assert compiled.iterations == python.iterations
        np.testing.assert_allclose(compiled.path, python.path, atol=1e-9)


def test_the_compiled_search_is_repeatable_and_its_paths_are_valid(scene: Scene) -> None:
    checker, a, b, _, _ = _problem(scene)
    paths = []
    for seed in range(4):
        first, second = _search(scene, seed), _search(scene, seed)
        assert first.path is not None and second.path is not None, first.reason
        np.testing.assert_array_equal(first.path, second.path)  # bit for bit
        assert first.iterations == second.iterations and first.nodes == second.nodes
        path = first.path
        np.testing.assert_array_equal(path[0], a)
        np.testing.assert_array_equal(path[-1], b)
        assert checker.path_valid(path)
        full = np.repeat(checker.base[None], path.shape[0], axis=0)
        full[:, checker.active] = path
        assert check_path(scene.model, full, checker.clearance).ok
        paths.append(path)
    assert any(p.shape != paths[0].shape or not np.array_equal(p, paths[0]) for p in paths[1:])  # seeds matter


def test_local_samples_keep_every_node_within_the_bounds_and_free(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only local samples for the smaller tree (probability 1, a wide spread), every node of both trees
    lies within the bounds and is a valid configuration, and the trees' edges are valid."""
    checker, a, b, lower, upper = _problem(scene)
    kept: list[rrt.Tree] = []
    original = rrt._compiled

    def spy(trees: list[rrt.Tree], *args: object) -> rrt.Search:
        kept.extend(trees)
        return original(trees, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(rrt, "_compiled", spy)
    narrow_lower, narrow_upper = lower * 0.9, upper * 0.9
    search = rrt_connect(a, [b], checker, narrow_lower, narrow_upper, np.random.default_rng(3), step=0.5,
                         max_iterations=400, local=1.0, spread=6.0)  # fmt: skip
    assert search.nodes == sum(t.count for t in kept)
    grown = 0
    for tree in kept:
        for index in range(tree.count):
            node, parent = tree.nodes[index], int(tree.parent[index])
            if parent < 0:
                continue
            grown += 1
            assert (node >= narrow_lower - 1e-12).all() and (node <= narrow_upper + 1e-12).all()
            assert checker.valid(node)
            assert checker.edge_valid(tree.nodes[parent], node)
            assert np.linalg.norm(node - tree.nodes[parent]) <= 0.5 + 1e-9
    assert grown > 2


def test_limits_and_counters(scene: Scene) -> None:
    checker, a, b, lower, upper = _problem(scene)
    late = rrt_connect(a, [b], checker, lower, upper, np.random.default_rng(0), step=0.5, max_iterations=100,
                       deadline=0.0)  # fmt: skip
    assert late.path is None and late.iterations == 0 and "timeout" in late.reason
    before = checker.counts.edges
    short = rrt_connect(a, [b], checker, lower, upper, np.random.default_rng(0), step=0.01, max_iterations=3)
    assert short.path is None and short.iterations == 3 and "iteration limit" in short.reason
    assert checker.counts.edges > before and checker.counts.samples > 0
