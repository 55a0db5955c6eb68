"""Tests of the URDF writer (:mod:`bb_robot.urdf.writer`).

Round trip: for the bundled ``models/bb_arm.urdf``, every URDF of the shared corpus (the
``corpus_urdf`` cases of ``conftest.py``: not the hostile synthetic files; the structurally
invalid synthetic ones skip) and every URDF of example-robot-data, ``build_robot(parse_string(robot_to_urdf(robot)))``
must give the same model: links (visuals, collisions, inertials), joints (types, parents,
children, origins, axes, limits, dynamics, mimics), actuators and topology, compared by
``repr`` (so every float is bit-for-bit equal, ``-0.0`` included), the only differences
being the documented placeholders; forward kinematics must be equal at random
configurations.  The text must be accepted by ``urdf_parser_py`` and by Pinocchio's URDF
parser wherever they accept the original file.
"""

from __future__ import annotations

import dataclasses
import math
import random
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.robot_files import example_robot_data_urdfs

from bb_robot.errors import BbRobotError
from bb_robot.model.errors import InvalidRobot
from bb_robot.model.geometry import (
    Box,
    Collision,
    Color,
    Cylinder,
    Inertia,
    Inertial,
    Material,
    Mesh,
    Origin,
    Sphere,
    Visual,
)
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import (
    ActuatorInfo,
    Dynamics,
    Joint,
    JointLimits,
    Link,
    Mimic,
    Robot,
    SensorInfo,
    Transmission,
)
from bb_robot.urdf.builder import build_robot, load_urdf
from bb_robot.urdf.parser import parse_string
from bb_robot.urdf.writer import (
    HARDWARE_INTERFACE,
    UNKNOWN_LIMIT,
    UrdfWriteError,
    keep_uris,
    resolve_to_file_uris,
    robot_to_urdf,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"

# Files whose original our builder rejects on purpose (see test_fk_against_pinocchio.py).
REJECTED_ORIGINALS = {
    "alex_psyonic_hands.urdf": "its joints mimic joints the file does not define",
    "ur3.urdf": "an empty <robot> placeholder",
}


# ------------------------------------------------------------------------------ the files
def _bundled_and_erd() -> list[Any]:
    """``models/bb_arm.urdf`` and the example-robot-data URDFs (the corpus comes from ``corpus_urdf``)."""
    params: list[Any] = [pytest.param(BB_ARM, id="bb_arm")]
    erd = example_robot_data_urdfs()
    for path in erd:
        label = path.as_posix().split("/example-robot-data/robots/", 1)[-1]
        params.append(pytest.param(path, id=f"erd:{label}"))
    if not erd:
        absent = pytest.mark.skip(reason="example-robot-data is not installed")
        params.append(pytest.param(None, id="example-robot-data-absent", marks=absent))
    return params


# Synthetic corpus files the model builder must reject (InvalidRobot); every other one must load.
SYNTHETIC_INVALID = {
    "cycle.urdf": "a kinematic loop",
    "two_roots.urdf": "two root links",
    "missing_link.urdf": "a joint naming a link that does not exist",
    "mimic_cycle.urdf": "mimic joints that follow each other in a circle",
}


def _load(path: Path) -> Robot:
    """The model of ``path``; skips only the files listed as rejected on purpose, and only for InvalidRobot."""
    listed = SYNTHETIC_INVALID if path.parent.name == "synthetic" else REJECTED_ORIGINALS
    expected = listed.get(path.name)
    if expected is None:
        return load_urdf(path)
    with pytest.raises(InvalidRobot):
        load_urdf(path)
    pytest.skip(f"bb_robot rejects {path.name} on purpose: {expected}")


# ------------------------------------------------------------------------------ comparing
def _expected_limits(joint: Joint) -> JointLimits | None:
    """The limits the joint reads back with: the model's, with the documented placeholders."""
    limits = joint.limits or JointLimits()
    bounded = joint.type != "continuous"
    lower, upper = (limits.lower, limits.upper) if bounded else (None, None)
    effort = None if limits.effort == math.inf else limits.effort
    velocity = None if limits.velocity == math.inf else limits.velocity
    if joint.type in ("revolute", "prismatic") or any(v is not None for v in (lower, upper, effort, velocity)):
        effort = UNKNOWN_LIMIT if effort is None else effort
        velocity = UNKNOWN_LIMIT if velocity is None else velocity
    soft = (limits.soft_lower, limits.soft_upper) if bounded else (None, None)
    expected = JointLimits(lower, upper, velocity, effort, *soft)
    return None if expected == JointLimits() else expected


def _expected_actuator(actuator: ActuatorInfo) -> ActuatorInfo:
    """URDF has a reduction and an offset (1 and 0 when absent); a reversed drive is a negative reduction."""
    t = actuator.transmission or Transmission()
    reduction = 1.0 if t.reduction is None else t.reduction
    if t.reversed:
        reduction = -reduction
    offset = 0.0 if t.offset is None else t.offset
    return dataclasses.replace(actuator, transmission=Transmission(reduction=reduction, offset=offset))


def assert_same_model(original: Robot, rebuilt: Robot) -> None:
    """Every field of every link, joint and actuator equal; floats compared through ``repr``."""
    assert rebuilt.name == original.name
    assert rebuilt.root_link == original.root_link
    assert sorted(rebuilt.links) == sorted(original.links)
    assert sorted(rebuilt.joints) == sorted(original.joints)
    for name, link in original.links.items():
        assert repr(rebuilt.links[name]) == repr(link), f"link '{name}'"
    for name, joint in original.joints.items():
        expected = dataclasses.replace(joint, limits=_expected_limits(joint))
        assert repr(rebuilt.joints[name]) == repr(expected), f"joint '{name}'"
    expected_actuators = {name: repr(_expected_actuator(a)) for name, a in original.actuators.items()}
    assert {name: repr(a) for name, a in rebuilt.actuators.items()} == expected_actuators
    assert rebuilt.topology.link_order == original.topology.link_order
    assert rebuilt.topology.joint_order == original.topology.joint_order


def assert_same_kinematics(original: Robot, rebuilt: Robot, count: int = 8) -> None:
    fk, fk2 = ForwardKinematics(original), ForwardKinematics(rebuilt)
    assert fk2.joint_names == fk.joint_names
    assert fk2.link_names == fk.link_names
    rng = np.random.default_rng(7)
    n = len(fk.joint_names)
    if n > 500:
        count = 2
    q = np.vstack([np.zeros((1, n)), rng.uniform(-np.pi, np.pi, size=(count, n))])
    assert np.array_equal(fk2.compute(q), fk.compute(q))


def round_trip(robot: Robot) -> tuple[str, Robot]:
    text = robot_to_urdf(robot)
    return text, build_robot(parse_string(text))


# ------------------------------------------------------------------------------ real files
def check_round_trip(path: Path) -> None:
    original = _load(path)
    text, rebuilt = round_trip(original)
    assert_same_model(original, rebuilt)
    assert_same_kinematics(original, rebuilt)
    # Once the placeholders are in the model, writing is a fixed point.
    again = robot_to_urdf(rebuilt)
    assert robot_to_urdf(build_robot(parse_string(again))) == again


def check_urdf_parser_py(path: Path, urdf: Any) -> None:
    original = _load(path)
    try:
        reference = urdf.URDF.from_xml_file(str(path))
    except Exception as error:  # noqa: BLE001 - a file the peer refuses is not a test of the writer
        pytest.skip(f"urdf_parser_py refuses the original: {type(error).__name__}")
    written = urdf.URDF.from_xml_string(robot_to_urdf(original).encode())
    assert written.name == reference.name
    assert {link.name for link in written.links} >= {link.name for link in reference.links}
    assert {j.name: (j.type, j.parent, j.child) for j in written.joints} == {
        j.name: (j.type, j.parent, j.child) for j in reference.joints if j.name in original.joints
    }


def check_pinocchio(path: Path) -> None:
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed")
    original = _load(path)
    try:
        reference = pin.buildModelFromUrdf(str(path))
    except Exception as error:  # noqa: BLE001 - a file Pinocchio refuses is not a test of the writer
        pytest.skip(f"Pinocchio refuses the original: {type(error).__name__}")
    model = pin.buildModelFromXML(robot_to_urdf(original))
    assert model.nq == reference.nq
    assert model.nv == reference.nv
    assert sorted(model.names) == sorted(reference.names)
    for name in list(reference.names)[1:]:
        ours = model.jointPlacements[model.getJointId(name)]
        theirs = reference.jointPlacements[reference.getJointId(name)]
        assert ours.isApprox(theirs, 1e-12), name
    for frame in reference.frames:
        if frame.type == pin.BODY:
            assert model.existFrame(frame.name, pin.BODY), frame.name


@pytest.mark.parametrize("path", _bundled_and_erd())
def test_round_trip(path: Path) -> None:
    check_round_trip(path)


def test_round_trip_corpus(corpus_urdf: Path) -> None:
    check_round_trip(corpus_urdf)


@pytest.mark.parametrize("path", _bundled_and_erd())
def test_urdf_parser_py_accepts_the_text(path: Path, quiet_urdf_parser_py: Any) -> None:
    check_urdf_parser_py(path, quiet_urdf_parser_py)


def test_urdf_parser_py_accepts_the_text_corpus(corpus_urdf: Path, quiet_urdf_parser_py: Any) -> None:
    check_urdf_parser_py(corpus_urdf, quiet_urdf_parser_py)


@pytest.mark.parametrize("path", _bundled_and_erd())
def test_pinocchio_accepts_the_text(path: Path) -> None:
    check_pinocchio(path)


def test_pinocchio_accepts_the_text_corpus(corpus_urdf: Path) -> None:
    check_pinocchio(corpus_urdf)


# ------------------------------------------------------------------------------ hand-built
def _two_link(
    name: str = "r",
    base: Link | None = None,
    tip: Link | None = None,
    joint: Joint | None = None,
    actuators: tuple[ActuatorInfo, ...] = (),
) -> Robot:
    base = base or Link("base")
    tip = tip or Link("tip")
    joint = joint or Joint("j", "revolute", base.name, tip.name, limits=JointLimits(-1.0, 1.0, 2.0, 3.0))
    return Robot.assemble(name, [base, tip], [joint], actuators=actuators)


HOSTILE = "a<b>&c\"d'e f\tg\nh"


def test_names_with_xml_special_characters() -> None:
    material = Material(HOSTILE + "m", Color(0.1, 0.2, 0.3, 1.0), "package://p/" + HOSTILE + ".png")
    base = Link(
        HOSTILE + "base",
        visuals=(Visual(HOSTILE + "v", None, Mesh("package://p/" + HOSTILE + ".dae"), material),),
        collisions=(Collision(HOSTILE + "c", None, Sphere(0.1)),),
    )
    tip = Link(HOSTILE + "tip")
    joint = Joint(HOSTILE + "j", "continuous", base.name, tip.name, axis=(0.0, 0.0, 1.0))
    robot = Robot.assemble(
        HOSTILE + "robot", [base, tip], [joint], actuators=[ActuatorInfo(HOSTILE + "a", joint.name, Transmission(2.0))]
    )
    text, rebuilt = round_trip(robot)
    ET.fromstring(text.split("\n", 1)[1])  # well-formed XML
    assert_same_model(robot, rebuilt)


def test_names_with_xml_special_characters_pass_the_peers(quiet_urdf_parser_py: Any) -> None:
    pin = pytest.importorskip("pinocchio")
    tip = Link(HOSTILE + "tip", inertial=Inertial(None, 1.0, Inertia(1.0, 1.0, 1.0)))
    robot = _two_link(
        HOSTILE, Link(HOSTILE + "base"), tip, Joint(HOSTILE + "j", "prismatic", HOSTILE + "base", tip.name)
    )
    text = robot_to_urdf(robot)
    assert quiet_urdf_parser_py.URDF.from_xml_string(text.encode()).name == HOSTILE
    model = pin.buildModelFromXML(text)
    assert HOSTILE + "j" in list(model.names)


@pytest.mark.parametrize("bad", ["\x00", "\x07", "\ufffe"])
def test_characters_xml_cannot_hold_are_refused(bad: str) -> None:
    with pytest.raises(UrdfWriteError, match="XML cannot carry") as caught:
        robot_to_urdf(_two_link(base=Link("ba" + bad + "se")))
    assert isinstance(caught.value, BbRobotError) and isinstance(caught.value, ValueError)
    assert "link 'ba" in str(caught.value) or "<link name>" in str(caught.value)


def test_several_visuals_and_shared_materials() -> None:
    red = Material("red", Color(1.0, 0.0, 0.0, 1.0))
    visuals = (
        Visual("first", Origin((0.1, 0.0, 0.0), (0.0, 0.0, 0.5)), Box((0.1, 0.2, 0.3)), red),
        Visual(None, None, Cylinder(0.05, 0.2), red),
        Visual("third", None, Sphere(0.3), Material("blue", Color(0.0, 0.0, 1.0, 0.5))),
        Visual("fourth", None, Sphere(0.3), Material(None, Color(0.0, 1.0, 0.0, 1.0))),
        Visual("fifth", None, Sphere(0.3), Material("named_only")),
        Visual("sixth", None, Sphere(0.3), Material(None, None, "file:///t.png")),
        Visual("seventh", None, None, None),
    )
    base = Link("base", visuals=visuals, collisions=(Collision("c1", None, Box((1.0, 1.0, 1.0))), Collision()))
    robot = _two_link(base=base)
    text, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)
    root = ET.fromstring(text.split("\n", 1)[1])
    top = [m.get("name") for m in root.findall("material")]
    assert top == ["red"]  # shared by two visuals: defined once, referenced by name
    red_refs = [m for m in root.iter("material") if m.get("name") == "red"]
    assert [len(list(m)) for m in red_refs] == [1, 0, 0]  # the definition, then two references
    assert len(root.find("link").findall("visual")) == 7


