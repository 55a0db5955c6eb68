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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from bb_robot.model.transforms import Matrix
from bb_robot.sdf.elements import PoseSpec, SdfDocument, SdfJoint, SdfModel, Where
from bb_robot.sdf.errors import FrameError, listing
from bb_robot.sdf.frame_build import (
    MODEL_FRAME,
    WORLD,
    FrameKind,
    Vertex,
    build_frame_table,
    inverse_transform,
    join,
)

__all__ = [
    "MODEL_FRAME",
    "WORLD",
    "FrameGraph",
    "FrameKind",
    "ResolvedFrame",
    "ResolvedModel",
    "canonical_link_name",
    "join",
    "pose_in_model_with_placement",
    "resolve",
    "resolved_poses",
    "world_poses",
]


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
        self._table = build_frame_table(document)
        self._vertices = self._table.vertices
        self._by_kind = self._table.by_kind
        self._models = self._table.models
        for vertex in self._vertices.values():
            self._world_pose(vertex)

    def lookup(self, scope: str, reference: str) -> str | None:
        """Return the vertex key ``reference`` names in ``scope`` (a model's scoped name or ``""``)."""
        return self._table.lookup(scope, reference)

    # ---------------------------------------------------------------- resolving
    def _world_pose(self, vertex: Vertex) -> Matrix:
        if vertex.world is not None:
            return vertex.world
        chain: list[Vertex] = []
        current: Vertex | None = vertex
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
        """Whether the document has a ``kind`` (link, joint, frame, model) with this full scoped name."""
        return (kind, key) in self._by_kind

    def vertex(self, kind: str, key: str) -> Vertex:
        """The vertex of the ``kind`` with this full scoped name.

        Raises:
            KeyError: There is none; the message lists the known names of that kind.
        """
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
        direct = self._table.chain(vertex.key, relative_to)
        if direct is not None:
            return direct
        return inverse_transform(self._world_pose(self._vertices[relative_to])) @ self._world_pose(vertex)

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
        """The resolved frame with this full scoped name."""
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
    return raw @ inverse_transform(graph.pose(key, model.scoped_name))


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
