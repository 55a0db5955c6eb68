"""Choose the kinematic model of an SDF document and convert it to a :class:`~bb_robot.model.robot.Robot`.

Selection (:func:`select_model`)
--------------------------------
A *candidate* is a model with at least one joint of its own that is not fixed and at least
one link in its subtree (its own or its nested models').  Models with only links (static
frames, ground planes) and wrappers with only fixed joints are skipped.

* ``model_scope="a::b::c"`` selects that model (its full scoped name from the top of the
  document); an unknown scope is a :class:`ScopeError` listing every model's scope.
* Without a scope, the most deeply nested candidate is used; a warning lists the other
  candidates, and says so when the chosen one sits inside another candidate (a gripper in
  an arm) with the scope to pass to get the outer one.  Two or more candidates at that
  depth are a :class:`ScopeError` listing them; no candidate at all is one too.

Conversion (:func:`convert_model`)
----------------------------------
The robot is the selected model's subtree: its links, joints and frames and those of the
models nested in it, named relative to its scope (``shoulder_pan_joint``,
``gripper::finger``).  Joints outside the subtree are not part of the robot: a fixed joint
from ``world`` to one of its links (a wrapper's ``base_joint``, a world's ``<joint>``) is
recorded as the placement (:attr:`ConvertedModel.world_joints`); any other one gives a
warning.  Joints inside the subtree whose parent is ``world`` (1.8+: fixed to the world)
make a link ``world`` the robot's root.

URDF convention: a joint's ``origin`` is the child link's pose in the parent link's frame
at zero; ``axis`` is the SDF axis (``expressed_in`` resolved) re-expressed in the child
link frame.  SDF allows what URDF cannot say exactly; the conversion keeps every SDF link
pose exact by adding elements, each named after the one SDF element it stands for (SDF
names are unique per model scope across links, joints, frames and models, so these names
never collide):

* a revolute or continuous joint ``J`` whose axis line (through the SDF joint frame's
  origin) does not pass through the child link's origin, and any movable joint whose axis is
  +z of its SDF joint frame but not of the child link's frame, or the reverse (so that the
  serial model's strict "+z of the joint frame" rule reads the SDF joint frame), becomes
  joint ``J`` from the parent to a new link ``J`` placed at the joint frame, then a fixed
  joint named after the child link ``C`` from link ``J`` to ``C``;
* each ``<frame>`` ``F`` becomes a link ``F`` (no geometry) and a fixed joint ``F`` from
  its ``attached_to`` frame's link (or the link the frame moves with) to it, so TF and
  forward kinematics show it;
* a link not connected by joints to the tree of the canonical link (a free body) gets a
  ``floating`` joint named after it from the robot's root (held at its initial pose by
  forward kinematics), with a warning.

Joint types: revolute, continuous, prismatic and fixed convert; ball, universal,
revolute2, screw and gearbox are an :class:`UnsupportedSdfError` naming the joint.
Limits: ``lower``/``upper`` at or beyond ±1e16 (SDF's "unbounded" before 1.10, ±inf
after) and any position limit of a continuous joint become ``None``; a negative or
infinite effort or velocity (SDF's "unlimited") becomes ``None``.  SDF 1.11 ``<mimic>``
becomes :class:`~bb_robot.model.robot.Mimic` with ``offset = offset − multiplier ·
reference``.  Visual and collision poses are resolved into their link's frame; geometry
and materials map to :mod:`bb_robot.model.geometry`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from bb_robot.model.geometry import Collision, Inertial, Origin, Visual
from bb_robot.model.robot import Dynamics, Joint, JointLimits, JointType, Link, Mimic, Robot
from bb_robot.model.serial import STRICT_AXIS_TOLERANCE
from bb_robot.model.transforms import Matrix, matrix_to_rpy
from bb_robot.sdf.elements import PoseSpec, SdfAxis, SdfDocument, SdfJoint, SdfModel, SdfPlugin
from bb_robot.sdf.errors import FrameError, ScopeError, UnsupportedSdfError, listing
from bb_robot.sdf.frame_build import inverse_transform
from bb_robot.sdf.frames import WORLD, FrameGraph, ResolvedModel, join

#: Position limits at or beyond this magnitude mean "unbounded" (SDF's default before 1.10 is ±1e16).
UNBOUNDED = 1e16
#: A revolute axis line farther than this (metres, relative to the offset's size) from the child
#: link's origin needs an intermediate link.
AXIS_LINE_TOLERANCE = 1e-12

_CONVERTIBLE: Mapping[str, JointType] = MappingProxyType(
    {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic", "fixed": "fixed"}
)


# ------------------------------------------------------------------------------ selection
def is_candidate(model: SdfModel) -> bool:
    """Whether ``model`` has a joint of its own that is not fixed and a link in its subtree."""
    return any(j.type != "fixed" for j in model.joints) and any(m.links for m in model.walk())


def candidates(document: SdfDocument) -> list[SdfModel]:
    """The models that qualify as the kinematic model, in document order."""
    return [m for m in document.models() if is_candidate(m)]


def select_model(document: SdfDocument, model_scope: str = "") -> tuple[SdfModel, tuple[str, ...]]:
    """Choose the kinematic model of a document (the rules are in the module docstring).

    Args:
        document: The document.
        model_scope: The scoped name of the model to take (``""``: choose).

    Returns:
        The model and warnings about the choice.

    Raises:
        ScopeError: ``model_scope`` names no model or one without links, no model
            qualifies, or several tie.
    """
    all_scopes = [m.scoped_name for m in document.models()]
    scope = model_scope.strip().strip(":")
    if scope:
        model = document.find_model(scope)
        if model is None:
            raise ScopeError(
                f"model_scope '{model_scope}' names no model of the file",
                kind="unknown",
                scopes=all_scopes,
                requested=model_scope,
                source=document.path,
                hint=f"Pass one of: {listing(all_scopes, limit=40)}.",
            )
        if not any(m.links for m in model.walk()):
            raise ScopeError(
                f"model '{scope}' has no links, so no robot",
                kind="not_kinematic",
                scopes=[c.scoped_name for c in candidates(document)],
                requested=model_scope,
                source=document.path,
                hint=f"Pass a model with links and joints: {listing([c.scoped_name for c in candidates(document)])}.",
            )
        return model, ()
    found = candidates(document)
    if not found:
        raise ScopeError(
            "no model has both links and a joint that is not fixed"
            + (f" (models: {listing(all_scopes)})" if all_scopes else " (no model at all)"),
            kind="none",
            scopes=all_scopes,
            source=document.path,
            hint="Pass model_scope to load a model anyway, e.g. one with links only.",
        )
    deepest = max(m.depth for m in found)
    chosen = [m for m in found if m.depth == deepest]
    if len(chosen) > 1:
        names = [m.scoped_name for m in chosen]
        raise ScopeError(
            f"{len(chosen)} models qualify as the kinematic model at the same nesting depth: {listing(names)}",
            kind="tie",
            scopes=names,
            source=document.path,
            hint=f'Pass model_scope, e.g. model_scope="{names[0]}".',
        )
    model = chosen[0]
    warnings: list[str] = []
    others = [m.scoped_name for m in found if m is not model]
    if others:
        outer = [s for s in others if model.scoped_name.startswith(s + "::")]
        text = (
            f"{document.path}: loaded model '{model.scoped_name}', the most deeply nested of "
            f"{len(found)} models with links and movable joints (others: {listing(others)})"
        )
        if outer:
            text += (
                f"; it sits inside '{outer[-1]}', which has movable joints too: pass "
                f'model_scope="{outer[-1]}" to load that one with it'
            )
        else:
            text += "; pass model_scope to choose another"
        warnings.append(text)
    return model, tuple(warnings)


# ------------------------------------------------------------------------------ conversion
@dataclass(frozen=True, eq=False)
class ConvertedModel:
    """A robot converted from one SDF model, with what ties it back to the SDF.

    * ``robot``: the :class:`Robot` (URDF convention, names relative to ``scope``);
    * ``scope``: the selected model's scoped name; ``model``: its :class:`SdfModel`;
    * ``scoped_names``: relative name → full scoped name of every SDF link, joint, frame
      and nested model of the robot;
    * ``sdf_links``: the robot links that are SDF links (relative names, topological order);
    * ``frame_links``: links made for ``<frame>``\\ s; ``joint_frame_links``: links made for
      off-axis joints; ``floating_joints``: joints made for free links;
    * ``canonical_link``: the model's canonical link (relative); ``root_link``: the robot's
      root (the canonical link's tree root, or ``world``);
    * ``model_pose``: the model frame in the world; ``root_pose_in_model`` /
      ``root_pose_in_world``: the root link there;
    * ``world_joints``: scoped names of the joints outside the model that fix it to the world;
    * ``plugins``: scoped model name → its ``<plugin>``\\ s, for the model and its nested models;
    * ``link_directories``: robot link name → the directory of the file that declared the SDF
      link, where its relative mesh URIs start (see :func:`bb_robot.sdf.resources.resolve_resource`).
    """

    robot: Robot
    scope: str
    model: SdfModel
    scoped_names: Mapping[str, str]
    sdf_links: tuple[str, ...]
    frame_links: tuple[str, ...]
    joint_frame_links: tuple[str, ...]
    floating_joints: tuple[str, ...]
    canonical_link: str | None
    root_link: str
    model_pose: Matrix
    root_pose_in_model: Matrix
    root_pose_in_world: Matrix
    world_joints: tuple[str, ...]
    plugins: Mapping[str, tuple[SdfPlugin, ...]]
    warnings: tuple[str, ...] = field(default=())
    link_directories: Mapping[str, Path | None] = field(default_factory=dict)


def _origin(transform: Matrix) -> Origin:
    t = transform[:3, 3]
    return Origin((float(t[0]), float(t[1]), float(t[2])), matrix_to_rpy(transform[:3, :3]))


def _limits(joint: SdfJoint, axis: SdfAxis | None) -> JointLimits | None:
    if joint.type == "fixed" or axis is None:
        return None

    def position(value: float) -> float | None:
        return None if joint.type == "continuous" or abs(value) >= UNBOUNDED or math.isnan(value) else value

    def rate(value: float) -> float | None:
        return None if value < 0 or not math.isfinite(value) else value

    return JointLimits(
        lower=position(axis.lower),
        upper=position(axis.upper),
        velocity=rate(axis.velocity),
        effort=rate(axis.effort),
    )


class _Converter:
    def __init__(self, graph: FrameGraph, model: SdfModel) -> None:
        self.graph = graph
        self.model = model
        self.view = ResolvedModel(graph, model)
        self.scope = model.scoped_name
        self.warnings: list[str] = []
        self.links: list[Link] = []
        self.joints: list[Joint] = []
        self.poses: dict[str, Matrix] = {}  # robot link name -> pose in the model frame
        self.scoped: dict[str, str] = {}
        self.frame_links: list[str] = []
        self.joint_frame_links: list[str] = []
        self.floating: list[str] = []
        self.need_world = False
        self.directories: dict[str, Path | None] = {}
        self.world_pose = inverse_transform(self.graph.world_pose(self.scope, "model"))

    def rel(self, key: str) -> str:
        return WORLD if key == WORLD else self.view.relative(key)

    def inside(self, key: str) -> bool:
        return key.startswith(self.scope + "::")

    def pose(self, key: str) -> Matrix:
        return self.world_pose if key == WORLD else self.graph.pose(key, self.scope)

    def element_pose(self, spec: PoseSpec, link_key: str, scope: str) -> Matrix:
        """A visual or collision ``<pose>`` in its link's frame."""
        if not spec.relative_to:
            return np.array(spec.transform)
        frame = self.graph.lookup(scope, spec.relative_to)
        if frame is None:
            raise FrameError(
                f"relative_to=\"{spec.relative_to}\" names no frame of model '{scope}'",
                kind="unknown_reference",
                source=spec.where.source,
                line=spec.where.line,
                element="pose",
                name=spec.relative_to,
            )
        return self.graph.pose(frame, link_key) @ spec.transform

    # -------------------------------------------------------------------- links
    def add_links(self) -> None:
        for sub in self.model.walk():
            for link in sub.links:
                key = join(sub.scoped_name, link.name)
                name = self.rel(key)
                self.scoped[name] = key
                visuals = tuple(
                    Visual(v.name, _origin(self.element_pose(v.pose, key, sub.scoped_name)), v.geometry, v.material)
                    for v in link.visuals
                )
                collisions = tuple(
                    Collision(c.name, _origin(self.element_pose(c.pose, key, sub.scoped_name)), c.geometry)
                    for c in link.collisions
                )
                inertial = None
                if link.inertial is not None:
                    inertial = Inertial(
                        _origin(link.inertial.pose.transform), link.inertial.mass, link.inertial.inertia
                    )
                self.links.append(Link(name, visuals, collisions, inertial))
                self.directories[name] = link.directory
                self.poses[name] = self.pose(key)

    # -------------------------------------------------------------------- joints
    def body_name(self, key: str, joint: str, role: str) -> str:
        body = key
        if body != WORLD and not self.inside(body):
            raise FrameError(
                f"the {role} of joint '{joint}' moves with '{body}', outside model '{self.scope}'",
                kind="invalid_joint",
                source=self.model.where.source,
                line=self.model.where.line,
                element="joint",
                name=joint,
            )
        if body == WORLD:
            self.need_world = True
        return self.rel(body)

    def add_joints(self) -> None:
        for sub in self.model.walk():
            for joint in sub.joints:
                self.add_joint(sub, joint)

    def add_joint(self, sub: SdfModel, joint: SdfJoint) -> None:
        key = join(sub.scoped_name, joint.name)
        name = self.rel(key)
        self.scoped[name] = key
        vertex = self.graph.vertex("joint", key)
        jtype = _CONVERTIBLE.get(joint.type)
        if jtype is None:
            raise UnsupportedSdfError(
                f"joint type '{joint.type}' has no equivalent in the robot model "
                "(revolute, continuous, prismatic and fixed joints convert)",
                source=vertex.where.source,
                line=vertex.where.line,
                element="joint",
                name=name,
                hint="Select another model with model_scope, or change the joint type.",
            )
        if joint.axis2 is not None and jtype != "fixed":
            self.warnings.append(f"{vertex.where}: joint '{name}': <axis2> ignored ({joint.type} joints have one axis)")
        parent = self.body_name(self.graph.parent_link(key), name, "parent")
        child = self.body_name(self.graph.child_link(key), name, "child")
        if child == WORLD or parent == child:
            raise FrameError(
                f"joint '{name}' connects '{parent}' to '{child}'"
                + (" (its child frame is fixed to the world)" if child == WORLD else " (the same link)"),
                kind="invalid_joint",
                source=vertex.where.source,
                line=vertex.where.line,
                element="joint",
                name=name,
                hint="A joint must connect two different links, the child not fixed to the world.",
            )
        x_parent = self.poses[parent] if parent != WORLD else self.world_pose
        x_child = self.poses[child]
        x_joint = self.pose(key)
        mimic = self.mimic(sub, joint, name) if jtype != "fixed" else None
        limits = _limits(joint, joint.axis)
        dynamics = (
            Dynamics(damping=joint.axis.damping, friction=joint.axis.friction)
            if joint.axis is not None and jtype != "fixed"
            else None
        )
        if jtype == "fixed":
            self.joints.append(Joint(name, "fixed", parent, child, _origin(inverse_transform(x_parent) @ x_child)))
            return
        axis_joint = np.array(self.graph.axis_in_joint(key))
        axis_model = x_joint[:3, :3] @ axis_joint
        axis_child = x_child[:3, :3].T @ axis_model
        axis_child /= np.linalg.norm(axis_child)
        offset = x_child[:3, 3] - x_joint[:3, 3]
        off_axis = float(np.linalg.norm(np.cross(offset, axis_model)))
        misses_child = jtype != "prismatic" and off_axis > AXIS_LINE_TOLERANCE * max(1.0, float(np.linalg.norm(offset)))
        if misses_child or _is_plus_z(axis_joint) != _is_plus_z(axis_child):
            # the joint moves the child about a line that misses its origin, or the child frame would
            # change whether the axis is +z (the serial model's strict rule): go through the joint frame
            self.links.append(Link(name))
            self.poses[name] = x_joint
            self.joint_frame_links.append(name)
            self.joints.append(
                Joint(
                    name,
                    jtype,
                    parent,
                    name,
                    _origin(inverse_transform(x_parent) @ x_joint),
                    _vec(axis_joint),
                    limits,
                    dynamics,
                    mimic,
                )
            )
            self.joints.append(Joint(child, "fixed", name, child, _origin(inverse_transform(x_joint) @ x_child)))
            return
        self.joints.append(
            Joint(
                name,
                jtype,
                parent,
                child,
                _origin(inverse_transform(x_parent) @ x_child),
                _vec(axis_child),
                limits,
                dynamics,
                mimic,
            )
        )

    def mimic(self, sub: SdfModel, joint: SdfJoint, name: str) -> Mimic | None:
        axis = joint.axis
        if axis is None or axis.mimic is None:
            return None
        spec = axis.mimic
        if spec.axis != "axis":
            raise UnsupportedSdfError(
                f'<mimic axis="{spec.axis}"> follows a second axis, which the robot model does not have',
                source=axis.where.source,
                line=axis.where.line,
                element="joint",
                name=name,
            )
        leader = self.graph.lookup(sub.scoped_name, spec.joint)
        if leader is None or not self.graph.has("joint", leader):
            raise FrameError(
                f"<mimic joint=\"{spec.joint}\"> names no joint of model '{sub.scoped_name}'",
                kind="unknown_reference",
                source=axis.where.source,
                line=axis.where.line,
                element="joint",
                name=name,
                hint="Name the leader joint as it is written in the same model.",
            )
        return Mimic(self.rel(leader), spec.multiplier, spec.offset - spec.multiplier * spec.reference)

    # -------------------------------------------------------------------- frames
    def add_frames(self) -> None:
        pending: list[tuple[str, str]] = []
        for sub in self.model.walk():
            for frame in sub.frames:
                key = join(sub.scoped_name, frame.name)
                name = self.rel(key)
                self.scoped[name] = key
                attached = self.graph.vertex("frame", key).attached
                if attached is not None and self.graph.has("frame", attached) and self.inside(attached):
                    parent = self.rel(attached)  # chain frames as they are written: flange -> tool0
                else:
                    parent = self.body_name(self.graph.body(key), name, "attached_to frame")
                self.links.append(Link(name))
                self.frame_links.append(name)
                self.poses[name] = self.pose(key)
                pending.append((name, parent))
        # joints once every frame link exists (a frame may be attached to a later one)
        for name, parent in pending:
            x_parent = self.poses[parent] if parent != WORLD else self.world_pose
            self.joints.append(
                Joint(name, "fixed", parent, name, _origin(inverse_transform(x_parent) @ self.poses[name]))
            )

    def add_nested_model_names(self) -> None:
        for sub in self.model.walk():
            if sub is not self.model:
                self.scoped[self.rel(sub.scoped_name)] = sub.scoped_name

    # -------------------------------------------------------------------- tree
    def connect(self) -> str:
        """Add the world link if needed and floating joints for free links; return the root."""
        if self.need_world:
            self.links.insert(0, Link(WORLD))
            self.poses[WORLD] = self.world_pose
        children = {j.child_link for j in self.joints}
        parent_of = {j.child_link: j.parent_link for j in self.joints}
        roots = [link.name for link in self.links if link.name not in children]
        canonical = self.view.canonical_link
        main: str | None = None
        if self.need_world:
            main = WORLD
        elif canonical is not None and canonical in self.poses:
            main = canonical
            seen = {main}
            while main in parent_of and parent_of[main] not in seen:
                main = parent_of[main]
                seen.add(main)
        elif roots:
            main = roots[0]
        if main is None:
            main = self.links[0].name
        free = [r for r in roots if r != main]
        for name in free:
            self.joints.append(
                Joint(name, "floating", main, name, _origin(inverse_transform(self.poses[main]) @ self.poses[name]))
            )
            self.floating.append(name)
        if free:
            self.warnings.append(
                f"{self.model.where}: model '{self.scope}': link(s) {listing(free)} are not connected by joints "
                f"to '{main}'; each is attached to it by a floating joint of its own name (held at its initial "
                "pose by forward kinematics)"
            )
        return main

    def external_joints(self) -> tuple[str, ...]:
        """Joints outside the model that touch it: fixed ones to the world are the placement."""
        placement: list[str] = []
        for frame in self.graph.frames():
            if frame.kind != "joint" or self.inside(frame.scoped_name):
                continue
            child = self.graph.child_link(frame.scoped_name)
            parent = self.graph.parent_link(frame.scoped_name)
            touches = [k for k in (child, parent) if self.inside(k)]
            if not touches:
                continue
            vertex = self.graph.vertex("joint", frame.scoped_name)
            joint = vertex.element
            assert isinstance(joint, SdfJoint)
            if joint.type == "fixed" and parent == WORLD and self.inside(child):
                placement.append(frame.scoped_name)
                continue
            outer = frame.model or "the world"
            self.warnings.append(
                f"{vertex.where}: joint '{frame.scoped_name}' ({joint.type}) connects model '{self.scope}' to "
                f"'{parent if child in touches else child}' outside it; it is not part of the robot "
                + (f'(pass model_scope="{frame.model}" to include it)' if frame.model else f"(it belongs to {outer})")
            )
        return tuple(placement)


def _is_plus_z(axis: Matrix) -> bool:
    """Whether a unit axis is +z within the serial model's strict tolerance."""
    return float(np.linalg.norm(axis - (0.0, 0.0, 1.0))) <= STRICT_AXIS_TOLERANCE


def _vec(v: Sequence[float] | Matrix) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def convert_model(graph: FrameGraph, model: SdfModel | str, warnings: Sequence[str] = ()) -> ConvertedModel:
    """Convert a model of a resolved document to the robot model.

    Args:
        graph: The document's resolved frames.
        model: An :class:`SdfModel` of ``graph``'s document, or its scoped name.
        warnings: Warnings so far (kept in the result, before the conversion's own).

    Returns:
        The robot and its ties back to the SDF.

    Raises:
        ScopeError: ``model`` names no model.
        UnsupportedSdfError: The model uses what the robot model cannot hold.
        FrameError: A reference names nothing in the model, or a joint leaves the model or
            connects a link to itself.
        InvalidRobot: The robot model refuses the result.
    """
    if isinstance(model, str):
        found = graph.document.find_model(model)
        if found is None:
            raise ScopeError(
                f"no model '{model}'",
                kind="unknown",
                scopes=graph.model_names,
                requested=model,
                source=graph.document.path,
            )
        model = found
    converter = _Converter(graph, model)
    if model.static:
        converter.warnings.append(
            f"{model.where}: model '{model.scoped_name}' is static: a simulator keeps it where it is"
        )
    converter.add_links()
    converter.add_nested_model_names()
    converter.add_joints()
    converter.add_frames()
    root = converter.connect()
    world_joints = converter.external_joints()
    all_warnings = (*warnings, *converter.warnings)
    robot = Robot.assemble(
        model.name,
        converter.links,
        converter.joints,
        warnings=all_warnings,
        source=model.where.source,
    )
    sdf_links = {converter.rel(join(sub.scoped_name, link.name)) for sub in model.walk() for link in sub.links}
    model_pose = graph.world_pose(model.scoped_name, "model")
    root_in_model = converter.poses[root] if root != WORLD else converter.world_pose
    plugins = {sub.scoped_name: sub.plugins for sub in model.walk()}
    return ConvertedModel(
        robot=robot,
        scope=model.scoped_name,
        model=model,
        scoped_names=MappingProxyType(dict(converter.scoped)),
        sdf_links=tuple(n for n in robot.topology.link_order if n in sdf_links),
        frame_links=tuple(converter.frame_links),
        joint_frame_links=tuple(converter.joint_frame_links),
        floating_joints=tuple(converter.floating),
        canonical_link=converter.view.canonical_link,
        root_link=robot.root_link,
        model_pose=model_pose,
        root_pose_in_model=np.array(root_in_model),
        root_pose_in_world=model_pose @ root_in_model,
        world_joints=world_joints,
        plugins=MappingProxyType(plugins),
        warnings=tuple(all_warnings),
        link_directories=MappingProxyType(dict(converter.directories)),
    )