def test_conflicting_materials_of_one_name_are_written_inline() -> None:
    visuals = (
        Visual("a", None, Sphere(0.1), Material("grey", Color(0.2, 0.2, 0.2, 1.0))),
        Visual("b", None, Sphere(0.1), Material("grey", Color(0.5, 0.5, 0.5, 1.0))),
    )
    robot = _two_link(base=Link("base", visuals=visuals))
    text, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)
    assert ET.fromstring(text.split("\n", 1)[1]).findall("material") == []


def test_mesh_scales() -> None:
    visuals = (
        Visual("uniform", None, Mesh("m.dae", 2.5)),
        Visual("one", None, Mesh("m.dae")),
        Visual("non_uniform", None, Mesh("m.stl", 0.001, (0.001, 0.002, -0.003))),
    )
    robot = _two_link(base=Link("base", visuals=visuals, collisions=(Collision("c", None, Mesh("c.stl", 0.5)),)))
    text, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)
    meshes = [m.attrib for m in ET.fromstring(text.split("\n", 1)[1]).iter("mesh")]
    assert meshes == [
        {"filename": "m.dae", "scale": "2.5 2.5 2.5"},
        {"filename": "m.dae"},
        {"filename": "m.stl", "scale": "0.001 0.002 -0.003"},
        {"filename": "c.stl", "scale": "0.5 0.5 0.5"},
    ]


