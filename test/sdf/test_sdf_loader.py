"""The entry points (seed 004's LoadFromFile / LoadFromSdfFile / LoadFromModel), the selection of the
kinematic model (scopes, ties, nested candidates), the serial model built from the robot, and the
errors of bad input: hostile XML, malformed values, each naming file, line, element and name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.robots import UR3E_LINKS

from bb_robot.model.errors import NotSerialError, OffAxisJointError
from bb_robot.sdf import (
    InvalidValueError,
    ScopeError,
    SdfError,
    SdfFileError,
    SdfStructureError,
    SdfSyntaxError,
    UnsafeSdfError,
    UnsupportedSdfError,
    read_document,
    read_string,
)
from bb_robot.sdf.loader import load_from_file, load_from_model, load_from_sdf_file

ARM_WITH_GRIPPER = """<sdf version="1.9"><world name="w">
<model name="arm">
  <link name="base"/><link name="upper"><pose>0 0 1 0 0 0</pose></link>
  <joint name="shoulder" type="revolute"><parent>base</parent><child>upper</child></joint>
  <model name="gripper"><pose relative_to="upper">0 0 0.5 0 0 0</pose>
    <link name="palm"/><link name="finger"/>
    <joint name="finger_joint" type="prismatic"><parent>palm</parent><child>finger</child></joint>
  </model>
  <joint name="mount" type="fixed"><parent>upper</parent><child>gripper::palm</child></joint>
