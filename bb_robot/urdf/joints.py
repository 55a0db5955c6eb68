"""Reading URDF joints: type, parent and child, origin, axis, limits, dynamics, mimic,
safety controller, calibration.
"""

from __future__ import annotations

from . import ir
from .errors import InvalidValueError, MissingElementError, UnknownJointTypeError
from .reading import X_AXIS, ElementReader
from .xml_safe import Node

_JOINT_TYPES: dict[str, ir.JointType] = {kind: kind for kind in ir.JOINT_TYPES}
_ONCE_IN_JOINT = frozenset({"origin", "axis", "limit", "dynamics", "mimic", "safety_controller"})


class JointReader(ElementReader):
    """Reads ``<joint>`` elements."""

    # -- joints --------------------------------------------------------------------------

    def joint(self, node: Node) -> ir.Joint:
        attrib = node.attrib
        name = attrib.get("name")
        if not name:
            raise self.missing(node, "name", None, hint='Name the joint: <joint name="shoulder" type="revolute">.')
        owner = f"joint '{name}'"
        joint_type = attrib.get("type")
        if not joint_type:
            raise self.missing(
                node,
                "type",
                owner,
                hint="Give the joint a type: " + ", ".join(ir.JOINT_TYPES) + ".",
            )
        checked_type = _JOINT_TYPES.get(joint_type)
        if checked_type is None:
            raise UnknownJointTypeError(
                joint=name,
                joint_type=joint_type,
                valid_types=ir.JOINT_TYPES,
                source=self.source,
                line=node.line,
            )
        parent: str | None = None
        child_link: str | None = None
        origin: ir.Origin | None = None
        axis_node: Node | None = None
        limit: ir.Limit | None = None
        limit_node: Node | None = None
        dynamics: ir.Dynamics | None = None
        mimic: ir.Mimic | None = None
        safety: ir.SafetyController | None = None
        for child in self.children_once(node, owner, _ONCE_IN_JOINT):
            tag = child.tag
            if tag == "parent" or tag == "child":
                link_name = child.attrib.get("link")
                if not link_name:
                    raise self.missing(child, "link", owner, hint=f'Write <{tag} link="link_name"/>.')
                if (parent if tag == "parent" else child_link) is not None:
                    self.repeated(child, owner)
                elif tag == "parent":
                    parent = link_name
                else:
                    child_link = link_name
            elif tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "axis":
                axis_node = child
            elif tag == "limit":
                limit_node = child
                limit = ir.Limit(
                    lower=self.number(child, "lower", owner),
                    upper=self.number(child, "upper", owner),
                    effort=self.number(child, "effort", owner),
                    velocity=self.number(child, "velocity", owner),
                )
            elif tag == "dynamics":
                dynamics = ir.Dynamics(
                    damping=self.number(child, "damping", owner),
                    friction=self.number(child, "friction", owner),
                )
            elif tag == "mimic":
                mimicked = child.attrib.get("joint")
                if not mimicked:
                    raise self.missing(child, "joint", owner, hint='Name the joint to follow: <mimic joint="j1"/>.')
                multiplier = self.number(child, "multiplier", owner)
                offset = self.number(child, "offset", owner)
                mimic = ir.Mimic(
                    joint=mimicked,
                    multiplier=1.0 if multiplier is None else multiplier,
                    offset=0.0 if offset is None else offset,
                )
            elif tag == "safety_controller":
                safety = ir.SafetyController(
                    k_velocity=self.required_number(child, "k_velocity", owner),
                    k_position=self.number(child, "k_position", owner) or 0.0,
                    soft_lower_limit=self.number(child, "soft_lower_limit", owner) or 0.0,
                    soft_upper_limit=self.number(child, "soft_upper_limit", owner) or 0.0,
                )
            elif tag == "calibration":
                self.warn(child.line, f"{owner}: <calibration> is not supported; skipped")
            else:
                self.unknown(child, owner, "joint")

        if parent is None:
            raise MissingElementError(
                element="joint",
                child="parent",
                owner=owner,
                source=self.source,
                line=node.line,
                hint='Add <parent link="..."/> naming the link this joint hangs from.',
            )
        if child_link is None:
            raise MissingElementError(
                element="joint",
                child="child",
                owner=owner,
                source=self.source,
                line=node.line,
                hint='Add <child link="..."/> naming the link this joint moves.',
            )

        axis: ir.Vec3 | None = None
        if joint_type in ir.AXIS_TYPES:
            axis = X_AXIS
            if axis_node is not None:
                written = self.vec3(axis_node, "xyz", owner)
                if written is not None:
                    if written[0] * written[0] + written[1] * written[1] + written[2] * written[2] < 1e-24:
                        raise InvalidValueError(
                            "the axis has zero length",
                            element="axis",
                            attribute="xyz",
                            value=axis_node.attrib["xyz"],
                            owner=owner,
                            expected="a non-zero vector",
                            source=self.source,
                            line=axis_node.line,
                            hint='Give the direction the joint moves along, e.g. xyz="0 0 1".',
                        )
                    axis = written

        if joint_type in ir.BOUNDED_TYPES:
            if limit is None:
                self.warn(
                    node.line,
                    f"{owner} ({joint_type}) has no <limit> (URDF requires one with effort "
                    "and velocity); limit is None",
                )
            else:
                assert limit_node is not None
                if limit.lower is None or limit.upper is None:
                    self.warn(
                        limit_node.line,
                        f"{owner}: <limit> has no {'lower' if limit.lower is None else 'upper'}"
                        f"{' or upper' if limit.lower is None and limit.upper is None else ''}"
                        " (URDF reads a missing bound as 0); kept as None",
                    )
                elif limit.lower > limit.upper:
                    self.warn(
                        limit_node.line,
                        f"{owner}: <limit> has lower {limit.lower} > upper {limit.upper}",
                    )
        if limit is not None and (limit.effort is None or limit.velocity is None):
            assert limit_node is not None
            absent = " and ".join(k for k in ("effort", "velocity") if getattr(limit, k) is None)
            self.warn(
                limit_node.line,
                f"{owner}: <limit> has no {absent} (URDF requires them); kept as None",
            )

        return ir.Joint(
            name=name,
            type=checked_type,
            parent=parent,
            child=child_link,
            origin=origin,
            axis=axis,
            limit=limit,
            dynamics=dynamics,
            mimic=mimic,
            safety_controller=safety,
        )
