"""Shapes, materials and mass properties shared by every description format.

Plain immutable values in SI units (metres, radians, kilograms, kg·m²).  The
URDF intermediate representation (``bb_robot.urdf.ir``) and the robot model
(``bb_robot.model.robot``) both use them, so a value read from a file reaches
the model without conversion.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class Origin:
    """A pose: translation ``xyz`` in metres, then fixed-axis roll, pitch, yaw in radians."""

    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Box:
    size: Vec3


@dataclass(frozen=True)
class Cylinder:
    radius: float
    length: float


@dataclass(frozen=True)
class Sphere:
    radius: float


@dataclass(frozen=True)
class Mesh:
    """A mesh file.

    ``scale`` is a single uniform factor.  A file with a non-uniform
    ``scale="sx sy sz"`` keeps ``sx`` in ``scale`` (with a warning) and all three
    components in ``extra_scale_xyz``; for uniform scales ``extra_scale_xyz`` is
    ``None``.
    """

    filename: str
    scale: float = 1.0
    extra_scale_xyz: Vec3 | None = None


Geometry = Box | Cylinder | Sphere | Mesh


@dataclass(frozen=True)
class Color:
    red: float
    green: float
    blue: float
    alpha: float


@dataclass(frozen=True)
class Material:
    name: str | None = None
    color: Color | None = None
    texture: str | None = None


@dataclass(frozen=True)
class Visual:
    name: str | None = None
    origin: Origin | None = None
    geometry: Geometry | None = None
    material: Material | None = None


@dataclass(frozen=True)
class Collision:
    name: str | None = None
    origin: Origin | None = None
    geometry: Geometry | None = None


@dataclass(frozen=True)
class Inertia:
    ixx: float = 0.0
    iyy: float = 0.0
    izz: float = 0.0
    ixy: float = 0.0
    ixz: float = 0.0
    iyz: float = 0.0


@dataclass(frozen=True)
class Inertial:
    origin: Origin | None = None
    mass: float | None = None
    inertia: Inertia = field(default_factory=Inertia)
