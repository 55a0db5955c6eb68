"""Reading URDF transmissions: simple ones (one joint, at most one actuator) become
:class:`~bb_robot.urdf.ir.Transmission`; others are skipped with a warning.
"""

from __future__ import annotations

from . import ir
from .errors import InvalidValueError, MissingAttributeError
from .reading import ElementReader, owner_of
from .xml_safe import Node


class TransmissionReader(ElementReader):
    """Reads ``<transmission>`` elements."""

    # -- transmissions -----------------------------------------------------------------

    def transmission(self, node: Node) -> ir.Transmission | None:
        """The simple transmission ``node`` describes, or ``None`` (skipped or dropped, with a warning).

        A bad value inside it (a reduction that is not a number, a joint without a name) drops the
        transmission with a warning naming file, line and element: TF and the other joints do not
        need it.
        """
        try:
            return self._read(node)
        except (InvalidValueError, MissingAttributeError) as error:
            self.tolerate(error, node, "the transmission is dropped (not needed for TF or to drive the joints)")
            return None

    def _read(self, node: Node) -> ir.Transmission | None:
        name = node.attrib.get("name") or None
        owner = owner_of("transmission", name)
        kind = node.attrib.get("type")
        joints: list[Node] = []
        actuators: list[Node] = []
        reduction_node: Node | None = None
        for child in node.children:
            tag = child.tag
            if tag == "type":
                kind = child.text.strip()
            elif tag == "joint":
                joints.append(child)
            elif tag == "actuator":
                actuators.append(child)
            elif tag == "mechanicalReduction":  # the old (ROS 1 "pr2") layout keeps it here
                reduction_node = child
        if kind is not None and not kind.endswith("SimpleTransmission"):
            self.warn(
                node.line,
                f"{owner}: type '{kind}' is not supported (only simple transmissions); skipped",
            )
            return None
        if len(joints) != 1 or len(actuators) > 1:
            self.warn(
                node.line,
                f"{owner} has {len(joints)} joints and {len(actuators)} actuators; only simple "
                "transmissions (one joint, at most one actuator) are supported; skipped",
            )
            return None
        if kind is None:
            self.warn(node.line, f"{owner} has no <type>; read as a simple transmission")
        joint_node = joints[0]
        joint_name = joint_node.attrib.get("name")
        if not joint_name:
            raise self.missing(joint_node, "name", owner, hint='Name the joint: <joint name="j1">.')
        offset = 0.0
        for child in joint_node.children:
            if child.tag == "offset":
                offset = self.text_number(child, owner)
        actuator: str | None = None
        if actuators:
            actuator = actuators[0].attrib.get("name") or None
            for child in actuators[0].children:
                if child.tag == "mechanicalReduction":
                    reduction_node = child
        reduction = 1.0 if reduction_node is None else self.text_number(reduction_node, owner)
        return ir.Transmission(name=name, joint=joint_name, actuator=actuator, reduction=reduction, offset=offset)
