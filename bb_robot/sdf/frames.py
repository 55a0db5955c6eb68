"""SDFormat pose frame semantics: every frame of a document resolved to a 4×4 pose.

:func:`resolve` builds, for an :class:`~bb_robot.sdf.document.SdfDocument`, the two graphs
of the SDFormat specification ("Pose Frame Semantics", SDFormat 1.7+) and resolves them:

* the *pose graph*: each link, joint, frame and model points to the frame its ``<pose>``
  is expressed in (``//pose/@relative_to``).  Defaults: the enclosing model frame for
  links, frames without ``attached_to`` and nested models; the *child* frame for joints;
  the ``attached_to`` frame for a ``<frame>`` without ``relative_to``; the world for
  models (and frames, joints) of a world, and for a model file's root model.  A nested
  model's edge carries its pose corrected for ``placement_frame``
  (``X_RM = X_RP · X_MP⁻¹``, P the placement frame resolved inside the model).
* the *attached-to graph*: a frame moves with its ``attached_to`` frame (default: the
  model frame), a joint frame with its child, a model frame with its canonical link
  (``canonical_link`` attribute, else its first link, else its first nested model's
  canonical link) or, for a static model, with the world.  Following it from any frame
  ends at the *body* the frame moves with: a link (full scoped name) or ``"world"``.

Names in ``relative_to``, ``attached_to``, ``expressed_in``, ``<parent>``, ``<child>``,
``placement_frame`` and ``canonical_link`` are looked up in the element's own model scope:
a sibling name, a nested name ``a::b`` (SDF 1.8+), ``__model__`` or ``a::__model__``;
``world`` only as a joint's parent (or in world scope).  References never go up a scope.

Errors (:class:`~bb_robot.sdf.errors.FrameError`, all problems of a document reported
together): a name that resolves to nothing (the message lists what the scope has), cycles
in either graph (the message walks the cycle), a joint whose child is ``world`` or equals
its parent, a canonical link that is not a link of the model, a non-static model without
any link, a placement frame that does not exist.

For SDF 1.4–1.6 files the document reader already converted what those versions meant
(``use_parent_model_frame``, ``<pose frame>``), so the same rules apply.

Comparing with libsdformat: :func:`resolved_poses` returns
``{(kind, scoped_name): 4×4}`` for every link, joint, frame and model, each pose relative
to the frame of the model that directly contains the element (what libsdformat's
``SemanticPose().Resolve(pose, "__model__")`` gives; a model's own pose is relative to
its parent model frame, or to the world for top-level models).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from bb_robot.model.transforms import Matrix
from bb_robot.sdf.elements import PoseSpec, SdfDocument, SdfFrame, SdfJoint, SdfLink, SdfModel, Where
from bb_robot.sdf.errors import FrameError, FrameProblem, listing

FrameKind = Literal["world", "model", "link", "joint", "frame"]
WORLD = "world"
MODEL_FRAME = "__model__"


def _inverse(transform: Matrix) -> Matrix:
    inverse = np.eye(4)
    rotation = transform[:3, :3].T
    inverse[:3, :3] = rotation
    inverse[:3, 3] = -rotation @ transform[:3, 3]
    return inverse


def join(scope: str, name: str) -> str:
    """``scope::name`` (just ``name`` in the world scope ``""``)."""
    return f"{scope}::{name}" if scope else name


@dataclass(eq=False)
class _Vertex:
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


@dataclass(frozen=True, eq=False)
class ResolvedFrame:
    """One resolved frame.

    ``scoped_name`` is the full name (``a::b::link``; ``"world"`` for the world frame);
    ``model`` the scoped name of the model that directly contains it (``""`` for
    world-level elements and top-level models); ``pose_in_model`` its pose in that
    model's frame (for a model: in its parent model's frame, or the world's);
    ``pose_in_world`` its pose in the world (for a model file: the root model's pose
    places its model frame in the world); ``body`` the link it moves with (full scoped
    name) or ``"world"``.
    """

    kind: FrameKind
    scoped_name: str
    model: str
    name: str
    pose_in_model: Matrix
    pose_in_world: Matrix
    body: str
    where: Where


class FrameGraph:
    """Both frame graphs of a document, resolved.  Build with :func:`resolve`."""

    def __init__(self, document: SdfDocument) -> None:
        self.document = document
        self._vertices: dict[str, _Vertex] = {}
        self._by_kind: dict[tuple[str, str], _Vertex] = {}
        self._problems: list[FrameError] = []
        self._models: dict[str, SdfModel] = {}
        self._build()

    # ---------------------------------------------------------------- building
    def _add(self, vertex: _Vertex) -> None:
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
        vertex: _Vertex | None,
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

    def _build(self) -> None:
        document = self.document
        self._add(_Vertex(WORLD, "world", "", WORLD, Where(document.path, None)))
        if document.world is not None:
            world = document.world
            for model in world.models:
                self._add_model(model, "")
            for frame in world.frames:
                self._add(_Vertex(frame.name, "frame", "", frame.name, frame.where, frame))
            for joint in world.joints:
                self._add(_Vertex(joint.name, "joint", "", joint.name, joint.where, joint))
        elif document.model is not None:
            self._add_model(document.model, "")
        # edges, once every vertex exists
        for vertex in list(self._vertices.values()):
            self._edges(vertex)
        self._placements()
        if not self._problems:
            self._check_cycles()
        if not self._problems:
            for vertex in self._vertices.values():
                self._world_pose(vertex)
        if self._problems:
            raise FrameError.combine(self._problems)

    def _add_model(self, model: SdfModel, scope: str) -> None:
        self._models[model.scoped_name] = model
        self._add(_Vertex(model.scoped_name, "model", scope, model.name, model.where, model))
        inner = model.scoped_name
        for link in model.links:
            self._add(_Vertex(join(inner, link.name), "link", inner, link.name, link.where, link))
        for joint in model.joints:
            self._add(_Vertex(join(inner, joint.name), "joint", inner, joint.name, joint.where, joint))
        for frame in model.frames:
            self._add(_Vertex(join(inner, frame.name), "frame", inner, frame.name, frame.where, frame))
        for nested in model.models:
            self._add_model(nested, inner)

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
        vertex = self._vertices.get(key)
        if vertex is None or vertex.kind == "world" or (want_model and vertex.kind != "model"):
            return None
        return key

    def _available(self, scope: str) -> list[str]:
        prefix = f"{scope}::" if scope else ""
        names = [
            v.key[len(prefix) :]
            for v in self._vertices.values()
            if v.scope == scope and v.kind != "world" and v.key.startswith(prefix)
        ]
        return names + ([MODEL_FRAME] if scope else [WORLD])

    def _unknown(self, vertex: _Vertex, attribute: str, reference: str, where: Where | None = None) -> None:
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
            hint=f"Use one of: {listing(self._available(scope))} (or nested names a::b).",
        )

    def _default_frame(self, scope: str) -> str:
        return scope if scope else WORLD

    def _edges(self, vertex: _Vertex) -> None:
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
            parent = self.lookup(scope, relative_to) if relative_to else self._default_frame(scope)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, pose.where)
            vertex.pose_parent = parent
            if not element.static:
                vertex.attached = self._canonical(vertex, element)
            return
        if isinstance(element, SdfLink):
            parent = self.lookup(scope, relative_to) if relative_to else self._default_frame(scope)
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
            found = self.lookup(scope, element.attached_to)
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
            parent = self.lookup(scope, relative_to)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, pose.where)
            vertex.pose_parent = parent
        else:
            vertex.pose_parent = attached

    def _joint_edges(self, vertex: _Vertex, joint: SdfJoint) -> None:
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
        child = self.lookup(scope, joint.child)
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
            parent_key = self.lookup(scope, joint.parent)
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
            parent = self.lookup(scope, relative_to)
            if parent is None:
                self._unknown(vertex, "relative_to", relative_to, joint.pose.where)
            vertex.pose_parent = parent
        else:
            vertex.pose_parent = child
        for axis in (joint.axis, joint.axis2):
            if axis is not None and axis.expressed_in and self.lookup(scope, axis.expressed_in) is None:
                self._unknown(vertex, "<xyz expressed_in", axis.expressed_in, axis.where)

    def _canonical(self, vertex: _Vertex, model: SdfModel) -> str | None:
        scope = model.scoped_name
        if model.canonical_link:
            key = self.lookup(scope, model.canonical_link)
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
            key = self.lookup(model.scoped_name, model.placement_frame)
            if key is None or key == model.scoped_name and model.placement_frame != MODEL_FRAME:
                self._problem(
                    f'placement_frame "{model.placement_frame}" names no frame of the model',
                    "placement_frame",
                    vertex,
                    hint=f"Use one of: {listing(self._available(model.scoped_name))}.",
                )
                continue
            try:
                inside = self._chain(key, model.scoped_name)
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
            vertex.pose = vertex.pose @ _inverse(inside)

    # ---------------------------------------------------------------- resolving
    def _chain(self, key: str, stop: str) -> Matrix | None:
        """Product of the pose edges from ``key`` up to ``stop``; ``None`` if the chain breaks
        (an unknown reference, reported elsewhere) or passes the root without meeting ``stop``."""
        product = np.eye(4)
        seen: list[str] = []
        current: str | None = key
        while current is not None and current != stop:
            if current in seen:
                raise _Cycle([*seen[seen.index(current) :], current])
            seen.append(current)
            vertex = self._vertices[current]
            if vertex.kind == "world":
                return None
            product = vertex.pose @ product
            current = vertex.pose_parent
        return product if current == stop else None

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

    def _world_pose(self, vertex: _Vertex) -> Matrix:
        if vertex.world is not None:
            return vertex.world
        chain: list[_Vertex] = []
        current: _Vertex | None = vertex
        while current is not None and current.world is None:
            if current.kind == "world":
                current.world = np.eye(4)
                break
            chain.append(current)
            current = self._vertices[current.pose_parent] if current.pose_parent is not None else None
        base = current.world if current is not None and current.world is not None else np.eye(4)
        for item in reversed(chain):
            base = base @ item.pose
            item.world = base
        assert vertex.world is not None
        return vertex.world

    # ---------------------------------------------------------------- queries
    def has(self, kind: str, key: str) -> bool:
        return (kind, key) in self._by_kind

    def vertex(self, kind: str, key: str) -> _Vertex:
        try:
            return self._by_kind[(kind, key)]
        except KeyError:
            known = [k for (kk, k) in self._by_kind if kk == kind]
            raise KeyError(f"no {kind} '{key}'; known {kind}s: {listing(known)}") from None

    def world_pose(self, key: str, kind: str | None = None) -> Matrix:
        """The pose of a frame in the world (a copy)."""
        vertex = self._vertices[key] if kind is None else self.vertex(kind, key)
        return np.array(self._world_pose(vertex))

    def pose(self, key: str, relative_to: str, kind: str | None = None) -> Matrix:
        """The pose of frame ``key`` in frame ``relative_to`` (both full scoped names, or ``"world"``).

        Multiplies the pose edges from ``key`` up to ``relative_to`` when it lies on the
        way, as libsdformat does for an element's own model frame; otherwise goes through
        the world.
        """
        vertex = self._vertices[key] if kind is None else self.vertex(kind, key)
        if vertex.key == relative_to:
            return np.eye(4)
        direct = self._chain(vertex.key, relative_to)
        if direct is not None:
            return direct
        return _inverse(self._world_pose(self._vertices[relative_to])) @ self._world_pose(vertex)

    def body(self, key: str) -> str:
        """The link (full scoped name) the frame ``key`` moves with, or ``"world"``."""
        current: str | None = key
        while current is not None:
            vertex = self._vertices[current]
            if vertex.kind in ("link", "world"):
                return vertex.key
            if vertex.kind == "model" and vertex.element is not None and vertex.element.static:  # type: ignore[union-attr]
                return WORLD
            current = vertex.attached
        return WORLD

    def parent_link(self, joint_key: str) -> str:
        """The body a joint's parent frame moves with (``"world"`` for a world parent)."""
        vertex = self.vertex("joint", joint_key)
        joint = vertex.element
        assert isinstance(joint, SdfJoint)
        if joint.parent == WORLD:
            return WORLD
        key = self.lookup(vertex.scope, joint.parent)
        assert key is not None
        return self.body(key)

    def child_link(self, joint_key: str) -> str:
        """The body a joint's child frame moves with."""
        vertex = self.vertex("joint", joint_key)
        assert vertex.attached is not None
        return self.body(vertex.attached)

    def axis_in_joint(self, joint_key: str, which: Literal["axis", "axis2"] = "axis") -> tuple[float, float, float]:
        """The joint's unit axis in its joint frame (``expressed_in`` resolved)."""
        vertex = self.vertex("joint", joint_key)
        joint = vertex.element
        assert isinstance(joint, SdfJoint)
        axis = joint.axis if which == "axis" else joint.axis2
        xyz = np.array(axis.xyz if axis is not None else (0.0, 0.0, 1.0))
        if axis is not None and axis.expressed_in:
            frame = self.lookup(vertex.scope, axis.expressed_in)
            assert frame is not None
            xyz = self.pose(frame, vertex.key)[:3, :3] @ xyz
        xyz = xyz / np.linalg.norm(xyz)
        return (float(xyz[0]), float(xyz[1]), float(xyz[2]))

    def frames(self) -> Iterator[ResolvedFrame]:
        """Every resolved frame but the world's, in document order."""
        for vertex in self._vertices.values():
            if vertex.kind == "world":
                continue
            yield self.resolved(vertex.key)

    def resolved(self, key: str) -> ResolvedFrame:
        vertex = self._vertices[key]
        model = vertex.scope
        reference = model if model else WORLD
        return ResolvedFrame(
            kind=vertex.kind,
            scoped_name=vertex.key,
            model=model,
            name=vertex.name,
            pose_in_model=self.pose(vertex.key, reference),
            pose_in_world=self.world_pose(vertex.key),
            body=self.body(vertex.key),
            where=vertex.where,
        )

    def model(self, scoped_name: str) -> ResolvedModel:
        """The resolved view of one model (``a::b::c``)."""
        if scoped_name not in self._models:
            raise KeyError(f"no model '{scoped_name}'; models: {listing(list(self._models))}")
        return ResolvedModel(self, self._models[scoped_name])

    @property
    def model_names(self) -> list[str]:
        """The scoped name of every model, in document order."""
        return list(self._models)


