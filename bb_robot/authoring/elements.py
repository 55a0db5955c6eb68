"""The elements of the authoring API (seed 002): describe a robot in Python, get URDF.

Every element is an immutable value that checks itself when it is made: a value URDF
cannot hold or that makes no sense (a negative mass or size, an rgba component outside
[0, 1], NaN or infinity, a zero axis, an unknown joint type, a joint naming a link the
robot does not define, two links of one name...) raises :class:`AuthoringError` (a
``ValueError``) whose message names the element and the value.

``to_xml(indent="")`` gives the element's URDF text; :meth:`Robot.to_urdf` the whole
document.  The text is written by :class:`bb_robot.urdf.writer.UrdfElements` from the
element's intermediate representation (``to_ir()``, :mod:`bb_robot.urdf.ir`), the same
code that writes URDF for the rest of bb_robot: numbers are written with :func:`repr`, so
they read back exactly.  :meth:`Robot.to_model` builds the robot model through the URDF
builder.
"""

from __future__ import annotations

import math
import numbers
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from bb_robot.errors import BbRobotError
from bb_robot.model import geometry as g
from bb_robot.model.robot import JOINT_TYPES, JointType
from bb_robot.model.robot import Dynamics as _IrDynamics
from bb_robot.model.robot import Mimic as _IrMimic
from bb_robot.model.validation import find_problems
from bb_robot.urdf import ir
from bb_robot.urdf.writer import UrdfElements, non_xml_character, render, urdf_document

if TYPE_CHECKING:
    from bb_robot.model.robot import Robot as ModelRobot

__all__ = [
    "POSITION_INTERFACE",
    "WORLD",
    "AuthoringError",
    "Box",
    "Collision",
    "Cylinder",
    "Dynamics",
    "Geometry",
    "InertiaMatrix",
    "Inertial",
    "Joint",
    "Limit",
    "Link",
    "Material",
    "Mesh",
    "Mimic",
    "Origin",
    "Robot",
    "SafetyController",
    "Sphere",
    "Transmission",
    "Visual",
]

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]

WORLD = "world"
"""The world anchor: a joint may name ``parent=WORLD`` without the robot defining a link ``world``."""

POSITION_INTERFACE = "hardware_interface/PositionJointInterface"
"""The default ``<hardwareInterface>`` of a :class:`Transmission`."""

_AXIS_TYPES = frozenset(("revolute", "continuous", "prismatic", "planar"))
_LIMITED_TYPES = frozenset(("revolute", "prismatic"))


class AuthoringError(BbRobotError, ValueError):
    """An element was given a value it refuses; the message names the element and the value."""