def test_world_anchored_robot() -> None:
    doc = parse_string(
        '<robot name="anchored"><link name="base"/><link name="arm"/>'
        '<joint name="anchor" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="1 2 3"/></joint>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>'
    )
    robot = build_robot(doc)
    assert robot.root_link == "world"
    text, rebuilt = round_trip(robot)
    assert '<link name="world" />' in text  # defined, as urdfdom requires
    assert_same_model(robot, rebuilt)
    dropped = build_robot(parse_string(text), drop_world=True)
    assert dropped.root_link == "base"


def test_floats_are_exact() -> None:
    awkward = (0.1 + 0.2, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 1 / 3, -(2.0**-60), 123456789.123456789)
    base = Link(
        "base",
        visuals=(Visual("v", Origin(awkward[:3], awkward[3:6]), Box(awkward[5:8])),),
        inertial=Inertial(Origin(awkward[2:5], awkward[:3]), awkward[0], Inertia(*awkward[:6])),
    )
    joint = Joint(
        "j",
        "prismatic",
        "base",
        "tip",
        origin=Origin(awkward[:3], awkward[5:8]),
        limits=JointLimits(-awkward[0], awkward[5], awkward[6], awkward[7], -awkward[2], awkward[0]),
        dynamics=Dynamics(awkward[1], awkward[3]),
    )
    robot = _two_link(base=base, joint=joint, actuators=(ActuatorInfo("m", "j", Transmission(awkward[4], -0.0)),))
    text, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)
    assert "-0.0" in text and "5e-324" in text