</model>
<model name="ground"><static>true</static><link name="plane"/></model>
</world></sdf>"""


def write(tmp_path: Path, text: str, name: str = "t.sdf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- selection
def test_the_most_deeply_nested_candidate_wins_and_the_warning_names_the_outer_one(tmp_path: Path) -> None:
    path = write(tmp_path, ARM_WITH_GRIPPER)
    result = load_from_file(path, build_serial=False)
    assert result.source_scope == "arm::gripper"
    assert result.joint_names == ("finger_joint",)
    warning = next(w for w in result.warnings if "most deeply nested" in w)
    assert "sits inside 'arm'" in warning and 'model_scope="arm"' in warning
    whole = load_from_file(path, "arm", build_serial=False)
    assert whole.source_scope == "arm"
    assert whole.joint_names == ("shoulder", "gripper::finger_joint")
    assert not any("most deeply nested" in w for w in whole.warnings)
    assert whole.world.name == "w" and whole.world.models == ("arm", "arm::gripper", "ground")


def test_a_tie_is_an_error_listing_the_scopes(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    path = corpus_dir / "synthetic/sdf_world_two_ur3e_includes.sdf"
    with pytest.raises(ScopeError) as caught:
        load_from_file(path, resource_paths=corpus_resource_paths)
    error = caught.value
    assert (error.kind, error.scopes) == ("tie", ("left_arm", "right_arm"))
    assert str(error).startswith(f"{path}: 2 models qualify")
    assert 'model_scope="left_arm"' in str(error)


def test_an_unknown_scope_lists_the_available_ones(tmp_path: Path) -> None:
    path = write(tmp_path, ARM_WITH_GRIPPER)
    with pytest.raises(ScopeError) as caught:
        load_from_file(path, "arm::hand")
    error = caught.value
    assert (error.kind, error.requested, error.scopes) == ("unknown", "arm::hand", ("arm", "arm::gripper", "ground"))
    assert "<model> 'arm::hand'" in str(error) and "'arm::gripper'" in str(error)


def test_scopes_are_full_scoped_names(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    path = corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf"
    with pytest.raises(ScopeError) as caught:
        load_from_file(path, "ur3e::ur3e_position_controller::nothing", resource_paths=corpus_resource_paths)
    assert caught.value.kind == "unknown"
    assert "'ur3e::ur3e_position_controller::ur3e'" in str(caught.value)


def test_no_kinematic_model(tmp_path: Path) -> None:
    path = write(tmp_path, '<sdf version="1.9"><world name="w"><model name="m"><link name="a"/></model></world></sdf>')
    with pytest.raises(ScopeError) as caught:
        load_from_file(path)
    assert caught.value.kind == "none" and caught.value.scopes == ("m",)
    result = load_from_file(path, "m", build_serial=False)  # explicitly: a robot of one link
    assert list(result.robot.links) == ["a"] and result.joint_names == ()
    wrapper = write(
        tmp_path,
        '<sdf version="1.9"><world name="w"><model name="empty"><static>1</static></model></world></sdf>',
        "e.sdf",
    )
    with pytest.raises(ScopeError) as caught:
        load_from_file(wrapper, "empty")
    assert caught.value.kind == "not_kinematic"


# --------------------------------------------------------------------------- entry points
def test_load_from_sdf_file_takes_the_root_model(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load_from_sdf_file(
        corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_position_controller.sdf", resource_paths=corpus_resource_paths
    )
    # no selection: the root model itself, its nested arm named relative to it
    assert result.source_scope == "ur3e_position_controller"
    assert result.joint_names[0] == "ur3e::shoulder_pan_joint"
    with pytest.raises(SdfStructureError, match="<world> file"):
        load_from_sdf_file(
            corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", resource_paths=corpus_resource_paths
        )


def test_load_from_model_with_a_model_or_a_document(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    document = read_document(
        corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", resource_paths=corpus_resource_paths
    )
    from_document = load_from_model(document)
    assert from_document.source_scope == "ur3e::ur3e_position_controller::ur3e"
    arm = document.find_model("ur3e::ur3e_position_controller::ur3e")
    assert arm is not None
    from_model = load_from_model(arm)
    assert from_model.source_scope == arm.scoped_name
    assert from_model.joint_names == from_document.joint_names
    np.testing.assert_allclose(from_model.serial.base_pose, from_document.serial.base_pose)  # type: ignore[union-attr]


def test_result_fields_and_the_serial_model(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    result = load_from_file(
        corpus_dir / "synthetic/sdf_world_two_ur3e_includes.sdf", "right_arm", resource_paths=corpus_resource_paths
    )
    serial = result.serial
    assert serial is not None
    assert serial.joint_names == result.joint_names
    assert serial.base_link == result.canonical_link == "base_link"
    np.testing.assert_allclose(serial.base_pose, result.base_pose)
    assert result.link_names == UR3E_LINKS
    assert result.scoped_names["elbow_joint"] == "right_arm::elbow_joint"
    # the serial model's end effector is where the SDF frames put the tip link, in the world
    view = result.frames.model("right_arm")
    q = np.zeros(len(result.joint_names))
    tip = serial.tip_link
    np.testing.assert_allclose(serial.end_effector_pose(q), view.world_pose_of(tip), atol=1e-12)


def test_strict_serial_model_refuses_other_axes_and_normalising_accepts(corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/sdf_x_axis_arm.sdf"
    with pytest.raises(OffAxisJointError):
        load_from_file(path)
    assert load_from_file(path, strict=False).serial is not None
    assert load_from_file(corpus_dir / "synthetic/sdf_z_axis_via_rotation.sdf").serial is not None


BRANCHING = """<sdf version="1.9"><model name="two_arms">
  <link name="base"/>
  <joint name="left_joint" type="revolute"><pose relative_to="base">0 0.2 0.1 0 0 0</pose>
    <parent>base</parent><child>left</child></joint>
  <link name="left"><pose relative_to="left_joint"/></link>
  <frame name="left_tool" attached_to="left"><pose>0 0 0.3 0 0 0</pose></frame>
  <joint name="right_joint" type="prismatic"><pose relative_to="base">0 -0.2 0.1 0 0 0</pose>
    <parent>base</parent><child>right</child></joint>
  <link name="right"><pose relative_to="right_joint"/></link>
  <link name="camera"><pose>0.5 0 0 0 0 0</pose></link>
  <joint name="camera_mount" type="fixed"><parent>base</parent><child>camera</child></joint>
  <frame name="base_marker" attached_to="base"/>