# ------------------------------------------------------------------------------ checks
def _number(where: str, value: object) -> float:
    """``value`` as a finite float, or AuthoringError naming ``where``."""
    if type(value) is float and math.isfinite(value):  # the common case, fast
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AuthoringError(f"{where}: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise AuthoringError(f"{where}: {number!r} is not a finite number (NaN and infinity cannot be written)")
    return number


def _non_negative(where: str, value: object) -> float:
    number = _number(where, value)
    if number < 0.0:
        raise AuthoringError(f"{where}: {number!r} is negative")
    return number


def _optional(where: str, value: object) -> float | None:
    return None if value is None else _number(where, value)


def _optional_non_negative(where: str, value: object) -> float | None:
    return None if value is None else _non_negative(where, value)


def _vector(where: str, value: object, count: int) -> tuple[float, ...]:
    if not isinstance(value, (tuple, list)) and (isinstance(value, (str, bytes)) or not isinstance(value, Iterable)):
        raise AuthoringError(f"{where}: {value!r} is not a sequence of {count} numbers")
    items = tuple(value)
    if len(items) != count:
        raise AuthoringError(f"{where}: {value!r} has {len(items)} components, expected {count}")
    return tuple(_number(where, item) for item in items)


def _vec3(where: str, value: object) -> Vec3:
    x, y, z = _vector(where, value, 3)
    return (x, y, z)


def _name(where: str, value: object) -> str:
    if not isinstance(value, str):
        raise AuthoringError(f"{where}: {value!r} is not a string")
    if not value:
        raise AuthoringError(f"{where}: the name is empty")
    bad = non_xml_character(value)
    if bad is not None:
        raise AuthoringError(f"{where}: {value!r} holds the character {bad!r}, which XML cannot carry")
    return value


def _optional_name(where: str, value: object) -> str | None:
    return None if value is None else _name(where, value)


def _instance(where: str, value: object, kinds: tuple[type, ...]) -> None:
    if not isinstance(value, kinds):
        expected = " or ".join(kind.__name__ for kind in kinds)
        raise AuthoringError(f"{where}: expected {expected}, got {type(value).__name__} {value!r}")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


_ELEMENTS = UrdfElements()


# ------------------------------------------------------------------------------ origin
@dataclass(frozen=True)
class Origin:
    """Pose of a link, joint, visual, collision or centre of mass relative to its parent frame.

    ``xyz`` is the translation in metres, ``rpy`` the fixed-axis roll, pitch, yaw in radians.
    """

    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        _set(self, "xyz", _vec3("Origin xyz", self.xyz))
        _set(self, "rpy", _vec3("Origin rpy", self.rpy))

    def to_ir(self) -> g.Origin:
        return g.Origin(self.xyz, self.rpy)

    def to_xml(self, indent: str = "") -> str:
        """The single-line ``<origin xyz="…" rpy="…"/>`` element."""
        return render(_ELEMENTS.origin(self.to_ir(), "<origin>"), indent)

    @classmethod
    def above(
        cls, geometry: Geometry, xy: Sequence[float] = (0.0, 0.0), rpy: Sequence[float] = (0.0, 0.0, 0.0)
    ) -> Origin:
        """An origin lifting ``geometry`` so its bottom rests on z = 0.

        z is half the height of a :class:`Box`, half the length of a :class:`Cylinder`, the
        radius of a :class:`Sphere` (in the geometry's own frame, before ``rpy``).  Any other
        geometry raises :class:`AuthoringError` (a ``ValueError``).
        """
        x, y = _vector("Origin.above xy", xy, 2)
        if isinstance(geometry, Box):
            z = geometry.size[2] / 2.0
        elif isinstance(geometry, Cylinder):
            z = geometry.length / 2.0
        elif isinstance(geometry, Sphere):
            z = geometry.radius
        else:
            raise AuthoringError(
                f"Origin.above: {type(geometry).__name__} {geometry!r} is not supported (Box, Cylinder or Sphere)"
            )
        return cls((x, y, z), _vec3("Origin.above rpy", rpy))

    @classmethod
    def wheel(cls, xy: Sequence[float] = (0.0, 0.0), z: float = 0.0) -> Origin:
        """An origin with roll −π/2, turning a URDF cylinder (axis z) into a wheel (axis y)
        centred at ``(x, y, z)``: the disc lies in the xz plane and rolls along x."""
        x, y = _vector("Origin.wheel xy", xy, 2)
        return cls((x, y, _number("Origin.wheel z", z)), (-math.pi / 2.0, 0.0, 0.0))


# ------------------------------------------------------------------------------ geometry
@dataclass(frozen=True)
class Box:
    """A box centred on its frame; ``size`` = (x, y, z) edge lengths in metres (each ≥ 0)."""

    size: Vec3

    def __post_init__(self) -> None:
        size = _vec3("Box size", self.size)
        for value in size:
            if value < 0.0:
                raise AuthoringError(f"Box size {size!r}: the edge length {value!r} is negative")
        _set(self, "size", size)

    def to_ir(self) -> g.Box:
        return g.Box(self.size)

    def to_xml(self, indent: str = "") -> str:
        """``<box size="…"/>`` (the content of ``<geometry>``)."""
        return render(_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Cylinder:
    """A cylinder along its frame's z axis, centred on the frame; radius and length in metres (≥ 0)."""

    radius: float
    length: float

    def __post_init__(self) -> None:
        _set(self, "radius", _non_negative("Cylinder radius", self.radius))
        _set(self, "length", _non_negative("Cylinder length", self.length))

    def to_ir(self) -> g.Cylinder:
        return g.Cylinder(self.radius, self.length)

    def to_xml(self, indent: str = "") -> str:
        """``<cylinder radius="…" length="…"/>``."""
        return render(_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Sphere:
    """A sphere centred on its frame; radius in metres (≥ 0)."""

    radius: float

    def __post_init__(self) -> None:
        _set(self, "radius", _non_negative("Sphere radius", self.radius))

    def to_ir(self) -> g.Sphere:
        return g.Sphere(self.radius)

    def to_xml(self, indent: str = "") -> str:
        """``<sphere radius="…"/>``."""
        return render(_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Mesh:
    """A mesh file (a URI such as ``package://pkg/meshes/part.stl``) and its scale.

    ``scale`` is one factor for all three axes or an ``(x, y, z)`` triple (finite; a negative
    component mirrors the mesh, which URDF allows).
    """

    filename: str
    scale: float | Vec3 = 1.0

    def __post_init__(self) -> None:
        _set(self, "filename", _name("Mesh filename", self.filename))
        if isinstance(self.scale, numbers.Real) and not isinstance(self.scale, bool):
            _set(self, "scale", _number("Mesh scale", self.scale))
        else:
            _set(self, "scale", _vec3("Mesh scale", self.scale))

    def to_ir(self) -> g.Mesh:
        """The IR's form: one factor in ``scale``; a non-uniform triple also in ``extra_scale_xyz``."""
        if isinstance(self.scale, tuple):
            x, y, z = self.scale
            if x == y == z:
                return g.Mesh(self.filename, x)
            return g.Mesh(self.filename, x, (x, y, z))
        return g.Mesh(self.filename, self.scale)

    def to_xml(self, indent: str = "") -> str:
        """``<mesh filename="…" scale="…"/>`` (no scale when it is 1)."""
        return render(_ELEMENTS.geometry(self.to_ir()), indent)


Geometry = Box | Cylinder | Sphere | Mesh
_GEOMETRY_TYPES = (Box, Cylinder, Sphere, Mesh)


# ------------------------------------------------------------------------------ appearance
@dataclass(frozen=True)
class Material:
    """A visual material: a colour (``rgba``, each component in [0, 1]) or a texture file.

    ``rgba`` and ``texture`` are mutually exclusive.  With neither, the material is a
    reference to a material of that name defined elsewhere in the robot.  ``name`` may be
    ``None`` for an anonymous colour written inside one visual (bb_robot writes
    ``name=""``); only named materials can be shared at the top of a robot.
    """

    name: str | None
    rgba: Rgba | None = None
    texture: str | None = None

    def __post_init__(self) -> None:
        label = "Material" if self.name is None else f"Material {self.name!r}"
        _set(self, "name", _optional_name("Material name", self.name))
        if self.rgba is not None and self.texture is not None:
            raise AuthoringError(f"{label}: give rgba or texture, not both")
        if self.rgba is not None:
            rgba = _vector(f"{label} rgba", self.rgba, 4)
            for value in rgba:
                if not 0.0 <= value <= 1.0:
                    raise AuthoringError(f"{label} rgba {rgba!r}: the component {value!r} is outside [0, 1]")
            _set(self, "rgba", rgba)
        if self.texture is not None:
            _set(self, "texture", _name(f"{label} texture", self.texture))

    @property
    def is_reference(self) -> bool:
        """Neither colour nor texture: a reference to a material defined elsewhere by name."""
        return self.rgba is None and self.texture is None

    def to_ir(self) -> g.Material:
        color = g.Color(*self.rgba) if self.rgba is not None else None
        return g.Material(self.name, color, self.texture)

    def to_xml(self, indent: str = "") -> str:
        """The ``<material name="…">`` block with its ``<color>`` or ``<texture>``."""
        if self.name is not None:
            return render(_ELEMENTS.material_definition(self.name, self.to_ir()), indent)
        element = ET.Element("material", name="")
        _ELEMENTS.material_body(element, self.to_ir(), "<material>")
        return render(element, indent)


@dataclass(frozen=True)
class Visual:
    """What a link looks like: a geometry, its pose in the link frame, a material, a name.

    ``origin=None`` writes no ``<origin>`` (URDF reads the identity).
    """

    geometry: Geometry
    origin: Origin | None = field(default_factory=Origin)
    material: Material | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        _instance("Visual geometry", self.geometry, _GEOMETRY_TYPES)
        if self.origin is not None:
            _instance("Visual origin", self.origin, (Origin,))
        if self.material is not None:
            _instance("Visual material", self.material, (Material,))
        if self.name is not None:
            _set(self, "name", _name("Visual name", self.name))

    def to_ir(self) -> g.Visual:
        origin = self.origin.to_ir() if self.origin is not None else None
        material = self.material.to_ir() if self.material is not None else None
        return g.Visual(self.name, origin, self.geometry.to_ir(), material)

    def to_xml(self, indent: str = "") -> str:
        """The ``<visual>`` block; its material is written in full (inside a robot, a shared
        material is written once at the top and referenced by name)."""
        return render(_ELEMENTS.visual(self.to_ir()), indent)


@dataclass(frozen=True)
class Collision:
    """The shape physics engines use for a link; ``origin=None`` writes no ``<origin>``."""

    geometry: Geometry
    origin: Origin | None = field(default_factory=Origin)
    name: str | None = None

    def __post_init__(self) -> None:
        _instance("Collision geometry", self.geometry, _GEOMETRY_TYPES)
        if self.origin is not None:
            _instance("Collision origin", self.origin, (Origin,))
        if self.name is not None:
            _set(self, "name", _name("Collision name", self.name))

    def to_ir(self) -> g.Collision:
        origin = self.origin.to_ir() if self.origin is not None else None
        return g.Collision(self.name, origin, self.geometry.to_ir())

    def to_xml(self, indent: str = "") -> str:
        """The ``<collision>`` block."""
        return render(_ELEMENTS.collision(self.to_ir()), indent)


# ------------------------------------------------------------------------------ mass
@dataclass(frozen=True)
class InertiaMatrix:
    """The symmetric 3×3 inertia tensor (kg·m²) about the centre of mass, as its upper triangle.

    Components are finite; they are not otherwise checked (real descriptions carry rounding
    noise such as ``-5e-20`` on a diagonal).
    """

    ixx: float = 0.0
    ixy: float = 0.0
    ixz: float = 0.0
    iyy: float = 0.0
    iyz: float = 0.0
    izz: float = 0.0

    KEYS: ClassVar[tuple[str, ...]] = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")

    def __post_init__(self) -> None:
        for key in self.KEYS:
            _set(self, key, _number(f"InertiaMatrix {key}", getattr(self, key)))

    @property
    def rows(self) -> tuple[Vec3, Vec3, Vec3]:
        """The full matrix, row by row."""
        return (
            (self.ixx, self.ixy, self.ixz),
            (self.ixy, self.iyy, self.iyz),
            (self.ixz, self.iyz, self.izz),
        )

    def to_ir(self) -> g.Inertia:
        return g.Inertia(ixx=self.ixx, iyy=self.iyy, izz=self.izz, ixy=self.ixy, ixz=self.ixz, iyz=self.iyz)


@dataclass(frozen=True)
class Inertial:
    """Mass (kg, ≥ 0) and inertia of a link; ``origin`` places the centre of mass in the link frame.

    Prefer the factories: :meth:`from_geometry`, :meth:`from_box`, :meth:`from_cylinder`,
    :meth:`from_sphere` (solid bodies of uniform density, inertia about the centre of mass,
    every component times ``inertia_multiply``).
    """

    mass: float
    matrix: InertiaMatrix
    origin: Origin | None = field(default_factory=Origin)

    def __post_init__(self) -> None:
        _set(self, "mass", _non_negative("Inertial mass", self.mass))
        _instance("Inertial matrix", self.matrix, (InertiaMatrix,))
        if self.origin is not None:
            _instance("Inertial origin", self.origin, (Origin,))

    @staticmethod
    def _multiplier(value: float) -> float:
        return _non_negative("inertia_multiply", value)

    @classmethod
    def from_box(
        cls,
        mass: float,
        length: float,
        w: float,
        h: float,
        origin: Origin | None = None,
        inertia_multiply: float = 1.0,
    ) -> Inertial:
        """A solid box of edges ``length`` (x), ``w`` (y), ``h`` (z):
        ixx = m(w² + h²)/12, iyy = m(l² + h²)/12, izz = m(l² + w²)/12."""
        m = _non_negative("Inertial.from_box mass", mass)
        lx = _non_negative("Inertial.from_box length", length)
        ly = _non_negative("Inertial.from_box w", w)
        lz = _non_negative("Inertial.from_box h", h)
        k = cls._multiplier(inertia_multiply)
        matrix = InertiaMatrix(
            ixx=m * (ly * ly + lz * lz) / 12.0 * k,
            iyy=m * (lx * lx + lz * lz) / 12.0 * k,
            izz=m * (lx * lx + ly * ly) / 12.0 * k,
        )
        return cls(m, matrix, origin if origin is not None else Origin())

    @classmethod
    def from_cylinder(
        cls,
        mass: float,
        radius: float,
        length: float,
        origin: Origin | None = None,
        inertia_multiply: float = 1.0,
    ) -> Inertial:
        """A solid cylinder along z: ixx = iyy = m(3r² + l²)/12, izz = m r²/2."""
        m = _non_negative("Inertial.from_cylinder mass", mass)
        r = _non_negative("Inertial.from_cylinder radius", radius)
        lz = _non_negative("Inertial.from_cylinder length", length)
        k = cls._multiplier(inertia_multiply)
        across = m * (3.0 * r * r + lz * lz) / 12.0 * k
        matrix = InertiaMatrix(ixx=across, iyy=across, izz=m * r * r / 2.0 * k)
        return cls(m, matrix, origin if origin is not None else Origin())

    @classmethod
    def from_sphere(
        cls,
        mass: float,
        radius: float,
        origin: Origin | None = None,
        inertia_multiply: float = 1.0,
    ) -> Inertial:
        """A solid sphere: ixx = iyy = izz = 2 m r²/5."""
        m = _non_negative("Inertial.from_sphere mass", mass)
        r = _non_negative("Inertial.from_sphere radius", radius)
        k = cls._multiplier(inertia_multiply)
        moment = 2.0 * m * r * r / 5.0 * k
        return cls(m, InertiaMatrix(ixx=moment, iyy=moment, izz=moment), origin if origin is not None else Origin())

    @classmethod
    def from_geometry(
        cls,
        mass: float,
        geometry: Geometry,
        origin: Origin | None = None,
        inertia_multiply: float = 1.0,
    ) -> Inertial:
        """Dispatch on a :class:`Box`, :class:`Cylinder` or :class:`Sphere`; any other geometry
        (a :class:`Mesh`) raises :class:`AuthoringError` (a ``ValueError``)."""
        if isinstance(geometry, Box):
            return cls.from_box(mass, *geometry.size, origin=origin, inertia_multiply=inertia_multiply)
        if isinstance(geometry, Cylinder):
            return cls.from_cylinder(
                mass, geometry.radius, geometry.length, origin=origin, inertia_multiply=inertia_multiply
            )
        if isinstance(geometry, Sphere):
            return cls.from_sphere(mass, geometry.radius, origin=origin, inertia_multiply=inertia_multiply)
        raise AuthoringError(
            f"Inertial.from_geometry: {type(geometry).__name__} {geometry!r} is not supported "
            "(Box, Cylinder or Sphere; give a mesh's Inertial explicitly)"
        )

    def to_ir(self) -> g.Inertial:
        origin = self.origin.to_ir() if self.origin is not None else None
        return g.Inertial(origin, self.mass, self.matrix.to_ir())

    def to_xml(self, indent: str = "") -> str:
        """The ``<inertial>`` block."""
        return render(_ELEMENTS.inertial(self.to_ir()), indent)


# ------------------------------------------------------------------------------ links
@dataclass(frozen=True)
class Link:
    """A rigid body: its visuals, collisions and inertial (all optional)."""

    name: str
    visuals: tuple[Visual, ...] = ()
    collisions: tuple[Collision, ...] = ()
    inertial: Inertial | None = None

    def __init__(
        self,
        name: str,
        visuals: Iterable[Visual] = (),
        collisions: Iterable[Collision] = (),
        inertial: Inertial | None = None,
    ) -> None:
        name = _name("Link name", name)
        _set(self, "name", name)
        visuals = tuple(visuals)
        for visual in visuals:
            _instance(f"Link {name!r} visuals", visual, (Visual,))
        collisions = tuple(collisions)
        for collision in collisions:
            _instance(f"Link {name!r} collisions", collision, (Collision,))
        if inertial is not None:
            _instance(f"Link {name!r} inertial", inertial, (Inertial,))
        _set(self, "visuals", visuals)
        _set(self, "collisions", collisions)
        _set(self, "inertial", inertial)

    def to_ir(self) -> ir.Link:
        visuals = [visual.to_ir() for visual in self.visuals]
        return ir.Link(
            name=self.name,
            visual=visuals[0] if visuals else None,
            collisions=[collision.to_ir() for collision in self.collisions],
            inertial=self.inertial.to_ir() if self.inertial is not None else None,
            extra_visuals=visuals[1:],
        )

    def to_xml(self, indent: str = "") -> str:
        """The ``<link>`` block (materials written in full)."""
        return render(_ELEMENTS.link(self.to_ir()), indent)


# ------------------------------------------------------------------------------ joints
@dataclass(frozen=True, kw_only=True)
class Limit:
    """``<limit>``: position bounds (rad or m; optional), ``effort`` (N or N·m) and ``velocity``
    (rad/s or m/s), which URDF requires.  Keyword arguments only."""

    lower: float | None = None
    upper: float | None = None
    effort: float
    velocity: float

    def __post_init__(self) -> None:
        lower = _optional("Limit lower", self.lower)
        upper = _optional("Limit upper", self.upper)
        if lower is not None and upper is not None and lower > upper:
            raise AuthoringError(f"Limit: lower {lower!r} is above upper {upper!r}")
        _set(self, "lower", lower)
        _set(self, "upper", upper)
        _set(self, "effort", _non_negative("Limit effort", self.effort))
        _set(self, "velocity", _non_negative("Limit velocity", self.velocity))

    def to_ir(self) -> ir.Limit:
        return ir.Limit(self.lower, self.upper, self.effort, self.velocity)


@dataclass(frozen=True)
class Dynamics:
    """``<dynamics>``: viscous ``damping`` and static ``friction`` (each ≥ 0, or ``None``: not written)."""

    damping: float | None = None
    friction: float | None = None

    def __post_init__(self) -> None:
        _set(self, "damping", _optional_non_negative("Dynamics damping", self.damping))
        _set(self, "friction", _optional_non_negative("Dynamics friction", self.friction))

    def to_ir(self) -> _IrDynamics:
        return _IrDynamics(self.damping, self.friction)


@dataclass(frozen=True)
class Mimic:
    """``<mimic>``: the joint's value is ``multiplier * value(joint) + offset``.

    ``joint`` is the followed :class:`Joint` or its name.
    """

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0

    def __init__(self, joint: Joint | str, multiplier: float = 1.0, offset: float = 0.0) -> None:
        _set(self, "joint", _name("Mimic joint", joint.name if isinstance(joint, Joint) else joint))
        _set(self, "multiplier", _number("Mimic multiplier", multiplier))
        _set(self, "offset", _number("Mimic offset", offset))

    def to_ir(self) -> _IrMimic:
        return _IrMimic(self.joint, self.multiplier, self.offset)


@dataclass(frozen=True)
class SafetyController:
    """``<safety_controller>``: soft position limits and the gains a driver uses near them."""

    k_velocity: float
    k_position: float = 0.0
    soft_lower_limit: float = 0.0
    soft_upper_limit: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "k_velocity", _non_negative("SafetyController k_velocity", self.k_velocity))
        _set(self, "k_position", _non_negative("SafetyController k_position", self.k_position))
        lower = _number("SafetyController soft_lower_limit", self.soft_lower_limit)
        upper = _number("SafetyController soft_upper_limit", self.soft_upper_limit)
        if lower > upper:
            raise AuthoringError(f"SafetyController: soft_lower_limit {lower!r} is above soft_upper_limit {upper!r}")
        _set(self, "soft_lower_limit", lower)
        _set(self, "soft_upper_limit", upper)

    def to_ir(self) -> ir.SafetyController:
        return ir.SafetyController(self.k_velocity, self.k_position, self.soft_lower_limit, self.soft_upper_limit)


@dataclass(frozen=True)
class Joint:
    """A joint of any URDF type between a ``parent`` and a ``child`` link (a :class:`Link` or a name).

    ``origin`` places the joint frame in the parent link frame (``None``: no ``<origin>``
    is written; URDF reads the identity, as for the default ``Origin()``).  ``axis`` (in the
    joint frame, any non-zero length) belongs to revolute, continuous, prismatic and planar
    joints; ``None`` means URDF's default ``(1, 0, 0)``.
    Revolute and prismatic joints need a :class:`Limit`.
    """

    name: str
    type: JointType
    parent: str
    child: str
    origin: Origin | None = field(default_factory=Origin)
    axis: Vec3 | None = None
    limit: Limit | None = None
    dynamics: Dynamics | None = None
    mimic: Mimic | None = None
    safety_controller: SafetyController | None = None

    def __init__(
        self,
        name: str,
        type: JointType | str,
        parent: Link | str,
        child: Link | str,
        origin: Origin | None = Origin(),
        axis: Sequence[float] | None = None,
        limit: Limit | None = None,
        dynamics: Dynamics | None = None,
        mimic: Mimic | None = None,
        safety_controller: SafetyController | None = None,
    ) -> None:
        name = _name("Joint name", name)
        label = f"Joint {name!r}"
        if type not in JOINT_TYPES:
            raise AuthoringError(f"{label}: type {type!r} is not a URDF joint type ({', '.join(JOINT_TYPES)})")
        parent_name = _name(f"{label} parent", parent.name if isinstance(parent, Link) else parent)
        child_name = _name(f"{label} child", child.name if isinstance(child, Link) else child)
        if parent_name == child_name:
            raise AuthoringError(f"{label}: parent and child are the same link {parent_name!r}")
        if origin is not None:
            _instance(f"{label} origin", origin, (Origin,))
        unit: Vec3 | None = None
        if axis is not None:
            if type not in _AXIS_TYPES:
                raise AuthoringError(f"{label}: a {type} joint has no axis (got {axis!r})")
            unit = _vec3(f"{label} axis", axis)
            if unit == (0.0, 0.0, 0.0):
                raise AuthoringError(f"{label}: the axis {unit!r} has zero length")
        if limit is None and type in _LIMITED_TYPES:
            raise AuthoringError(
                f"{label}: a {type} joint needs a limit (Limit(lower=…, upper=…, effort=…, velocity=…))"
            )
        part: object
        for what, part, kind in (
            ("limit", limit, Limit),
            ("dynamics", dynamics, Dynamics),
            ("mimic", mimic, Mimic),
            ("safety_controller", safety_controller, SafetyController),
        ):
            if part is not None:
                _instance(f"{label} {what}", part, (kind,))
        if mimic is not None and mimic.joint == name:
            raise AuthoringError(f"{label}: a joint cannot mimic itself")
        for key, part in (
            ("name", name),
            ("type", type),
            ("parent", parent_name),
            ("child", child_name),
            ("origin", origin),
            ("axis", unit),
            ("limit", limit),
            ("dynamics", dynamics),
            ("mimic", mimic),
            ("safety_controller", safety_controller),
        ):
            _set(self, key, part)

    def to_ir(self) -> ir.Joint:
        axis: Vec3 | None = None
        if self.type in _AXIS_TYPES:
            axis = self.axis if self.axis is not None else (1.0, 0.0, 0.0)
        return ir.Joint(
            name=self.name,
            type=self.type,
            parent=self.parent,
            child=self.child,
            origin=self.origin.to_ir() if self.origin is not None else None,
            axis=axis,
            limit=self.limit.to_ir() if self.limit is not None else None,
            dynamics=self.dynamics.to_ir() if self.dynamics is not None else None,
            mimic=self.mimic.to_ir() if self.mimic is not None else None,
            safety_controller=self.safety_controller.to_ir() if self.safety_controller is not None else None,
        )

    def to_xml(self, indent: str = "") -> str:
        """The ``<joint>`` block."""
        return render(_ELEMENTS.joint(self.to_ir()), indent)


# ------------------------------------------------------------------------------ transmissions
@dataclass(frozen=True)
class Transmission:
    """A simple transmission: ``actuator`` drives ``joint`` (a :class:`Joint` or its name)
    through a gear ``reduction`` (non-zero; negative for a reversed drive), with the joint
    ``offset`` of ros2_control.  ``name`` and ``actuator`` may be ``None`` (not written; a
    nameless transmission is known by its joint).  ``hardware_interface`` is written in the
    joint's ``<hardwareInterface>``.
    """

    name: str | None
    joint: str
    actuator: str | None = None
    reduction: float = 1.0
    offset: float = 0.0
    hardware_interface: str = POSITION_INTERFACE

    def __init__(
        self,
        name: str | None,
        joint: Joint | str,
        actuator: str | None = None,
        reduction: float = 1.0,
        offset: float = 0.0,
        hardware_interface: str = POSITION_INTERFACE,
    ) -> None:
        name = _optional_name("Transmission name", name)
        label = "Transmission" if name is None else f"Transmission {name!r}"
        _set(self, "name", name)
        _set(self, "joint", _name(f"{label} joint", joint.name if isinstance(joint, Joint) else joint))
        _set(self, "actuator", _optional_name(f"{label} actuator", actuator))
        ratio = _number(f"{label} reduction", reduction)
        if ratio == 0.0:
            raise AuthoringError(f"{label}: reduction 0 would decouple actuator and joint (negative reverses)")
        _set(self, "reduction", ratio)
        _set(self, "offset", _number(f"{label} offset", offset))
        _set(self, "hardware_interface", _name(f"{label} hardware_interface", hardware_interface))

    @property
    def key(self) -> str:
        """The transmission's name, or its joint's for a nameless one (how the IR keys them)."""
        return self.name if self.name is not None else self.joint

    def to_ir(self) -> ir.Transmission:
        return ir.Transmission(self.name, self.joint, self.actuator, self.reduction, self.offset)

    def to_xml(self, indent: str = "") -> str:
        """The ``<transmission>`` block (``transmission_interface/SimpleTransmission``)."""
        return render(_ELEMENTS.transmission(self.to_ir(), self.hardware_interface), indent)


# ------------------------------------------------------------------------------ robot
@dataclass(frozen=True)
class Robot:
    """A robot: links, joints, transmissions and the materials defined at the top.

    Checked when made: a non-empty name; unique link, joint, transmission and material
    names; every joint's parent and child defined (a parent :data:`WORLD` may be left
    undefined: the world anchor); the links form one tree (one parent joint per link, no
    loops, one root).  Left as written, like URDF parsers do, and reported by
    :meth:`to_model`: a mimic of a joint the robot does not define (cut-down descriptions
    have them) or mimics following each other in a loop, and a transmission of an undefined
    joint (which the model skips with a warning).

    ``materials``: ``None`` (the default) defines every named material with a colour or
    texture that the visuals use once at the top and references it by name (two different
    materials of one name, or a reference to a name nothing defines, are errors).  A list
    defines exactly those materials at the top; visuals whose material equals one of them
    reference it, the others are written inside the visual (this keeps an imported
    file's materials as it had them).
    """

    name: str
    links: tuple[Link, ...] = ()
    joints: tuple[Joint, ...] = ()
    transmissions: tuple[Transmission, ...] = ()
    materials: tuple[Material, ...] | None = None
    _top: dict[str, Material] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        name: str,
        links: Iterable[Link] = (),
        joints: Iterable[Joint] = (),
        transmissions: Iterable[Transmission] = (),
        materials: Iterable[Material] | None = None,
    ) -> None:
        name = _name("Robot name", name)
        _set(self, "name", name)
        label = f"Robot {name!r}"
        links = tuple(links)
        joints = tuple(joints)
        transmissions = tuple(transmissions)
        for kind, items, cls in (
            ("links", links, Link),
            ("joints", joints, Joint),
            ("transmissions", transmissions, Transmission),
        ):
            for item in items:
                _instance(f"{label} {kind}", item, (cls,))
        _unique(label, "link", [link.name for link in links])
        _unique(label, "joint", [joint.name for joint in joints])
        _unique(label, "transmission", [t.key for t in transmissions])
        _set(self, "links", links)
        _set(self, "joints", joints)
        _set(self, "transmissions", transmissions)
        _set(self, "materials", None)
        if materials is not None:
            materials = tuple(materials)
            for material in materials:
                _instance(f"{label} materials", material, (Material,))
                if material.name is None:
                    raise AuthoringError(f"{label}: a material defined at the top needs a name (got {material!r})")
            _unique(label, "material", [m.name or "" for m in materials])
            _set(self, "materials", materials)
        self._check_tree(label)
        _set(self, "_top", self._top_materials(label))

    # -- checks ------------------------------------------------------------------------------
    def _check_tree(self, label: str) -> None:
        defined = {link.name for link in self.links}
        problems: list[str] = []
        for joint in self.joints:
            for role, link in (("parent", joint.parent), ("child", joint.child)):
                if link not in defined and not (role == "parent" and link == WORLD):
                    problems.append(f"joint {joint.name!r} names {role} link {link!r}, which the robot does not define")
        if problems:
            known = ", ".join(repr(n) for n in sorted(defined)) or "none"
            raise AuthoringError(f"{label}: " + "; ".join(problems) + f" (its links: {known})")
        if not self.links:
            return
        names = [link.name for link in self.links]
        if WORLD not in defined and any(joint.parent == WORLD for joint in self.joints):
            names.insert(0, WORLD)
        edges = [(joint.name, joint.parent, joint.child) for joint in self.joints]
        tree_problems, _ = find_problems(names, edges, {})
        if tree_problems:
            raise AuthoringError(f"{label}: " + "; ".join(p.message for p in tree_problems))

    def _top_materials(self, label: str) -> dict[str, Material]:
        if self.materials is not None:
            return {m.name: m for m in self.materials if m.name is not None}
        top: dict[str, Material] = {}
        references: list[tuple[str, str]] = []
        for link in self.links:
            for visual in link.visuals:
                material = visual.material
                if material is None or material.name is None:
                    continue
                if material.is_reference:
                    references.append((link.name, material.name))
                    continue
                known = top.setdefault(material.name, material)
                if known != material:
                    raise AuthoringError(
                        f"{label}: material {material.name!r} has two definitions ({known!r} and {material!r}); "
                        "give them different names, or pass materials=[...] to write the others inside their visuals"
                    )
        for link_name, material_name in references:
            if material_name not in top:
                raise AuthoringError(
                    f"{label}: a visual of link {link_name!r} refers to material {material_name!r}, which no "
                    "visual defines (give it rgba or texture, or pass materials=[...] that define it)"
                )
        return top

    # -- output ------------------------------------------------------------------------------
    @property
    def top_materials(self) -> tuple[Material, ...]:
        """The materials written at the top of the document (``materials``, or the ones collected)."""
        return tuple(self._top.values())

    def link(self, name: str) -> Link:
        """The link called ``name`` (``KeyError`` if there is none)."""
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(name)

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (``KeyError`` if there is none)."""
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)

    def to_ir(self) -> ir.Robot:
        """The intermediate representation the URDF text parses to.

        As the parser does, a material reference (a name, no colour or texture) becomes the
        material of that name defined at the top, else the first one defined in a visual."""
        top = {m.name: m.to_ir() for m in self.top_materials if m.name is not None}
        defined = dict(top)
        for link in self.links:
            for visual in link.visuals:
                material = visual.material
                if material is not None and material.name is not None and not material.is_reference:
                    defined.setdefault(material.name, material.to_ir())
        links = []
        for link in self.links:
            converted = link.to_ir()
            visuals = [_resolved(v, defined) for v in (converted.visual, *converted.extra_visuals) if v is not None]
            converted.visual = visuals[0] if visuals else None
            converted.extra_visuals = visuals[1:]
            links.append(converted)
        return ir.Robot(
            name=self.name,
            links=links,
            joints=[joint.to_ir() for joint in self.joints],
            transmissions={t.key: t.to_ir() for t in self.transmissions},
            materials=top,
        )

    def _element(self, comment: str | None) -> ET.Element:
        doc = self.to_ir()
        interfaces: Mapping[str, str] = {t.key: t.hardware_interface for t in self.transmissions}
        return UrdfElements(self.name, None, doc.materials).robot(doc, hardware_interface=interfaces, comment=comment)

    def to_xml(self, indent: str = "") -> str:
        """The ``<robot>`` element: top-level materials, links, joints, transmissions."""
        return render(self._element(None), indent)

    def to_urdf(self, comment: str | None = None) -> str:
        """The URDF document: XML declaration, ``<robot>`` (with ``comment`` as an XML comment
        at its top, e.g. "generated by …"), final newline."""
        if comment is not None and ("--" in comment or comment.endswith("-")):
            raise AuthoringError(f"Robot {self.name!r}: an XML comment cannot hold '--' or end with '-': {comment!r}")
        return urdf_document(self._element(comment))

    def to_model(self, *, drop_world: bool = False) -> ModelRobot:
        """The robot model (:class:`bb_robot.model.robot.Robot`), built by the URDF builder
        (:func:`bb_robot.urdf.builder.build_robot`) from :meth:`to_ir`; raises
        :class:`~bb_robot.model.errors.InvalidRobot` for what the model refuses (e.g. a mimic
        of an undefined joint)."""
        from bb_robot.urdf.builder import build_robot

        return build_robot(self.to_ir(), drop_world=drop_world)


def _resolved(visual: g.Visual, defined: Mapping[str, g.Material]) -> g.Visual:
    material = visual.material
    if material is None or material.name is None or material.color is not None or material.texture is not None:
        return visual
    found = defined.get(material.name)
    return visual if found is None else g.Visual(visual.name, visual.origin, visual.geometry, found)


def _unique(label: str, kind: str, names: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in seen:
            raise AuthoringError(f"{label}: two {kind}s are named {name!r} (numbers {seen[name] + 1} and {index + 1})")
        seen[name] = index
