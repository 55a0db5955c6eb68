"""Building SDFormat's two frame graphs: a vertex per world, model, link, joint and frame,
their pose and attached-to edges, and every check of names and graphs.

:func:`build_frame_table` returns the :class:`FrameTable` :class:`~bb_robot.sdf.frames.FrameGraph`
resolves, or raises one :class:`~bb_robot.sdf.errors.FrameError` listing every problem of the
document (unknown references, cycles, invalid joints, canonical links, placement frames).
The rules are those of :mod:`bb_robot.sdf.frames`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix
from bb_robot.sdf.elements import SdfDocument, SdfFrame, SdfJoint, SdfLink, SdfModel, Where
from bb_robot.sdf.errors import FrameError, FrameProblem, listing

FrameKind = Literal["world", "model", "link", "joint", "frame"]
WORLD = "world"
MODEL_FRAME = "__model__"


def inverse_transform(transform: Matrix) -> Matrix:
    """The inverse of a rigid 4×4 transform (rotation transposed, translation rotated back)."""
    inverse = np.eye(4)
    rotation = transform[:3, :3].T
    inverse[:3, :3] = rotation
    inverse[:3, 3] = -rotation @ transform[:3, 3]
    return inverse


def join(scope: str, name: str) -> str:
    """``scope::name`` (just ``name`` in the world scope ``""``)."""
    return f"{scope}::{name}" if scope else name


@dataclass(eq=False)
class Vertex:
    """A frame of the graphs: its pose edge (``pose_parent``, ``pose``) and attached-to edge."""

    key: str
    kind: FrameKind
    scope: str  # scoped name of the enclosing model, "" in a world (or above a root model)
    name: str
    where: Where
    element: SdfModel | SdfLink | SdfJoint | SdfFrame | None = None
    pose_parent: str | None = None
    pose: Matrix = field(default_factory=lambda: np.eye(4))
    attached: str | None = None
    # resolution caches
    world: Matrix | None = None


class _Cycle(BbRobotError):
    """Raised by :meth:`FrameTable.chain` when a chain of poses comes back to a frame."""

    def __init__(self, keys: list[str]) -> None:
        super().__init__(" -> ".join(keys))
        self.keys = keys


@dataclass(eq=False)
class FrameTable:
    """The vertices of a document's frame graphs by key (full scoped name), with their edges."""

    document: SdfDocument
    vertices: dict[str, Vertex] = field(default_factory=dict)
    by_kind: dict[tuple[str, str], Vertex] = field(default_factory=dict)
    models: dict[str, SdfModel] = field(default_factory=dict)

    def lookup(self, scope: str, reference: str) -> str | None:
        """Return the vertex key ``reference`` names in ``scope`` (a model's scoped name or ``""``)."""
        ref = reference.strip()
        if not ref:
            return None
        if ref == MODEL_FRAME:
            return scope if scope else None
        if ref == WORLD and not scope:
            return WORLD
        want_model = ref.endswith("::" + MODEL_FRAME)
        if want_model:
            ref = ref[: -len("::" + MODEL_FRAME)]
        key = join(scope, ref)
        vertex = self.vertices.get(key)
        if vertex is None or vertex.kind == "world" or (want_model and vertex.kind != "model"):
            return None
        return key

    def available(self, scope: str) -> list[str]:
        """The names ``scope`` can refer to (for messages)."""
        prefix = f"{scope}::" if scope else ""
        names = [
            v.key[len(prefix) :]
            for v in self.vertices.values()
            if v.scope == scope and v.kind != "world" and v.key.startswith(prefix)
        ]
        return names + ([MODEL_FRAME] if scope else [WORLD])

    def chain(self, key: str, stop: str) -> Matrix | None:
        """Product of the pose edges from ``key`` up to ``stop``; ``None`` if the chain breaks
        (an unknown reference, reported elsewhere) or passes the root without meeting ``stop``."""
        product = np.eye(4)
        seen: list[str] = []
        current: str | None = key
        while current is not None and current != stop:
            if current in seen:
                raise _Cycle([*seen[seen.index(current) :], current])
            seen.append(current)
            vertex = self.vertices[current]
            if vertex.kind == "world":
                return None
            product = vertex.pose @ product
            current = vertex.pose_parent
        return product if current == stop else None


def build_frame_table(document: SdfDocument) -> FrameTable:
    """Build and check the frame graphs of ``document``.

    Args:
        document: The document, includes expanded.

    Returns:
        The vertices with their edges; placement frames applied; no cycle.

    Raises:
        FrameError: Every problem found, together (``kind == "several"`` when more than one).
    """
    builder = _EdgeBuilder(document)
    builder.build()
    return builder.table


