"""Authoring elements for where things are and what they look like: origins, geometry
(boxes, cylinders, spheres, meshes), materials, visuals and collisions.
"""

from __future__ import annotations

import math
import numbers
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field

from bb_robot.authoring.checks import (
    URDF_ELEMENTS,
    AuthoringError,
    Rgba,
    Vec3,
    check_instance,
    check_name,
    check_non_negative,
    check_number,
    check_optional_name,
    check_vec3,
    check_vector,
    set_field,
)
from bb_robot.model import geometry as g
from bb_robot.urdf.writer import render


# ------------------------------------------------------------------------------ origin
@dataclass(frozen=True)
class Origin:
    """Pose of a link, joint, visual, collision or centre of mass relative to its parent frame.

    ``xyz`` is the translation in metres, ``rpy`` the fixed-axis roll, pitch, yaw in radians.
    """

    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        set_field(self, "xyz", check_vec3("Origin xyz", self.xyz))
        set_field(self, "rpy", check_vec3("Origin rpy", self.rpy))

    def to_ir(self) -> g.Origin:
        return g.Origin(self.xyz, self.rpy)

    def to_xml(self, indent: str = "") -> str:
        """The single-line ``<origin xyz="…" rpy="…"/>`` element."""
        return render(URDF_ELEMENTS.origin(self.to_ir(), "<origin>"), indent)

    @classmethod
    def above(
        cls, geometry: Geometry, xy: Sequence[float] = (0.0, 0.0), rpy: Sequence[float] = (0.0, 0.0, 0.0)
    ) -> Origin:
        """An origin lifting ``geometry`` so its bottom rests on z = 0.

        z is half the height of a :class:`Box`, half the length of a :class:`Cylinder`, the
        radius of a :class:`Sphere` (in the geometry's own frame, before ``rpy``).  Any other
        geometry raises :class:`AuthoringError` (a ``ValueError``).
        """
        x, y = check_vector("Origin.above xy", xy, 2)
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
        return cls((x, y, z), check_vec3("Origin.above rpy", rpy))

    @classmethod
    def wheel(cls, xy: Sequence[float] = (0.0, 0.0), z: float = 0.0) -> Origin:
        """An origin with roll −π/2, turning a URDF cylinder (axis z) into a wheel (axis y)
        centred at ``(x, y, z)``: the disc lies in the xz plane and rolls along x."""
        x, y = check_vector("Origin.wheel xy", xy, 2)
        return cls((x, y, check_number("Origin.wheel z", z)), (-math.pi / 2.0, 0.0, 0.0))


# ------------------------------------------------------------------------------ geometry
@dataclass(frozen=True)
class Box:
    """A box centred on its frame; ``size`` = (x, y, z) edge lengths in metres (each ≥ 0)."""

    size: Vec3

    def __post_init__(self) -> None:
        size = check_vec3("Box size", self.size)
        for value in size:
            if value < 0.0:
                raise AuthoringError(f"Box size {size!r}: the edge length {value!r} is negative")
        set_field(self, "size", size)

    def to_ir(self) -> g.Box:
        return g.Box(self.size)

    def to_xml(self, indent: str = "") -> str:
        """``<box size="…"/>`` (the content of ``<geometry>``)."""
        return render(URDF_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Cylinder:
    """A cylinder along its frame's z axis, centred on the frame; radius and length in metres (≥ 0)."""

    radius: float
    length: float

    def __post_init__(self) -> None:
        set_field(self, "radius", check_non_negative("Cylinder radius", self.radius))
        set_field(self, "length", check_non_negative("Cylinder length", self.length))

    def to_ir(self) -> g.Cylinder:
        return g.Cylinder(self.radius, self.length)

    def to_xml(self, indent: str = "") -> str:
        """``<cylinder radius="…" length="…"/>``."""
        return render(URDF_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Sphere:
    """A sphere centred on its frame; radius in metres (≥ 0)."""

    radius: float

    def __post_init__(self) -> None:
        set_field(self, "radius", check_non_negative("Sphere radius", self.radius))

    def to_ir(self) -> g.Sphere:
        return g.Sphere(self.radius)

    def to_xml(self, indent: str = "") -> str:
        """``<sphere radius="…"/>``."""
        return render(URDF_ELEMENTS.geometry(self.to_ir()), indent)


@dataclass(frozen=True)
class Mesh:
    """A mesh file (a URI such as ``package://pkg/meshes/part.stl``) and its scale.

    ``scale`` is one factor for all three axes or an ``(x, y, z)`` triple (finite; a negative
    component mirrors the mesh, which URDF allows).
    """

    filename: str
    scale: float | Vec3 = 1.0

    def __post_init__(self) -> None:
        set_field(self, "filename", check_name("Mesh filename", self.filename))
        if isinstance(self.scale, numbers.Real) and not isinstance(self.scale, bool):
            set_field(self, "scale", check_number("Mesh scale", self.scale))
        else:
            set_field(self, "scale", check_vec3("Mesh scale", self.scale))

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
        return render(URDF_ELEMENTS.geometry(self.to_ir()), indent)


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
        set_field(self, "name", check_optional_name("Material name", self.name))
        if self.rgba is not None and self.texture is not None:
            raise AuthoringError(f"{label}: give rgba or texture, not both")
        if self.rgba is not None:
            rgba = check_vector(f"{label} rgba", self.rgba, 4)
            for value in rgba:
                if not 0.0 <= value <= 1.0:
                    raise AuthoringError(f"{label} rgba {rgba!r}: the component {value!r} is outside [0, 1]")
            set_field(self, "rgba", rgba)
        if self.texture is not None:
            set_field(self, "texture", check_name(f"{label} texture", self.texture))

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
            return render(URDF_ELEMENTS.material_definition(self.name, self.to_ir()), indent)
        element = ET.Element("material", name="")
        URDF_ELEMENTS.material_body(element, self.to_ir(), "<material>")
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
        check_instance("Visual geometry", self.geometry, _GEOMETRY_TYPES)
        if self.origin is not None:
            check_instance("Visual origin", self.origin, (Origin,))
        if self.material is not None:
            check_instance("Visual material", self.material, (Material,))
        if self.name is not None:
            set_field(self, "name", check_name("Visual name", self.name))

    def to_ir(self) -> g.Visual:
        origin = self.origin.to_ir() if self.origin is not None else None
        material = self.material.to_ir() if self.material is not None else None
        return g.Visual(self.name, origin, self.geometry.to_ir(), material)

    def to_xml(self, indent: str = "") -> str:
        """The ``<visual>`` block; its material is written in full (inside a robot, a shared
        material is written once at the top and referenced by name)."""
        return render(URDF_ELEMENTS.visual(self.to_ir()), indent)


@dataclass(frozen=True)
class Collision:
    """The shape physics engines use for a link; ``origin=None`` writes no ``<origin>``."""

    geometry: Geometry
    origin: Origin | None = field(default_factory=Origin)
    name: str | None = None

    def __post_init__(self) -> None:
        check_instance("Collision geometry", self.geometry, _GEOMETRY_TYPES)
        if self.origin is not None:
            check_instance("Collision origin", self.origin, (Origin,))
        if self.name is not None:
            set_field(self, "name", check_name("Collision name", self.name))

    def to_ir(self) -> g.Collision:
        origin = self.origin.to_ir() if self.origin is not None else None
        return g.Collision(self.name, origin, self.geometry.to_ir())

    def to_xml(self, indent: str = "") -> str:
        """The ``<collision>`` block."""
        return render(URDF_ELEMENTS.collision(self.to_ir()), indent)
