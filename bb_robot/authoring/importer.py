"""Import a URDF or SDF description as Python source that rebuilds it with the authoring API.

It writes Python source from the URDF intermediate representation:

* :func:`import_urdf` parses a URDF (or xacro) file with :func:`bb_robot.urdf.parse_file`;
* :func:`import_sdf` loads an SDF model or world with :func:`bb_robot.sdf.load_from_file`
  and turns its robot model into the intermediate representation with
  :func:`bb_robot.urdf.writer.model_to_ir` (the IR the URDF writer writes; effort and
  velocity limits SDF leaves unlimited get the writer's placeholder, ``1e16``);
* :func:`python_source_for` writes the source for an IR (or an authoring robot);
  :func:`robot_from_ir` builds the authoring :class:`~bb_robot.authoring.elements.Robot`
  itself, without source.

The source defines one variable per material, link and joint, then ``robot``; run as a
script, it prints the URDF.  Executing it and parsing ``robot.to_urdf()`` gives the same
IR as the file (names, every float bit for bit, visuals and extra visuals, non-uniform mesh
scales, origins written or not, materials defined at the top or inside a visual, world
anchors, mimics, safety controllers, transmissions); what the IR does not keep (a
transmission's hardware interface, ``<gazebo>`` and other skipped elements, listed in the
parser's warnings) is not carried over.

Names are kept as string literals; variables are made from them: characters other than
ASCII letters, digits and ``_`` become ``_``, a leading digit gets a ``link_`` (``joint_``,
``material_``) prefix, and a name already taken (by another element, a Python keyword or
builtin, or a name the source imports) gets ``_2``, ``_3``...  Floats are written with
:func:`repr`, so they read back exactly.
"""

from __future__ import annotations

import builtins
import keyword
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bb_robot.authoring import elements as E
from bb_robot.model import geometry as g
from bb_robot.urdf import ir
from bb_robot.urdf.writer import UNKNOWN_LIMIT, model_to_ir

if TYPE_CHECKING:
    from bb_robot.model.robot import Robot as ModelRobot

__all__ = [
    "import_sdf",
    "import_urdf",
    "python_source_for",
    "robot_from_ir",
    "robot_from_model",
    "robot_to_python",
]


# ------------------------------------------------------------------------------ entry points
def import_urdf(path: str | os.PathLike[str], xacro_args: Mapping[str, str] | None = None) -> str:
    """Python source rebuilding the URDF (or xacro) file at ``path``.

    Raises the parser's errors (:mod:`bb_robot.urdf.errors`) and
    :class:`~bb_robot.authoring.elements.AuthoringError` for a description the authoring API
    refuses (e.g. a revolute joint without ``<limit>``, a colour outside [0, 1]).
    """
    from bb_robot.urdf.parser import parse_file

    return python_source_for(parse_file(path, xacro_args=xacro_args))


