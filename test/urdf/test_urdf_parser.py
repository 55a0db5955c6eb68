"""parse_string / parse_file against seed 000: every type and field, defaults, warnings, errors."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from bb_robot.errors import BbRobotError
from bb_robot.urdf import (
    DuplicateNameError,
    InvalidValueError,
    MissingAttributeError,
    MissingElementError,
    NotUrdfError,
    UnknownJointTypeError,
    UrdfError,
    UrdfFileError,
    ir,
    parse_file,
    parse_string,
)


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def two_links(joint: str) -> str:
    return robot(f'<link name="a"/>\n<link name="b"/>\n{joint}')


def one_joint(inner: str, kind: str = "revolute", name: str = "ab") -> ir.Joint:
    text = two_links(f'<joint name="{name}" type="{kind}"><parent link="a"/><child link="b"/>{inner}</joint>')
    return parse_string(text).joints[0]


def floats_everywhere(value: object) -> list[str]:
    """Paths of numeric fields in ``value`` that are not ``float`` (ints, strings...)."""
    bad: list[str] = []

    def walk(item: object, path: str) -> None:
        if isinstance(item, bool) or item is None or isinstance(item, str):
            return
        if isinstance(item, int):
            bad.append(path)
        elif isinstance(item, float):
            return
        elif isinstance(item, (list, tuple)):
            for index, element in enumerate(item):
                walk(element, f"{path}[{index}]")
        elif isinstance(item, dict):
            for key, element in item.items():
                walk(element, f"{path}[{key!r}]")
        elif dataclasses.is_dataclass(item):
            for field in dataclasses.fields(item):
                walk(getattr(item, field.name), f"{path}.{field.name}")

    walk(value, "robot")
    return bad


FULL = robot(
    """
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <material name="wood"><texture filename="package://p/wood.png"/></material>
  <link name="base">
    <inertial>
      <origin xyz="0 0 1" rpy="0 0 0"/>
      <mass value="2"/>
      <inertia ixx="1" ixy="2" ixz="3" iyy="4" iyz="5" izz="6"/>
    </inertial>
    <visual name="v">
      <origin xyz="1 2 3" rpy="0.1 0.2 0.3"/>
      <geometry><box size="1 2 3"/></geometry>
      <material name="blue"/>
    </visual>
    <collision name="c1">
      <origin xyz="0 0 1"/>
      <geometry><cylinder radius="0.5" length="2"/></geometry>
    </collision>
    <collision><geometry><sphere radius="3"/></geometry></collision>
    <collision><geometry><mesh filename="package://p/m.stl" scale="2 2 2"/></geometry></collision>
  </link>
  <link name="arm">
    <visual><geometry><mesh filename="m.dae"/></geometry><material name="wood"/></visual>
  </link>
  <link name="tip"/>
  <joint name="shoulder" type="revolute">
    <origin xyz="0 0 1" rpy="0 0 1"/>
    <parent link="base"/>
    <child link="arm"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/>
    <dynamics damping="0.5" friction="0.25"/>
    <safety_controller k_velocity="3" k_position="4"
                       soft_lower_limit="-0.9" soft_upper_limit="0.9"/>
  </joint>
  <joint name="wrist" type="continuous">
    <parent link="arm"/>
    <child link="tip"/>
    <mimic joint="shoulder" multiplier="-2" offset="0.5"/>
  </joint>
  <transmission name="t1">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="m1"><mechanicalReduction>50</mechanicalReduction></actuator>
  </transmission>
