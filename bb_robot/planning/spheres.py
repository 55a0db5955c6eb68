"""Sphere models of a robot's collision geometry, and the packed arrays the compiled check reads.

The planner's broad phase (:mod:`bb_robot.planning._plan_numba`) checks spheres, not meshes: every
part of every link gets a binary *tree* of spheres, built here from the part's own geometry (any
robot: coal primitives and meshes), never from a hand-made sphere file.

**Conservative by construction.**  A part is a convex solid: a primitive, or a mesh's convex hull
(what :class:`~bb_robot.collision.model.CollisionModel` checks by default).  Its tree is built by
cutting that solid with planes: a node is a convex piece (the convex hull of its vertices), its
sphere encloses every vertex of the piece (so the whole piece: a ball is convex), and its two
children are the piece cut in two by a plane across its longest principal axis.  Cutting a
polytope ``conv(V)`` by a plane gives ``conv`` of the vertices on one side and of the crossing
points of every segment between two vertices on opposite sides, exactly; so the leaves' pieces
together are the whole solid, and every point of the part lies inside some leaf sphere.  The root
is the sphere of the whole part: the hierarchical cull's first test.  A cylinder or a cone is
first replaced by a prism around it (a polygon circumscribing its circle), a sphere is itself.

A piece is cut again while its sphere reaches more than :data:`TOLERANCE` beyond half the piece's
thinnest extent (how far the sphere bulges past a flat piece: a disc's single sphere bulged 3 cm
past the UR5's force sensor), down to :data:`MAX_DEPTH` levels.  The spheres only cull: where they
cannot tell, the exact stage measures the hulls (:mod:`bb_robot.planning._plan_numba`).

Obstacles are not made of spheres: they are checked as primitives (box, sphere, cylinder, the
floor's half-space), and any other shape (a mesh, a cone) as the box around its points in its own
frame, which contains it.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel, link_pair
from bb_robot.collision.path import MotionBound
from bb_robot.collision.reach import driving_joint, path_joints
from bb_robot.collision.shapes import Part
from bb_robot.model.transforms import Matrix

#: A piece is cut again while its sphere reaches this far (m) beyond what its width needs.
TOLERANCE = 0.005
#: At most this many levels of cuts (2**MAX_DEPTH leaves per part).
MAX_DEPTH = 5
#: Sides of the polygon circumscribing a cylinder's or a cone's circle.
POLYGON_SIDES = 12
#: The same for the exact stage's hulls (:func:`part_hull`).
HULL_SIDES = 32

# Obstacle kinds of the packed model (the same numbers in _plan_numba).
BOX, SPHERE, CYLINDER, HALFSPACE = 0, 1, 2, 3


@dataclass(frozen=True)
class SphereTree:
    """A binary tree of spheres around one part, in the part's link frame.

    Attributes:
        centers: ``(nodes, 3)`` sphere centres; node 0 is the root.
        radii: ``(nodes,)``.
        left: ``(nodes,)`` the first child's index, -1 for a leaf.
        right: ``(nodes,)`` the second child's index, -1 for a leaf.
    """

    centers: Matrix
    radii: Matrix
    left: npt.NDArray[np.intp]
    right: npt.NDArray[np.intp]

    @property
    def leaves(self) -> npt.NDArray[np.intp]:
        """The indices of the leaves (whose union holds the part)."""
        return np.flatnonzero(self.left < 0)

    def moved(self, pose: Matrix) -> SphereTree:
        """The same tree in another frame (``pose``: this frame's pose in it)."""
        return SphereTree(self.centers @ pose[:3, :3].T + pose[:3, 3], self.radii, self.left, self.right)


def enclosing_sphere(points: Matrix) -> tuple[Matrix, float]:
    """A sphere holding every point: near the smallest (Bădoiu–Clarkson), its radius measured from its centre.

    Args:
        points: ``(n, 3)``, n ≥ 1.

    Returns:
        ``(centre, radius)``; every point is within ``radius`` of ``centre``.
    """
    low, high = points.min(axis=0), points.max(axis=0)
    center = (low + high) / 2
    for step in range(1, 60):
        farthest = points[int(((points - center) ** 2).sum(axis=1).argmax())]
        center = center + (farthest - center) / (step + 1)
    candidates = (center, (low + high) / 2)
    radii = [float(np.sqrt(((points - c) ** 2).sum(axis=1).max())) for c in candidates]
    best = int(np.argmin(radii))
    # a hair more than measured: rounding never leaves a vertex outside
    return np.asarray(candidates[best]), radii[best] * (1 + 1e-9) + 1e-9


def _hull(points: Matrix) -> tuple[Matrix, npt.NDArray[np.intp] | None]:
    """The vertices of the convex hull of ``points`` and its edges ``(e, 2)``.

    Edges are ``None`` where qhull cannot build the hull (a flat or tiny piece): the points are
    kept as they are, and a cut then crosses every segment between two of them (still exact).
    """
    unique = np.unique(np.round(points, 12), axis=0)
    from bb_robot.collision.shapes import coal_module, flat

    if unique.shape[0] <= 4 or flat(unique):  # coal's qhull crashes the process on flat input
        return unique, None
    coal = coal_module()
    holder = coal.StdVec_Vec3s()
    holder.extend(unique)
    try:
        hull = coal.ConvexBase.convexHull(holder, False, "Qt")
    except Exception:  # noqa: BLE001 - qhull refuses flat input: keep every point
        return unique, None
    if hull is None:
        return unique, None
    vertices = np.array(hull.points(), dtype=float).reshape(-1, 3)
    edges = [(i, int(j)) for i in range(hull.num_points) for j in hull.neighbors(i) if i < int(j)]
    return vertices, np.array(edges, dtype=np.intp).reshape(-1, 2)


def _cut(points: Matrix, edges: npt.NDArray[np.intp] | None, normal: Matrix, offset: float) -> tuple[Matrix, Matrix]:
    """The points of each side of ``conv(points)`` cut by the plane ``normal · x = offset`` (their hulls are exact).

    Every edge of a polytope crossing the plane gives a vertex of the cut; with ``edges`` unknown,
    every pair of points on opposite sides is crossed (a superset, inside the polytope).
    """
    side = points @ normal - offset
    below, above = points[side <= 0.0], points[side >= 0.0]
    if edges is None:
        first, second = np.nonzero((side[:, None] < 0.0) & (side[None, :] > 0.0))
    else:
        a, b = edges[:, 0], edges[:, 1]
        crossing = ((side[a] < 0.0) & (side[b] > 0.0)) | ((side[a] > 0.0) & (side[b] < 0.0))
        first, second = a[crossing], b[crossing]
    if first.size:
        sa, sb = side[first], side[second]
        t = sa / (sa - sb)
        cuts = points[first] + t[:, None] * (points[second] - points[first])
        below = np.vstack([below, cuts])
        above = np.vstack([above, cuts])
    return below, above


def _build(points: Matrix, depth: int, nodes: list[list[Any]]) -> int:
    points, edges = _hull(points)
    center, radius = enclosing_sphere(points)
    index = len(nodes)
    nodes.append([center, radius, -1, -1])
    if depth >= MAX_DEPTH or points.shape[0] < 2:
        return index
    centred = points - points.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    spans = np.ptp(centred @ axes.T, axis=0)
    thinnest = float(spans[-1]) if spans.size > 2 else 0.0
    if radius - thinnest / 2 <= TOLERANCE:
        return index
    normal = axes[0]
    along = points @ normal
    offset = float((along.min() + along.max()) / 2)
    below, above = _cut(points, edges, normal, offset)
    if below.shape[0] == 0 or above.shape[0] == 0:
        return index
    nodes[index][2] = _build(below, depth + 1, nodes)
    nodes[index][3] = _build(above, depth + 1, nodes)
    return index


def tree_of_points(points: npt.ArrayLike) -> SphereTree:
    """The sphere tree of the convex hull of ``points`` (see the module docstring).

    Args:
        points: ``(n, 3)``, n ≥ 1, finite.

    Returns:
        The tree: the union of its leaves holds ``conv(points)``.

    Raises:
        ValueError: no points or a non-finite one.
    """
    array = np.asarray(points, dtype=float).reshape(-1, 3)
    if array.shape[0] == 0 or not np.isfinite(array).all():
        raise ValueError("a sphere tree needs at least one finite point")
    nodes: list[list[Any]] = []
    _build(array, 0, nodes)
    return SphereTree(
        np.array([n[0] for n in nodes], dtype=float).reshape(-1, 3),
        np.array([n[1] for n in nodes], dtype=float),
        np.array([n[2] for n in nodes], dtype=np.intp),
        np.array([n[3] for n in nodes], dtype=np.intp),
    )


def _prism(radius: float, half_length: float, apex: bool, sides: int = POLYGON_SIDES) -> Matrix:
    """Points whose hull holds a cylinder (or, with ``apex``, a cone) along z: a circumscribed polygon."""
    outer = radius / math.cos(math.pi / sides)
    angles = np.arange(sides) * (2 * math.pi / sides)
    ring = np.column_stack([outer * np.cos(angles), outer * np.sin(angles)])
    bottom = np.column_stack([ring, np.full(sides, -half_length)])
    top = np.array([[0.0, 0.0, half_length]]) if apex else np.column_stack([ring, np.full(sides, half_length)])
    return np.vstack([bottom, top])


def shape_points(shape: Any, sides: int = POLYGON_SIDES) -> Matrix | None:
    """Points (in the shape's own frame) whose convex hull holds a coal shape; ``None`` for a sphere.

    Args:
        shape: a coal ``Box``, ``Sphere``, ``Cylinder``, ``Cone``, ``ConvexBase`` or BVH model.
        sides: of the polygon circumscribing a cylinder's or a cone's circle.

    Returns:
        ``(n, 3)`` points, or ``None`` for a sphere (its own tree is itself).

    Raises:
        ValueError: a shape of another kind (a half-space is no part of a robot).
    """
    kind = type(shape).__name__
    if kind == "Sphere":
        return None
    if kind == "Box":
        half = np.asarray(shape.halfSide, dtype=float)
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        return np.asarray(signs * half)
    if kind in ("Cylinder", "Cone"):
        return _prism(float(shape.radius), float(shape.halfLength), kind == "Cone", sides)
    if kind.startswith("Convex"):
        return np.array(shape.points(), dtype=float).reshape(-1, 3)
    if kind.startswith("BVHModel"):
        return np.array(shape.vertices(), dtype=float).reshape(-1, 3)
    raise ValueError(f"no sphere model for a coal {kind}")


#: Trees by shape (the shape object kept alive beside its tree, so its id is not reused).
_TREES: OrderedDict[int, tuple[Any, SphereTree]] = OrderedDict()
_TREES_KEPT = 512
#: Hull vertices by shape (:func:`part_hull`), kept the same way.
_HULLS: OrderedDict[int, tuple[Any, Matrix, float, npt.NDArray[np.intp] | None]] = OrderedDict()
#: A hull with more vertices is measured through this many of them, grown to hold the others.
HULL_VERTICES = 400


def shape_tree(shape: Any) -> SphereTree:
    """The sphere tree of one coal shape in its own frame, built once per shape object.

    Args:
        shape: as :func:`shape_points`.

    Returns:
        The tree.
    """
    key = id(shape)
    found = _TREES.get(key)
    if found is not None and found[0] is shape:
        _TREES.move_to_end(key)
        return found[1]
    points = shape_points(shape)
    if points is None:
        radius = float(shape.radius)
        tree = SphereTree(np.zeros((1, 3)), np.array([radius]), np.array([-1]), np.array([-1]))
    else:
        tree = tree_of_points(points)
    _TREES[key] = (shape, tree)
    while len(_TREES) > _TREES_KEPT:
        _TREES.popitem(last=False)
    return tree


def part_tree(part: Part) -> SphereTree:
    """The sphere tree of a robot part (its hull) in its link's frame.

    Args:
        part: a part of a :class:`CollisionModel` (a link's, or an attached object's).

    Returns:
        The tree, placed by the part's local pose.
    """
    return shape_tree(part.hull).moved(part.local)


def part_hull(part: Part) -> tuple[Matrix, float, npt.NDArray[np.intp] | None]:
    """A robot part as the exact stage measures it: points in its link frame, and a radius around them.

    A mesh: its convex hull's vertices; a box: its corners; a cylinder or a cone: a prism around it
    (:data:`HULL_SIDES` sides, at most 0.5 % wider); a sphere: its centre, with its radius.  A hull
    of more than :data:`HULL_VERTICES` vertices keeps that many (farthest-point order), with the
    radius that holds the others.  The convex hull of the points, grown by the radius, holds the part.
    The hull's edges (qhull's, through coal) let the support function climb from vertex to vertex
    instead of scanning them all: on a convex polytope a vertex no neighbour improves on is the
    farthest along the direction.

    Args:
        part: a part of a :class:`CollisionModel`.

    Returns:
        ``(points (n, 3), radius, edges (e, 2) or None)``; ``None``: scan every point (a few, or flat).
    """
    local = np.asarray(part.local, dtype=float)
    key = id(part.hull)
    found = _HULLS.get(key)
    if found is None or found[0] is not part.hull:
        points = shape_points(part.hull, HULL_SIDES)
        margin = 0.0
        edges = None
        if points is not None and points.shape[0] > 8:
            points = _hull(points)[0]  # the vertices alone
            points, margin = _fewer(points, HULL_VERTICES)
            if points.shape[0] > 16:
                points, edges = _hull(points)
        elif points is None:
            margin = float(part.hull.radius)
            points = np.zeros((1, 3))
        found = (part.hull, points, margin, edges)
        _HULLS[key] = found
        while len(_HULLS) > _TREES_KEPT:
            _HULLS.popitem(last=False)
    _, points, margin, edges = found
    return points @ local[:3, :3].T + local[:3, 3], margin, edges


def _fewer(points: Matrix, count: int) -> tuple[Matrix, float]:
    """At most ``count`` of ``points`` (farthest-point order), and how far the others are outside their hull.

    The hull of the kept points grown by that distance holds every point, so the whole hull.
    """
    if points.shape[0] <= count:
        return points, 0.0
    chosen = [int(np.argmax(np.linalg.norm(points - points.mean(axis=0), axis=1)))]
    nearest = np.linalg.norm(points - points[chosen[0]], axis=1)
    for _ in range(count - 1):
        chosen.append(int(nearest.argmax()))
        nearest = np.minimum(nearest, np.linalg.norm(points - points[chosen[-1]], axis=1))
    kept = points[chosen]
    # how far each other point is outside the kept points' hull (coal's distance, a hair more)
    from bb_robot.collision.shapes import coal_module

    coal = coal_module()
    holder = coal.StdVec_Vec3s()
    holder.extend(kept)
    hull = coal.ConvexBase.convexHull(holder, False, "Qt")
    dot = coal.Sphere(1e-9)
    request, result, identity = coal.DistanceRequest(), coal.DistanceResult(), coal.Transform3s()
    place = coal.Transform3s()
    margin = 0.0
    others = np.ones(points.shape[0], dtype=bool)
    others[chosen] = False
    for point in points[others]:
        place.setTranslation(point)
        result.clear()
        margin = max(margin, coal.distance(hull, identity, dot, place, request, result) + 1e-9)
    return kept, margin * (1 + 1e-6) + 1e-9


def _obstacle_primitive(part: Part) -> tuple[int, Matrix, Matrix]:
    """An obstacle as ``(kind, pose, dims)``: the pose of the shape in the root frame, and its sizes."""
    shape = part.hull
    kind = type(shape).__name__
    pose = np.asarray(part.local, dtype=float)
    if kind == "Box":
        return BOX, pose, np.append(np.asarray(shape.halfSide, dtype=float), 0.0)
    if kind == "Sphere":
        return SPHERE, pose, np.array([float(shape.radius), 0.0, 0.0, 0.0])
    if kind == "Cylinder":
        return CYLINDER, pose, np.array([float(shape.radius), float(shape.halfLength), 0.0, 0.0])
    if kind == "Halfspace":
        normal = pose[:3, :3] @ np.asarray(shape.n, dtype=float)
        offset = float(shape.d) + float(normal @ pose[:3, 3])
        return HALFSPACE, pose, np.array([normal[0], normal[1], normal[2], offset])
    # Any other shape: the box around its points, in its own frame.
    rotation, translation = pose[:3, :3], pose[:3, 3]
    local = (np.asarray(part.points, dtype=float) - translation) @ rotation
    low, high = local.min(axis=0), local.max(axis=0)
    boxed = pose.copy()
    boxed[:3, 3] = translation + rotation @ ((low + high) / 2)
    return BOX, boxed, np.append((high - low) / 2, 0.0)


@dataclass(frozen=True)
class PackedSpheres:
    """A collision model's sphere trees, obstacles and checked pairs as the arrays the compiled check takes.

    Attributes:
        node_center: ``(nodes, 3)`` every tree's sphere centres in their link frames, trees one after another.
        node_radius: ``(nodes,)``.
        node_child: ``(nodes, 2)`` children (global indices), -1 for a leaf.
        part_root: ``(robot parts,)`` each robot part's root node.
        part_frame: ``(robot parts,)`` the FK frame (link) that places each robot part.
        obstacle_kind: ``(obstacles,)`` :data:`BOX`, :data:`SPHERE`, :data:`CYLINDER` or :data:`HALFSPACE`.
        obstacle_pose: ``(obstacles, 3, 4)`` each obstacle's ``[R | t]`` in the root frame.
        obstacle_sphere: ``(obstacles, 4)``: each obstacle's bounding sphere (centre, radius; an
            infinite radius for a half-space), the first test.
        obstacle_dims: ``(obstacles, 4)``: box half sides; sphere radius; cylinder radius and half
            length; half-space normal and offset (solid where ``n · x <= offset``).
        pairs: ``(pairs, 3)`` the checked pairs: first part, second part or obstacle, 1 when the
            second is an obstacle.
        pair_reach: ``(pairs, coordinates)``: how far each pair's geometries can approach each other
            per radian (or metre) of each coordinate (m): for an obstacle, the part's motion
            (:class:`~bb_robot.collision.path.MotionBound`); for two links, their motions relative to
            their common ancestor, over the joints between them only (the others move both alike).
        hull_vertex: ``(vertices, 3)`` every robot part's :func:`part_hull` points, in its link frame.
        hull_start: ``(robot parts + 1,)`` where each part's points begin in ``hull_vertex`` (and the end).
        hull_margin: ``(robot parts,)`` each part's radius around its points.
        hull_adjacency_start: ``(vertices + 1,)`` where each vertex's neighbours begin in ``hull_adjacency``
            (a part whose vertices have none is scanned whole).
        hull_adjacency: the neighbours (global vertex indices) along the hulls' edges.
        trees: each robot part's tree (for tests and reports).
    """

    node_center: Matrix
    node_radius: Matrix
    node_child: npt.NDArray[np.intp]
    part_root: npt.NDArray[np.intp]
    part_frame: npt.NDArray[np.intp]
    obstacle_kind: npt.NDArray[np.intp]
    obstacle_pose: Matrix
    obstacle_sphere: Matrix
    obstacle_dims: Matrix
    pairs: npt.NDArray[np.intp]
    pair_reach: Matrix
    hull_vertex: Matrix
    hull_start: npt.NDArray[np.intp]
    hull_margin: Matrix
    hull_adjacency_start: npt.NDArray[np.intp]
    hull_adjacency: npt.NDArray[np.intp]
    trees: tuple[SphereTree, ...]

    @property
    def leaf_count(self) -> int:
        """How many leaf spheres the robot's parts have in all."""
        return int(sum(t.leaves.size for t in self.trees))


def _readonly(array: npt.ArrayLike, dtype: Any) -> Any:
    result = np.ascontiguousarray(np.asarray(array, dtype=dtype))
    result.setflags(write=False)
    return result


def checked_part_pairs(model: CollisionModel) -> list[tuple[int, int, bool]]:
    """The part pairs the model checks, as its own rule gives them: parts of different links, not two
    obstacles, and not a pair its matrix disables.

    Args:
        model: the collision model.

    Returns:
        ``(first part, second part or obstacle index, second is an obstacle)`` per pair.
    """
    parts, obstacles = model.parts, model.obstacles
    pairs: list[tuple[int, int, bool]] = []
    for i, a in enumerate(parts):
        for j in range(i + 1, len(parts)):
            b = parts[j]
            if a.link != b.link and link_pair(a.link, b.link) not in model.disabled:
                pairs.append((i, j, False))
        for j, b in enumerate(obstacles):
            if a.link != b.link and link_pair(a.link, b.link) not in model.disabled:
                pairs.append((i, j, True))
    # obstacles first: where a robot meets its world, it usually meets it before itself
    pairs.sort(key=lambda pair: not pair[2])
    return pairs


def _pair_reach(model: CollisionModel, bound: MotionBound, pairs: Sequence[tuple[int, int, bool]]) -> Matrix:
    """Per pair and coordinate, how far the pair's geometries approach each other per unit of it.

    See :attr:`PackedSpheres.pair_reach`.
    """
    robot, names = model.robot, model.fk.joint_names
    row_of = {name: i for i, name in enumerate(bound.links)}
    column = {name: i for i, name in enumerate(names)}
    result = np.zeros((len(pairs), len(names)))
    masks: dict[tuple[str, str], tuple[Matrix, Matrix]] = {}
    for k, (i, j, obstacle) in enumerate(pairs):
        a = model.parts[i].frame or model.parts[i].link
        if obstacle:
            result[k] = bound.reach[row_of[a]]
            continue
        b = model.parts[j].frame or model.parts[j].link
        if (a, b) not in masks:
            first, second = path_joints(robot, a, b)
            mask_a, mask_b = np.zeros(len(names)), np.zeros(len(names))
            for joint in first:
                mask_a[column[driving_joint(robot, joint)[0]]] = 1.0
            for joint in second:
                mask_b[column[driving_joint(robot, joint)[0]]] = 1.0
            masks[(a, b)] = (mask_a, mask_b)
        mask_a, mask_b = masks[(a, b)]
        result[k] = bound.reach[row_of[a]] * mask_a + bound.reach[row_of[b]] * mask_b
    return result


def pack(model: CollisionModel, pairs: Sequence[tuple[int, int, bool]] | None = None) -> PackedSpheres:
    """Pack a collision model's parts as sphere trees, its obstacles as primitives, and its checked pairs.

    Args:
        model: the collision model (a scene's: ``Scene.model``).
        pairs: the part pairs to check (default: :func:`checked_part_pairs`).

    Returns:
        The packed arrays, read-only.

    Raises:
        ValueError: a robot part of a shape no tree can be built for.
    """
    link_index = {name: i for i, name in enumerate(model.fk.link_names)}
    bound = MotionBound(model)
    trees = tuple(part_tree(part) for part in model.parts)
    centers, radii, children, roots = [], [], [], []
    start = 0
    for tree in trees:
        roots.append(start)
        centers.append(tree.centers)
        radii.append(tree.radii)
        child = np.column_stack([tree.left, tree.right])
        children.append(np.where(child >= 0, child + start, -1))
        start += tree.radii.size
    kinds, poses, dims = [], [], []
    for part in model.obstacles:
        kind, pose, size = _obstacle_primitive(part)
        kinds.append(kind)
        poses.append(pose[:3, :4])
        dims.append(size)
    chosen = checked_part_pairs(model) if pairs is None else list(pairs)
    hulls = [part_hull(part) for part in model.parts]
    starts = np.concatenate([[0], np.cumsum([points.shape[0] for points, _, _ in hulls])]).astype(np.intp)
    neighbours: list[list[int]] = [[] for _ in range(int(starts[-1]))]
    for (_, _, edges), first in zip(hulls, starts[:-1], strict=True):
        for a, b in (edges if edges is not None else np.zeros((0, 2), dtype=np.intp)).tolist():
            neighbours[first + a].append(int(first + b))
            neighbours[first + b].append(int(first + a))
    adjacency_start = np.concatenate([[0], np.cumsum([len(n) for n in neighbours])]).astype(np.intp)
    adjacency = np.array([v for n in neighbours for v in n], dtype=np.intp)
    return PackedSpheres(
        node_center=_readonly(np.vstack(centers) if centers else np.zeros((0, 3)), float),
        node_radius=_readonly(np.concatenate(radii) if radii else np.zeros(0), float),
        node_child=_readonly(np.vstack(children) if children else np.zeros((0, 2)), np.intp),
        part_root=_readonly(roots, np.intp),
        part_frame=_readonly([link_index[p.frame or p.link] for p in model.parts], np.intp),
        obstacle_kind=_readonly(kinds, np.intp),
        obstacle_pose=_readonly(np.array(poses).reshape(-1, 3, 4), float),
        obstacle_sphere=_readonly(
            np.array(
                [
                    [*p.center, p.radius if kind != HALFSPACE else np.inf]
                    for p, kind in zip(model.obstacles, kinds, strict=True)
                ]
            ).reshape(-1, 4),
            float,
        ),
        obstacle_dims=_readonly(np.array(dims).reshape(-1, 4), float),
        pairs=_readonly(np.array([(i, j, int(o)) for i, j, o in chosen]).reshape(-1, 3), np.intp),
        pair_reach=_readonly(_pair_reach(model, bound, chosen), float),
        hull_vertex=_readonly(np.vstack([points for points, _, _ in hulls]) if hulls else np.zeros((0, 3)), float),
        hull_start=_readonly(starts, np.intp),
        hull_margin=_readonly([margin for _, margin, _ in hulls], float),
        hull_adjacency_start=_readonly(adjacency_start, np.intp),
        hull_adjacency=_readonly(adjacency, np.intp),
        trees=trees,
    )
