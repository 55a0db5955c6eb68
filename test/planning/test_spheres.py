"""Sphere trees: every point of each part's geometry inside the union of its leaves; the packed model."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM
from helpers.mbm_problems import MBM_DIR, mbm_robot

from bb_robot.collision.shapes import robot_parts
from bb_robot.loading import load_file
from bb_robot.planning.spheres import SphereTree, enclosing_sphere, part_hull, part_tree, tree_of_points

pytest.importorskip("coal")


def _inside_leaves(tree: SphereTree, points: np.ndarray) -> np.ndarray:
    leaves = tree.leaves
    gaps = np.linalg.norm(points[:, None, :] - tree.centers[leaves][None], axis=2) - tree.radii[leaves][None]
    return np.asarray(gaps.min(axis=1))


def _solid_samples(points: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """Points of the convex hull of ``points``: convex combinations (near faces and edges too), and the vertices."""
    weights = rng.dirichlet(np.full(4, 0.3), size=count)
    chosen = points[rng.integers(0, len(points), size=(count, 4))]
    return np.vstack([np.einsum("nk,nkd->nd", weights, chosen), points])


def _geometry_samples(part: object, rng: np.random.Generator, count: int) -> np.ndarray:
    """Points of the part's solid in its link's frame: in and on a primitive; in a mesh's hull."""
    shape = part.hull  # type: ignore[attr-defined]
    kind = type(shape).__name__
    u = rng.random((count, 3))
    u[: count // 2] = np.round(u[: count // 2])  # half of them on corners, edges and faces
    if kind == "Box":
        local = (2 * u - 1) * np.asarray(shape.halfSide)
    elif kind == "Cylinder":
        radius = shape.radius * np.sqrt(np.where(u[:, 0] > 0.5, 1.0, u[:, 0] * 2))
        angle = 2 * np.pi * rng.random(count)
        local = np.column_stack([radius * np.cos(angle), radius * np.sin(angle), (2 * u[:, 2] - 1) * shape.halfLength])
    elif kind == "Sphere":
        direction = rng.normal(size=(count, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        local = direction * shape.radius * np.where(u[:, :1] > 0.5, 1.0, u[:, :1])
    else:
        vertices = np.array(shape.points(), dtype=float).reshape(-1, 3)
        local = _solid_samples(vertices, rng, count)
    pose = part.local  # type: ignore[attr-defined]
    return np.asarray(local @ pose[:3, :3].T + pose[:3, 3])


def _robot_parts(robot: str) -> tuple:
    if robot == "bb_arm":
        loaded = load_file(str(BUNDLED_ARM))
        return robot_parts(loaded.robot, loaded.source)
    urdf, _ = mbm_robot(robot)
    loaded = load_file(str(urdf))
    return robot_parts(loaded.robot, loaded.source, [str(MBM_DIR / robot)])


@pytest.mark.parametrize("robot", ["bb_arm", "panda", "ur5"])
def test_every_point_of_every_part_is_inside_its_leaves(robot: str) -> None:
    rng = np.random.default_rng(5)
    for part in _robot_parts(robot):
        tree = part_tree(part)
        samples = _geometry_samples(part, rng, 4000)
        assert _inside_leaves(tree, samples).max() <= 1e-9, part.label
        # the root holds the whole part and every node holds its children's pieces: the root first
        assert np.all(np.linalg.norm(samples - tree.centers[0], axis=1) <= tree.radii[0] + 1e-9), part.label


def test_mesh_surface_points_are_inside() -> None:
    """The triangles of the Panda's meshes (the geometry itself, not only its hull's vertices)."""
    coal = pytest.importorskip("coal")
    rng = np.random.default_rng(9)
    for part in _robot_parts("panda"):
        if not type(part.exact).__name__.startswith("BVHModel"):
            continue
        mesh = part.exact
        vertices = np.array(mesh.vertices(), dtype=float).reshape(-1, 3)
        triangles = np.array([[t[i] for i in range(3)] for t in (mesh.tri_indices(k) for k in range(mesh.num_tris))])
        weights = rng.dirichlet(np.ones(3), size=triangles.shape[0])
        surface = np.einsum("tk,tkd->td", weights, vertices[triangles])
        in_link = surface @ part.local[:3, :3].T + part.local[:3, 3]
        assert _inside_leaves(part_tree(part), in_link).max() <= 1e-9, part.label
    del coal


def test_a_box_is_covered_and_the_leaves_are_smaller_than_the_root() -> None:
    corners = np.array([[x, y, z] for x in (-0.3, 0.3) for y in (-0.05, 0.05) for z in (-0.02, 0.02)])
    tree = tree_of_points(corners)
    assert tree.leaves.size > 1
    assert tree.radii[tree.leaves].max() < tree.radii[0]
    grid = np.stack(np.meshgrid(*[np.linspace(-1, 1, 9)] * 3), axis=-1).reshape(-1, 3) * [0.3, 0.05, 0.02]
    assert _inside_leaves(tree, grid).max() <= 1e-9


def test_enclosing_sphere_holds_its_points() -> None:
    points = np.random.default_rng(1).normal(size=(500, 3))
    center, radius = enclosing_sphere(points)
    assert np.linalg.norm(points - center, axis=1).max() <= radius
    assert radius < 1.2 * np.linalg.norm(points, axis=1).max()


def _published_spheres(robot: str) -> dict[str, list[tuple[np.ndarray, float]]]:
    """VAMP's hand-made spheres per link (``<robot>_spherized.urdf``), read for comparison only."""
    text = (MBM_DIR / robot / f"{robot}_spherized.urdf").read_text()
    spheres: dict[str, list[tuple[np.ndarray, float]]] = {}
    for block in re.findall(r'<link name="([^"]+)">(.*?)</link>', text, flags=re.S):
        for radius, xyz in re.findall(r'<sphere radius="([^"]+)".*?<origin xyz="([^"]+)"', block[1], flags=re.S):
            spheres.setdefault(block[0], []).append((np.array([float(v) for v in xyz.split()]), float(radius)))
    return spheres


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_ours_hold_points_the_published_hand_made_spheres_leave_out(robot: str) -> None:
    """The MBM robots' published sphere models are approximations (points of the meshes outside them);
    ours, cut from the geometry, hold every point: the reason the product builds its own."""
    rng = np.random.default_rng(3)
    published = _published_spheres(robot)
    outside_theirs = 0
    for part in _robot_parts(robot):
        samples = _geometry_samples(part, rng, 2000)
        assert _inside_leaves(part_tree(part), samples).max() <= 1e-9, part.label
        if part.link in published:
            centers = np.array([c for c, _ in published[part.link]])
            radii = np.array([r for _, r in published[part.link]])
            gaps = np.linalg.norm(samples[:, None] - centers[None], axis=2) - radii[None]
            outside_theirs += int((gaps.min(axis=1) > 1e-6).sum())
    assert outside_theirs > 0


@pytest.mark.parametrize("robot", ["bb_arm", "panda", "ur5"])
def test_the_exact_stages_hulls_hold_every_point_of_each_part(robot: str) -> None:
    """Each part's measured hull (its points grown by its radius) holds the part: along any direction it
    reaches at least as far as the part's own geometry (support functions), also where a hull of
    thousands of vertices is measured through 400 (the UR5's force-sensor disc)."""
    rng = np.random.default_rng(7)
    directions = rng.normal(size=(400, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    reduced = 0
    for part in _robot_parts(robot):
        points, margin, edges = part_hull(part)
        samples = _geometry_samples(part, rng, 600)
        reach = (directions @ points.T).max(axis=1) + margin
        assert ((directions @ samples.T).max(axis=1) <= reach + 1e-9).all(), part.label
        if edges is not None:  # the edges the support function climbs join the points it was given
            assert edges.min() >= 0 and edges.max() < points.shape[0]
        reduced += margin > 0.0 and type(part.hull).__name__ != "Sphere"
    assert robot != "ur5" or reduced > 0


def test_the_compiled_check_agrees_with_coal_on_the_ur5(tmp_path: Path) -> None:
    """States: the compiled check (spheres, then GJK's lower bound) accepts exactly what coal's hull
    distances accept at the clearance; the wrist pairs it proves apart once stay apart."""
    from helpers.mbm_planning import extract, load_problem

    from bb_robot.collision.matrix import joint_bounds
    from bb_robot.planning.validity import StateChecker

    problem = load_problem("ur5", "table_pick", 1, extract("ur5", range(1, 2), tmp_path, ("table_pick",)))
    checker = StateChecker(problem.scene, tuple(problem.goal), problem.start, 0.002)
    links = {
        tuple(sorted((checker.model.parts[i].link, checker.model.parts[j].link)))
        for i, j, _ in checker.packed.pairs[checker.steady].tolist()
    }
    assert ("fts_robotside", "wrist_2_link") in links
    lower, upper = joint_bounds(checker.model.robot, checker.joints)
    rng = np.random.default_rng(11)
    verdicts = {True: 0, False: 0}
    for x in rng.uniform(lower, upper, size=(300, len(checker.joints))):
        q = checker.full(x)
        free = checker.model.nearest(q, checker.clearance) is None and not checker.model.colliding(q, first=True)
        assert checker.valid(x) == free, x.tolist()
        verdicts[free] += 1
        distances = checker.model.pair_distances(q)
        steady = [d for (a, b), d in distances.items() if tuple(sorted((a.split("/")[0], b.split("/")[0]))) in links]
        assert min(steady) >= checker.clearance
    assert verdicts[True] > 30 and verdicts[False] > 30
