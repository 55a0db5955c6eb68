"""The parser on real and hostile files: the shared corpus, example-robot-data, and a
comparison with independent readings (xml.etree counts and values, urdf_parser_py)."""

from __future__ import annotations

import math
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from bb_robot.urdf import errors, ir, parse_file

Vec3 = tuple[float, float, float]

# -- synthetic files --------------------------------------------------------------------------

# file -> substrings the message must hold (besides the file name)
REJECT_MESSAGES = {
    "empty_file.urdf": [": the document is empty"],
    "truncated.urdf": [":5:", "malformed XML", "<joint> opened at line 5 is not closed"],
    "unclosed_tag.urdf": [":6:3:", "mismatched tag", "<link> opened at line 3 is not closed"],
    "non_numeric.urdf": [
        ":5:",
        "joint 'ab' <origin xyz=\"one two three\">",
        "'one' is not a number",
    ],
    "nan_inf.urdf": [":6:", "joint 'ab' <origin xyz=\"nan 0 0\">", "not a finite number"],
    "zero_axis.urdf": [":5:", "joint 'ab' <axis xyz=\"0 0 0\">", "zero length"],
    "unknown_joint_type.urdf": [":5:", "joint 'ab'", "'helical'", "revolute, continuous"],
    "duplicate_link.urdf": [":4:", "duplicate link name 'a'", "line 3", "line 4"],
    "billion_laughs.urdf": [":2:", "refused <!DOCTYPE>"],
    "xxe_external_entity.urdf": [":2:", "refused <!DOCTYPE>"],
}


@pytest.mark.timeout(30)  # a hang guard for hostile input, not a speed check
def test_synthetic_rejects_give_typed_errors_in_bounded_memory(
    synthetic_dir: Path, synthetic_reject: tuple[str, str]
) -> None:
    name, error_class = synthetic_reject
    path = synthetic_dir / name
    tracemalloc.start()
    try:
        with pytest.raises(errors.UrdfError) as caught:
            parse_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = caught.value
    assert type(error).__name__ == error_class
    message = str(error)
    assert message.startswith(str(path)), message
    assert error.source == str(path)
    for part in REJECT_MESSAGES[name]:
        assert part in message, (part, message)
    assert peak < 8 * 1024 * 1024


def test_xxe_does_not_read_the_file(synthetic_dir: Path) -> None:
    with pytest.raises(errors.UnsafeXmlError) as caught:
        parse_file(synthetic_dir / "xxe_external_entity.urdf")
    assert "root:" not in str(caught.value)
    assert caught.value.construct == "<!DOCTYPE> declaration"


def test_structural_problems_parse(synthetic_dir: Path, synthetic_structural: str) -> None:
    name = synthetic_structural
    result = parse_file(synthetic_dir / name)
    root = ET.parse(synthetic_dir / name).getroot()
    assert len(result.links) == len(root.findall("link"))
    assert len(result.joints) == len(root.findall("joint"))
    assert result.warnings == []


def test_structural_details(synthetic_dir: Path) -> None:
    cycle = parse_file(synthetic_dir / "cycle.urdf")
    assert [(j.parent, j.child) for j in cycle.joints] == [("a", "b"), ("b", "c"), ("c", "a")]
    missing = parse_file(synthetic_dir / "missing_link.urdf")
    assert missing.joints[0].child == "ghost"
    mimic_cycle = parse_file(synthetic_dir / "mimic_cycle.urdf")
    assert [j.mimic for j in mimic_cycle.joints] == [ir.Mimic("j2"), ir.Mimic("j1")]
    chain = parse_file(synthetic_dir / "mimic_chain.urdf")
    assert [j.mimic for j in chain.joints] == [
        None,
        ir.Mimic("j1", multiplier=2.0, offset=0.1),
        ir.Mimic("j2", multiplier=-1.0, offset=0.0),
    ]
    arm = parse_file(synthetic_dir / "x_axis_arm.urdf")
    assert [j.axis for j in arm.joints] == [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
    long_chain = parse_file(synthetic_dir / "long_chain_1000.urdf")
    assert long_chain.joints[-1].child == long_chain.links[-1].name


# -- every corpus URDF against an independent xml.etree reading -------------------------------


def _vec(text: str | None, default: Vec3 | None) -> Vec3 | None:
    if text is None:
        return default
    x, y, z = (float(v) for v in text.split())
    return (x, y, z)


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)


def _opt(element: ET.Element | None, key: str) -> float | None:
    if element is None or element.get(key) is None:
        return None
    return float(element.get(key, ""))