</model></sdf>"""


def test_movable_branches_are_an_error_naming_them_and_a_tip_chooses(tmp_path: Path) -> None:
    path = write(tmp_path, BRANCHING)
    with pytest.raises(NotSerialError) as caught:
        load_from_file(path)  # the original silently took the first branch
    error = caught.value
    assert (error.link, error.joints) == ("base", ("left_joint", "right_joint"))  # fixed joints and frames do not count
    assert "pass tip=<link>" in str(error)
    left = load_from_file(path, tip="left_tool").serial
    assert left is not None and (left.joint_names, left.tip_link) == (("left_joint",), "left_tool")
    np.testing.assert_allclose(left.end_effector_pose([0.0])[:3, 3], (0.0, 0.2, 0.4))
    right = load_from_file(path, tip="right").serial
    assert right is not None and (right.joint_names, right.actuations) == (("right_joint",), ("TZ",))


def test_actuations_and_limits_of_an_sdf_chain(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """<sdf version="1.9"><model name="m"><link name="a"/>
        <joint name="r" type="revolute"><parent>a</parent><child>b</child>
          <axis><xyz>0 0 1</xyz><limit><lower>-1.5</lower><upper>2</upper><effort>40</effort><velocity>3</velocity>
          </limit></axis></joint>
        <link name="b"/>
        <joint name="c" type="continuous"><parent>b</parent><child>c_link</child>
          <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
        <link name="c_link"/>
        <joint name="p" type="prismatic"><parent>c_link</parent><child>d</child><axis><xyz>0 0 1</xyz></axis></joint>
        <link name="d"/></model></sdf>""",
    )
    serial = load_from_file(path).serial
    assert serial is not None
    assert serial.actuations == ("RZ", "RZ", "TZ")
    # continuous: no position limits; SDF 1.9 defaults (±1e16, effort and velocity -1) mean unbounded
    np.testing.assert_array_equal(serial.lower_limits, (-1.5, -np.inf, -np.inf))
    np.testing.assert_array_equal(serial.upper_limits, (2.0, np.inf, np.inf))
    np.testing.assert_array_equal(serial.effort_limits, (40.0, np.inf, np.inf))
    np.testing.assert_array_equal(serial.velocity_limits, (3.0, np.inf, np.inf))


# --------------------------------------------------------------------------- bad input
HOSTILE = {
    "doctype": '<?xml version="1.0"?><!DOCTYPE sdf [<!ENTITY a "x">]><sdf version="1.9"><model name="&a;"/></sdf>',
    "billion_laughs": '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + "\n".join(
        f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10)
    )
    + '\n]>\n<sdf version="1.9"><model name="&lol9;"><link name="a"/></model></sdf>',
    "xxe": '<?xml version="1.0"?><!DOCTYPE sdf [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    '<sdf version="1.9"><model name="m"><link name="&x;"/></model></sdf>',
}


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_xml_is_refused(name: str, tmp_path: Path) -> None:
    path = write(tmp_path, HOSTILE[name])
    with pytest.raises(UnsafeSdfError) as caught:  # refused before any expansion: the timeout mark guards a hang
        load_from_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    assert "refused <!DOCTYPE>" in message and "passwd" not in message


def test_hostile_xml_in_an_included_file_is_refused(tmp_path: Path) -> None:
    write(tmp_path, HOSTILE["xxe"], "evil.sdf")
    path = write(tmp_path, '<sdf version="1.9"><world name="w"><include><uri>evil.sdf</uri></include></world></sdf>')
    with pytest.raises(UnsafeSdfError) as caught:
        load_from_file(path)
    assert caught.value.source == str(tmp_path / "evil.sdf")


POSE_ERRORS = [
    ("<pose>1 2 3</pose>", "needs 6 numbers, got 3"),
    ("<pose>1 2 3 4 5 6 7</pose>", "needs 6 numbers, got 7"),
    ("<pose>1 2 nan 0 0 0</pose>", "'nan' is not a finite number"),
    ("<pose>1 2 inf 0 0 0</pose>", "'inf' is not a finite number"),
    ("<pose>1 two 3 0 0 0</pose>", "'two' is not a number"),
    ('<pose rotation_format="quat_xyzw">1 2 3 0 0 0</pose>', "needs 7 numbers, got 6"),
    ('<pose rotation_format="quat_xyzw">1 2 3 0 0 0 0</pose>', "quaternion has zero length"),
    ('<pose rotation_format="quat_xyzw" degrees="true">0 0 0 0 0 0 1</pose>', "does not apply"),
    ('<pose rotation_format="axis_angle">0 0 0 0 0 0</pose>', "not a rotation format"),
    ('<pose degrees="maybe">0 0 0 0 0 0</pose>', "'maybe' is not a boolean"),
]


@pytest.mark.parametrize(("pose", "part"), POSE_ERRORS)
def test_invalid_poses_name_file_line_element_and_name(pose: str, part: str, tmp_path: Path) -> None:
    path = write(tmp_path, f'<sdf version="1.9">\n<model name="m">\n<link name="l">\n{pose}</link></model></sdf>')
    with pytest.raises(InvalidValueError) as caught:
        load_from_file(path)
    error = caught.value
    assert (error.source, error.line, error.element, error.name) == (str(path), 4, "link", "l")
    assert str(error).startswith(f"{path}:4: <link> 'l': ")
    assert part in str(error)


@pytest.mark.parametrize(
    ("body", "error_class", "parts"),
    [
        (
            '<joint name="j" type="helical"><parent>a</parent><child>b</child></joint>',
            InvalidValueError,
            ["'helical'", "revolute"],
        ),
        ('<joint name="j"><parent>a</parent><child>b</child></joint>', SdfStructureError, ["needs a type"]),
        ('<joint name="j" type="fixed"><child>b</child></joint>', SdfStructureError, ["needs a <parent>"]),
        (
            '<joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0</xyz></axis></joint>',
            InvalidValueError,
            ["needs 3 numbers"],
        ),
        (
            '<joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 0</xyz></axis></joint>',
            InvalidValueError,
            ["zero length"],
        ),
        (
            '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
            "<axis><limit><lower>low</lower></limit></axis></joint>",
            InvalidValueError,
            ["'low' is not a number"],
        ),
        ("<link/>", SdfStructureError, ["needs a name"]),
        ('<link name="x"><visual name="v"><geometry><mesh/></geometry></visual></link>', SdfStructureError, ["<uri>"]),
    ],
)
def test_invalid_elements(body: str, error_class: type[SdfError], parts: list[str], tmp_path: Path) -> None:
    path = write(tmp_path, f'<sdf version="1.9"><model name="m"><link name="a"/><link name="b"/>\n{body}</model></sdf>')
    with pytest.raises(error_class) as caught:
        load_from_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2"), message
    for part in parts:
        assert part in message, (part, message)


@pytest.mark.parametrize(
    ("text", "error_class", "part"),
    [
        ("", SdfFileError, "empty"),
        ("<sdf version='1.9'><model name='m'>", SdfSyntaxError, "malformed XML"),
        ("<robot name='r'/>", SdfSyntaxError, "the root element is <robot>, not <sdf>"),
        ("<sdf><model name='m'><link name='a'/></model></sdf>", SdfStructureError, "no version"),
        ("<sdf version='one'><model name='m'/></sdf>", SdfStructureError, "is not a version"),
        ("<sdf version='1.3'><model name='m'><link name='a'/></model></sdf>", UnsupportedSdfError, "older than 1.4"),
        ("<sdf version='1.9'></sdf>", SdfStructureError, "holds no <world> and no <model>"),
    ],
)
def test_documents_that_are_not_sdf(text: str, error_class: type[SdfError], part: str, tmp_path: Path) -> None:
    path = write(tmp_path, text)
    with pytest.raises(error_class) as caught:
        load_from_file(path)
    assert str(caught.value).startswith(str(path))
    assert part in str(caught.value)


def test_missing_file() -> None:
    with pytest.raises(SdfFileError) as caught:
        load_from_file("/nonexistent/robot.sdf")
    assert str(caught.value).startswith("/nonexistent/robot.sdf: no such file")


def test_newer_versions_are_read_with_a_warning() -> None:
    document = read_string('<sdf version="1.13"><model name="m"><link name="a"/></model></sdf>', source="new.sdf")
    assert any("newer than 1.12" in w for w in document.warnings)


def test_version_specific_renaming_before_1_7() -> None:
    document = read_string(
        '<sdf version="1.6"><model name="m"><link name="a"/><link name="b"/>'
        '<joint name="a" type="fixed"><parent>a</parent><child>b</child></joint></model></sdf>',
        source="old.sdf",
    )
    assert document.model is not None and [j.name for j in document.model.joints] == ["a_joint"]
    assert any("renamed 'a_joint'" in w for w in document.warnings)


def test_mesh_uris_resolve_from_the_file_that_declared_the_link(tmp_path: Path) -> None:
    arm = tmp_path / "models" / "arm"
    (arm / "meshes").mkdir(parents=True)
    (arm / "meshes" / "upper.stl").write_text("solid")
    (arm / "model.sdf").write_text(
        '<sdf version="1.9"><model name="arm"><link name="base"/>'
        '<link name="upper"><visual name="v"><geometry><mesh><uri>meshes/upper.stl</uri></mesh></geometry></visual>'
        "</link>"
        '<joint name="j" type="revolute"><parent>base</parent><child>upper</child></joint></model></sdf>'
    )
    (arm / "model.config").write_text('<model><sdf version="1.9">model.sdf</sdf></model>')
    path = write(tmp_path, '<sdf version="1.9"><world name="w"><include><uri>model://arm</uri></include></world></sdf>')
    result = load_from_file(path, resource_paths=[tmp_path / "models"], build_serial=False)
    mesh = result.robot.links["upper"].visuals[0].geometry
    assert mesh is not None and getattr(mesh, "filename", None) == "meshes/upper.stl"
    assert result.converted.link_directories["upper"] == arm.resolve()
    assert result.resolve_uri("meshes/upper.stl", "upper") == (arm / "meshes" / "upper.stl").resolve()
    assert result.resolve_uri("model://arm/meshes/upper.stl") == (arm / "meshes" / "upper.stl").resolve()
    assert result.resolve_uri("meshes/upper.stl") is None  # not next to the world file
    assert result.resolve_uri("https://fuel.gazebosim.org/x.dae", "upper") is None