def test_unit_axes_of_any_direction_read_back_exactly() -> None:
    rng = random.Random(3)
    inexact = 0
    for i in range(2000):
        x, y, z = rng.gauss(0, 1), rng.gauss(0, 1), rng.gauss(0, 1)
        if i % 3 == 0:
            z = 0.0
        norm = math.sqrt(x * x + y * y + z * z)
        axis = (x / norm, y / norm, z / norm)
        joint = Joint("j", "continuous", "base", "tip", axis=axis)
        _, rebuilt = round_trip(_two_link(joint=joint))
        back = rebuilt.joints["j"].axis
        if back != axis:
            inexact += 1
            assert all(abs(a - b) <= 4 * math.ulp(b) for a, b in zip(back, axis, strict=True))
    assert inexact <= 2  # about 3 in 10,000 directions have no exact representation found


def test_joint_types_dynamics_and_mimic() -> None:
    links = [Link(n) for n in ("base", "a", "b", "c", "d", "e")]
    joints = [
        Joint("rev", "revolute", "base", "a", Origin((0.0, 0.0, 0.1), (0.1, 0.2, 0.3)), (0.0, 1.0, 0.0)),
        Joint("mim", "prismatic", "a", "b", axis=(0.0, 0.0, -1.0), mimic=Mimic("rev", -2.5, 0.25)),
        Joint("cont", "continuous", "b", "c", dynamics=Dynamics(damping=0.5)),
        Joint("float", "floating", "c", "d", dynamics=Dynamics()),
        Joint("plane", "planar", "d", "e", axis=(1.0, 0.0, 0.0), dynamics=Dynamics(friction=0.1)),
    ]
    robot = Robot.assemble("types", links, joints)
    _, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)