def check_against_etree(path: Path, result: ir.Robot) -> None:
    root = ET.parse(path).getroot()
    link_elements = root.findall("link")
    joint_elements = root.findall("joint")
    assert [link.name for link in result.links] == [e.get("name") for e in link_elements]
    assert [joint.name for joint in result.joints] == [e.get("name") for e in joint_elements]
    assert sorted(result.materials) == sorted({m.get("name", "") for m in root.findall("material")})

    for link, element in zip(result.links, link_elements, strict=True):
        visuals = element.findall("visual")
        assert (link.visual is not None) == bool(visuals)
        assert len(link.extra_visuals) == max(0, len(visuals) - 1)
        assert len(link.collisions) == len(element.findall("collision"))
        inertial = element.find("inertial")
        assert (link.inertial is not None) == (inertial is not None)
        if link.inertial is not None and inertial is not None:
            assert _close(link.inertial.mass, _opt(inertial.find("mass"), "value"))

    for joint, element in zip(result.joints, joint_elements, strict=True):
        kind = element.get("type")
        assert joint.type == kind
        assert joint.parent == element.find("parent").get("link")  # type: ignore[union-attr]
        assert joint.child == element.find("child").get("link")  # type: ignore[union-attr]
        origin = element.find("origin")
        if origin is None:
            assert joint.origin is None
        else:
            assert joint.origin is not None
            assert _close(joint.origin.xyz, _vec(origin.get("xyz"), (0.0, 0.0, 0.0)))
            assert _close(joint.origin.rpy, _vec(origin.get("rpy"), (0.0, 0.0, 0.0)))
        axis = element.find("axis")
        if kind in ("fixed", "floating"):
            assert joint.axis is None
        else:
            written = None if axis is None else axis.get("xyz")
            assert _close(joint.axis, _vec(written, (1.0, 0.0, 0.0)))
        limit = element.find("limit")
        if limit is None:
            assert joint.limit is None
        else:
            assert joint.limit is not None
            for key in ("lower", "upper", "effort", "velocity"):
                assert _close(getattr(joint.limit, key), _opt(limit, key)), key
        mimic = element.find("mimic")
        if mimic is None:
            assert joint.mimic is None
        else:
            assert joint.mimic is not None
            assert joint.mimic.joint == mimic.get("joint")
            assert _close(joint.mimic.multiplier, _opt(mimic, "multiplier") or 1.0)
            assert _close(joint.mimic.offset, _opt(mimic, "offset") or 0.0)


def test_corpus_urdf_matches_an_independent_reading(corpus_urdf: Path) -> None:
    result = parse_file(corpus_urdf)
    check_against_etree(corpus_urdf, result)
    assert result.source == str(corpus_urdf)
    for warning in result.warnings:
        assert warning.startswith(f"{corpus_urdf}:")


def test_example_robot_data_urdf_matches_an_independent_reading(erd_urdf: Path) -> None:
    result = parse_file(erd_urdf)
    check_against_etree(erd_urdf, result)


# -- spot checks against the file text --------------------------------------------------------