""",
    name="full",
)


@pytest.fixture(scope="module")
def full() -> ir.Robot:
    return parse_string(FULL, source="full.urdf")


# -- robot ------------------------------------------------------------------------------------


def test_robot_fields(full: ir.Robot) -> None:
    assert isinstance(full, ir.Robot)
    assert full.name == "full"
    assert [link.name for link in full.links] == ["base", "arm", "tip"]
    assert [joint.name for joint in full.joints] == ["shoulder", "wrist"]
    assert list(full.transmissions) == ["t1"]
    assert sorted(full.materials) == ["blue", "wood"]
    assert full.warnings == []
    assert full.source == "full.urdf"


def test_all_numbers_are_floats(full: ir.Robot) -> None:
    assert floats_everywhere(full) == []


def test_source_defaults_to_none_and_accepts_paths() -> None:
    assert parse_string(robot('<link name="a"/>')).source is None
    assert parse_string(robot('<link name="a"/>'), source=Path("x/y.urdf")).source == os.fspath(Path("x/y.urdf"))


def test_parse_string_accepts_bytes() -> None:
    assert parse_string(robot('<link name="a"/>').encode()).links[0].name == "a"


# -- links, visuals, collisions, geometry, inertial ---------------------------------------


def test_link_fields(full: ir.Robot) -> None:
    base, arm, tip = full.links
    assert isinstance(base, ir.Link)
    assert base.visual is not None and len(base.collisions) == 3
    assert base.extra_visuals == []
    assert tip == ir.Link(name="tip", visual=None, collisions=[], inertial=None)


def test_visual_fields(full: ir.Robot) -> None:
    visual = full.links[0].visual
    assert visual == ir.Visual(
        name="v",
        origin=ir.Origin(xyz=(1.0, 2.0, 3.0), rpy=(0.1, 0.2, 0.3)),
        geometry=ir.Box(size=(1.0, 2.0, 3.0)),
        material=ir.Material(name="blue", color=ir.Color(0.0, 0.0, 1.0, 1.0), texture=None),
    )


def test_collision_fields(full: ir.Robot) -> None:
    first, second, third = full.links[0].collisions
    assert first == ir.Collision(
        name="c1",
        origin=ir.Origin(xyz=(0.0, 0.0, 1.0), rpy=(0.0, 0.0, 0.0)),
        geometry=ir.Cylinder(radius=0.5, length=2.0),
    )
    assert second == ir.Collision(name=None, origin=None, geometry=ir.Sphere(radius=3.0))
    assert third.geometry == ir.Mesh(filename="package://p/m.stl", scale=2.0, extra_scale_xyz=None)


def test_mesh_default_scale(full: ir.Robot) -> None:
    visual = full.links[1].visual
    assert visual is not None
    assert visual.geometry == ir.Mesh(filename="m.dae", scale=1.0, extra_scale_xyz=None)


def test_non_uniform_mesh_scale_is_kept_with_a_warning() -> None:
    result = parse_string(
        robot('<link name="a">\n<visual><geometry><mesh filename="m.stl" scale="1 -1 2"/></geometry></visual></link>'),
        source="s.urdf",
    )
    visual = result.links[0].visual
    assert visual is not None
    assert visual.geometry == ir.Mesh(filename="m.stl", scale=1.0, extra_scale_xyz=(1.0, -1.0, 2.0))
    (warning,) = result.warnings
    assert warning.startswith("s.urdf:4: link 'a' <visual>: <mesh scale=\"1 -1 2\"> is not uniform")


def test_inertial_fields(full: ir.Robot) -> None:
    assert full.links[0].inertial == ir.Inertial(
        origin=ir.Origin(xyz=(0.0, 0.0, 1.0), rpy=(0.0, 0.0, 0.0)),
        mass=2.0,
        inertia=ir.Inertia(ixx=1.0, ixy=2.0, ixz=3.0, iyy=4.0, iyz=5.0, izz=6.0),
    )


def test_second_visual_goes_to_extra_visuals_with_a_warning() -> None:
    result = parse_string(
        robot(
            '<link name="a">\n'
            '<visual name="one"><geometry><sphere radius="1"/></geometry></visual>\n'
            '<visual name="two"><geometry><sphere radius="2"/></geometry></visual>\n'
            '<visual name="three"><geometry><sphere radius="3"/></geometry></visual>\n'
            "</link>"
        )
    )
    link = result.links[0]
    assert link.visual is not None and link.visual.name == "one"
    assert [visual.name for visual in link.extra_visuals] == ["two", "three"]
    (warning,) = result.warnings
    assert warning.startswith("<string>:3: link 'a' has 3 <visual> elements")
    assert "extra_visuals" in warning


def test_missing_geometry_warns_and_is_none() -> None:
    result = parse_string(robot('<link name="a"><visual/><collision><geometry/></collision></link>'))
    link = result.links[0]
    assert link.visual == ir.Visual()
    assert link.collisions == [ir.Collision()]
    assert any("<visual> has no <geometry>" in w for w in result.warnings)
    assert any("<geometry> is empty" in w for w in result.warnings)


def test_unsupported_geometry_warns() -> None:
    result = parse_string(
        robot('<link name="a"><collision><geometry><capsule radius="1" length="2"/></geometry></collision></link>')
    )
    assert result.links[0].collisions[0].geometry is None
    assert any("geometry <capsule> is not supported" in w for w in result.warnings)


def test_inertial_without_mass_or_inertia_warns() -> None:
    result = parse_string(robot('<link name="a"><inertial/></link>'))
    assert result.links[0].inertial == ir.Inertial(origin=None, mass=None, inertia=ir.Inertia())
    assert any("has no <mass>" in w for w in result.warnings)
    assert any("has no <inertia>" in w for w in result.warnings)


def test_missing_inertia_components_read_as_zero_with_a_warning() -> None:
    result = parse_string(
        robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="2" izz="3"/></inertial></link>')
    )
    inertial = result.links[0].inertial
    assert inertial is not None
    assert inertial.inertia == ir.Inertia(ixx=1.0, iyy=2.0, izz=3.0)
    assert any("has no ixy, ixz, iyz" in w for w in result.warnings)


def test_negative_mass_is_kept_with_a_warning() -> None:
    result = parse_string(
        robot(
            '<link name="heavy"><inertial><mass value="-1.5"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        ),
        source="m.urdf",
    )
    inertial = result.links[0].inertial
    assert inertial is not None and inertial.mass == -1.5
    (warning,) = result.warnings
    assert warning.startswith("m.urdf:3: link 'heavy' <inertial>: <mass value=\"-1.5\"> is negative")


def test_negative_sizes_warn() -> None:
    result = parse_string(
        robot(
            '<link name="a"><collision><geometry><box size="1 -1 1"/></geometry></collision>'
            '<collision><geometry><sphere radius="-1"/></geometry></collision>'
            '<collision><geometry><cylinder radius="-1" length="1"/></geometry></collision>'
            "</link>"
        )
    )
    assert len([w for w in result.warnings if "negative" in w]) == 3


# -- origins ----------------------------------------------------------------------------------


def test_origin_fields_and_defaults() -> None:
    assert one_joint('<origin xyz="1 2 3" rpy="4 5 6"/>').origin == ir.Origin((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    assert one_joint('<origin xyz="1 2 3"/>').origin == ir.Origin((1.0, 2.0, 3.0), (0.0, 0.0, 0.0))
    assert one_joint('<origin rpy="0 0 1"/>').origin == ir.Origin((0.0, 0.0, 0.0), (0.0, 0.0, 1.0))
    assert one_joint("<origin/>").origin == ir.Origin()
    assert one_joint("").origin is None


def test_numbers_in_exponent_form_and_extra_spaces() -> None:
    origin = one_joint('<origin xyz="  1e-3\t-2.5E2   +3 "/>').origin
    assert origin == ir.Origin((0.001, -250.0, 3.0))


def test_repeated_single_element_warns_and_the_first_counts() -> None:
    result = parse_string(
        two_links(
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
            '<origin xyz="1 0 0"/><origin xyz="2 0 0"/></joint>'
        )
    )
    assert result.joints[0].origin == ir.Origin((1.0, 0.0, 0.0))
    assert any("a second <origin> is ignored" in w for w in result.warnings)


# -- joints -----------------------------------------------------------------------------------


def test_joint_fields(full: ir.Robot) -> None:
    shoulder, wrist = full.joints
    assert shoulder == ir.Joint(
        name="shoulder",
        type="revolute",
        parent="base",
        child="arm",
        origin=ir.Origin((0.0, 0.0, 1.0), (0.0, 0.0, 1.0)),
        axis=(0.0, 0.0, 1.0),
        limit=ir.Limit(lower=-1.0, upper=1.0, effort=10.0, velocity=2.0),
        dynamics=ir.Dynamics(damping=0.5, friction=0.25),
        mimic=None,
        safety_controller=ir.SafetyController(
            k_velocity=3.0, k_position=4.0, soft_lower_limit=-0.9, soft_upper_limit=0.9
        ),
    )
    assert wrist.mimic == ir.Mimic(joint="shoulder", multiplier=-2.0, offset=0.5)
    assert wrist.limit is None and wrist.dynamics is None and wrist.origin is None


@pytest.mark.parametrize("kind", ir.JOINT_TYPES)
def test_every_joint_type(kind: str) -> None:
    joint = one_joint('<limit lower="0" upper="1" effort="1" velocity="1"/>', kind=kind)
    assert joint.type == kind


@pytest.mark.parametrize(
    ("kind", "axis"),
    [
        ("revolute", (1.0, 0.0, 0.0)),
        ("continuous", (1.0, 0.0, 0.0)),
        ("prismatic", (1.0, 0.0, 0.0)),
        ("planar", (1.0, 0.0, 0.0)),
        ("fixed", None),
        ("floating", None),
    ],
)
def test_axis_defaults(kind: str, axis: tuple[float, float, float] | None) -> None:
    assert one_joint('<limit effort="1" velocity="1" lower="0" upper="1"/>', kind=kind).axis == axis


def test_axis_is_kept_as_written() -> None:
    assert one_joint('<axis xyz="0 0 2"/>', kind="continuous").axis == (0.0, 0.0, 2.0)
    assert one_joint("<axis/>", kind="continuous").axis == (1.0, 0.0, 0.0)


def test_axis_of_fixed_and_floating_joints_is_ignored_even_if_zero() -> None:
    assert one_joint('<axis xyz="0 0 0"/>', kind="fixed").axis is None
    assert one_joint('<axis xyz="0 0 1"/>', kind="floating").axis is None


def test_limit_fields_and_partial_limits() -> None:
    joint = one_joint('<limit effort="5" velocity="6"/>', kind="continuous")
    assert joint.limit == ir.Limit(lower=None, upper=None, effort=5.0, velocity=6.0)


def test_missing_limit_on_revolute_or_prismatic_warns() -> None:
    for kind in ("revolute", "prismatic"):
        result = parse_string(two_links(f'<joint name="j" type="{kind}"><parent link="a"/><child link="b"/></joint>'))
        assert result.joints[0].limit is None
        (warning,) = result.warnings
        assert warning.startswith(f"<string>:5: joint 'j' ({kind}) has no <limit>")


def test_limit_without_effort_velocity_or_bounds_warns() -> None:
    result = parse_string(
        two_links('<joint name="j" type="revolute"><parent link="a"/><child link="b"/><limit lower="-1"/></joint>')
    )
    assert result.joints[0].limit == ir.Limit(lower=-1.0)
    assert any("<limit> has no upper" in w for w in result.warnings)
    assert any("<limit> has no effort and velocity" in w for w in result.warnings)


def test_lower_above_upper_warns() -> None:
    result = parse_string(
        two_links(
            '<joint name="j" type="prismatic"><parent link="a"/><child link="b"/>'
            '<limit lower="1" upper="-1" effort="1" velocity="1"/></joint>'
        )
    )
    assert any("lower 1.0 > upper -1.0" in w for w in result.warnings)


def test_no_limit_needed_for_continuous_fixed_floating_planar() -> None:
    for kind in ("continuous", "fixed", "floating", "planar"):
        result = parse_string(two_links(f'<joint name="j" type="{kind}"><parent link="a"/><child link="b"/></joint>'))
        assert result.warnings == []


def test_mimic_defaults() -> None:
    assert one_joint('<mimic joint="x"/>').mimic == ir.Mimic(joint="x", multiplier=1.0, offset=0.0)


def test_dynamics_partial() -> None:
    assert one_joint('<dynamics damping="1"/>', kind="fixed").dynamics == ir.Dynamics(damping=1.0)


def test_safety_controller_defaults() -> None:
    joint = one_joint('<safety_controller k_velocity="1"/>', kind="continuous")
    assert joint.safety_controller == ir.SafetyController(k_velocity=1.0)


def test_calibration_and_unknown_joint_elements_warn() -> None:
    result = parse_string(
        two_links(
            '<joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
            '<calibration rising="0"/><gadget/></joint>'
        ),
        source="c.urdf",
    )
    assert result.warnings == [
        "c.urdf:5: joint 'j': <calibration> is not supported; skipped",
        "c.urdf:5: joint 'j': unknown element <gadget> in <joint> is not supported; skipped",
    ]


# -- materials --------------------------------------------------------------------------------


def test_material_fields(full: ir.Robot) -> None:
    assert full.materials["blue"] == ir.Material(
        name="blue", color=ir.Color(red=0.0, green=0.0, blue=1.0, alpha=1.0), texture=None
    )
    assert full.materials["wood"] == ir.Material(name="wood", texture="package://p/wood.png")
    visual = full.links[1].visual
    assert visual is not None and visual.material == full.materials["wood"]


def test_material_reference_defined_after_use_resolves() -> None:
    result = parse_string(
        robot(
            '<link name="a"><visual><geometry><sphere radius="1"/></geometry>'
            '<material name="late"/></visual></link>\n'
            '<material name="late"><color rgba="1 0 0 1"/></material>'
        )
    )
    visual = result.links[0].visual
    assert visual is not None and visual.material == ir.Material("late", ir.Color(1, 0, 0, 1))
    assert result.warnings == []


def test_material_defined_inline_in_another_visual_resolves() -> None:
    result = parse_string(
        robot(
            '<link name="a">\n'
            '<visual><geometry><sphere radius="1"/></geometry><material name="first"/></visual>\n'
            '<visual><geometry><sphere radius="1"/></geometry><material name="other"/></visual>\n'
            "</link>\n"
            '<link name="b"><visual><geometry><sphere radius="1"/></geometry>'
            '<material name="first"><color rgba="0 1 0 1"/></material></visual></link>'
        )
    )
    first = result.links[0].visual
    assert first is not None and first.material == ir.Material("first", ir.Color(0, 1, 0, 1))
    assert result.links[0].extra_visuals[0].material == ir.Material(name="other")
    assert "first" not in result.materials  # only top-level definitions are listed
    assert any("material 'other' is not defined" in w for w in result.warnings)


def test_inline_colour_wins_over_the_name() -> None:
    result = parse_string(
        robot(
            '<material name="m"><color rgba="1 1 1 1"/></material>\n'
            '<link name="a"><visual><geometry><sphere radius="1"/></geometry>'
            '<material name="m"><color rgba="0 0 0 1"/></material></visual></link>'
        )
    )
    visual = result.links[0].visual
    assert visual is not None and visual.material == ir.Material("m", ir.Color(0, 0, 0, 1))


def test_undefined_material_warns_and_keeps_the_name() -> None:
    result = parse_string(
        robot(
            '<link name="a">\n<visual><geometry><sphere radius="1"/></geometry><material name="ghost"/></visual></link>'
        ),
        source="u.urdf",
    )
    visual = result.links[0].visual
    assert visual is not None and visual.material == ir.Material(name="ghost")
    assert result.warnings == [
        "u.urdf:4: link 'a' <visual>: material 'ghost' is not defined; kept by name only (no colour)"
    ]


def test_rgba_outside_unit_range_warns() -> None:
    result = parse_string(robot('<material name="m"><color rgba="255 0 0 1"/></material>'))
    assert result.materials["m"].color == ir.Color(255.0, 0.0, 0.0, 1.0)
    (warning,) = result.warnings
    assert "material 'm': <color rgba=\"255 0 0 1\"> has components outside [0, 1]" in warning


def test_duplicate_material_definitions() -> None:
    same = '<material name="m"><color rgba="1 0 0 1"/></material>'
    assert parse_string(robot(same + "\n" + same)).warnings == []
    result = parse_string(robot(same + '\n<material name="m"><color rgba="0 1 0 1"/></material>'))
    assert result.materials["m"].color == ir.Color(1, 0, 0, 1)
    assert any("defined again differently (first at line 3)" in w for w in result.warnings)


def test_colour_without_rgba_and_texture_without_filename_are_ignored_with_warnings() -> None:
    result = parse_string(robot('<material name="m"><color/><texture/></material>'))
    assert result.materials["m"] == ir.Material(name="m")
    assert len(result.warnings) == 2


# -- transmissions ----------------------------------------------------------------------------


def test_transmission_fields(full: ir.Robot) -> None:
    assert full.transmissions["t1"] == ir.Transmission(
        name="t1", joint="shoulder", actuator="m1", reduction=50.0, offset=0.0
    )


JOINT_J = two_links('<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>')


def with_transmission(xml: str) -> ir.Robot:
    return parse_string(JOINT_J.replace("</robot>", xml + "\n</robot>"), source="t.urdf")


def test_transmission_offset_and_defaults() -> None:
    result = with_transmission(
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j"><offset>0.25</offset></joint><actuator name="m"/></transmission>'
    )
    assert result.transmissions["t"] == ir.Transmission("t", "j", "m", reduction=1.0, offset=0.25)


def test_old_style_transmission_layout() -> None:
    result = with_transmission(
        '<transmission name="t" type="pr2_mechanism_model/SimpleTransmission">'
        '<joint name="j"/><actuator name="m"/><mechanicalReduction>-3</mechanicalReduction>'
        "</transmission>"
    )
    assert result.transmissions["t"] == ir.Transmission("t", "j", "m", reduction=-3.0)
    assert result.warnings == []


def test_nameless_transmission_is_keyed_by_its_joint() -> None:
    result = with_transmission('<transmission><type>SimpleTransmission</type><joint name="j"/></transmission>')
    assert result.transmissions == {"j": ir.Transmission(None, "j", None)}


def test_transmission_without_type_is_read_as_simple_with_a_warning() -> None:
    result = with_transmission('<transmission name="t"><joint name="j"/></transmission>')
    assert "t" in result.transmissions
    assert any("has no <type>" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        (
            '<transmission name="d"><type>transmission_interface/DifferentialTransmission</type>'
            '<joint name="j"/><joint name="k"/><actuator name="m1"/><actuator name="m2"/>'
            "</transmission>",
            "transmission 'd': type 'transmission_interface/DifferentialTransmission' is not supported",
        ),
        (
            '<transmission name="f"><type>transmission_interface/FourBarLinkageTransmission'
            '</type><joint name="j"/><actuator name="m"/></transmission>',
            "type 'transmission_interface/FourBarLinkageTransmission' is not supported",
        ),
        (
            '<transmission name="two"><type>transmission_interface/SimpleTransmission</type>'
            '<joint name="j"/><joint name="k"/><actuator name="m"/></transmission>',
            "transmission 'two' has 2 joints and 1 actuators; only simple transmissions",
        ),
    ],
    ids=["differential", "four-bar", "two-joints"],
)
def test_coupled_transmissions_are_skipped_with_a_warning(xml: str, expected: str) -> None:
    result = with_transmission(xml)
    assert result.transmissions == {}
    (warning,) = result.warnings
    assert warning.startswith("t.urdf:6: ") and expected in warning


def test_transmission_on_an_undefined_joint_warns() -> None:
    result = with_transmission(
        '<transmission name="t"><type>SimpleTransmission</type><joint name="zz"/></transmission>'
    )
    assert result.transmissions["t"].joint == "zz"
    assert any("refers to joint 'zz', which is not defined" in w for w in result.warnings)


def test_duplicate_transmission_names_error() -> None:
    simple = '<transmission name="t"><type>SimpleTransmission</type><joint name="j"/></transmission>'
    with pytest.raises(DuplicateNameError) as caught:
        with_transmission(simple + "\n" + simple)
    error = caught.value
    assert (error.kind, error.name, error.first_line, error.line) == ("transmission", "t", 6, 7)
    assert "duplicate transmission name 't': defined at line 6 and again at line 7" in str(error)


def test_non_numeric_reduction_drops_the_transmission_with_a_warning_naming_the_element() -> None:
    """A transmission is not needed for TF or to drive the joints: a bad value in it drops it, not the robot."""
    result = with_transmission(
        '<transmission name="t"><type>SimpleTransmission</type><joint name="j"/>'
        '<actuator name="m"><mechanicalReduction>fast</mechanicalReduction></actuator>'
        "</transmission>"
    )
    assert result.transmissions == {}
    (warning,) = [w for w in result.warnings if "mechanicalReduction" in w]
    assert warning.startswith("t.urdf:6: transmission 't' <mechanicalReduction>fast</mechanicalReduction>")
    assert "'fast' is not a number" in warning and warning.endswith(
        "the transmission is dropped (not needed for TF or to drive the joints)"
    )


def test_a_transmission_joint_without_a_name_drops_the_transmission() -> None:
    result = with_transmission('<transmission name="t"><type>SimpleTransmission</type><joint/></transmission>')
    assert result.transmissions == {}
    assert any("transmission 't'" in w and "the transmission is dropped" in w for w in result.warnings)


def test_material_problems_are_warnings_and_drop_only_the_material() -> None:
    result = parse_string(
        robot(
            '<material><color rgba="1 0 0 1"/></material>\n'
            '<link name="l"><visual><geometry><sphere radius="1"/></geometry>'
            '<material name="m"><color rgba="1 0 0"/></material></visual></link>'
        ),
        source="m.urdf",
    )
    assert [link.name for link in result.links] == ["l"] and result.materials == {}
    assert any(
        "m.urdf:3: <material>: the required attribute 'name' is missing" in w and "the material is dropped" in w
        for w in result.warnings
    )
    assert any(
        '<color rgba="1 0 0">: expected 4 numbers, got 3' in w and "the colour is ignored" in w for w in result.warnings
    )


def test_problems_in_what_the_kinematics_need_still_reject_the_file() -> None:
    with pytest.raises(InvalidValueError):
        one_joint('<limit lower="a" upper="1" effort="1" velocity="1"/>')


def test_ros2_control_is_not_a_transmission() -> None:
    result = with_transmission(
        '<ros2_control name="hw" type="system"><joint name="j">'
        '<command_interface name="position"/></joint></ros2_control>'
    )
    assert result.transmissions == {}
    assert result.warnings == [
        "t.urdf:6: <ros2_control> (ros2_control 'hw') is not supported (it describes hardware "
        "interfaces, not a transmission); skipped"
    ]


# -- unsupported elements ---------------------------------------------------------------------


def test_gazebo_and_unknown_elements_warn_with_line_and_owner() -> None:
    result = parse_string(
        robot(
            '<gazebo reference="a"><material>Gazebo/Red</material></gazebo>\n'
            "<gazebo><static>true</static></gazebo>\n"
            '<link name="a"><contact/></link>\n'
            "<sensor/>"
        ),
        source="g.urdf",
    )
    assert result.warnings == [
        'g.urdf:3: <gazebo reference="a"> is Gazebo-specific and not supported; skipped',
        "g.urdf:4: <gazebo> is Gazebo-specific and not supported; skipped",
        "g.urdf:5: link 'a': unknown element <contact> in <link> is not supported; skipped",
        "g.urdf:6: unknown element <sensor> under <robot> is not supported; skipped",
    ]


def test_robot_without_a_name_is_named_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nameless.urdf"
    path.write_text('<robot><link name="a"/></robot>')
    result = parse_file(path)
    assert result.name == "nameless"
    assert result.warnings == [f"{path}:1: <robot> has no name (URDF requires one); named 'nameless' after the file"]
    assert parse_string('<robot><link name="a"/></robot>').name == "robot"


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inner", "message"),
    [
        ('<origin xyz="1 2"/>', "joint 'ab' <origin xyz=\"1 2\">: expected 3 numbers, got 2."),
        ('<origin xyz="1 2 3 4"/>', "expected 3 numbers, got 4"),
        ('<origin rpy="0 x 0"/>', "joint 'ab' <origin rpy=\"0 x 0\">: 'x' is not a number."),
        ('<origin xyz="nan 0 0"/>', "'nan' is not a finite number"),
        ('<origin rpy="0 -inf 0"/>', "'-inf' is not a finite number"),
        ('<origin xyz="1_0 0 0"/>', "'1_0' is not a plain decimal number"),
        ('<axis xyz="1,0,0"/>', '<axis xyz="1,0,0">: expected 3 numbers, got 1'),
        ('<limit lower="low" upper="1" effort="1" velocity="1"/>', '<limit lower="low">'),
        ('<limit lower="0" upper="1" effort="1" velocity="Infinity"/>', "not a finite number"),
        ('<dynamics damping="?"/>', "<dynamics damping=\"?\">: '?' is not a number"),
        ('<mimic joint="x" multiplier=""/>', "<mimic multiplier=\"\">: '' is not a number"),
        ('<safety_controller k_velocity="fast"/>', '<safety_controller k_velocity="fast">'),
    ],
)
def test_bad_joint_values(inner: str, message: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        parse_string(
            two_links(f'<joint name="ab" type="revolute"><parent link="a"/><child link="b"/>\n{inner}</joint>'),
            source="bad.urdf",
        )
    error = caught.value
    assert isinstance(error, UrdfError) and isinstance(error, BbRobotError)
    assert error.source == "bad.urdf" and error.line == 6
    assert error.owner == "joint 'ab'"
    assert str(error).startswith("bad.urdf:6: joint 'ab' <")
    assert message in str(error)
    assert "Write" in str(error)  # says what to do


def test_bad_value_error_attributes() -> None:
    with pytest.raises(InvalidValueError) as caught:
        one_joint('<origin xyz="1 2"/>')
    error = caught.value
    assert (error.element, error.attribute, error.value) == ("origin", "xyz", "1 2")
    assert error.expected == "3 numbers" and error.problem == "expected 3 numbers, got 2"
    assert error.hint == 'Write xyz as 3 finite decimal numbers separated by spaces, e.g. xyz="0 0 0.1".'


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ('<visual><geometry><box size="1 1"/></geometry></visual>', '<box size="1 1">: expected 3'),
        ('<visual><geometry><sphere radius="r"/></geometry></visual>', '<sphere radius="r">'),
        (
            '<collision><geometry><cylinder radius="1" length="NaN"/></geometry></collision>',
            "'NaN' is not a finite number",
        ),
        (
            '<visual><geometry><mesh filename="m" scale="2"/></geometry></visual>',
            "expected 3 numbers",
        ),
        ('<inertial><mass value="heavy"/></inertial>', '<mass value="heavy">'),
        ('<inertial><inertia ixx="a"/></inertial>', '<inertia ixx="a">'),
        ('<visual><origin xyz="0 0 inf"/></visual>', "link 'l' <visual> <origin xyz=\"0 0 inf\">"),
    ],
)
def test_bad_link_values(link: str, message: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        parse_string(robot(f'<link name="l">\n{link}\n</link>'), source="l.urdf")
    assert caught.value.line == 4
    assert str(caught.value).startswith("l.urdf:4: link 'l'")
    assert message in str(caught.value)


def test_zero_length_axis_errors() -> None:
    with pytest.raises(InvalidValueError) as caught:
        one_joint('<axis xyz="0 0 0"/>', kind="prismatic")
    assert caught.value.problem == "the axis has zero length"
    assert "joint 'ab' <axis xyz=\"0 0 0\">: the axis has zero length." in str(caught.value)


def test_unknown_joint_type_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownJointTypeError) as caught:
        one_joint("", kind="helical")
    error = caught.value
    assert (error.joint, error.joint_type, error.valid_types) == ("ab", "helical", ir.JOINT_TYPES)
    assert str(error) == (
        "<string>:5: joint 'ab': unknown joint type 'helical'. Use one of: revolute, continuous, "
        "prismatic, fixed, floating, planar."
    )


@pytest.mark.parametrize(
    ("xml", "element", "attribute", "line"),
    [
        ("<link/>", "link", "name", 3),
        ('<link name=""/>', "link", "name", 3),
        ('<joint type="fixed"><parent link="a"/><child link="b"/></joint>', "joint", "name", 3),
        ('<joint name="j"><parent link="a"/><child link="b"/></joint>', "joint", "type", 3),
        ('<joint name="j" type="fixed">\n<parent/><child link="b"/></joint>', "parent", "link", 4),
        ('<joint name="j" type="fixed"><parent link="a"/>\n<child/></joint>', "child", "link", 4),
        (
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>\n<mimic/></joint>',
            "mimic",
            "joint",
            4,
        ),
        ('<link name="l"><visual><geometry>\n<box/></geometry></visual></link>', "box", "size", 4),
        (
            '<link name="l"><visual><geometry>\n<cylinder radius="1"/></geometry></visual></link>',
            "cylinder",
            "length",
            4,
        ),
        (
            '<link name="l"><visual><geometry>\n<sphere/></geometry></visual></link>',
            "sphere",
            "radius",
            4,
        ),
        (
            '<link name="l"><visual><geometry>\n<mesh/></geometry></visual></link>',
            "mesh",
            "filename",
            4,
        ),
        ('<link name="l"><inertial>\n<mass/></inertial></link>', "mass", "value", 4),
        (
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>\n<safety_controller/></joint>',
            "safety_controller",
            "k_velocity",
            4,
        ),
    ],
)
def test_missing_required_attributes(xml: str, element: str, attribute: str, line: int) -> None:
    with pytest.raises(MissingAttributeError) as caught:
        parse_string(robot(xml), source="miss.urdf")
    error = caught.value
    assert (error.element, error.attribute, error.line) == (element, attribute, line)
    assert str(error).startswith(f"miss.urdf:{line}:")
    assert f"<{element}>: the required attribute '{attribute}' is missing." in str(error)


@pytest.mark.parametrize("missing", ["parent", "child"])
def test_missing_parent_or_child_element(missing: str) -> None:
    present = "child" if missing == "parent" else "parent"
    with pytest.raises(MissingElementError) as caught:
        parse_string(robot(f'<joint name="j" type="fixed"><{present} link="a"/></joint>'))
    error = caught.value
    assert (error.child, error.line, error.owner) == (missing, 3, "joint 'j'")
    assert f"joint 'j': the required child element <{missing}> is missing" in str(error)


@pytest.mark.parametrize("kind", ["link", "joint"])
def test_duplicate_names_give_both_lines(kind: str) -> None:
    if kind == "link":
        body = '<link name="a"/>\n<link name="b"/>\n<link name="a"/>'
    else:
        joint = '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
        body = f'<link name="a"/>\n<link name="b"/>\n{joint}\n{joint}'
    with pytest.raises(DuplicateNameError) as caught:
        parse_string(robot(body), source="d.urdf")
    error = caught.value
    first, second = (3, 5) if kind == "link" else (5, 6)
    name = "a" if kind == "link" else "j"
    assert (error.kind, error.name, error.first_line, error.line) == (kind, name, first, second)
    assert str(error) == (
        f"d.urdf:{second}: duplicate {kind} name '{name}': defined at line {first} and again at "
        f"line {second}. Give every {kind} a unique name (rename or remove one of them)."
    )


def test_root_must_be_robot() -> None:
    with pytest.raises(NotUrdfError) as caught:
        parse_string('<?xml version="1.0"?>\n<sdf version="1.7"><model name="m"/></sdf>', source="w.sdf")
    error = caught.value
    assert error.root_tag == "sdf" and error.line == 2
    assert str(error).startswith("w.sdf:2: the root element is <sdf>, not <robot>.")
    assert "SDF loader" in str(error)


# -- parse_file -------------------------------------------------------------------------------


def test_parse_file_ok_with_str_and_path(tmp_path: Path) -> None:
    path = tmp_path / "full.urdf"
    path.write_text(FULL)
    for given in (path, str(path)):
        result = parse_file(given)
        assert result.source == str(path)
        assert [link.name for link in result.links] == ["base", "arm", "tip"]


def test_parse_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(UrdfFileError) as caught:
        parse_file(tmp_path / "missing.urdf")
    assert str(caught.value).startswith(f"{tmp_path / 'missing.urdf'}: no such file.")
    path = tmp_path / "bad.urdf"
    path.write_text(
        two_links('<joint name="ab" type="fixed"><parent link="a"/><child link="b"/><origin xyz="1 2"/></joint>')
    )
    with pytest.raises(InvalidValueError) as caught_value:
        parse_file(path)
    assert str(caught_value.value).startswith(f"{path}:5: joint 'ab' <origin xyz=\"1 2\">")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.urdf"
    path.write_text(robot('<link name="a"/>'))
    path.chmod(0)
    with pytest.raises(UrdfFileError, match="permission denied"):
        parse_file(path)


def test_xacro_arguments_for_a_plain_urdf_warn(tmp_path: Path) -> None:
    path = tmp_path / "plain.urdf"
    path.write_text(robot('<link name="a"/>'))
    result = parse_file(path, xacro_args={"b": "1", "a": "2"})
    assert result.warnings == [f"{path}: xacro arguments (a, b) were ignored: the file is not a .xacro file"]


def test_duplicates_on_one_line_are_found() -> None:
    with pytest.raises(DuplicateNameError, match="duplicate link name 'a'"):
        parse_string('<robot name="r"><link name="a"/><link name="a"/></robot>')
    joint = '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
    with pytest.raises(DuplicateNameError, match="duplicate joint name 'j'"):
        parse_string(f'<robot name="r"><link name="a"/><link name="b"/>{joint}{joint}</robot>')
