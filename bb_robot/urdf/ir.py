"""The URDF intermediate representation: what :mod:`bb_robot.urdf.parser` returns.

The representation stays close to the URDF wire format: link and joint lists
are flat (joints name their parent and child links), every value is a float in
SI base units, and unsupported features are collected as ``warnings`` rather
than raised.  Where a field cannot hold what a file says, it keeps its first
meaning and an ``extra_*`` field keeps the rest (documented on each class), so
nothing is lost.  ``docs/seed-traceability.md`` maps the fields to their origin.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bb_robot.model.geometry import (
    Box,
    Collision,
    Color,
    Cylinder,
    Geometry,
    Inertia,
    Inertial,
    Material,
    Mesh,
    Origin,
    Sphere,
    Vec3,
    Visual,
)
from bb_robot.model.robot import JOINT_TYPES, Dynamics, JointType, Mimic

__all__ = [
    "AXIS_TYPES",
    "BOUNDED_TYPES",
    "Box",
    "Collision",
    "Color",
    "Cylinder",
    "Geometry",
    "INERTIA_KEYS",
    "Inertia",
    "Inertial",
    "JOINT_TYPES",
    "Joint",
    "JointType",
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
    "Vec3",
    "Visual",
    "Dynamics",
]


AXIS_TYPES: frozenset[str] = frozenset(("revolute", "continuous", "prismatic", "planar"))
"""The joint types that use their ``<axis>`` (URDF's default ``1 0 0`` when it is missing)."""

INERTIA_KEYS: tuple[str, ...] = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
"""The attributes of ``<inertia>``: the tensor's upper triangle, row by row."""

BOUNDED_TYPES: frozenset[str] = frozenset(("revolute", "prismatic"))
"""The joint types URDF requires a ``<limit>`` with ``lower``/``upper`` for."""


@dataclass
class Link:
    """A URDF link.

    ``visual`` is the first ``<visual>`` (the IR's own field); any further
    visuals are kept in ``extra_visuals`` in file order, with a warning.
    """

    name: str
    visual: Visual | None = None
    collisions: list[Collision] = field(default_factory=list)
    inertial: Inertial | None = None
    extra_visuals: list[Visual] = field(default_factory=list)


@dataclass(frozen=True)
class Limit:
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None


@dataclass(frozen=True)
class SafetyController:
    """``<safety_controller>``: soft limits the driver honours (kept, not lost)."""

    k_velocity: float
    k_position: float = 0.0
    soft_lower_limit: float = 0.0
    soft_upper_limit: float = 0.0


@dataclass
class Joint:
    """A URDF joint.  ``axis`` is the unit-or-not vector as written (default ``(1, 0, 0)``
    for joints that use an axis, ``None`` for fixed and floating joints)."""

    name: str
    type: JointType
    parent: str
    child: str
    origin: Origin | None = None
    axis: Vec3 | None = None
    limit: Limit | None = None
    dynamics: Dynamics | None = None
    mimic: Mimic | None = None
    safety_controller: SafetyController | None = None


@dataclass(frozen=True)
class Transmission:
    """A simple transmission: one joint, one actuator.

    ``offset`` is ros2_control's joint ``<offset>``, 0 when absent.
    """

    name: str | None
    joint: str
    actuator: str | None
    reduction: float = 1.0
    offset: float = 0.0


@dataclass
class Robot:
    """A parsed URDF document.

    ``transmissions`` is keyed by transmission name (a nameless transmission is keyed by
    its joint name); ``materials`` holds the top-level ``<material>`` definitions by name.
    ``source`` is the file the document came from, ``None`` for a string.
    """

    name: str
    links: list[Link] = field(default_factory=list)
    joints: list[Joint] = field(default_factory=list)
    transmissions: dict[str, Transmission] = field(default_factory=dict)
    materials: dict[str, Material] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    source: str | None = None
