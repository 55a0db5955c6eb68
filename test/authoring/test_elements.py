"""The authoring API (seed 002): each element's values, its URDF text, and the errors it raises.

Every element's ``to_xml`` must be URDF that bb_robot's parser reads back to the element's
own intermediate representation (``to_ir``); invalid values must fail when the element is
made, with a ``ValueError`` (``AuthoringError``) naming the element and the value.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from bb_robot.authoring import (
    WORLD,
    AuthoringError,
    Box,
    Collision,
    Cylinder,
    Dynamics,
    Inertial,
    InertiaMatrix,
    Joint,
    Limit,
    Link,
    Material,
    Mesh,
    Mimic,
    Origin,
    Robot,
    SafetyController,
    Sphere,
    Transmission,
    Visual,
)
from bb_robot.errors import BbRobotError
from bb_robot.model.errors import InvalidRobot
from bb_robot.urdf.parser import parse_string

LIMIT = Limit(lower=-1.0, upper=1.0, effort=10.0, velocity=2.0)


def _two_links(joint: Joint | None = None, **robot: Any) -> Robot:
    joint = joint or Joint("j", "revolute", "a", "b", limit=LIMIT)
    return Robot("r", links=[Link("a"), Link("b")], joints=[joint], **robot)


def _in_robot(link: Link) -> Any:
    """The IR link ``link`` reads back as, written inside a one-link robot."""
    return parse_string(Robot("r", links=[link]).to_urdf()).links[0]


# ------------------------------------------------------------------------------ origin
def test_origin_defaults_and_text() -> None:
    origin = Origin()
    assert origin.xyz == (0.0, 0.0, 0.0) and origin.rpy == (0.0, 0.0, 0.0)
    assert Origin((1, 2, 3)).xyz == (1.0, 2.0, 3.0)  # ints become floats
    text = Origin((0.1, -0.0, 1e-300), (0.5, 0.0, math.pi)).to_xml("    ")
    assert text == f'    <origin xyz="0.1 -0.0 1e-300" rpy="0.5 0.0 {math.pi!r}" />'
    element = ET.fromstring(text.strip())
    assert tuple(float(v) for v in element.get("rpy", "").split())[2] == math.pi


@pytest.mark.parametrize(
    ("geometry", "z"),
    [(Box((0.2, 0.4, 0.6)), 0.3), (Cylinder(0.1, 0.5), 0.25), (Sphere(0.7), 0.7)],
)
def test_origin_above_rests_the_geometry_on_the_ground(geometry: Any, z: float) -> None:
    origin = Origin.above(geometry)
    assert origin == Origin((0.0, 0.0, z))
    moved = Origin.above(geometry, xy=(1.0, -2.0), rpy=(0.0, 0.0, 0.5))
    assert moved.xyz == (1.0, -2.0, z) and moved.rpy == (0.0, 0.0, 0.5)


def test_origin_above_refuses_a_mesh() -> None:
    with pytest.raises(ValueError, match="Origin.above: Mesh .* not supported"):
        Origin.above(Mesh("package://p/m.stl"))
    with pytest.raises(ValueError, match="Origin.above: str"):
        Origin.above("box")  # type: ignore[arg-type]


def test_origin_wheel_rolls_a_cylinder_onto_its_side() -> None:
    origin = Origin.wheel((0.5, 0.25), 0.1)
    assert origin.xyz == (0.5, 0.25, 0.1)
    assert origin.rpy == (-math.pi / 2, 0.0, 0.0)
    assert Origin.wheel() == Origin((0.0, 0.0, 0.0), (-math.pi / 2, 0.0, 0.0))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Origin((math.nan, 0.0, 0.0)), "Origin xyz: nan is not a finite number"),
        (lambda: Origin(rpy=(0.0, math.inf, 0.0)), "Origin rpy: inf is not a finite number"),
        (lambda: Origin((1.0, 2.0)), r"Origin xyz: \(1.0, 2.0\) has 2 components, expected 3"),
        (lambda: Origin(("a", 0, 0)), "Origin xyz: 'a' is not a number"),
        (lambda: Origin((True, 0, 0)), "Origin xyz: True is not a number"),
        (lambda: Origin("0 0 1"), "is not a sequence of 3 numbers"),
        (lambda: Origin.wheel(z=math.nan), "Origin.wheel z: nan"),
    ],
)
def test_origin_errors(make: Any, message: str) -> None:
    with pytest.raises(AuthoringError, match=message):
        make()


# ------------------------------------------------------------------------------ geometry
def test_geometry_text() -> None:
    assert Box((0.1, 0.2, 0.3)).to_xml() == '<box size="0.1 0.2 0.3" />'
    assert Cylinder(0.05, 0.5).to_xml() == '<cylinder radius="0.05" length="0.5" />'
    assert Sphere(1).to_xml() == '<sphere radius="1.0" />'
    assert Mesh("m.stl").to_xml() == '<mesh filename="m.stl" />'
    assert Mesh("m.stl", 0.001).to_xml() == '<mesh filename="m.stl" scale="0.001 0.001 0.001" />'
    assert Mesh("m.stl", (1, -1, 2)).to_xml() == '<mesh filename="m.stl" scale="1.0 -1.0 2.0" />'


def test_mesh_scales_reach_the_ir_as_the_parser_gives_them() -> None:
    assert Mesh("m", (2.0, 2.0, 2.0)).to_ir().extra_scale_xyz is None
    assert Mesh("m", (2.0, 2.0, 2.0)).to_ir().scale == 2.0
    non_uniform = Mesh("m", (0.001, 0.002, -0.003)).to_ir()
    assert (non_uniform.scale, non_uniform.extra_scale_xyz) == (0.001, (0.001, 0.002, -0.003))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Box((0.1, -0.2, 0.3)), r"Box size \(0.1, -0.2, 0.3\): the edge length -0.2 is negative"),
        (lambda: Box((0.1, 0.2)), "Box size"),
        (lambda: Cylinder(-0.1, 1.0), "Cylinder radius: -0.1 is negative"),
        (lambda: Cylinder(0.1, -1.0), "Cylinder length: -1.0 is negative"),
        (lambda: Cylinder(0.1, math.nan), "Cylinder length: nan"),
        (lambda: Sphere(-2.0), "Sphere radius: -2.0 is negative"),
        (lambda: Mesh(""), "Mesh filename: the name is empty"),
        (lambda: Mesh("m.stl", math.inf), "Mesh scale: inf"),
        (lambda: Mesh("m.stl", (1.0, 1.0)), "Mesh scale"),
    ],
)
def test_geometry_errors(make: Any, message: str) -> None:
    with pytest.raises(AuthoringError, match=message):
        make()


# ------------------------------------------------------------------------------ materials
def test_material_colour_texture_and_reference() -> None:
    red = Material("red", rgba=(1, 0, 0, 1))
    assert red.rgba == (1.0, 0.0, 0.0, 1.0) and not red.is_reference
    assert ET.fromstring(red.to_xml()).find("color").get("rgba") == "1.0 0.0 0.0 1.0"  # type: ignore[union-attr]
    wood = Material("wood", texture="package://p/wood.png")
    assert ET.fromstring(wood.to_xml()).find("texture").get("filename") == "package://p/wood.png"  # type: ignore[union-attr]
    assert Material("grey").is_reference
    assert ET.fromstring(Material(None, rgba=(0, 0, 0, 1)).to_xml()).get("name") == ""


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Material("m", rgba=(1.0, 0.0, 0.0, 1.0), texture="t.png"),
            "Material 'm': give rgba or texture, not both",
        ),
        (
            lambda: Material("m", rgba=(1.5, 0.0, 0.0, 1.0)),
            "Material 'm' rgba .*: the component 1.5 is outside \\[0, 1\\]",
        ),
        (lambda: Material("m", rgba=(0.5, -0.1, 0.0, 1.0)), "the component -0.1 is outside"),
        (lambda: Material("m", rgba=(0.5, 0.5, 0.5)), "has 3 components, expected 4"),
        (lambda: Material("m", rgba=(0.5, math.nan, 0.5, 1.0)), "nan is not a finite number"),
        (lambda: Material(""), "Material name: the name is empty"),
        (lambda: Material("a\x00b"), "which XML cannot carry"),
    ],
)
def test_material_errors(make: Any, message: str) -> None:
    with pytest.raises(AuthoringError, match=message):
        make()


# ------------------------------------------------------------------------------ visual, collision
def test_visual_and_collision_read_back_as_written() -> None:
    blue = Material("blue", rgba=(0.0, 0.0, 1.0, 0.5))
    visual = Visual(Box((1.0, 2.0, 3.0)), Origin((0.1, 0.0, 0.0)), blue, "shell")
    collision = Collision(Sphere(0.5), None, "bump")
    link = _in_robot(Link("a", visuals=[visual], collisions=[collision]))
    assert link.visual == visual.to_ir()
    assert link.collisions == [collision.to_ir()]
    assert link.collisions[0].origin is None  # origin=None: no <origin> written
    assert Visual(Sphere(1.0)).origin == Origin()  # the seed's default
    text = visual.to_xml("  ")
    assert text.startswith('  <visual name="shell">') and "<color" in text  # alone: the material in full


def test_visual_and_collision_errors() -> None:
    with pytest.raises(AuthoringError, match="Visual geometry: expected Box or Cylinder or Sphere or Mesh, got str"):
        Visual("box")  # type: ignore[arg-type]
    with pytest.raises(AuthoringError, match="Visual material: expected Material"):
        Visual(Box((1.0, 1.0, 1.0)), material="red")  # type: ignore[arg-type]
    with pytest.raises(AuthoringError, match="Collision origin: expected Origin"):
        Collision(Box((1.0, 1.0, 1.0)), (0, 0, 0))  # type: ignore[arg-type]
    with pytest.raises(AuthoringError, match="Visual name: the name is empty"):
        Visual(Box((1.0, 1.0, 1.0)), name="")


# ------------------------------------------------------------------------------ inertial
def test_inertial_text_and_errors() -> None:
    inertial = Inertial(2.0, InertiaMatrix(ixx=1.0, ixy=0.5, ixz=-0.25, iyy=2.0, iyz=0.125, izz=3.0), Origin((0, 0, 1)))
    assert inertial.matrix.rows == ((1.0, 0.5, -0.25), (0.5, 2.0, 0.125), (-0.25, 0.125, 3.0))
    link = _in_robot(Link("a", inertial=inertial))
    assert link.inertial == inertial.to_ir()
    assert Inertial.from_box(1.0, 1.0, 1.0, 1.0).origin == Origin()  # default: the link frame
    with pytest.raises(AuthoringError, match="Inertial mass: -1.0 is negative"):
        Inertial(-1.0, InertiaMatrix())
    with pytest.raises(AuthoringError, match="InertiaMatrix iyz: nan"):
        InertiaMatrix(iyz=math.nan)
    with pytest.raises(AuthoringError, match="Inertial.from_box w: -0.1 is negative"):
        Inertial.from_box(1.0, 0.1, -0.1, 0.1)
    with pytest.raises(AuthoringError, match="Inertial.from_sphere mass: -3.0 is negative"):
        Inertial.from_sphere(-3.0, 0.1)
    with pytest.raises(AuthoringError, match="inertia_multiply: -2.0 is negative"):
        Inertial.from_cylinder(1.0, 0.1, 0.2, inertia_multiply=-2.0)
    with pytest.raises(ValueError, match="Inertial.from_geometry: Mesh .* not supported"):
        Inertial.from_geometry(1.0, Mesh("m.stl"))


# ------------------------------------------------------------------------------ links
def test_link_keeps_every_visual_in_order() -> None:
    visuals = [Visual(Sphere(float(i + 1)), name=f"v{i}") for i in range(3)]
    link = Link("a", visuals=visuals, collisions=[Collision(Box((1.0, 1.0, 1.0)))])
    back = _in_robot(link)
    assert [v.name for v in (back.visual, *back.extra_visuals)] == ["v0", "v1", "v2"]
    assert back == link.to_ir()
    assert ET.fromstring(link.to_xml()).tag == "link"
    with pytest.raises(AuthoringError, match="Link name: the name is empty"):
        Link("")
    with pytest.raises(AuthoringError, match="Link 'a' visuals: expected Visual, got Box"):
        Link("a", visuals=[Box((1.0, 1.0, 1.0))])  # type: ignore[list-item]


# ------------------------------------------------------------------------------ joints
@pytest.mark.parametrize("joint_type", ["revolute", "continuous", "prismatic", "fixed", "floating", "planar"])
def test_every_joint_type(joint_type: Any) -> None:
    limit = LIMIT if joint_type in ("revolute", "prismatic") else None
    axis = (0.0, 0.6, 0.8) if joint_type in ("revolute", "continuous", "prismatic", "planar") else None
    joint = Joint("j", joint_type, Link("a"), "b", Origin((0.0, 0.0, 0.5)), axis, limit)
    back = parse_string(_two_links(joint).to_urdf())
    assert back.joints == [joint.to_ir()]
    assert back.joints[0].type == joint_type


def test_joint_details_read_back() -> None:
    leader = Joint("lead", "prismatic", "a", "b", axis=(0.0, 0.0, 1.0), limit=Limit(effort=1.0, velocity=0.5))
    follower = Joint(
        "follow",
        "prismatic",
        "a",
        "c",
        None,
        (0.0, 0.0, -2.0),
        Limit(lower=0.0, upper=0.04, effort=5.0, velocity=0.1),
        Dynamics(damping=0.5),
        Mimic(leader, -1.5, 0.25),
        SafetyController(10.0, 20.0, 0.001, 0.039),
    )
    robot = Robot("r", links=[Link("a"), Link("b"), Link("c")], joints=[leader, follower])
    back = parse_string(robot.to_urdf())
    assert back.joints == [leader.to_ir(), follower.to_ir()]
    assert back.joints[1].origin is None and back.joints[1].axis == (0.0, 0.0, -2.0)  # kept as given
    assert back.joints[1].mimic is not None and back.joints[1].mimic.joint == "lead"
    assert Joint("j", "continuous", "a", "b").to_ir().axis == (1.0, 0.0, 0.0)  # URDF's default


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Joint("j", "rotary", "a", "b"), "Joint 'j': type 'rotary' is not a URDF joint type \\(revolute, "),
        (lambda: Joint("j", "revolute", "a", "b"), "Joint 'j': a revolute joint needs a limit"),
        (lambda: Joint("j", "prismatic", "a", "b"), "a prismatic joint needs a limit"),
        (
            lambda: Joint("j", "revolute", "a", "b", axis=(0, 0, 0), limit=LIMIT),
            "Joint 'j': the axis .* has zero length",
        ),
        (lambda: Joint("j", "continuous", "a", "b", axis=(0, math.nan, 1)), "Joint 'j' axis: nan"),
        (lambda: Joint("j", "fixed", "a", "b", axis=(0, 0, 1)), "a fixed joint has no axis"),
        (lambda: Joint("j", "fixed", "a", "a"), "parent and child are the same link 'a'"),
        (lambda: Joint("", "fixed", "a", "b"), "Joint name: the name is empty"),
        (lambda: Joint("j", "continuous", "a", "b", mimic=Mimic("j")), "a joint cannot mimic itself"),
        (lambda: Joint("j", "fixed", "a", "b", limit=(0, 1)), "Joint 'j' limit: expected Limit"),  # type: ignore[arg-type]
        (lambda: Limit(lower=1.0, upper=-1.0, effort=1.0, velocity=1.0), "Limit: lower 1.0 is above upper -1.0"),
        (lambda: Limit(effort=-1.0, velocity=1.0), "Limit effort: -1.0 is negative"),
        (lambda: Limit(effort=1.0, velocity=math.inf), "Limit velocity: inf"),
        (lambda: Dynamics(damping=-0.1), "Dynamics damping: -0.1 is negative"),
        (lambda: Mimic("x", multiplier=math.nan), "Mimic multiplier: nan"),
        (lambda: SafetyController(-1.0), "SafetyController k_velocity: -1.0 is negative"),
        (lambda: SafetyController(1.0, soft_lower_limit=1.0, soft_upper_limit=0.0), "soft_lower_limit 1.0 is above"),
        (lambda: Transmission("t", "j", "m", reduction=0.0), "Transmission 't': reduction 0"),
        (lambda: Transmission("t", "", "m"), "Transmission 't' joint: the name is empty"),
    ],
)
def test_joint_and_transmission_errors(make: Any, message: str) -> None:
    with pytest.raises(AuthoringError, match=message) as caught:
        make()
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, BbRobotError)


def test_transmission_text() -> None:
    joint = Joint("j", "continuous", "a", "b")
    tr = Transmission("t", joint, "motor", reduction=-50.0, offset=0.1)
    element = ET.fromstring(tr.to_xml())
    assert element.findtext("joint/hardwareInterface") == "hardware_interface/PositionJointInterface"
    assert element.findtext("joint/offset") == "0.1"
    assert element.findtext("actuator/mechanicalReduction") == "-50.0"
    robot = _two_links(joint, transmissions=[tr, Transmission(None, joint, reduction=2.0)])
    back = parse_string(robot.to_urdf())
    assert back.transmissions == {"t": tr.to_ir(), "j": Transmission(None, "j", reduction=2.0).to_ir()}
    effort = Transmission("e", joint, "m", hardware_interface="hardware_interface/EffortJointInterface")
    assert "EffortJointInterface" in _two_links(joint, transmissions=[effort]).to_urdf()


# ------------------------------------------------------------------------------ robot
def test_robot_document_reads_back_as_its_ir() -> None:
    red = Material("red", rgba=(1.0, 0.0, 0.0, 1.0))
    base = Link("base", visuals=[Visual(Box((1.0, 1.0, 0.1)), material=red)], inertial=Inertial.from_sphere(1.0, 0.1))
    arm = Link("arm", visuals=[Visual(Cylinder(0.1, 1.0), material=red), Visual(Sphere(0.1), material=Material("red"))])
    joint = Joint("j", "revolute", base, arm, Origin((0.0, 0.0, 0.1)), (0.0, 0.0, 1.0), LIMIT)
    robot = Robot("r", links=[base, arm], joints=[joint], transmissions=[Transmission("t", joint, "m", 10.0)])
    text = robot.to_urdf(comment=" generated ")
    assert text.startswith('<?xml version="1.0"?>\n<robot name="r">\n  <!-- generated -->\n  <material name="red">')
    root = ET.fromstring(text.split("\n", 1)[1])
    assert [len(m) for m in root.iter("material")] == [1, 0, 0, 0]  # defined once, then referenced
    back = parse_string(text)
    expected = robot.to_ir()
    assert (back.name, back.links, back.joints, back.transmissions, back.materials) == (
        expected.name,
        expected.links,
        expected.joints,
        expected.transmissions,
        expected.materials,
    )
    assert robot.top_materials == (red,)
    assert robot.to_xml().startswith('<robot name="r">')
    model = robot.to_model()
    assert model.root_link == "base" and model.joints["j"].actuators == ("m",)


def test_world_anchor() -> None:
    base = Link("base")
    robot = Robot("r", links=[base], joints=[Joint("anchor", "fixed", WORLD, base, Origin((1.0, 0.0, 0.0)))])
    model = robot.to_model()
    assert model.root_link == "world"
    assert robot.to_model(drop_world=True).root_link == "base"


def test_explicit_materials_keep_what_is_written() -> None:
    grey = Material("grey", rgba=(0.5, 0.5, 0.5, 1.0))
    other = Material("grey", rgba=(0.2, 0.2, 0.2, 1.0))
    unused = Material("unused", rgba=(0.0, 1.0, 0.0, 1.0))
    link = Link("a", visuals=[Visual(Sphere(0.1), material=grey), Visual(Sphere(0.2), material=other)])
    robot = Robot("r", links=[link], materials=[grey, unused])
    back = parse_string(robot.to_urdf())
    assert back.materials == {"grey": grey.to_ir(), "unused": unused.to_ir()}
    assert back.links[0].visual is not None and back.links[0].visual.material == grey.to_ir()
    assert back.links[0].extra_visuals[0].material == other.to_ir()  # written inside its visual


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Robot(""), "Robot name: the name is empty"),
        (lambda: Robot("r", links=[Link("a"), Link("a")]), "Robot 'r': two links are named 'a' \\(numbers 1 and 2\\)"),
        (
            lambda: Robot("r", links=[Link("a"), Link("b")], joints=[Joint("j", "fixed", "a", "b")] * 2),
            "two joints are named 'j'",
        ),
        (
            lambda: _two_links(Joint("j", "fixed", "a", "ghost")),
            "joint 'j' names child link 'ghost', which the robot does not define \\(its links: 'a', 'b'\\)",
        ),
        (lambda: _two_links(Joint("j", "fixed", "nobody", "b")), "names parent link 'nobody'"),
        (lambda: Robot("r", links=[Link("a"), Link("b")]), "2 links have no parent joint \\('a', 'b'\\)"),
        (
            lambda: Robot(
                "r",
                links=[Link("a"), Link("b"), Link("c")],
                joints=[Joint("j1", "fixed", "a", "b"), Joint("j2", "fixed", "c", "b")],
            ),
            "link 'b' has 2 parent joints",
        ),
        (
            lambda: Robot(
                "r",
                links=[Link("r0"), Link("a"), Link("b")],
                joints=[Joint("j1", "fixed", "a", "b"), Joint("j2", "fixed", "b", "a")],
            ),
            "kinematic loop",
        ),
        (
            lambda: _two_links(
                transmissions=[Transmission("t", "j", "m"), Transmission("t", "j", "m2")],
            ),
            "two transmissions are named 't'",
        ),
        (
            lambda: Robot("r", links=[Link("a")], materials=[Material("m", (0, 0, 0, 1)), Material("m", (1, 1, 1, 1))]),
            "two materials are named 'm'",
        ),
        (lambda: Robot("r", links=[Link("a")], materials=[Material(None, (0, 0, 0, 1))]), "needs a name"),
        (
            lambda: Robot(
                "r",
                links=[
                    Link("a", visuals=[Visual(Sphere(1.0), material=Material("m", (0, 0, 0, 1)))]),
                    Link("b", visuals=[Visual(Sphere(1.0), material=Material("m", (1, 1, 1, 1)))]),
                ],
                joints=[Joint("j", "fixed", "a", "b")],
            ),
            "material 'm' has two definitions",
        ),
        (
            lambda: Robot("r", links=[Link("a", visuals=[Visual(Sphere(1.0), material=Material("m"))])]),
            "refers to material 'm', which no visual defines",
        ),
        (lambda: Robot("r", links=[Link("a")]).to_urdf(comment="a -- b"), "cannot hold '--'"),
    ],
)
def test_robot_errors(make: Any, message: str) -> None:
    with pytest.raises(AuthoringError, match=message):
        make()


def test_what_to_model_checks() -> None:
    # A mimic of a joint the robot does not define is kept as written (cut-down descriptions
    # have them); the model refuses it.
    joint = Joint("j", "continuous", "a", "b", mimic=Mimic("elsewhere"))
    robot = _two_links(joint, transmissions=[Transmission("t", "missing", "m")])
    assert "elsewhere" in robot.to_urdf()
    with pytest.raises(InvalidRobot, match="elsewhere"):
        robot.to_model()


def test_an_empty_robot_is_kept() -> None:
    # example-robot-data's ur3.urdf is such a placeholder
    assert parse_string(Robot("empty").to_urdf()).links == []


def test_names_with_xml_special_characters() -> None:
    hostile = "a<b>&c\"d'e f\tg\nh"
    base = Link(hostile + "base")
    tip = Link(hostile + "tip")
    joint = Joint(hostile + "j", "continuous", base, tip)
    robot = Robot(hostile, links=[base, tip], joints=[joint], transmissions=[Transmission(hostile, joint, hostile)])
    back = parse_string(robot.to_urdf())
    assert back.name == hostile and [link.name for link in back.links] == [base.name, tip.name]
    assert back.transmissions[hostile].actuator == hostile


def test_lookups() -> None:
    robot = _two_links()
    assert robot.link("b").name == "b" and robot.joint("j").type == "revolute"
    with pytest.raises(KeyError):
        robot.link("zzz")
    with pytest.raises(KeyError):
        robot.joint("zzz")


def test_peers_read_the_documents() -> None:
    """urdf_parser_py and Pinocchio accept what the elements write: limits, dynamics, safety
    controller, mimic, materials, a transmission."""
    urdf = pytest.importorskip("urdf_parser_py.urdf", reason="PyPI urdf-parser-py is not installed")
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed")
    shell = Material("shell", rgba=(0.2, 0.3, 0.4, 1.0))
    links = [
        Link(name, visuals=[Visual(Box((0.1, 0.1, 0.1)), material=shell)], inertial=Inertial.from_sphere(1.0, 0.05))
        for name in ("base", "a", "b", "c", "d")
    ]
    joints = [
        Joint("j1", "revolute", "base", "a", Origin((0, 0, 0.1)), (0, 0, 1), LIMIT, Dynamics(0.1, 0.2),
              safety_controller=SafetyController(1.0, 2.0, -0.9, 0.9)),
        Joint("j2", "prismatic", "a", "b", axis=(1, 0, 0), limit=LIMIT, mimic=Mimic("j1", 0.5, 0.1)),
        Joint("j3", "continuous", "b", "c", Origin(rpy=(0.1, 0.2, 0.3)), axis=(0, 1, 0)),
        Joint("j4", "fixed", "c", "d", Origin((0.5, 0, 0))),
    ]  # fmt: skip
    robot = Robot("peers", links, joints, [Transmission("t1", "j1", "m1", 50.0, 0.25)])
    text = robot.to_urdf()
    parsed = urdf.URDF.from_xml_string(text.encode())
    assert [j.name for j in parsed.joints] == ["j1", "j2", "j3", "j4"]
    assert parsed.joints[0].safety_controller.k_position == 2.0
    assert parsed.joints[1].mimic.multiplier == 0.5
    assert parsed.transmissions[0].actuators[0].mechanicalReduction == 50.0
    model = pin.buildModelFromXML(text)
    assert {n for n in model.names if n != "universe"} == {"j1", "j2", "j3"}
