"""Authoring elements for links: the mass properties (inertia matrix, inertial with its
solid-body factories) and the link itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from bb_robot.authoring.checks import (
    URDF_ELEMENTS,
    AuthoringError,
    Vec3,
    check_instance,
    check_name,
    check_non_negative,
    check_number,
    set_field,
)
from bb_robot.authoring.shapes import Box, Collision, Cylinder, Geometry, Origin, Sphere, Visual
from bb_robot.model import geometry as g
from bb_robot.urdf import ir
from bb_robot.urdf.writer import render


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

    KEYS: ClassVar[tuple[str, ...]] = ir.INERTIA_KEYS

    def __post_init__(self) -> None:
        for key in self.KEYS:
            set_field(self, key, check_number(f"InertiaMatrix {key}", getattr(self, key)))

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
        set_field(self, "mass", check_non_negative("Inertial mass", self.mass))
        check_instance("Inertial matrix", self.matrix, (InertiaMatrix,))
        if self.origin is not None:
            check_instance("Inertial origin", self.origin, (Origin,))

    @staticmethod
    def _multiplier(value: float) -> float:
        return check_non_negative("inertia_multiply", value)

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
        m = check_non_negative("Inertial.from_box mass", mass)
        lx = check_non_negative("Inertial.from_box length", length)
        ly = check_non_negative("Inertial.from_box w", w)
        lz = check_non_negative("Inertial.from_box h", h)
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
        m = check_non_negative("Inertial.from_cylinder mass", mass)
        r = check_non_negative("Inertial.from_cylinder radius", radius)
        lz = check_non_negative("Inertial.from_cylinder length", length)
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
        m = check_non_negative("Inertial.from_sphere mass", mass)
        r = check_non_negative("Inertial.from_sphere radius", radius)
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
        return render(URDF_ELEMENTS.inertial(self.to_ir()), indent)


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
        name = check_name("Link name", name)
        set_field(self, "name", name)
        visuals = tuple(visuals)
        for visual in visuals:
            check_instance(f"Link {name!r} visuals", visual, (Visual,))
        collisions = tuple(collisions)
        for collision in collisions:
            check_instance(f"Link {name!r} collisions", collision, (Collision,))
        if inertial is not None:
            check_instance(f"Link {name!r} inertial", inertial, (Inertial,))
        set_field(self, "visuals", visuals)
        set_field(self, "collisions", collisions)
        set_field(self, "inertial", inertial)

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
        return render(URDF_ELEMENTS.link(self.to_ir()), indent)
