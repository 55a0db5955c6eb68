"""The robot model: an immutable tree in SI units.

A :class:`Robot` holds flat name maps of links, joints, actuators and
sensors, the bidirectional parent/child references, and a precomputed
:class:`~bb_robot.model.topology.Topology`.  Build one with
:meth:`Robot.assemble`, which validates the tree and raises
:class:`~bb_robot.model.errors.InvalidRobot` listing every problem.

Links and joints live in separate namespaces: URDF allows a joint to share a
link's name.  Queries that accept either kind take ``kind="link"`` (the
default) or ``kind="joint"`` to say which one is meant.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeVar

from bb_robot.model.errors import (
    InvalidParameterValue,
    InvalidRobot,
    NodeKind,
    NoParentJoint,
    NotAnAncestor,
    TreeProblem,
    UnknownActuator,
    UnknownJoint,
    UnknownLink,
    UnknownParameter,
)
from bb_robot.model.geometry import Collision, Inertial, Origin, Vec3, Visual
from bb_robot.model.topology import Topology, build_topology
from bb_robot.model.validation import find_problems

JointType = Literal["revolute", "continuous", "prismatic", "fixed", "floating", "planar"]
JOINT_TYPES: tuple[JointType, ...] = (
    "revolute",
    "continuous",
    "prismatic",
    "fixed",
    "floating",
    "planar",
)
#: Joint types with one coordinate, which forward kinematics drives.
SINGLE_DOF_TYPES: frozenset[str] = frozenset({"revolute", "continuous", "prismatic"})
#: Degrees of freedom of each joint type.
JOINT_DOF: Mapping[str, int] = MappingProxyType(
    {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "floating": 6, "planar": 3}
)


@dataclass(frozen=True)
class JointLimits:
    """Position (rad or m), velocity and effort limits; ``None`` where the description has none.

    ``soft_lower`` / ``soft_upper`` come from a URDF ``<safety_controller>``.
    """

    lower: float | None = None
    upper: float | None = None
    velocity: float | None = None
    effort: float | None = None
    soft_lower: float | None = None
    soft_upper: float | None = None


@dataclass(frozen=True)
class Dynamics:
    damping: float | None = None
    friction: float | None = None


@dataclass(frozen=True)
class Mimic:
    """This joint's value is ``multiplier * value(joint) + offset``."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Link:
    """A rigid body.  ``parent_joint`` and ``child_joints`` are filled by :meth:`Robot.assemble`."""

    name: str
    visuals: tuple[Visual, ...] = ()
    collisions: tuple[Collision, ...] = ()
    inertial: Inertial | None = None
    parent_joint: str | None = None
    child_joints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Joint:
    """A joint between ``parent_link`` and ``child_link``.

    ``origin`` places the joint frame (and the child link frame at zero) in the
    parent link frame; ``axis`` is a unit vector in the joint frame.
    ``actuators`` names the actuators that drive this joint.
    """

    name: str
    type: JointType
    parent_link: str
    child_link: str
    origin: Origin = Origin()
    axis: Vec3 = (1.0, 0.0, 0.0)
    limits: JointLimits | None = None
    dynamics: Dynamics | None = None
    mimic: Mimic | None = None
    actuators: tuple[str, ...] = ()

    @property
    def dof(self) -> int:
        """Return the joint's number of degrees of freedom (0 for fixed, 6 for floating)."""
        return JOINT_DOF[self.type]


@dataclass(frozen=True)
class Transmission:
    """How an actuator drives its joint: actuator = (joint − offset) × reduction (× −1 if reversed)."""

    reduction: float | None = None
    offset: float | None = None
    reversed: bool | None = None


@dataclass(frozen=True)
class ActuatorInfo:
    name: str
    joint: str
    transmission: Transmission | None = None


@dataclass(frozen=True)
class SensorInfo:
    """A sensor attached to a link, a joint, or the whole robot (``attached_to == ("robot", "")``)."""

    name: str
    attached_to: tuple[Literal["link", "joint", "robot"], str]
    transmission: Transmission | None = None


ParamKind = Literal["joint", "actuator", "sensor"]


@dataclass(frozen=True)
class ParamLocation:
    """Where a runtime parameter lands: the ``kind`` and ``name`` of an item and a field path in it."""

    kind: ParamKind
    name: str
    field: tuple[str, ...]