def import_sdf(
    path: str | os.PathLike[str],
    model_scope: str = "",
    *,
    resource_paths: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    """Python source rebuilding the robot of the SDF model or world file at ``path``.

    ``model_scope`` and ``resource_paths`` select the model and find includes as in
    :func:`bb_robot.sdf.load_from_file`.  The robot is the loader's (``docs/sdf.md``: frames
    become links and fixed joints, names are relative to the scope); its links and joints
    are written in topological order.  Raises the SDF loader's errors.
    """
    from bb_robot.sdf.loader import load_from_file

    result = load_from_file(path, model_scope, resource_paths=resource_paths, build_serial=False)
    return python_source_for(model_to_ir(result.robot), source=os.fspath(path), scope=result.source_scope)


def robot_to_python(robot: ModelRobot, *, unknown_limit: float = UNKNOWN_LIMIT) -> str:
    """Python source rebuilding a robot model (from any format), through :func:`model_to_ir`.

    For a URDF file prefer :func:`import_urdf`: the model has lost what the file said and the
    model does not keep (which origins were written, hardware interfaces, ...)."""
    return python_source_for(model_to_ir(robot, unknown_limit=unknown_limit))


def robot_from_ir(doc: ir.Robot) -> E.Robot:
    """The authoring robot of an intermediate representation (checked as any authoring robot is).

    Its top-level materials are ``doc.materials`` (``Robot(materials=[...])``)."""
    return _FromIr().robot(doc)


def robot_from_model(robot: ModelRobot, *, unknown_limit: float = UNKNOWN_LIMIT) -> E.Robot:
    """The authoring robot of a robot model, through :func:`model_to_ir`."""
    return robot_from_ir(model_to_ir(robot, unknown_limit=unknown_limit))


def python_source_for(
    robot: ir.Robot | E.Robot,
    *,
    source: str | None = None,
    scope: str | None = None,
) -> str:
    """Python source that defines ``robot``, an authoring robot equal to ``robot``.

    ``robot`` is an IR (:func:`robot_from_ir` checks it first) or an authoring robot.
    ``source`` names the file in the header (default: the IR's ``source``; only the file
    name is written); the IR's warnings are listed in a comment.
    """
    warnings: list[str] = []
    if isinstance(robot, ir.Robot):
        source = source or robot.source
        warnings = list(robot.warnings)
        built = robot_from_ir(robot)
    else:
        built = robot
    return _Source(built, source, scope, warnings).text()


# ------------------------------------------------------------------------------ IR -> elements
class _FromIr:
    def __init__(self) -> None:
        self.materials: dict[g.Material, E.Material] = {}

    def robot(self, doc: ir.Robot) -> E.Robot:
        top = [self.material(m) for m in doc.materials.values()]
        return E.Robot(
            doc.name,
            links=tuple(self.link(link) for link in doc.links),
            joints=tuple(self.joint(joint) for joint in doc.joints),
            transmissions=tuple(self.transmission(t) for t in doc.transmissions.values()),
            materials=tuple(top),
        )

    def origin(self, origin: g.Origin | None) -> E.Origin | None:
        return None if origin is None else E.Origin(origin.xyz, origin.rpy)

    def geometry(self, geometry: g.Geometry | None, owner: str) -> E.Geometry:
        if isinstance(geometry, g.Box):
            return E.Box(geometry.size)
        if isinstance(geometry, g.Cylinder):
            return E.Cylinder(geometry.radius, geometry.length)
        if isinstance(geometry, g.Sphere):
            return E.Sphere(geometry.radius)
        if isinstance(geometry, g.Mesh):
            scale = geometry.extra_scale_xyz if geometry.extra_scale_xyz is not None else geometry.scale
            return E.Mesh(geometry.filename, scale)
        raise E.AuthoringError(f"{owner} has no geometry (URDF requires one)")

    def material(self, material: g.Material) -> E.Material:
        known = self.materials.get(material)
        if known is None:
            c = material.color
            rgba = (c.red, c.green, c.blue, c.alpha) if c is not None else None
            known = self.materials[material] = E.Material(material.name, rgba, material.texture)
        return known

    def link(self, link: ir.Link) -> E.Link:
        owner = f"link {link.name!r}"
        visuals = [
            E.Visual(
                self.geometry(v.geometry, f"{owner}: a visual"),
                self.origin(v.origin),
                self.material(v.material) if v.material is not None else None,
                v.name,
            )
            for v in (link.visual, *link.extra_visuals)
            if v is not None
        ]
        collisions = [
            E.Collision(self.geometry(c.geometry, f"{owner}: a collision"), self.origin(c.origin), c.name)
            for c in link.collisions
        ]
        inertial = None
        if link.inertial is not None:
            i = link.inertial
            if i.mass is None:
                raise E.AuthoringError(f"{owner}: <inertial> has no mass (URDF requires one)")
            matrix = E.InertiaMatrix(
                ixx=i.inertia.ixx,
                ixy=i.inertia.ixy,
                ixz=i.inertia.ixz,
                iyy=i.inertia.iyy,
                iyz=i.inertia.iyz,
                izz=i.inertia.izz,
            )
            inertial = E.Inertial(i.mass, matrix, self.origin(i.origin))
        return E.Link(link.name, tuple(visuals), tuple(collisions), inertial)

    def joint(self, joint: ir.Joint) -> E.Joint:
        limit = None
        if joint.limit is not None:
            lim = joint.limit
            if lim.effort is None or lim.velocity is None:
                raise E.AuthoringError(f"joint {joint.name!r}: <limit> has no effort or velocity (URDF requires both)")
            limit = E.Limit(lower=lim.lower, upper=lim.upper, effort=lim.effort, velocity=lim.velocity)
        dynamics = None if joint.dynamics is None else E.Dynamics(joint.dynamics.damping, joint.dynamics.friction)
        mimic = None if joint.mimic is None else E.Mimic(joint.mimic.joint, joint.mimic.multiplier, joint.mimic.offset)
        safety = None
        if joint.safety_controller is not None:
            s = joint.safety_controller
            safety = E.SafetyController(s.k_velocity, s.k_position, s.soft_lower_limit, s.soft_upper_limit)
        return E.Joint(
            joint.name,
            joint.type,
            joint.parent,
            joint.child,
            origin=self.origin(joint.origin),
            axis=joint.axis,
            limit=limit,
            dynamics=dynamics,
            mimic=mimic,
            safety_controller=safety,
        )

    def transmission(self, t: ir.Transmission) -> E.Transmission:
        return E.Transmission(t.name, t.joint, t.actuator, t.reduction, t.offset)


# ------------------------------------------------------------------------------ source text
@dataclass
class _Call:
    """A call expression: ``func(arg, key=value, ...)``."""

    func: str
    args: list[tuple[str | None, _Expr]]


@dataclass
class _List:
    items: list[_Expr]


_Expr = _Call | _List | str
_WIDTH = 100


def _flat(expr: _Expr) -> str:
    if isinstance(expr, str):
        return expr
    if isinstance(expr, _List):
        return "[" + ", ".join(_flat(item) for item in expr.items) + "]"
    return expr.func + "(" + ", ".join((f"{k}=" if k else "") + _flat(v) for k, v in expr.args) + ")"


def _layout(expr: _Expr, indent: int, used: int = 0) -> str:
    """``expr`` on one line when it fits in ``_WIDTH`` (``used`` columns are taken before it on
    its first line), else one argument or item per line, indented by four more spaces."""
    flat = _flat(expr)
    if isinstance(expr, str) or indent + used + len(flat) <= _WIDTH:
        return flat
    inner = " " * (indent + 4)
    if isinstance(expr, _List):
        if not expr.items:
            return "[]"
        body = "".join(f"{inner}{_layout(item, indent + 4, 1)},\n" for item in expr.items)
        return "[\n" + body + " " * indent + "]"
    lines = []
    for key, value in expr.args:
        prefix = f"{key}=" if key else ""
        lines.append(f"{inner}{prefix}{_layout(value, indent + 4, len(prefix) + 1)},\n")
    return expr.func + "(\n" + "".join(lines) + " " * indent + ")"


def _str(text: str) -> str:
    """A Python literal of ``text``, in double quotes where that needs no escaping."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        return '"' + literal[1:-1] + '"'
    return literal


def _num(value: float) -> str:
    return repr(float(value))


def _tuple(values: Sequence[float]) -> str:
    return "(" + ", ".join(_num(v) for v in values) + ")"


def _same(a: object, b: object) -> bool:
    """Equal as written (``repr``): ``-0.0`` differs from ``0.0``."""
    return repr(a) == repr(b)


_RESERVED = frozenset({*keyword.kwlist, *keyword.softkwlist, *dir(builtins), *E.__all__, "robot", "annotations", "E"})


class _Names:
    """Unique Python variable names made from element names."""

    def __init__(self) -> None:
        self.taken: set[str] = set(_RESERVED)

    def make(self, name: str | None, kind: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", name or kind)
        if not base.strip("_") or base[0].isdigit():
            base = f"{kind}_{base}"
        candidate, number = base, 1
        while candidate in self.taken:
            number += 1
            candidate = f"{base}_{number}"
        self.taken.add(candidate)
        return candidate


class _Source:
    def __init__(self, robot: E.Robot, source: str | None, scope: str | None, warnings: Sequence[str]) -> None:
        self.robot = robot
        self.source = source
        self.scope = scope
        self.warnings = warnings
        self.imports: set[str] = {"Robot"}
        names = _Names()
        self.material_vars: dict[E.Material, str] = {}
        for material in (*robot.top_materials, *(v.material for link in robot.links for v in link.visuals)):
            if material is not None and material not in self.material_vars:
                self.material_vars[material] = names.make(material.name, "material")
        self.link_vars = {link.name: names.make(link.name, "link") for link in robot.links}
        self.joint_vars = {joint.name: names.make(joint.name, "joint") for joint in robot.joints}
        self.defined_joints: set[str] = set()

    def call(self, func: str, *args: _Expr, **kwargs: _Expr | None) -> _Call:
        self.imports.add(func)
        items: list[tuple[str | None, _Expr]] = [(None, a) for a in args]
        items += [(k, v) for k, v in kwargs.items() if v is not None]
        return _Call(func, items)

    # -- values ----------------------------------------------------------------------------------
    def origin(self, origin: E.Origin) -> _Call:
        zero = (0.0, 0.0, 0.0)
        if _same(origin.rpy, zero):
            return self.call("Origin") if _same(origin.xyz, zero) else self.call("Origin", _tuple(origin.xyz))
        if _same(origin.xyz, zero):
            return self.call("Origin", rpy=_tuple(origin.rpy))
        return self.call("Origin", _tuple(origin.xyz), _tuple(origin.rpy))

    def origin_argument(self, origin: E.Origin | None) -> _Expr | None:
        """``None`` (default ``Origin()``: left out), ``"None"`` (no <origin>), or the origin."""
        if origin is None:
            return "None"
        if _same(origin, E.Origin()):
            return None
        return self.origin(origin)

    def geometry(self, geometry: E.Geometry) -> _Call:
        if isinstance(geometry, E.Box):
            return self.call("Box", _tuple(geometry.size))
        if isinstance(geometry, E.Cylinder):
            return self.call("Cylinder", _num(geometry.radius), _num(geometry.length))
        if isinstance(geometry, E.Sphere):
            return self.call("Sphere", _num(geometry.radius))
        scale = geometry.scale
        written = None if _same(scale, 1.0) else (_tuple(scale) if isinstance(scale, tuple) else _num(scale))
        return self.call("Mesh", _str(geometry.filename), scale=written)

    def material(self, material: E.Material) -> _Call:
        rgba = None if material.rgba is None else _tuple(material.rgba)
        texture = None if material.texture is None else _str(material.texture)
        name = "None" if material.name is None else _str(material.name)
        return self.call("Material", name, rgba=rgba, texture=texture)

    def visual(self, visual: E.Visual) -> _Call:
        material = None if visual.material is None else self.material_vars[visual.material]
        name = None if visual.name is None else _str(visual.name)
        origin = self.origin_argument(visual.origin)
        return self.call("Visual", self.geometry(visual.geometry), origin=origin, material=material, name=name)

    def collision(self, collision: E.Collision) -> _Call:
        name = None if collision.name is None else _str(collision.name)
        origin = self.origin_argument(collision.origin)
        return self.call("Collision", self.geometry(collision.geometry), origin=origin, name=name)

    def inertial(self, inertial: E.Inertial) -> _Call:
        m = inertial.matrix
        components = {
            key: _num(getattr(m, key))
            for key in E.InertiaMatrix.KEYS
            if key in ("ixx", "iyy", "izz") or not _same(getattr(m, key), 0.0)
        }
        matrix = self.call("InertiaMatrix", **components)
        return self.call("Inertial", _num(inertial.mass), matrix, origin=self.origin_argument(inertial.origin))

    def link(self, link: E.Link) -> _Call:
        visuals = _List([self.visual(v) for v in link.visuals]) if link.visuals else None
        collisions = _List([self.collision(c) for c in link.collisions]) if link.collisions else None
        inertial = None if link.inertial is None else self.inertial(link.inertial)
        return self.call("Link", _str(link.name), visuals=visuals, collisions=collisions, inertial=inertial)

    def link_reference(self, name: str) -> str:
        if name in self.link_vars:
            return self.link_vars[name]
        if name == E.WORLD:
            self.imports.add("WORLD")
            return "WORLD"
        return _str(name)

    def joint_reference(self, name: str) -> str:
        """The joint's variable once it is defined (a mimic may follow a later joint), else its name."""
        return self.joint_vars[name] if name in self.defined_joints else _str(name)

    def joint(self, joint: E.Joint) -> _Call:
        limit: _Call | None = None
        dynamics: _Call | None = None
        mimic: _Call | None = None
        safety: _Call | None = None
        if joint.limit is not None:
            lim = joint.limit
            bounds = {k: _num(v) for k, v in (("lower", lim.lower), ("upper", lim.upper)) if v is not None}
            limit = self.call("Limit", **bounds, effort=_num(lim.effort), velocity=_num(lim.velocity))
        if joint.dynamics is not None:
            d = joint.dynamics
            dynamics = self.call(
                "Dynamics",
                damping=None if d.damping is None else _num(d.damping),
                friction=None if d.friction is None else _num(d.friction),
            )
        if joint.mimic is not None:
            mi = joint.mimic
            mimic = self.call(
                "Mimic",
                self.joint_reference(mi.joint),
                multiplier=None if _same(mi.multiplier, 1.0) else _num(mi.multiplier),
                offset=None if _same(mi.offset, 0.0) else _num(mi.offset),
            )
        if joint.safety_controller is not None:
            s = joint.safety_controller
            optional = {
                key: _num(getattr(s, key))
                for key in ("k_position", "soft_lower_limit", "soft_upper_limit")
                if not _same(getattr(s, key), 0.0)
            }
            safety = self.call("SafetyController", k_velocity=_num(s.k_velocity), **optional)
        return self.call(
            "Joint",
            _str(joint.name),
            _str(joint.type),
            parent=self.link_reference(joint.parent),
            child=self.link_reference(joint.child),
            origin=self.origin_argument(joint.origin),
            axis=None if joint.axis is None else _tuple(joint.axis),
            limit=limit,
            dynamics=dynamics,
            mimic=mimic,
            safety_controller=safety,
        )

    def transmission(self, t: E.Transmission) -> _Call:
        args: list[_Expr] = ["None" if t.name is None else _str(t.name), self.joint_reference(t.joint)]
        if t.actuator is not None:
            args.append(_str(t.actuator))
        interface = t.hardware_interface
        return self.call(
            "Transmission",
            *args,
            reduction=None if _same(t.reduction, 1.0) else _num(t.reduction),
            offset=None if _same(t.offset, 0.0) else _num(t.offset),
            hardware_interface=None if interface == E.POSITION_INTERFACE else _str(interface),
        )

    # -- the module ------------------------------------------------------------------------------
    def text(self) -> str:
        robot = self.robot
        body: list[str] = []
        if self.material_vars:
            body.append("# Materials")
            for material, var in self.material_vars.items():
                body.append(f"{var} = {_layout(self.material(material), 0, len(var) + 3)}")
            body.append("")
        if robot.links:
            body.append("# Links")
            for link in robot.links:
                var = self.link_vars[link.name]
                body.append(f"{var} = {_layout(self.link(link), 0, len(var) + 3)}")
            body.append("")
        if robot.joints:
            body.append("# Joints")
            for joint in robot.joints:
                var = self.joint_vars[joint.name]
                body.append(f"{var} = {_layout(self.joint(joint), 0, len(var) + 3)}")
                self.defined_joints.add(joint.name)
            body.append("")
        transmissions = _List([self.transmission(t) for t in robot.transmissions])
        top = [self.material_vars[m] for m in robot.top_materials]
        whole = self.call(
            "Robot",
            _str(robot.name),
            links=_List([self.link_vars[link.name] for link in robot.links]),
            joints=_List([self.joint_vars[joint.name] for joint in robot.joints]),
            transmissions=transmissions if transmissions.items else None,
            materials=_List(list(top)) if robot.materials is not None else None,
        )
        body.append(f"robot = {_layout(whole, 0, 8)}")
        footer = ["", 'if __name__ == "__main__":', '    print(robot.to_urdf(), end="")', ""]
        return "\n".join([*self.header(), *body, *footer])

    def header(self) -> list[str]:
        origin = ""
        if self.source:
            origin = f" from {Path(self.source).name}"
            if self.scope:
                origin += f" (model {self.scope})"
        doc = f"Robot {self.robot.name!r}{origin}, written with bb_robot's authoring API."
        lines = [
            f'"""{_docstring_text(doc)}',
            "",
            "Made by bb_robot.authoring.importer; run it to print the URDF.",
            '"""',
        ]
        if self.warnings:
            lines += ["", "# Warnings when the description was read (what is not carried over, among others):"]
            lines += [f"# - {_one_line(_strip_directory(w, self.source))}" for w in self.warnings]
        names = sorted(self.imports, key=lambda n: (not n.isupper(), n))
        lines += ["", "from bb_robot.authoring import ("]
        lines += [f"    {name}," for name in names]
        lines += [")", ""]
        return lines


def _docstring_text(text: str) -> str:
    """``text`` safe inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _strip_directory(warning: str, source: str | None) -> str:
    """A warning with the source file's directory left out (the source stays the same on any machine)."""
    if source and warning.startswith(source):
        return Path(source).name + warning[len(source) :]
    return warning