def test_limit_placeholders() -> None:
    links = [Link(n) for n in ("base", "a", "b", "c", "d", "e")]
    joints = [
        Joint("no_limits", "revolute", "base", "a"),
        Joint("bounds_only", "prismatic", "a", "b", limits=JointLimits(lower=-0.1, upper=0.1)),
        Joint("unlimited", "revolute", "b", "c", limits=JointLimits(-1.0, 1.0, math.inf, math.inf)),
        Joint("wheel", "continuous", "c", "d"),
        Joint("wheel_fast", "continuous", "d", "e", limits=JointLimits(velocity=10.0)),
    ]
    robot = Robot.assemble("limits", links, joints)
    text, rebuilt = round_trip(robot)
    limits = {name: rebuilt.joints[name].limits for name in rebuilt.joints}
    unknown = UNKNOWN_LIMIT
    assert unknown == 1e16
    assert limits["no_limits"] == JointLimits(velocity=unknown, effort=unknown)  # no bounds: URDF's reading
    assert limits["bounds_only"] == JointLimits(-0.1, 0.1, unknown, unknown)
    assert limits["unlimited"] == JointLimits(-1.0, 1.0, unknown, unknown)
    assert limits["wheel"] is None
    assert limits["wheel_fast"] == JointLimits(velocity=10.0, effort=unknown)
    assert text.count("placeholder") == 4  # one comment per joint with a placeholder
    assert_same_model(robot, rebuilt)
    pin = pytest.importorskip("pinocchio")
    pin.buildModelFromXML(text)  # Pinocchio refuses negative limits: the placeholder must be positive


