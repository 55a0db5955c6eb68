"""Authoring elements for joints (with limits, dynamics, mimic and safety controller) and
the transmissions that drive them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bb_robot.authoring.checks import (
    URDF_ELEMENTS,
    AuthoringError,
    Vec3,
    check_instance,
    check_name,
    check_non_negative,
    check_number,
    check_optional,
    check_optional_name,
    check_optional_non_negative,
    check_vec3,
    set_field,
)
from bb_robot.authoring.links import Link
from bb_robot.authoring.shapes import Origin
from bb_robot.model.robot import JOINT_TYPES, JointType
from bb_robot.model.robot import Dynamics as _IrDynamics
from bb_robot.model.robot import Mimic as _IrMimic
from bb_robot.urdf import ir
from bb_robot.urdf.writer import render

POSITION_INTERFACE = "hardware_interface/PositionJointInterface"
"""The default ``<hardwareInterface>`` of a :class:`Transmission`."""


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
        lower = check_optional("Limit lower", self.lower)
        upper = check_optional("Limit upper", self.upper)
        if lower is not None and upper is not None and lower > upper:
            raise AuthoringError(f"Limit: lower {lower!r} is above upper {upper!r}")
        set_field(self, "lower", lower)
        set_field(self, "upper", upper)
        set_field(self, "effort", check_non_negative("Limit effort", self.effort))
        set_field(self, "velocity", check_non_negative("Limit velocity", self.velocity))

    def to_ir(self) -> ir.Limit:
        return ir.Limit(self.lower, self.upper, self.effort, self.velocity)


@dataclass(frozen=True)
class Dynamics:
    """``<dynamics>``: viscous ``damping`` and static ``friction`` (each ≥ 0, or ``None``: not written)."""

    damping: float | None = None
    friction: float | None = None

    def __post_init__(self) -> None:
        set_field(self, "damping", check_optional_non_negative("Dynamics damping", self.damping))
        set_field(self, "friction", check_optional_non_negative("Dynamics friction", self.friction))

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
        set_field(self, "joint", check_name("Mimic joint", joint.name if isinstance(joint, Joint) else joint))
        set_field(self, "multiplier", check_number("Mimic multiplier", multiplier))
        set_field(self, "offset", check_number("Mimic offset", offset))

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
        set_field(self, "k_velocity", check_non_negative("SafetyController k_velocity", self.k_velocity))
        set_field(self, "k_position", check_non_negative("SafetyController k_position", self.k_position))
        lower = check_number("SafetyController soft_lower_limit", self.soft_lower_limit)
        upper = check_number("SafetyController soft_upper_limit", self.soft_upper_limit)
        if lower > upper:
            raise AuthoringError(f"SafetyController: soft_lower_limit {lower!r} is above soft_upper_limit {upper!r}")
        set_field(self, "soft_lower_limit", lower)
        set_field(self, "soft_upper_limit", upper)

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
        name = check_name("Joint name", name)
        label = f"Joint {name!r}"
        if type not in JOINT_TYPES:
            raise AuthoringError(f"{label}: type {type!r} is not a URDF joint type ({', '.join(JOINT_TYPES)})")
        parent_name = check_name(f"{label} parent", parent.name if isinstance(parent, Link) else parent)
        child_name = check_name(f"{label} child", child.name if isinstance(child, Link) else child)
        if parent_name == child_name:
            raise AuthoringError(f"{label}: parent and child are the same link {parent_name!r}")
        if origin is not None:
            check_instance(f"{label} origin", origin, (Origin,))
        unit: Vec3 | None = None
        if axis is not None:
            if type not in ir.AXIS_TYPES:
                raise AuthoringError(f"{label}: a {type} joint has no axis (got {axis!r})")
            unit = check_vec3(f"{label} axis", axis)
            if unit == (0.0, 0.0, 0.0):
                raise AuthoringError(f"{label}: the axis {unit!r} has zero length")
        if limit is None and type in ir.BOUNDED_TYPES:
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
                check_instance(f"{label} {what}", part, (kind,))
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
            set_field(self, key, part)

    def to_ir(self) -> ir.Joint:
        axis: Vec3 | None = None
        if self.type in ir.AXIS_TYPES:
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
        return render(URDF_ELEMENTS.joint(self.to_ir()), indent)


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
        name = check_optional_name("Transmission name", name)
        label = "Transmission" if name is None else f"Transmission {name!r}"
        set_field(self, "name", name)
        set_field(self, "joint", check_name(f"{label} joint", joint.name if isinstance(joint, Joint) else joint))
        set_field(self, "actuator", check_optional_name(f"{label} actuator", actuator))
        ratio = check_number(f"{label} reduction", reduction)
        if ratio == 0.0:
            raise AuthoringError(f"{label}: reduction 0 would decouple actuator and joint (negative reverses)")
        set_field(self, "reduction", ratio)
        set_field(self, "offset", check_number(f"{label} offset", offset))
        set_field(self, "hardware_interface", check_name(f"{label} hardware_interface", hardware_interface))

    @property
    def key(self) -> str:
        """The transmission's name, or its joint's for a nameless one (how the IR keys them)."""
        return self.name if self.name is not None else self.joint

    def to_ir(self) -> ir.Transmission:
        return ir.Transmission(self.name, self.joint, self.actuator, self.reduction, self.offset)

    def to_xml(self, indent: str = "") -> str:
        """The ``<transmission>`` block (``transmission_interface/SimpleTransmission``)."""
        return render(URDF_ELEMENTS.transmission(self.to_ir(), self.hardware_interface), indent)
