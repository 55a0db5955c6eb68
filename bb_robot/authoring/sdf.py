"""A small SDFormat writer for authoring robots: a ``<model>`` for Gazebo, and a world around it.

:func:`model_element` writes an authoring :class:`~bb_robot.authoring.elements.Robot` as an
SDF 1.11 ``<model>`` with the same kinematics, in the "pose frame semantics" style (every
pose says what it is relative to):

* each joint's frame is placed in its parent link's frame (``<pose relative_to="parent">``,
  the URDF joint origin), each child link sits on its joint frame (``<pose
  relative_to="joint"/>``), so the SDF link frames are the URDF link frames;
* a link with no visual, collision or inertial hanging from a fixed joint (``tool0``, a tool
  centre point) becomes a ``<frame>`` attached to its parent: in SDF a ``<link>`` is a
  rigid body, and Gazebo would give a massless link a default mass of 1 kg.  A joint whose
  URDF parent is such a frame gets the frame's link as ``<parent>`` and its pose relative to
  the frame.  (bb_robot's SDF loader turns each frame back into a link and a fixed joint
  named after the frame, so those fixed joints' names differ from the URDF's.);
* axes, limits (continuous joints: effort and velocity only), dynamics and mimics
  (``<axis><mimic joint axis="axis">``, SDF 1.11) as the URDF has them; visuals and collisions
  with their poses, box, cylinder, sphere and mesh geometry, colours as ``<ambient>`` and
  ``<diffuse>`` (a texture is not written); inertials with their pose.

Floating and planar joints have no SDF form between links (:class:`AuthoringError`).

:func:`world_document` puts models in a ``<world>`` with the physics, scene broadcaster and
user commands systems, a sun and a ground plane; :func:`joint_position_controller` and
:func:`joint_state_publisher` make gz-sim's plugins.  Numbers are written with :func:`repr`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence

from bb_robot.authoring.elements import (
    WORLD,
    AuthoringError,
    Box,
    Collision,
    Cylinder,
    Geometry,
    Inertial,
    InertiaMatrix,
    Joint,
    Link,
    Mesh,
    Origin,
    Robot,
    Sphere,
    Visual,
)
from bb_robot.urdf.writer import render

__all__ = [
    "BULLET_FEATHERSTONE",
    "SDF_VERSION",
    "joint_position_controller",
    "joint_state_publisher",
    "model_element",
    "world_document",
]

SDF_VERSION = "1.11"
"""The SDFormat version written (1.11 is the first with ``<mimic>``)."""

BULLET_FEATHERSTONE = "gz-physics-bullet-featherstone-plugin"
"""The physics engine the world asks for: gz-sim's engine that honours ``<mimic>`` constraints."""


def _num(value: float) -> str:
    return repr(float(value))


def _nums(values: Iterable[float]) -> str:
    return " ".join(_num(v) for v in values)


def _pose(parent: ET.Element, origin: Origin | None, relative_to: str | None = None) -> None:
    element = ET.SubElement(parent, "pose")
    if relative_to is not None:
        element.set("relative_to", relative_to)
    origin = origin or Origin()
    element.text = _nums((*origin.xyz, *origin.rpy))


def _text(parent: ET.Element, tag: str, text: str) -> ET.Element:
    element = ET.SubElement(parent, tag)
    element.text = text
    return element


# ------------------------------------------------------------------------------ model
def model_element(
    robot: Robot,
    *,
    name: str | None = None,
    pose: Origin | None = None,
    world_joint: str | None = None,
    plugins: Iterable[ET.Element] = (),
) -> ET.Element:
    """``robot`` as an SDF ``<model name>`` (default: the robot's name) at ``pose`` in its parent.

    ``world_joint`` names a fixed joint from ``world`` to the root link added to pin the robot
    in place (``None``: none; the robot's own joints from :data:`WORLD` are always written).
    ``plugins`` are appended to the model.
    """
    model = ET.Element("model", name=name or robot.name)
    if pose is not None:
        _pose(model, pose)
    parent_joint = {joint.child: joint for joint in robot.joints}
    frames = {
        link.name
        for link in robot.links
        if not (link.visuals or link.collisions or link.inertial)
        and link.name in parent_joint
        and parent_joint[link.name].type == "fixed"
        and parent_joint[link.name].parent != WORLD
    }

    def body(link: str) -> str:
        while link in frames:
            link = parent_joint[link].parent
        return link

    roots = [link.name for link in robot.links if link.name not in parent_joint]
    for link in robot.links:
        if link.name in frames:
            joint = parent_joint[link.name]
            frame = ET.SubElement(model, "frame", name=link.name, attached_to=joint.parent)
            _pose(frame, joint.origin, joint.parent)
        else:
            joint_above = parent_joint.get(link.name)
            model.append(_link(link, joint_above.name if joint_above is not None else None))
    if world_joint is not None:
        if len(roots) != 1:
            raise AuthoringError(f"Robot {robot.name!r}: {len(roots)} root links ({roots}); world_joint needs one")
        anchor = ET.SubElement(model, "joint", name=world_joint, type="fixed")
        _text(anchor, "parent", "world")
        _text(anchor, "child", roots[0])
    for joint in robot.joints:
        if joint.child not in frames:
            model.append(_joint(joint, body(joint.parent) if joint.parent != WORLD else WORLD))
    for plugin in plugins:
        model.append(plugin)
    return model