def test_the_placeholder_can_be_chosen() -> None:
    robot = _two_link(joint=Joint("j", "revolute", "base", "tip", limits=JointLimits(-1.0, 1.0, velocity=2.0)))
    text = robot_to_urdf(robot, unknown_limit=-1.0)  # e.g. SDFormat's "not enforced", for Gazebo alone
    assert 'effort="-1.0" velocity="2.0"' in text
    assert build_robot(parse_string(text)).joints["j"].limits == JointLimits(-1.0, 1.0, 2.0, -1.0)
    with pytest.raises(UrdfWriteError, match="unknown_limit"):
        robot_to_urdf(robot, unknown_limit=math.inf)


def test_soft_limits_become_a_safety_controller() -> None:
    joint = Joint("j", "revolute", "base", "tip", limits=JointLimits(-2.0, 2.0, 1.0, 5.0, -1.9, 1.9))
    text, rebuilt = round_trip(_two_link(joint=joint))
    assert rebuilt.joints["j"].limits == joint.limits
    assert 'k_velocity="0.0"' in text


def test_transmissions() -> None:
    links = [Link(n) for n in ("base", "a", "b")]
    joints = [Joint("j1", "continuous", "base", "a"), Joint("j2", "continuous", "a", "b")]
    actuators = [
        ActuatorInfo("m1", "j1", Transmission(reduction=50.0, offset=0.1, reversed=True)),
        ActuatorInfo("m1b", "j1", Transmission(reduction=-3.0, offset=None, reversed=None)),
        ActuatorInfo("m2", "j2", None),
    ]
    robot = Robot.assemble("t", links, joints, actuators=actuators)
    text, rebuilt = round_trip(robot)
    assert rebuilt.actuators["m1"].transmission == Transmission(-50.0, 0.1)
    assert rebuilt.actuators["m1b"].transmission == Transmission(-3.0, 0.0)
    assert rebuilt.actuators["m2"].transmission == Transmission(1.0, 0.0)
    assert rebuilt.joints["j1"].actuators == ("m1", "m1b")
    assert_same_model(robot, rebuilt)
    root = ET.fromstring(text.split("\n", 1)[1])
    assert [t.get("name") for t in root.findall("transmission")] == [
        "m1_transmission",
        "m1b_transmission",
        "m2_transmission",
    ]
    assert {t.findtext("joint/hardwareInterface") for t in root.findall("transmission")} == {HARDWARE_INTERFACE}


def test_output_is_deterministic_and_topological() -> None:
    links = [Link(n) for n in ("leaf2", "leaf1", "mid", "base")]
    joints = [
        Joint("j3", "fixed", "mid", "leaf2"),
        Joint("j2", "fixed", "mid", "leaf1"),
        Joint("j1", "fixed", "base", "mid"),
    ]
    robot = Robot.assemble("order", links, joints)
    text = robot_to_urdf(robot)
    assert robot_to_urdf(robot) == text
    root = ET.fromstring(text.split("\n", 1)[1])
    assert [e.get("name") for e in root.findall("link")] == ["base", "mid", "leaf2", "leaf1"]
    assert [e.get("name") for e in root.findall("joint")] == ["j1", "j3", "j2"]
    assert text.startswith('<?xml version="1.0"?>\n<robot name="order">')
    _, rebuilt = round_trip(robot)
    assert_same_model(robot, rebuilt)