class _EdgeBuilder:
    """Adds the vertices, then the edges, then checks; collects problems and raises them at the end."""

    def __init__(self, document: SdfDocument) -> None:
        self.document = document
        self.table = FrameTable(document)
        self._vertices = self.table.vertices
        self._by_kind = self.table.by_kind
        self._models = self.table.models
        self._problems: list[FrameError] = []

    def _add(self, vertex: Vertex) -> None:
        if vertex.key in self._vertices:
            # the document reader reports sibling duplicates; this catches a nested name clash
            other = self._vertices[vertex.key]
            self._problem(
                f"the name '{vertex.key}' is used by a {other.kind} ({other.where}) and a {vertex.kind}",
                "duplicate_name",
                vertex,
                hint="Rename one of them.",
            )
            return
        self._vertices[vertex.key] = vertex
        self._by_kind[(vertex.kind, vertex.key)] = vertex

    def _problem(
        self,
        message: str,
        kind: FrameProblem,
        vertex: Vertex | None,
        *,
        where: Where | None = None,
        hint: str | None = None,
        cycle: Iterable[str] = (),
    ) -> None:
        at = where or (vertex.where if vertex is not None else Where(self.document.path, None))
        self._problems.append(
            FrameError(
                message,
                kind=kind,
                cycle=tuple(cycle),
                source=at.source,
                line=at.line,
                element=vertex.kind if vertex is not None and vertex.kind != "world" else None,
                name=vertex.key if vertex is not None else None,
                hint=hint,
            )
        )

    def build(self) -> None:
        document = self.document
        self._add(Vertex(WORLD, "world", "", WORLD, Where(document.path, None)))
        if document.world is not None:
            world = document.world
            for model in world.models:
                self._add_model(model, "")
            for frame in world.frames:
                self._add(Vertex(frame.name, "frame", "", frame.name, frame.where, frame))
            for joint in world.joints:
                self._add(Vertex(joint.name, "joint", "", joint.name, joint.where, joint))
        elif document.model is not None:
            self._add_model(document.model, "")
        # edges, once every vertex exists
        for vertex in list(self._vertices.values()):
            self._edges(vertex)
        self._placements()
        if not self._problems:
            self._check_cycles()
        if self._problems:
            raise FrameError.combine(self._problems)

    def _add_model(self, model: SdfModel, scope: str) -> None:
        self._models[model.scoped_name] = model
        self._add(Vertex(model.scoped_name, "model", scope, model.name, model.where, model))
        inner = model.scoped_name
        for link in model.links:
            self._add(Vertex(join(inner, link.name), "link", inner, link.name, link.where, link))
        for joint in model.joints:
            self._add(Vertex(join(inner, joint.name), "joint", inner, joint.name, joint.where, joint))
        for frame in model.frames:
            self._add(Vertex(join(inner, frame.name), "frame", inner, frame.name, frame.where, frame))
        for nested in model.models:
            self._add_model(nested, inner)

    def _unknown(self, vertex: Vertex, attribute: str, reference: str, where: Where | None = None) -> None:
        scope = vertex.scope
        what = (
            f"model '{scope}'"
            if scope
            else f"world '{self.document.world.name}'"
            if self.document.world
            else "the file"
        )
        self._problem(
            f'{attribute}="{reference}" names no frame of {what}',
            "unknown_reference",
            vertex,
            where=where,
            hint=f"Use one of: {listing(self.table.available(scope))} (or nested names a::b).",
        )

    def _default_frame(self, scope: str) -> str:
        return scope if scope else WORLD

    def _edges(self, vertex: Vertex) -> None:
        element = vertex.element
        scope = vertex.scope
        if vertex.kind == "world" or element is None:
            return
        pose = element.pose
        vertex.pose = np.array(pose.transform)
        relative_to = pose.relative_to
        parent: str | None
        if isinstance(element, SdfModel):
            if relative_to and not scope and self.document.world is None:
                self._problem(
                    f'the root model\'s <pose relative_to="{relative_to}"> has nothing to refer to',
                    "unknown_reference",
                    vertex,
                    where=pose.where,
                    hint="Leave relative_to out: a model file's root model is placed relative to the world.",
                )
                return
            parent = self.table.lookup(scope, relative_to) if relative_to else self._default_frame(scope)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, pose.where)
            vertex.pose_parent = parent
            if not element.static:
                vertex.attached = self._canonical(vertex, element)
            return
        if isinstance(element, SdfLink):
            parent = self.table.lookup(scope, relative_to) if relative_to else self._default_frame(scope)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, pose.where)
            vertex.pose_parent = parent
            return
        if isinstance(element, SdfJoint):
            self._joint_edges(vertex, element)
            return
        assert isinstance(element, SdfFrame)
        attached = self._default_frame(scope)
        if element.attached_to:
            found = self.table.lookup(scope, element.attached_to)
            if found is None:
                self._unknown(vertex, "attached_to", element.attached_to)
                return
            if found == vertex.key:
                self._problem(
                    f'attached_to="{element.attached_to}" names the frame itself',
                    "cycle",
                    vertex,
                    cycle=(vertex.key, vertex.key),
                    hint="Attach it to a link, another frame or the model.",
                )
                return
            attached = found
        vertex.attached = attached
        if relative_to:
            parent = self.table.lookup(scope, relative_to)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, pose.where)
            vertex.pose_parent = parent
        else:
            vertex.pose_parent = attached

    def _joint_edges(self, vertex: Vertex, joint: SdfJoint) -> None:
        scope = vertex.scope
        if joint.child == WORLD:
            self._problem(
                "the child is 'world', which cannot move",
                "invalid_joint",
                vertex,
                hint="Swap <parent> and <child>: world may only be a parent.",
            )
            return
        if joint.child == joint.parent:
            self._problem(
                f"parent and child are both '{joint.child}'",
                "invalid_joint",
                vertex,
                hint="A joint connects two different frames.",
            )
            return
        child = self.table.lookup(scope, joint.child)
        if child is None:
            self._unknown(vertex, "<child>", joint.child)
            return
        if child == vertex.key:
            self._problem(
                "the joint names itself as its child",
                "invalid_joint",
                vertex,
                hint="Name the child link.",
            )
            return
        if joint.parent != WORLD:
            parent_key = self.table.lookup(scope, joint.parent)
            if parent_key is None:
                self._unknown(vertex, "<parent>", joint.parent)
            elif parent_key == vertex.key:
                self._problem(
                    "the joint names itself as its parent",
                    "invalid_joint",
                    vertex,
                    hint="Name the parent link.",
                )
        vertex.attached = child
        relative_to = joint.pose.relative_to
        if relative_to:
            parent = self.table.lookup(scope, relative_to)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, joint.pose.where)
            vertex.pose_parent = parent
        else:
            vertex.pose_parent = child
        for axis in (joint.axis, joint.axis2):
            if axis is not None and axis.expressed_in and self.table.lookup(scope, axis.expressed_in) is None:
                self._unknown(vertex, "<xyz expressed_in", axis.expressed_in, axis.where)

    def _canonical(self, vertex: Vertex, model: SdfModel) -> str | None:
        scope = model.scoped_name
        if model.canonical_link:
            key = self.table.lookup(scope, model.canonical_link)
            if key is None or self._vertices[key].kind != "link":
                links = [
                    v.key[len(scope) + 2 :]
                    for v in self._vertices.values()
                    if v.kind == "link" and v.key.startswith(scope + "::")
                ]
                self._problem(
                    f'canonical_link="{model.canonical_link}" is not a link of the model',
                    "canonical_link",
                    vertex,
                    hint=f"Name one of its links: {listing(links)}.",
                )
                return None
            return key
        if model.links:
            return join(scope, model.links[0].name)
        if model.models:
            return model.models[0].scoped_name
        self._problem(
            "the model has no link (a model that is not static needs at least one)",
            "missing_link",
            vertex,
            hint="Add a <link>, or mark the model <static>true</static>.",
        )
        return None

    def _placements(self) -> None:
        # deepest models first: a placement frame may sit in a nested model that has its own
        models = sorted((v for v in self._vertices.values() if v.kind == "model"), key=lambda v: -v.key.count("::"))
        for vertex in models:
            model = vertex.element
            assert isinstance(model, SdfModel)
            if not model.placement_frame:
                continue
            key = self.table.lookup(model.scoped_name, model.placement_frame)
            if key is None or key == model.scoped_name and model.placement_frame != MODEL_FRAME:
                self._problem(
                    f'placement_frame "{model.placement_frame}" names no frame of the model',
                    "placement_frame",
                    vertex,
                    hint=f"Use one of: {listing(self.table.available(model.scoped_name))}.",
                )
                continue
            try:
                inside = self.table.chain(key, model.scoped_name)
            except _Cycle as cycle:
                self._problem(
                    "frame cycle: " + " -> ".join(cycle.keys),
                    "cycle",
                    self._vertices[cycle.keys[0]],
                    cycle=cycle.keys,
                    hint="Make one of these poses relative to a frame outside the loop.",
                )
                continue
            if inside is None:
                continue  # reported elsewhere (an unknown reference on the way)
            vertex.pose = vertex.pose @ inverse_transform(inside)

    def _check_cycles(self) -> None:
        reported: set[frozenset[str]] = set()
        for graph in ("attached", "pose_parent"):
            state: dict[str, int] = {}  # 1 on the current path, 2 done
            for start in self._vertices:
                path: list[str] = []
                current: str | None = start
                while current is not None and state.get(current) != 2:
                    if state.get(current) == 1:
                        loop = [*path[path.index(current) :], current]
                        members = frozenset(loop)
                        if members not in reported:
                            reported.add(members)
                            what = "relative_to" if graph == "pose_parent" else "attached_to"
                            self._problem(
                                f"{what} cycle: " + " -> ".join(loop),
                                "cycle",
                                self._vertices[loop[0]],
                                cycle=loop,
                                hint=f"Break the loop: make one of these {what} a frame outside it.",
                            )
                        break
                    state[current] = 1
                    path.append(current)
                    current = getattr(self._vertices[current], graph)
                for key in path:
                    state[key] = 2