class _Cycle(Exception):
    def __init__(self, keys: list[str]) -> None:
        super().__init__(" -> ".join(keys))
        self.keys = keys


class ResolvedModel:
    """One model's resolved frames, named relative to the model (``link``, ``gripper::finger``).

    ``pose_of(name, kind)`` is the 4×4 pose in this model's frame; ``world_pose_of``
    in the world; ``model_pose`` places this model's frame in the world.
    """

    def __init__(self, graph: FrameGraph, model: SdfModel) -> None:
        self.graph = graph
        self.model = model
        self.scope = model.scoped_name

    def key(self, name: str) -> str:
        """The full scoped name of ``name`` (relative to this model)."""
        return self.scope if name in ("", MODEL_FRAME) else join(self.scope, name)

    def pose_of(self, name: str, kind: FrameKind = "link") -> Matrix:
        """The pose of the ``kind`` called ``name`` (relative name) in this model's frame."""
        return self.graph.pose(self.key(name), self.scope, kind)

    def world_pose_of(self, name: str, kind: FrameKind = "link") -> Matrix:
        """The pose of the ``kind`` called ``name`` (relative name) in the world."""
        return self.graph.world_pose(self.key(name), kind)

    @property
    def model_pose(self) -> Matrix:
        """This model's frame in the world."""
        return self.graph.world_pose(self.scope, "model")

    @property
    def canonical_link(self) -> str | None:
        """The canonical link, relative to this model (``None`` for a model without links)."""
        body = self.graph.body(self.scope)
        if body == WORLD:  # a static model: its frame is fixed to the world; report the would-be link
            name = canonical_link_name(self.model)
            return name
        return body[len(self.scope) + 2 :] if body.startswith(self.scope + "::") else body

    def relative(self, key: str) -> str:
        """``key`` (full scoped name) relative to this model."""
        prefix = self.scope + "::"
        return key[len(prefix) :] if key.startswith(prefix) else key

    def poses(self) -> dict[tuple[str, str], Matrix]:
        """``{(kind, relative name): pose in this model's frame}`` for everything in its subtree."""
        result: dict[tuple[str, str], Matrix] = {}
        prefix = self.scope + "::"
        for vertex in self.graph._vertices.values():
            if vertex.key.startswith(prefix):
                result[(vertex.kind, vertex.key[len(prefix) :])] = self.graph.pose(vertex.key, self.scope)
        return result