def test_sensors_are_not_written() -> None:
    robot = Robot.assemble(
        "s", [Link("base")], [], sensors=[SensorInfo("imu", ("link", "base")), SensorInfo("x", ("robot", ""))]
    )
    _, rebuilt = round_trip(robot)
    assert dict(rebuilt.sensors) == {}
    assert list(rebuilt.links) == ["base"]


@pytest.mark.parametrize(
    ("robot", "message"),
    [
        (_two_link(base=Link("base", inertial=Inertial(None, math.nan))), "link 'base' <inertial> <mass>: nan"),
        (
            _two_link(joint=Joint("j", "revolute", "base", "tip", Origin((math.inf, 0.0, 0.0)))),
            "joint 'j' <origin xyz>: inf",
        ),
        (
            _two_link(joint=Joint("j", "revolute", "base", "tip", limits=JointLimits(lower=-math.inf))),
            "joint 'j' <limit lower>: -inf",
        ),
        (_two_link(joint=Joint("j", "revolute", "base", "tip", axis=(0.0, 0.0, 0.0))), "zero length"),
        (_two_link(name=""), "<robot name>: the name is empty"),
    ],
)
def test_what_urdf_cannot_hold_is_refused(robot: Robot, message: str) -> None:
    with pytest.raises(UrdfWriteError) as caught:
        robot_to_urdf(robot)
    assert message in str(caught.value)
    assert str(caught.value).startswith("cannot write robot '")


# ------------------------------------------------------------------------------ mesh URIs
def _meshes(text: str) -> list[str]:
    root = ET.fromstring(text.split("\n", 1)[1])
    return [e.get("filename", "") for e in root.iter() if e.tag in ("mesh", "texture")]


def _mesh_robot() -> Robot:
    visuals = (
        Visual("a", None, Mesh("model://arm/meshes/base.dae"), Material("skin", None, "model://arm/skin.png")),
        Visual("b", None, Mesh("model://missing/x.stl")),
    )
    return _two_link(base=Link("base", visuals=visuals, collisions=(Collision("c", None, Mesh("meshes/c.stl")),)))


def test_keep_uris_is_the_default() -> None:
    robot = _mesh_robot()
    assert keep_uris("model://a/b.dae") == "model://a/b.dae"
    assert robot_to_urdf(robot) == robot_to_urdf(robot, mesh_uri=keep_uris)
    assert _meshes(robot_to_urdf(robot)) == [
        "model://arm/meshes/base.dae",
        "model://arm/skin.png",
        "model://missing/x.stl",
        "meshes/c.stl",
    ]


def test_resolve_to_file_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "my models"
    monkeypatch.chdir(tmp_path)
    table = {
        "model://arm/meshes/base.dae": models / "arm" / "meshes" / "base.dae",
        "model://arm/skin.png": str(models / "arm" / "skin.png"),
        "meshes/c.stl": Path("rel") / "c.stl",
    }
    text = robot_to_urdf(_mesh_robot(), mesh_uri=resolve_to_file_uris(table.get))
    assert _meshes(text) == [
        (models / "arm" / "meshes" / "base.dae").as_uri(),
        (models / "arm" / "skin.png").as_uri(),
        "model://missing/x.stl",  # unresolvable: kept as written
        (tmp_path / "rel" / "c.stl").as_uri(),  # relative: against the current directory
    ]
    assert "my%20models" in text
    with pytest.raises(UrdfWriteError, match="model://missing/x.stl"):
        robot_to_urdf(_mesh_robot(), mesh_uri=resolve_to_file_uris(table.get, strict=True))