def test_panda_joint1(corpus_dir: Path) -> None:
    panda = parse_file(corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf")
    joint1 = next(j for j in panda.joints if j.name == "panda_joint1")
    assert joint1.limit == ir.Limit(lower=-2.9671, upper=2.9671, effort=87.0, velocity=2.3925)
    assert joint1.safety_controller == ir.SafetyController(
        k_velocity=40.0, k_position=100.0, soft_lower_limit=-2.8973, soft_upper_limit=2.8973
    )
    assert joint1.origin == ir.Origin((0.0, 0.0, 0.333), (0.0, 0.0, 0.0))
    assert joint1.axis == (0.0, 0.0, 1.0)
    assert (joint1.parent, joint1.child) == ("panda_link0", "panda_link1")
    finger2 = next(j for j in panda.joints if j.name == "panda_finger_joint2")
    assert finger2.mimic == ir.Mimic("panda_finger_joint1", 1.0, 0.0)
    assert panda.warnings == []


def test_fr3_hand(corpus_dir: Path) -> None:
    fr3 = parse_file(corpus_dir / "franka_description/fr3_hand.urdf")
    assert fr3.name == "fr3"
    assert (len(fr3.links), len(fr3.joints)) == (14, 13)
    assert sum(j.type == "revolute" for j in fr3.joints) == 7
    assert sum(j.type == "prismatic" for j in fr3.joints) == 2
    finger2 = next(j for j in fr3.joints if j.name == "fr3_finger_joint2")
    assert finger2.mimic == ir.Mimic(joint="fr3_finger_joint1", multiplier=1.0, offset=0.0)
    assert finger2.axis == (0.0, 1.0, 0.0)
    assert finger2.origin == ir.Origin((0.0, 0.0, 0.0584), (0.0, 0.0, 3.141592653589793))
    assert finger2.dynamics == ir.Dynamics(damping=0.3)
    joint4 = next(j for j in fr3.joints if j.name == "fr3_joint4")
    assert joint4.limit == ir.Limit(lower=-3.0421, upper=-0.1518, effort=87.0, velocity=2.62)
    assert joint4.dynamics == ir.Dynamics(damping=0.003, friction=0.2)
    link1 = next(link for link in fr3.links if link.name == "fr3_link1")
    assert link1.inertial is not None and link1.inertial.mass == 2.9274653454
    assert link1.inertial.inertia.ixy == 1.3317903455714081e-05
    assert fr3.warnings == []


def test_multi_arm_mimics(corpus_dir: Path) -> None:
    multi = parse_file(corpus_dir / "franka_description/multi_arm.urdf")
    assert sorted(j.mimic.joint for j in multi.joints if j.mimic) == [
        "left_fr3_finger_joint1",
        "right_fr3_finger_joint1",
    ]


def test_rack_and_pinion_mimic_multiplier(corpus_dir: Path) -> None:
    rack = parse_file(corpus_dir / "sdformat/test/sdf/joint_mimic_rack_pinion.urdf")
    (mimic,) = [j.mimic for j in rack.joints if j.mimic]
    assert mimic.multiplier == 0.105 and mimic.offset == 0.0


def test_pan_tilt_inline_materials(corpus_dir: Path) -> None:
    pan_tilt = parse_file(corpus_dir / "mastering_ros_robot_description_pkg/urdf/pan_tilt.urdf")
    visual = pan_tilt.links[0].visual
    assert visual is not None
    assert visual.material == ir.Material("yellow", ir.Color(1.0, 1.0, 0.0, 1.0))
    assert isinstance(visual.geometry, ir.Cylinder)


def test_gazebo_extensions_warn_once_each(corpus_dir: Path) -> None:
    path = corpus_dir / "sdformat/test/integration/urdf_gazebo_extensions.urdf"
    result = parse_file(path)
    gazebo = [w for w in result.warnings if "<gazebo" in w]
    assert len(gazebo) == len(ET.parse(path).getroot().findall("gazebo")) == 12
    assert f'{path}:40: <gazebo reference="joint01"> is Gazebo-specific' in gazebo[1]


# -- urdf_parser_py as an independent implementation ------------------------------------------


def compare_with_urdf_parser_py(urdf: Any, path: Path) -> None:
    try:
        theirs = urdf.URDF.from_xml_string(path.read_bytes())
    except Exception as exc:  # noqa: BLE001 - it fails on some files; nothing to compare then
        pytest.skip(f"urdf_parser_py cannot read {path.name}: {type(exc).__name__}")
    ours = parse_file(path)
    assert [link.name for link in ours.links] == [link.name for link in theirs.links]
    assert [joint.name for joint in ours.joints] == [joint.name for joint in theirs.joints]
    for mine, other in zip(ours.joints, theirs.joints, strict=True):
        assert (mine.type, mine.parent, mine.child) == (other.type, other.parent, other.child)
        if other.origin is None:
            assert mine.origin is None
        else:
            assert mine.origin is not None
            assert _close(mine.origin.xyz, tuple(other.origin.xyz))
            assert _close(mine.origin.rpy, tuple(other.origin.rpy))
        if mine.type in ("fixed", "floating"):
            assert mine.axis is None
        elif other.axis is None:
            assert mine.axis == (1.0, 0.0, 0.0)
        else:
            assert _close(mine.axis, tuple(other.axis))
        if other.limit is None:
            assert mine.limit is None
        else:
            assert mine.limit is not None
            assert _close(mine.limit.effort, other.limit.effort)
            assert _close(mine.limit.velocity, other.limit.velocity)
            # urdf_parser_py reads a missing bound as 0 (URDF's default); the IR keeps None
            assert _close(mine.limit.lower if mine.limit.lower is not None else 0.0, other.limit.lower)
            assert _close(mine.limit.upper if mine.limit.upper is not None else 0.0, other.limit.upper)
        if other.mimic is None:
            assert mine.mimic is None
        else:
            assert mine.mimic is not None and mine.mimic.joint == other.mimic.joint
            assert _close(mine.mimic.multiplier, other.mimic.multiplier or 1.0)
            assert _close(mine.mimic.offset, other.mimic.offset or 0.0)


def test_corpus_agrees_with_urdf_parser_py(corpus_urdf: Path, quiet_urdf_parser_py: Any) -> None:
    compare_with_urdf_parser_py(quiet_urdf_parser_py, corpus_urdf)


def test_example_robot_data_agrees_with_urdf_parser_py(erd_urdf: Path, quiet_urdf_parser_py: Any) -> None:
    compare_with_urdf_parser_py(quiet_urdf_parser_py, erd_urdf)