def _link(link: Link, joint: str | None) -> ET.Element:
    element = ET.Element("link", name=link.name)
    if joint is not None:
        _pose(element, None, joint)
    if link.inertial is not None:
        element.append(_inertial(link.inertial))
    used: set[str] = set()
    shapes: list[tuple[str, Visual | Collision]] = [("visual", v) for v in link.visuals]
    shapes += [("collision", c) for c in link.collisions]
    counts = {"visual": 0, "collision": 0}
    for kind, shape in shapes:
        name = shape.name or f"{kind}_{counts[kind]}"
        counts[kind] += 1
        while name in used:
            name += "_"
        used.add(name)
        holder = ET.SubElement(element, kind, name=name)
        if shape.origin is not None:
            _pose(holder, shape.origin)
        ET.SubElement(holder, "geometry").append(_geometry(shape.geometry))
        if isinstance(shape, Visual) and shape.material is not None and shape.material.rgba is not None:
            colours = ET.SubElement(holder, "material")
            for tag in ("ambient", "diffuse"):
                _text(colours, tag, _nums(shape.material.rgba))
    return element


def _inertial(inertial: Inertial) -> ET.Element:
    element = ET.Element("inertial")
    if inertial.origin is not None:
        _pose(element, inertial.origin)
    _text(element, "mass", _num(inertial.mass))
    inertia = ET.SubElement(element, "inertia")
    for key in InertiaMatrix.KEYS:
        _text(inertia, key, _num(getattr(inertial.matrix, key)))
    return element


def _geometry(geometry: Geometry) -> ET.Element:
    if isinstance(geometry, Box):
        element = ET.Element("box")
        _text(element, "size", _nums(geometry.size))
    elif isinstance(geometry, Cylinder):
        element = ET.Element("cylinder")
        _text(element, "radius", _num(geometry.radius))
        _text(element, "length", _num(geometry.length))
    elif isinstance(geometry, Sphere):
        element = ET.Element("sphere")
        _text(element, "radius", _num(geometry.radius))
    else:
        assert isinstance(geometry, Mesh)
        element = ET.Element("mesh")
        _text(element, "uri", geometry.filename)
        scale = geometry.scale if isinstance(geometry.scale, tuple) else (geometry.scale,) * 3
        _text(element, "scale", _nums(scale))
    return element


def _joint(joint: Joint, parent_body: str) -> ET.Element:
    if joint.type in ("floating", "planar"):
        raise AuthoringError(f"Joint {joint.name!r}: a {joint.type} joint has no SDF form between links")
    element = ET.Element("joint", name=joint.name, type=joint.type)
    _pose(element, joint.origin, "__model__" if joint.parent == WORLD else joint.parent)
    _text(element, "parent", parent_body)
    _text(element, "child", joint.child)
    if joint.type == "fixed":
        return element
    axis = ET.SubElement(element, "axis")
    _text(axis, "xyz", _nums(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0)))
    if joint.limit is not None:
        limit = ET.SubElement(axis, "limit")
        if joint.type != "continuous":
            for key in ("lower", "upper"):
                value = getattr(joint.limit, key)
                if value is not None:
                    _text(limit, key, _num(value))
        _text(limit, "effort", _num(joint.limit.effort))
        _text(limit, "velocity", _num(joint.limit.velocity))
    if joint.dynamics is not None:
        dynamics = ET.SubElement(axis, "dynamics")
        for key in ("damping", "friction"):
            value = getattr(joint.dynamics, key)
            if value is not None:
                _text(dynamics, key, _num(value))
    if joint.mimic is not None:
        mimic = ET.SubElement(axis, "mimic", joint=joint.mimic.joint, axis="axis")
        _text(mimic, "multiplier", _num(joint.mimic.multiplier))
        _text(mimic, "offset", _num(joint.mimic.offset))
        _text(mimic, "reference", "0.0")
    return element