ParamKey = tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Robot:
    """An immutable, validated robot.  Construct with :meth:`Robot.assemble`."""

    name: str
    links: Mapping[str, Link]
    joints: Mapping[str, Joint]
    actuators: Mapping[str, ActuatorInfo]
    sensors: Mapping[str, SensorInfo]
    root_link: str
    topology: Topology
    param_subscriptions: Mapping[ParamKey, tuple[ParamLocation, ...]]
    warnings: tuple[str, ...] = ()
    source: str | None = field(default=None)

    # ----------------------------------------------------------------- building
    @classmethod
    def assemble(
        cls,
        name: str,
        links: Sequence[Link],
        joints: Sequence[Joint],
        actuators: Sequence[ActuatorInfo] = (),
        sensors: Sequence[SensorInfo] = (),
        warnings: Iterable[str] = (),
        source: str | None = None,
    ) -> Robot:
        """Return a validated robot built from links and joints in declaration order.

        Fills each link's ``parent_joint`` / ``child_joints`` and each joint's
        ``actuators``, computes the topology and parameter bindings.  Raises
        :class:`InvalidRobot` naming every offender when the links and joints
        do not form exactly one tree, names repeat, or mimic references are
        broken, actuators name unknown joints or repeat names, or sensors are
        attached to unknown links or joints.
        """
        edges = [(j.name, j.parent_link, j.child_link) for j in joints]
        mimics = {j.name: j.mimic.joint for j in joints if j.mimic is not None}
        fixed = frozenset(j.name for j in joints if j.type == "fixed")
        problems, found_warnings = find_problems([link.name for link in links], edges, mimics, fixed)
        joint_map = {j.name: j for j in joints}
        link_names = {link.name for link in links}
        actuator_map: dict[str, ActuatorInfo] = {}
        by_joint: dict[str, list[str]] = {}
        for actuator in actuators:
            if actuator.joint not in joint_map:
                problems.append(
                    TreeProblem(
                        "unknown_actuator_joint",
                        (actuator.name, actuator.joint),
                        f"actuator '{actuator.name}' drives joint '{actuator.joint}', which is not defined",
                    )
                )
            elif actuator.name in actuator_map:
                problems.append(
                    TreeProblem(
                        "duplicate_actuator",
                        (actuator.name,),
                        f"actuator '{actuator.name}' is defined more than once "
                        "(actuator names must be unique per robot)",
                    )
                )
            else:
                actuator_map[actuator.name] = actuator
                by_joint.setdefault(actuator.joint, []).append(actuator.name)
        sensor_map: dict[str, SensorInfo] = {}
        for sensor in sensors:
            if sensor.name in sensor_map:
                problems.append(
                    TreeProblem(
                        "duplicate_sensor",
                        (sensor.name,),
                        f"sensor '{sensor.name}' is defined more than once",
                    )
                )
            kind, target = sensor.attached_to
            if (kind == "link" and target not in link_names) or (kind == "joint" and target not in joint_map):
                problems.append(
                    TreeProblem(
                        "unknown_sensor_target",
                        (sensor.name, target),
                        f"sensor '{sensor.name}' is attached to {kind} '{target}', which is not defined",
                    )
                )
            sensor_map[sensor.name] = sensor
        if problems:
            raise InvalidRobot(name, problems, source)

        child_joints: dict[str, list[str]] = {}
        parent_joint: dict[str, str] = {}
        for j in joints:
            child_joints.setdefault(j.parent_link, []).append(j.name)
            parent_joint[j.child_link] = j.name
        root = next(link.name for link in links if link.name not in parent_joint)
        topology = build_topology(root, child_joints, {j.name: j.child_link for j in joints})
        link_map = {
            link.name: Link(
                link.name,
                link.visuals,
                link.collisions,
                link.inertial,
                parent_joint.get(link.name),
                tuple(child_joints.get(link.name, ())),
            )
            for link in links
        }
        for joint_name, names in by_joint.items():
            joint_map[joint_name] = dataclasses.replace(joint_map[joint_name], actuators=tuple(names))
        return cls(
            name=name,
            links=MappingProxyType(link_map),
            joints=MappingProxyType(joint_map),
            actuators=MappingProxyType(actuator_map),
            sensors=MappingProxyType(sensor_map),
            root_link=root,
            topology=topology,
            param_subscriptions=_param_subscriptions(joint_map, topology, actuator_map),
            warnings=(*warnings, *found_warnings),
            source=source,
        )

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickle as plain fields (another process rebuilds the same robot; the topology is derived again)."""
        state: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "topology":
                state[f.name] = dict(value) if isinstance(value, MappingProxyType) else value
        return (_unpickled, (state,))

    # ------------------------------------------------------------------ lookups
    def get_link(self, name: str) -> Link:
        """Return the link called ``name``; raises :class:`UnknownLink`."""
        try:
            return self.links[name]
        except KeyError:
            raise UnknownLink(self.name, name, list(self.links)) from None

    def get_joint(self, name: str) -> Joint:
        """Return the joint called ``name``; raises :class:`UnknownJoint`."""
        try:
            return self.joints[name]
        except KeyError:
            raise UnknownJoint(self.name, name, list(self.joints)) from None

    def get_actuator(self, name: str) -> ActuatorInfo:
        """Return the actuator called ``name``; raises :class:`UnknownActuator`."""
        try:
            return self.actuators[name]
        except KeyError:
            raise UnknownActuator(self.name, name, list(self.actuators)) from None

    def child_joints(self, link: str) -> list[Joint]:
        """Return the joints below ``link`` in declaration order.

        A leaf link gives ``[]``, which is distinct from an unknown link
        (:class:`UnknownLink`).
        """
        return [self.joints[j] for j in self.get_link(link).child_joints]

    def parent_joint(self, link: str) -> Joint:
        """Return the joint above ``link``.

        Raises :class:`NoParentJoint` for the root link (a termination signal
        when walking up) and :class:`UnknownLink` for an unknown one.
        """
        parent = self.get_link(link).parent_joint
        if parent is None:
            raise NoParentJoint(self.name, link)
        return self.joints[parent]

    def path_to(self, name: str, kind: NodeKind = "link") -> tuple[str, ...]:
        """Return the root-relative path to a link (default) or joint, links and joints interleaved.

        Raises :class:`UnknownLink` / :class:`UnknownJoint`.
        """
        return self._path(name, kind, "target")

    def path_between(self, source: str, target: str, target_kind: NodeKind = "link") -> tuple[str, ...]:
        """Return the path from link ``source`` down to ``target`` (a link, or a joint).

        The result starts at ``source`` and ends at ``target``; a source equal
        to the target gives ``(source,)``.  Raises :class:`UnknownLink` (with
        ``role`` ``"source"`` or ``"target"``), :class:`UnknownJoint`, or
        :class:`NotAnAncestor` carrying the nearest common ancestor link when
        ``source`` is not above ``target``.
        """
        source_path = self._path(source, "link", "source")
        target_path = self._path(target, target_kind, "target")
        n = len(source_path)
        if target_path[:n] == source_path:
            return target_path[n - 1 :]
        common = self.root_link
        for i in range(0, min(n, len(target_path)), 2):
            if source_path[i] != target_path[i]:
                break
            common = source_path[i]
        raise NotAnAncestor(self.name, source, target, common)

    def depth_of(self, name: str, kind: NodeKind = "link") -> int:
        """Return the depth of a link (root 0) or of a joint (its child link's depth)."""
        if kind == "joint":
            self.get_joint(name)
            return self.topology.joint_depth[name]
        self.get_link(name)
        return self.topology.depth[name]

    @property
    def max_depth(self) -> int:
        """Return the depth of the deepest link."""
        return self.topology.max_depth

    def leaf_links(self) -> list[str]:
        """Return the links with no child joints, in topological order."""
        return [n for n in self.topology.link_order if not self.links[n].child_joints]

    def links_in_order(self) -> list[Link]:
        """Return every link in topological order, root first."""
        return [self.links[n] for n in self.topology.link_order]

    def joints_in_order(self) -> list[Joint]:
        """Return every joint in traversal order (each after the joint above it)."""
        return [self.joints[n] for n in self.topology.joint_order]

    def actuator_path(self, actuator: str) -> tuple[str, ...]:
        """Return the root-relative path of an actuator: its joint's path plus its own name.

        ``robot.actuator_path("pan_servo") == ("base", "pan", "pan_servo")``.
        Raises :class:`UnknownActuator`.
        """
        info = self.get_actuator(actuator)
        return self.topology.joint_paths[info.joint] + (actuator,)

    def _path(self, name: str, kind: NodeKind, role: Literal["source", "target"]) -> tuple[str, ...]:
        if kind == "joint":
            path = self.topology.joint_paths.get(name)
            if path is None:
                raise UnknownJoint(self.name, name, list(self.joints))
            return path
        path = self.topology.paths.get(name)
        if path is None:
            raise UnknownLink(self.name, name, list(self.links), role)
        return path

    # --------------------------------------------------------------- parameters
    def with_parameters(self, values: Mapping[str | ParamKey, float]) -> Robot:
        """Return a copy with bound parameters set, e.g. ``{"joints.elbow.limit.upper": 1.2}``.

        Keys are the tuples of :attr:`param_subscriptions` or their dotted form.
        Raises :class:`UnknownParameter` naming an unknown parameter and the known
        ones, and :class:`InvalidParameterValue` for a value that is not a finite number.
        """
        dotted = {".".join(k): k for k in self.param_subscriptions}
        joints = dict(self.joints)
        actuators = dict(self.actuators)
        for raw_key, raw_value in values.items():
            key = dotted.get(raw_key) if isinstance(raw_key, str) else raw_key
            name = raw_key if isinstance(raw_key, str) else ".".join(raw_key)
            if key is None or key not in self.param_subscriptions:
                raise UnknownParameter(self.name, name, sorted(dotted))
            try:
                value = float(raw_value)
            except (TypeError, ValueError):
                raise InvalidParameterValue(self.name, name, raw_value) from None
            if not math.isfinite(value):
                raise InvalidParameterValue(self.name, name, raw_value)
            for loc in self.param_subscriptions[key]:
                if loc.kind == "joint":
                    joints[loc.name] = _replace_path(joints[loc.name], loc.field, value)
                elif loc.kind == "actuator":
                    actuators[loc.name] = _replace_path(actuators[loc.name], loc.field, value)
        return dataclasses.replace(
            self,
            joints=MappingProxyType(joints),
            actuators=MappingProxyType(actuators),
        )


_LIMIT_FIELDS = ("lower", "upper", "velocity", "effort")
# A continuous joint has no position limits, so it has no parameters for them.
_UNBOUNDED_LIMIT_FIELDS = ("velocity", "effort")
_T = TypeVar("_T")


def _param_subscriptions(
    joints: Mapping[str, Joint],
    topology: Topology,
    actuators: Mapping[str, ActuatorInfo],
) -> Mapping[ParamKey, tuple[ParamLocation, ...]]:
    """Return the runtime parameters each movable joint limit and transmission is bound to."""
    subs: dict[ParamKey, tuple[ParamLocation, ...]] = {}
    for name in topology.joint_order:
        joint = joints[name]
        if joint.type not in SINGLE_DOF_TYPES or joint.mimic is not None:
            continue
        for attr in _UNBOUNDED_LIMIT_FIELDS if joint.type == "continuous" else _LIMIT_FIELDS:
            subs[("joints", name, "limit", attr)] = (ParamLocation("joint", name, ("limits", attr)),)
    for actuator in actuators.values():
        if actuator.transmission is None:
            continue
        for attr in ("reduction", "offset"):
            subs[("transmissions", actuator.name, attr)] = (
                ParamLocation("actuator", actuator.name, ("transmission", attr)),
            )
    return MappingProxyType(subs)


def _replace_path(item: _T, path: tuple[str, ...], value: float) -> _T:
    """Return ``item`` with the nested field at ``path`` set to ``value`` (creating defaults)."""
    head, rest = path[0], path[1:]
    if not rest:
        return dataclasses.replace(item, **{head: value})  # type: ignore[type-var]
    inner = getattr(item, head)
    if inner is None:
        inner = _FIELD_DEFAULTS[head]()
    return dataclasses.replace(item, **{head: _replace_path(inner, rest, value)})  # type: ignore[type-var]


_FIELD_DEFAULTS = {"limits": JointLimits, "transmission": Transmission}


def _unpickled(state: dict[str, object]) -> Robot:
    """A pickled :class:`Robot` again, field by field (it was validated when it was first assembled)."""
    fields = {name: MappingProxyType(value) if isinstance(value, dict) else value for name, value in state.items()}
    links: Mapping[str, Link] = fields["links"]  # type: ignore[assignment]
    joints: Mapping[str, Joint] = fields["joints"]  # type: ignore[assignment]
    children = {link.name: list(link.child_joints) for link in links.values() if link.child_joints}
    topology = build_topology(str(fields["root_link"]), children, {j.name: j.child_link for j in joints.values()})
    return Robot(topology=topology, **fields)  # type: ignore[arg-type]
