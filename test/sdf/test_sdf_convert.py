"""Conversion of the selected SDF model to a Robot: forward kinematics equal to an independent product
over the SDF's resolved frames, the elements added to keep every link pose exact (off-axis joints,
frames, free links, the world), limits, mimic, geometry, and names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.sdf_cases import CASES, load, sdf_link_poses
from helpers.sdf_transforms import T

from bb_robot.model.geometry import Box, Cylinder, Mesh, Sphere
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import origin_to_matrix
from bb_robot.sdf import read_string
from bb_robot.sdf.frames import WORLD
from bb_robot.sdf.loader import SdfLoadResult, load_from_model
from bb_robot.urdf.writer import robot_to_urdf


@pytest.mark.parametrize(("name", "scope"), CASES, ids=[f"{n}:{s}" if s else n for n, s in CASES])
def test_fk_equals_the_sdf_frames_at_zero_and_at_random_values(
    name: str, scope: str, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, name, scope)
    fk = ForwardKinematics(result.robot)
    rng = np.random.default_rng(abs(hash(name + scope)) % 2**32)
    root = result.robot.root_link
    root_world = result.converted.root_pose_in_world
    for trial in range(6):
        q = np.zeros(len(fk.joint_names)) if trial == 0 else rng.uniform(-2.5, 2.5, len(fk.joint_names))
        values = dict(zip(fk.joint_names, q, strict=True))
        expected = sdf_link_poses(result, values)
        got = fk.poses(values)
        # the floating joints of free links hold them where the SDF puts them; the root moves with nothing
        root_now = expected.get(root, root_world) if root != WORLD else np.eye(4)
        for link in result.link_names:
            np.testing.assert_allclose(root_now @ got[link], expected[link], atol=1e-9, err_msg=f"{link} q={q}")


def model(body: str, version: str = "1.9", name: str = "m", scope: str = "") -> SdfLoadResult:
    text = f'<sdf version="{version}"><model name="{name}">{body}</model></sdf>'
    return load_from_model(read_string(text, source="test.sdf"), scope, build_serial=False)


# --------------------------------------------------------------------------- added elements
def test_off_axis_revolute_joint_goes_through_a_link_at_the_joint_frame(
    corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, "gz_sim/examples/worlds/world_joint.sdf", "")
    robot = result.robot
    assert robot.root_link == "world"
    assert result.converted.joint_frame_links == ("world_joint",)
    moving, placing = robot.joints["world_joint"], robot.joints["link"]
    assert (moving.type, moving.parent_link, moving.child_link) == ("revolute", "world", "world_joint")
    assert (placing.type, placing.parent_link, placing.child_link) == ("fixed", "world_joint", "link")
    assert moving.axis == (1.0, 0.0, 0.0)
    # pendulum at 0 0 0.5 rolled 1.57; the joint frame 0.25 up the link's z
    model_pose = T((0, 0, 0.5), (1.57, 0, 0))
    np.testing.assert_allclose(origin_to_matrix(moving.origin), model_pose @ T((0, 0, 0.25)), atol=1e-15)
    np.testing.assert_allclose(origin_to_matrix(placing.origin), T((0, 0, -0.25)), atol=1e-15)
    assert result.link_names == ("link",)


def test_on_axis_offsets_need_no_extra_link() -> None:
    result = model(
        '<link name="a"/><link name="b"><pose>0 0 1 0 0 0</pose></link>'
        '<joint name="j" type="revolute"><pose>0 0 -0.4 0 0 0</pose><parent>a</parent><child>b</child></joint>'
        '<link name="c"><pose>0 0 2 0 0 0</pose></link>'
        '<joint name="p" type="prismatic"><pose>0.3 0.2 0 0 0 0</pose><parent>b</parent><child>c</child></joint>'
    )
    assert result.converted.joint_frame_links == ()
    assert set(result.robot.links) == {"a", "b", "c"}


@pytest.mark.parametrize("jtype", ["revolute", "prismatic"])
def test_a_child_frame_that_changes_whether_the_axis_is_plus_z_goes_through_the_joint_frame(jtype: str) -> None:
    # the axis is +z of the SDF joint frame; the child link is rolled 0.3 rad about the joint's x, on its axis
    result = model(
        '<link name="a"/><link name="b"><pose relative_to="j">0 0 0.1 0.3 0 0</pose></link>'
        f'<joint name="j" type="{jtype}"><pose relative_to="a">0 0 1 0 0 0</pose><parent>a</parent><child>b</child>'
        "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>",
        scope="m",
    )
    assert result.converted.joint_frame_links == ("j",)
    joint = result.robot.joints["j"]
    assert (joint.parent_link, joint.child_link, joint.axis) == ("a", "j", (0.0, 0.0, 1.0))
    serial = load_from_model(result.document).serial  # strict: +z of the SDF joint frame
    assert serial is not None and serial.link_names == ("a", "j") and serial.tip_link == "b"
    # the reverse: x in the joint frame, which the child frame (pitched 90°) would call z
    from bb_robot.model.errors import OffAxisJointError

    reverse = model(
        '<link name="a"/><link name="b"><pose relative_to="j">0 0 0 0 1.5707963267948966 0</pose></link>'
        f'<joint name="j" type="{jtype}"><pose relative_to="a"/><parent>a</parent><child>b</child>'
        "<axis><xyz>1 0 0</xyz></axis></joint>",
        scope="m",
    ).document
    assert load_from_model(reverse, build_serial=False).robot.joints["j"].child_link == "j"
    with pytest.raises(OffAxisJointError) as caught:
        load_from_model(reverse)
    assert caught.value.axes == {"j": (1.0, 0.0, 0.0)}


def test_frames_become_links_chained_as_written(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/ur3e.sdf", "")
    robot = result.robot
    assert len(result.converted.frame_links) == 10
    chain = ["tool0", "flange-tool0", "flange", "wrist_3-flange", "wrist_3_link"]
    for child, parent in zip(chain, chain[1:], strict=False):
        joint = robot.joints[child]
        assert (joint.type, joint.parent_link, joint.child_link) == ("fixed", parent, child)
    view = result.frames.model("ur3e")
    fk = ForwardKinematics(robot).poses({"wrist_3_joint": 0.7})
    moved = ForwardKinematics(robot).poses({"wrist_3_joint": 0.0})
    np.testing.assert_allclose(moved["tool0"], view.pose_of("tool0", "frame"), atol=1e-15)
    # the tool moves with wrist 3
    np.testing.assert_allclose(
        np.linalg.inv(fk["wrist_3_link"]) @ fk["tool0"],
        np.linalg.inv(moved["wrist_3_link"]) @ moved["tool0"],
        atol=1e-12,
    )
    assert result.scoped_names["tool0"] == "ur3e::tool0"
    assert "tool0" not in result.link_names


def test_free_links_hang_from_the_root_by_floating_joints(
    corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, "sdformat/test/sdf/nested_model.sdf", "")
    free = ("nested_model::nested_link01", "nested_model::nested_nested_model::nested_nested_link01")
    assert result.converted.floating_joints == free
    for name in free:
        joint = result.robot.joints[name]
        assert (joint.type, joint.parent_link) == ("floating", "parent")
    assert any("not connected by joints" in w and "floating joint" in w for w in result.warnings)
    assert result.scoped_names["nested_model::nested_link01"] == "top_level_model::nested_model::nested_link01"


def test_world_joints_inside_the_model_make_a_world_root(
    corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/iiwa14.sdf", "")
    robot = result.robot
    assert robot.root_link == "world"
    joint = robot.joints["world2base_fixed"]
    assert (joint.type, joint.parent_link, joint.child_link) == ("fixed", "world", "base")
    assert result.canonical_link == "base"
    assert result.link_names[0] == "base"


def test_a_wrapper_world_joint_is_the_placement(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "")
    assert result.converted.world_joints == ("ur3e::base_joint",)
    assert result.robot.root_link == "base_link"
    assert "base_joint" not in result.robot.joints
    np.testing.assert_allclose(result.converted.root_pose_in_world, np.eye(4))
    # selecting the wrapper brings its world joint in
    wrapper = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "ur3e")
    assert wrapper.robot.root_link == "world"
    joint = wrapper.robot.joints["base_joint"]
    assert joint.child_link == "ur3e_position_controller::ur3e::base_link"
    assert "ur3e_position_controller::ur3e::shoulder_pan_joint" in wrapper.joint_names


def test_outside_joints_that_move_the_model_are_reported(
    corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, "gz_sim/test/worlds/include_connected_nested_models.sdf", "")
    text = "\n".join(result.warnings)
    assert "joint 'include_connected_nested_new_name::joint_00' (revolute)" in text
    assert 'pass model_scope="include_connected_nested_new_name"' in text


# --------------------------------------------------------------------------- joints
def test_limits(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load(corpus_dir, corpus_resource_paths, "sdformat/test/sdf/joint_axis_infinite_limits.sdf", "")
    joints = result.robot.joints
    for name in ("default_joint_limits", "infinite_joint_limits_neg", "infinite_joint_limits_inf"):
        limits = joints[name].limits
        assert limits is not None and (limits.lower, limits.upper, limits.velocity, limits.effort) == (None,) * 4
    finite = joints["finite_joint_limits"].limits
    assert finite is not None and (finite.lower, finite.upper, finite.velocity, finite.effort) == (-1.5, 1.5, 2.5, 5.5)
    ur3e = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/ur3e.sdf", "").robot.joints
    pan, wrist_3 = ur3e["shoulder_pan_joint"].limits, ur3e["wrist_3_joint"].limits
    assert pan is not None and (pan.lower, pan.upper, pan.effort, pan.velocity) == (
        -6.2831853071795862,
        6.2831853071795862,
        54.0,
        3.1415926535897931,
    )
    assert wrist_3 is not None and (wrist_3.lower, wrist_3.upper) == (None, None)
    result = model(
        '<link name="a"/><link name="b"/><link name="c"/><link name="d"/>'
        '<joint name="c1" type="continuous"><parent>a</parent><child>b</child>'
        "<axis><limit><lower>-1</lower><upper>1</upper><effort>3</effort></limit></axis></joint>"
        '<joint name="r" type="revolute"><parent>b</parent><child>c</child><axis><xyz>0 0 1</xyz></axis></joint>'
        '<joint name="f" type="fixed"><parent>c</parent><child>d</child></joint>',
        version="1.11",
    )
    c1, r = result.robot.joints["c1"].limits, result.robot.joints["r"].limits
    assert c1 is not None and (c1.lower, c1.upper, c1.effort, c1.velocity) == (None, None, 3.0, None)
    assert r is not None and (r.lower, r.upper, r.effort, r.velocity) == (None, None, None, None)
    assert result.robot.joints["f"].limits is None


def test_mimic_with_reference() -> None:
    result = model(
        '<link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="leader" type="revolute"><parent>a</parent><child>b</child></joint>'
        '<joint name="follower" type="prismatic"><parent>a</parent><child>c</child><axis><xyz>1 0 0</xyz>'
        '<mimic joint="leader"><multiplier>2</multiplier><offset>0.5</offset><reference>0.1</reference></mimic>'
        "</axis></joint>",
        version="1.11",
    )
    mimic = result.robot.joints["follower"].mimic
    assert mimic is not None
    assert (mimic.joint, mimic.multiplier) == ("leader", 2.0)
    assert mimic.offset == pytest.approx(0.3)
    assert result.joint_names == ("leader",)


def test_names_are_relative_to_the_selected_scope() -> None:
    result = model(
        '<link name="base"/><link name="forearm"><pose>0 0 1 0 0 0</pose></link>'
        '<joint name="elbow" type="revolute"><parent>base</parent><child>forearm</child></joint>'
        '<model name="gripper"><pose relative_to="forearm">0 0 0.5 0 0 0</pose>'
        '<link name="palm"/><link name="finger"><pose>0.02 0 0.05 0 0 0</pose></link>'
        '<joint name="finger_joint" type="prismatic"><parent>palm</parent><child>finger</child>'
        "<axis><xyz>1 0 0</xyz></axis></joint></model>"
        '<joint name="mount" type="fixed"><parent>forearm</parent><child>gripper::palm</child></joint>',
        name="arm",
        scope="arm",
    )
    assert result.source_scope == "arm"
    assert result.joint_names == ("elbow", "gripper::finger_joint")
    assert result.link_names == ("base", "forearm", "gripper::palm", "gripper::finger")
    assert result.scoped_names["gripper::finger_joint"] == "arm::gripper::finger_joint"
    assert result.scoped_names["gripper"] == "arm::gripper"
    np.testing.assert_allclose(ForwardKinematics(result.robot).poses()["gripper::finger"], T((0.02, 0, 1.55)))


def test_unsupported_joint_types_name_the_joint() -> None:
    from bb_robot.sdf import UnsupportedSdfError

    with pytest.raises(UnsupportedSdfError) as caught:
        model('<link name="a"/><link name="b"/><joint name="s" type="screw"><parent>a</parent><child>b</child></joint>')
    assert str(caught.value).startswith("test.sdf:1: <joint> 's': joint type 'screw'")


# --------------------------------------------------------------------------- links
def test_geometry_materials_inertials_and_visual_poses() -> None:
    result = model(
        '<frame name="F"><pose>0 0 1 0 0 0</pose></frame>'
        '<link name="a"><pose>1 0 0 0 0 0</pose>'
        "<inertial><pose>0 0 0.1 0 0 0</pose><mass>2.5</mass><inertia><ixx>1</ixx><iyy>2</iyy><izz>3</izz>"
        "<ixy>0.1</ixy></inertia></inertial>"
        '<visual name="v1"><geometry><box><size>1 2 3</size></box></geometry>'
        "<material><ambient>0 0 0 1</ambient><diffuse>0.1 0.2 0.3 0.5</diffuse></material></visual>"
        '<visual name="v2"><pose relative_to="F">0 0 0 0 0 0</pose>'
        "<geometry><mesh><uri>model://m/meshes/x.dae</uri><scale>2 2 2</scale></mesh></geometry></visual>"
        '<visual name="v3"><geometry><plane><normal>0 0 1</normal></plane></geometry></visual>'
        '<collision name="c1"><geometry><cylinder><radius>0.1</radius><length>0.4</length></cylinder></geometry>'
        "</collision>"
        '<collision name="c2"><geometry><sphere><radius>0.3</radius></sphere></geometry></collision>'
        '<collision name="c3"><geometry><mesh><uri>x.stl</uri><scale>1 2 3</scale></mesh></geometry></collision>'
        "</link>",
        scope="m",
    )
    link = result.robot.links["a"]
    v1, v2, v3 = link.visuals
    assert v1.geometry == Box((1.0, 2.0, 3.0))
    assert v1.material is not None and v1.material.color is not None
    assert (v1.material.color.red, v1.material.color.alpha) == (0.1, 0.5)
    assert v2.geometry == Mesh("model://m/meshes/x.dae", 2.0, None)
    assert v2.origin is not None
    np.testing.assert_allclose(v2.origin.xyz, (-1.0, 0.0, 1.0))  # F in the link frame
    assert v3.geometry is None and any("<plane> geometry is not supported" in w for w in result.warnings)
    assert [c.geometry for c in link.collisions] == [
        Cylinder(0.1, 0.4),
        Sphere(0.3),
        Mesh("x.stl", 1.0, (1.0, 2.0, 3.0)),
    ]
    assert link.inertial is not None and link.inertial.mass == 2.5
    assert (link.inertial.inertia.ixx, link.inertial.inertia.izz, link.inertial.inertia.ixy) == (1.0, 3.0, 0.1)
    assert link.inertial.origin is not None and link.inertial.origin.xyz == (0.0, 0.0, 0.1)


def test_a_material_without_colour_is_not_kept() -> None:
    # Gazebo script and PBR materials have nothing the robot model (or URDF) can hold: no empty Material
    result = model(
        '<link name="a"><visual name="v"><geometry><box><size>1 1 1</size></box></geometry>'
        "<material><script><uri>file://media/materials/scripts/gazebo.material</uri><name>Gazebo/Grey</name>"
        "</script></material></visual>"
        '<visual name="w"><geometry><sphere><radius>1</radius></sphere></geometry>'
        "<material><pbr><metal><albedo_map>a.png</albedo_map></metal></pbr></material></visual></link>",
        scope="m",
    )
    assert [v.material for v in result.robot.links["a"].visuals] == [None, None]
    assert "<material" not in robot_to_urdf(result.robot)


def test_static_model_warns() -> None:
    result = model(
        '<static>true</static><link name="a"/><link name="b"/>'
        '<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint>'
    )
    assert any("is static" in w for w in result.warnings)


def test_kinematic_loops_are_invalid_robots(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    from bb_robot.model.errors import InvalidRobot

    with pytest.raises(InvalidRobot) as caught:
        load(
            corpus_dir,
            corpus_resource_paths,
            "sdformat/test/sdf/joint_nested_parent_child.sdf",
            "joint_nested_parent_child",
        )
    assert "link 'L1' has 3 parent joints ('J1', 'J2', 'J6')" in str(caught.value)
    assert caught.value.source == str(corpus_dir / "sdformat/test/sdf/joint_nested_parent_child.sdf")


def test_a_nested_model_loads_on_its_own(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    from bb_robot.sdf import read_document

    document = read_document(
        corpus_dir / "sdformat/test/sdf/nested_model_cross_references.sdf", resource_paths=corpus_resource_paths
    )
    mid = document.find_model("top_model::mid_model")
    assert mid is not None and mid.pose.relative_to == "top_link"  # refers to its parent's frame
    result = load_from_model(mid, "top_model::mid_model", build_serial=False)
    assert result.source_scope == "top_model::mid_model"
    assert "bottom_model::bottom_link" in result.link_names
