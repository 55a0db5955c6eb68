"""Tests of :func:`bb_robot.urdf.writer.ir_to_urdf`: the intermediate representation written as URDF.

Parsing the text must give the same IR, compared through ``repr`` (every float bit for bit):
the robot's name, links (visuals, extra visuals, collisions, inertials), joints (origins as
``None`` or written, axes, limits, dynamics, mimics, safety controllers), transmissions and the
top-level materials, on every real URDF of the shared corpus and of example-robot-data.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.robot_files import urdf_params

from bb_robot.urdf import ir
from bb_robot.urdf.parser import parse_file, parse_string
from bb_robot.urdf.writer import HARDWARE_INTERFACE, ir_to_urdf


def ir_fields(doc: ir.Robot) -> dict[str, str]:
    """Everything of the IR but warnings and source, as ``repr`` text (exact floats, ``-0.0`` kept)."""
    return {
        "name": repr(doc.name),
        "links": repr(doc.links),
        "joints": repr(doc.joints),
        "transmissions": repr(doc.transmissions),
        "materials": repr(doc.materials),
    }


@pytest.mark.parametrize("path", urdf_params())
def test_ir_round_trip(path: Path) -> None:
    doc = parse_file(path)
    again = parse_string(ir_to_urdf(doc))
    assert ir_fields(again) == ir_fields(doc)


def test_hardware_interface_and_comment() -> None:
    doc = parse_string(
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>'
        "<transmission><type>transmission_interface/SimpleTransmission</type>"
        '<joint name="j"><hardwareInterface>x</hardwareInterface></joint>'
        "<mechanicalReduction>-2</mechanicalReduction></transmission></robot>"
    )
    assert doc.transmissions["j"].actuator is None
    text = ir_to_urdf(doc, comment=" hello ")
    assert "<!-- hello -->" in text
    assert f"<hardwareInterface>{HARDWARE_INTERFACE}</hardwareInterface>" in text
    assert ir_fields(parse_string(text)) == ir_fields(doc)
    custom = ir_to_urdf(doc, hardware_interface="hardware_interface/EffortJointInterface")
    assert "EffortJointInterface" in custom