def canonical_link_name(model: SdfModel) -> str | None:
    """The canonical link of ``model`` relative to it, as libsdformat chooses it, or ``None``."""
    if model.canonical_link:
        return model.canonical_link
    if model.links:
        return model.links[0].name
    if model.models:
        inner = canonical_link_name(model.models[0])
        return join(model.models[0].name, inner) if inner else None
    return None


def pose_in_model_with_placement(model: SdfModel, raw: Matrix) -> Matrix:
    """``raw · X_MP⁻¹``: the model frame's pose when ``raw`` is its placement frame's pose."""
    document = SdfDocument(
        path=model.where.source, version=model.version, world=None, model=_unplaced(model), warnings=(), files=()
    )
    graph = FrameGraph(document)
    key = graph.lookup(model.scoped_name, model.placement_frame)
    if key is None:
        raise FrameError(
            f'placement_frame "{model.placement_frame}" names no frame of the model',
            kind="placement_frame",
            source=model.where.source,
            line=model.where.line,
            element="model",
            name=model.scoped_name,
        )
    return raw @ _inverse(graph.pose(key, model.scoped_name))


def _unplaced(model: SdfModel) -> SdfModel:
    return replace(model, pose=PoseSpec.identity(model.where), placement_frame="")


def resolve(document: SdfDocument) -> FrameGraph:
    """Resolve every frame of ``document``; raises :class:`FrameError` listing every problem."""
    return FrameGraph(document)


def resolved_poses(document: SdfDocument | FrameGraph) -> dict[tuple[str, str], Matrix]:
    """``{(kind, scoped_name): 4×4}`` for every link, joint, frame and model of the document.

    Each pose is relative to the frame of the model that directly contains the element
    (for top-level models and world-level frames and joints: the world), which is what
    libsdformat's ``SemanticPose().Resolve(pose, "__model__")`` returns for links, joints
    and frames, and ``Model::SemanticPose().Resolve(pose)`` for nested models.
    ``kind`` is ``"link"``, ``"joint"``, ``"frame"`` or ``"model"``.
    """
    graph = document if isinstance(document, FrameGraph) else resolve(document)
    return {(frame.kind, frame.scoped_name): frame.pose_in_model for frame in graph.frames()}


def world_poses(document: SdfDocument | FrameGraph) -> Mapping[tuple[str, str], Matrix]:
    """``{(kind, scoped_name): 4×4}`` like :func:`resolved_poses`, every pose in the world frame."""
    graph = document if isinstance(document, FrameGraph) else resolve(document)
    return {(frame.kind, frame.scoped_name): frame.pose_in_world for frame in graph.frames()}