# ------------------------------------------------------------------------------ plugins
def _plugin(filename: str, name: str, children: Sequence[tuple[str, str]]) -> ET.Element:
    element = ET.Element("plugin", filename=filename, name=name)
    for tag, text in children:
        _text(element, tag, text)
    return element


def joint_position_controller(
    joint: str,
    *,
    topic: str | None = None,
    max_velocity: float | None = None,
    p_gain: float = 10.0,
) -> ET.Element:
    """gz-sim's JointPositionController for ``joint``, listening on ``topic`` (``None``: its
    default, ``/model/<model>/joint/<joint>/0/cmd_pos``) for ``gz.msgs.Double`` positions.

    It commands joint velocities (``use_velocity_commands``), at most ``max_velocity`` (the
    joint's velocity limit: ``cmd_max``/``cmd_min``), so no force gains need tuning."""
    children = [("joint_name", joint)]
    if topic is not None:
        children.append(("topic", topic))
    children += [("use_velocity_commands", "true"), ("p_gain", _num(p_gain))]
    if max_velocity is not None:
        children += [("cmd_max", _num(max_velocity)), ("cmd_min", _num(-max_velocity))]
    return _plugin("gz-sim-joint-position-controller-system", "gz::sim::systems::JointPositionController", children)


def joint_state_publisher(joints: Iterable[str] = (), *, topic: str | None = None) -> ET.Element:
    """gz-sim's JointStatePublisher: the state of ``joints`` (none named: every joint of the
    model) on ``topic`` (``None``: ``/world/<world>/model/<model>/joint_state``)."""
    children = [("joint_name", joint) for joint in joints]
    if topic is not None:
        children.append(("topic", topic))
    return _plugin("gz-sim-joint-state-publisher-system", "gz::sim::systems::JointStatePublisher", children)


# ------------------------------------------------------------------------------ world
def world_document(
    name: str,
    models: Iterable[ET.Element],
    *,
    comment: str | None = None,
    physics_engine: str = BULLET_FEATHERSTONE,
) -> str:
    """An SDF document with one ``<world name>``: the Physics (``physics_engine``),
    SceneBroadcaster and UserCommands systems, a directional sun, a static ground plane, then
    ``models``.  ``comment`` is written as an XML comment before ``<sdf>``."""
    root = ET.Element("sdf", version=SDF_VERSION)
    world = ET.SubElement(root, "world", name=name)
    physics = ET.SubElement(world, "physics", name="1ms", type="ode")
    _text(physics, "max_step_size", "0.001")
    _text(physics, "real_time_factor", "1.0")
    engine = _plugin("gz-sim-physics-system", "gz::sim::systems::Physics", [])
    _text(ET.SubElement(engine, "engine"), "filename", physics_engine)
    world.append(engine)
    world.append(_plugin("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster", []))
    world.append(_plugin("gz-sim-user-commands-system", "gz::sim::systems::UserCommands", []))
    sun = ET.SubElement(world, "light", type="directional", name="sun")
    _text(sun, "cast_shadows", "true")
    _text(sun, "pose", "0 0 10 0 0 0")
    _text(sun, "diffuse", "0.8 0.8 0.8 1")
    _text(sun, "specular", "0.2 0.2 0.2 1")
    _text(sun, "direction", "-0.5 0.1 -0.9")
    ground = ET.SubElement(world, "model", name="ground_plane")
    _text(ground, "static", "true")
    plane_link = ET.SubElement(ground, "link", name="link")
    for kind in ("collision", "visual"):
        holder = ET.SubElement(plane_link, kind, name=kind)
        plane = ET.SubElement(ET.SubElement(holder, "geometry"), "plane")
        _text(plane, "normal", "0 0 1")
        _text(plane, "size", "20 20")
        if kind == "visual":
            colours = ET.SubElement(holder, "material")
            for tag in ("ambient", "diffuse"):
                _text(colours, tag, "0.8 0.8 0.8 1")
    for model in models:
        world.append(model)
    header = '<?xml version="1.0"?>\n'
    if comment is not None:
        header += f"<!--{comment}-->\n"
    return header + render(root) + "\n"
