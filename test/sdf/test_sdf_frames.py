"""SDFormat pose frame semantics: poses worked out by hand from the file text, implicit and
``relative_to`` styles giving the same robot, old-version conventions, degrees and quaternions,
``expressed_in``, placement frames, canonical links, bodies, and every frame-graph problem."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from helpers.sdf_transforms import T

from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.transforms import matrix_to_rpy
from bb_robot.sdf import FrameError, FrameGraph, read_document, read_string, resolve, resolved_poses, world_poses
from bb_robot.sdf.loader import load_from_model


def graph_of(text: str) -> FrameGraph:
    return resolve(read_string(text, source="test.sdf"))


def model_sdf(body: str, version: str = "1.9", name: str = "m") -> str:
    return f'<sdf version="{version}"><model name="{name}">{body}</model></sdf>'


# --------------------------------------------------------------------------- real files
def test_ur3e_poses_from_the_file_text(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    sdf = corpus_dir / "sas_robot_driver_gazebo/sdf"
    base_to_pan = T((0, 0, 0.15185000000000001), (0, 0, 3.1415926535897931))
    lift = base_to_pan @ T(rpy=(1.5707963270000003, 0, 0))
    elbow = lift @ T((-0.24354999999999999, 0, 0))
    wrist_1 = elbow @ T((-0.2132, 0, 0.13105))
    for path, scope in (
        (sdf / "ur3e.sdf", "ur3e"),
        (sdf / "ur3e_world.sdf", "ur3e::ur3e_position_controller::ur3e"),
    ):
        graph = resolve(read_document(path, resource_paths=corpus_resource_paths))
        view = graph.model(scope)
        np.testing.assert_allclose(view.pose_of("base_link"), np.eye(4), atol=1e-15)
        np.testing.assert_allclose(view.pose_of("shoulder_pan_joint", "joint"), base_to_pan, atol=1e-15)
        np.testing.assert_allclose(view.pose_of("shoulder_link"), base_to_pan, atol=1e-15)
        np.testing.assert_allclose(view.pose_of("shoulder_lift_joint", "joint"), lift, atol=1e-15)
        np.testing.assert_allclose(view.pose_of("upper_arm_link"), lift, atol=1e-15)
        np.testing.assert_allclose(view.pose_of("elbow_joint", "joint"), elbow, atol=1e-15)
        np.testing.assert_allclose(view.world_pose_of("wrist_1_link"), wrist_1, atol=1e-15)
        # frames: attached_to chains, pose relative to the attached_to frame
        flange = view.pose_of("wrist_3_link") @ T(rpy=(-1.5707963267948957, -1.5707963267948966, 0))
        np.testing.assert_allclose(view.pose_of("flange", "frame"), flange, atol=1e-15)
        tool0 = flange @ T(rpy=(1.5707963267948959, -5.5511151231257827e-17, 1.5707963267948959))
        np.testing.assert_allclose(view.pose_of("tool0", "frame"), tool0, atol=1e-15)
        assert graph.body(view.key("tool0")) == view.key("wrist_3_link")
        assert view.canonical_link == "base_link"
        # numbers as in the hand computation: the lift joint sits 0.15185 m up, its z along -y... of base
        np.testing.assert_allclose(lift[:3, 2], (0.0, 1.0, 0.0), atol=1e-9)
        np.testing.assert_allclose(lift[:3, 3], (0.0, 0.0, 0.15185), atol=1e-15)


def test_frame_relative_to_defaults(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/model_frame_relative_to.sdf"))
    view = graph.model("model_frame_relative_to")
    expected = {"F0": (0, 1, 0), "F1": (1, 0, 1), "F2": (1, 0, 2), "F3": (1, 0, 3), "F4": (1, 0, 3)}
    np.testing.assert_allclose(view.pose_of("L"), T((1, 0, 0)))
    for name, xyz in expected.items():
        np.testing.assert_allclose(view.pose_of(name, "frame"), T(xyz), err_msg=name)
        assert graph.body(view.key(name)) == "model_frame_relative_to::L"


def test_joint_pose_defaults_to_child_frame(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/model_joint_relative_to.sdf"))
    view = graph.model("model_joint_relative_to")
    c1 = T((2, 0, 0), (0, -math.pi / 2, 0))
    np.testing.assert_allclose(view.pose_of("J1", "joint"), c1 @ T((0, 0, 1)), atol=1e-15)
    j2 = T((3, 0, 0), (0, math.pi / 2, 0)) @ T((0, 0, 2))
    np.testing.assert_allclose(view.pose_of("J2", "joint"), j2, atol=1e-15)
    np.testing.assert_allclose(view.pose_of("C2"), j2 @ T((4, 0, 0)), atol=1e-15)


def test_world_frames_and_model_relative_to_world_frame(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/world_complete.sdf"))
    np.testing.assert_allclose(graph.world_pose("model1", "model"), T((1, 2, 3)))
    np.testing.assert_allclose(graph.world_pose("model1::frame2", "frame"), T((5, 7, 9)))
    poses = resolved_poses(graph)
    np.testing.assert_allclose(poses[("frame", "model1::frame2")], T((4, 5, 6)))
    np.testing.assert_allclose(poses[("frame", "frame1")], T((1, 2, 3)))


def test_world_parent_in_sdf_1_6(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/joint_parent_world.sdf"))
    np.testing.assert_allclose(graph.pose("joint_parent_world::joint", "joint_parent_world"), T((0, 0, 4)))
    np.testing.assert_allclose(graph.world_pose("joint_parent_world::joint"), T((1, 0, 4)))
    assert graph.parent_link("joint_parent_world::joint") == "world"


def test_nested_names_and_model_frames_as_joint_ends(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/joint_nested_parent_child.sdf"))
    top = "joint_nested_parent_child"
    l1 = T((0, 0, 10), (0, 1.57079632679, 0))
    np.testing.assert_allclose(graph.world_pose(f"{top}::J1"), l1 @ T((1, 0, 0)), atol=1e-15)
    assert graph.parent_link(f"{top}::J1") == f"{top}::M1::L1"
    assert graph.parent_link(f"{top}::J2") == f"{top}::M1::L1"  # F1 is attached to M1::L1
    assert graph.child_link(f"{top}::J4") == f"{top}::M1::L1"  # M1::F1 is attached to M1's frame
    assert graph.child_link(f"{top}::J5") == f"{top}::M1::M2::L1"
    assert graph.child_link(f"{top}::J7") == f"{top}::M1::L1"  # M1::__model__
    # J4's pose defaults to its child frame M1::F1 (1 0 0 in M1)
    np.testing.assert_allclose(graph.world_pose(f"{top}::J4"), T((1, 0, 1)), atol=1e-15)
    m2 = T((0, 0, 1), (1.570796326790, 0, 0))
    np.testing.assert_allclose(graph.world_pose(f"{top}::J5"), m2 @ T((0, 0, 1)), atol=1e-15)


def test_canonical_link_attribute_and_nested_default(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/model_canonical_link.sdf"))
    view = graph.model("model_canonical_link")
    assert view.canonical_link == "link2"
    assert graph.body("model_canonical_link::F") == "model_canonical_link::link2"
    graph = graph_of(model_sdf('<model name="inner"><link name="a"/></model><frame name="F"/>'))
    assert graph.model("m").canonical_link == "inner::a"
    assert graph.body("m::F") == "m::inner::a"
    graph = graph_of(model_sdf('<static>true</static><link name="a"/><frame name="F"/>'))
    assert graph.body("m::F") == "world"


# --------------------------------------------------------------------------- values
def test_degrees_and_quaternions(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/rotations_in_degrees.sdf"))
    expected = T((1, 2, 3), tuple(math.radians(a) for a in (30.009, 44.991, -60.009)))  # type: ignore[arg-type]
    np.testing.assert_allclose(graph.world_pose("parent_model::link1"), expected, atol=1e-15)
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/rotations_in_quaternions.sdf"))
    x, y, z, w = 0.391948, 0.200425, -0.532046, 0.723279
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    rotation = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    pose = graph.world_pose("parent_model::link1")
    np.testing.assert_allclose(pose[:3, :3], rotation, atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], (1, 2, 3))
    graph = resolve(read_document(corpus_dir / "sdformat/test/sdf/pose_1_9.sdf"))
    for name in ("model_with_empty_pose", "model_empty_quat_xyzw", "model_with_empty_pose_euler_rpy_degrees_true"):
        np.testing.assert_allclose(graph.world_pose(name), np.eye(4))
    degrees = graph.world_pose("model_with_pose_with_degrees_true")
    np.testing.assert_allclose(degrees, T((1, 2, 3), (math.pi / 2, math.pi, 3 * math.pi / 2)), atol=1e-15)
    for name in ("model_with_newline_delimiter", "model_with_messy_delimiters", "model_euler_rpy"):
        np.testing.assert_allclose(graph.world_pose(name), T((1, 2, 3), (0.4, 0.5, 0.6)), atol=1e-15)
    np.testing.assert_allclose(graph.world_pose("model_quat_xyzw"), T((1, 2, 3), (math.pi / 2, 0, 0)), atol=1e-15)


def test_degrees_equal_radians() -> None:
    a = graph_of(model_sdf('<link name="l"><pose degrees="true">0.1 0.2 0.3 90 -45 30</pose></link>'))
    b = graph_of(
        model_sdf(f'<link name="l"><pose>0.1 0.2 0.3 {math.pi / 2!r} {-math.pi / 4!r} {math.pi / 6!r}</pose></link>')
    )
    np.testing.assert_allclose(a.world_pose("m::l"), b.world_pose("m::l"), atol=1e-16)


# --------------------------------------------------------------------------- axes
def test_expressed_in_resolves_axes_in_the_joint_frame(corpus_dir: Path) -> None:
    graph = resolve(read_document(corpus_dir / "synthetic/sdf_z_axis_via_rotation.sdf"))
    np.testing.assert_allclose(graph.axis_in_joint("z_axis_rotated::j1"), (0, 0, 1), atol=1e-15)
    np.testing.assert_allclose(graph.axis_in_joint("z_axis_rotated::j2"), (0, 0, 1), atol=1e-15)
    graph = resolve(read_document(corpus_dir / "synthetic/sdf_x_axis_arm.sdf"))
    np.testing.assert_allclose(graph.axis_in_joint("x_axis_arm::j1"), (1, 0, 0))
    np.testing.assert_allclose(graph.axis_in_joint("x_axis_arm::j2"), (0, 1, 0))


@pytest.mark.parametrize(
    ("version", "parent_model_frame", "expected"),
    [
        # model y is joint x: the axis as written (0 1 0) is (1 0 0) in the joint frame when it is
        # expressed in the model frame, (0 1 0) when in the joint frame
        ("1.4", None, (1.0, 0.0, 0.0)),  # 1.4: the axis is in the parent model frame
        ("1.5", None, (0.0, 1.0, 0.0)),  # 1.5+: the joint frame ...
        ("1.6", "false", (0.0, 1.0, 0.0)),
        ("1.5", "true", (1.0, 0.0, 0.0)),  # ... unless use_parent_model_frame
        ("1.6", "true", (1.0, 0.0, 0.0)),
        ("1.7", "true", (0.0, 1.0, 0.0)),  # no longer SDFormat: ignored (with a warning)
    ],
)
def test_old_axis_conventions(version: str, parent_model_frame: str | None, expected: tuple[float, ...]) -> None:
    flag = (
        "" if parent_model_frame is None else f"<use_parent_model_frame>{parent_model_frame}</use_parent_model_frame>"
    )
    # the child link (and so the joint frame) is turned 90 degrees about z: model y is joint x
    text = model_sdf(
        '<link name="a"/><link name="b"><pose>0 0 1 0 0 1.5707963267948966</pose></link>'
        '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
        f"<axis><xyz>0 1 0</xyz>{flag}</axis></joint>",
        version,
    )
    document = read_string(text, source="old.sdf")
    graph = resolve(document)
    np.testing.assert_allclose(graph.axis_in_joint("m::j"), expected, atol=1e-15)
    if version == "1.7":
        assert any("use_parent_model_frame" in w for w in document.warnings)


def test_pose_frame_attribute_before_1_7() -> None:
    text = model_sdf(
        '<link name="a"><pose>1 0 0 0 0 0</pose></link><link name="b"><pose frame="a">0 1 0 0 0 0</pose></link>',
        "1.6",
    )
    np.testing.assert_allclose(graph_of(text).world_pose("m::b"), T((1, 1, 0)))


# --------------------------------------------------------------------------- two styles
Vec = tuple[float, float, float]
JointSpec = tuple[str, str, tuple[Vec, Vec], tuple[Vec, Vec], Vec]
JOINTS: tuple[JointSpec, ...] = (
    # (name, type, pose of the joint frame in the parent link frame, child link pose in the joint frame, axis)
    ("j1", "revolute", ((0.0, 0.0, 0.2), (0.0, 0.0, 0.3)), ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), (0.0, 0.0, 1.0)),
    ("j2", "revolute", ((0.05, 0.0, 0.1), (1.2, 0.0, 0.0)), ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), (0.0, 0.6, 0.8)),
    ("j3", "continuous", ((0.3, 0.02, 0.0), (0.0, -0.4, 0.0)), ((0.1, 0.0, 0.0), (0.2, 0.0, 0.0)), (1.0, 0.0, 0.0)),
    ("j4", "prismatic", ((0.0, 0.1, 0.25), (0.0, 0.0, 0.7)), ((0.0, 0.0, 0.05), (0.0, 0.3, 0.0)), (0.0, 0.0, 1.0)),
)


def _fmt(matrix: np.ndarray) -> str:
    xyz = matrix[:3, 3]
    rpy = matrix_to_rpy(matrix[:3, :3])
    return " ".join(repr(float(v)) for v in (*xyz, *rpy))


def relative_to_style(joints: tuple[JointSpec, ...] = JOINTS) -> str:
    parts = ['<link name="base"/>']
    parent = "base"
    for name, jtype, (jxyz, jrpy), (cxyz, crpy), axis in joints:
        child = f"link_{name}"
        parts.append(
            f'<joint name="{name}" type="{jtype}"><pose relative_to="{parent}">{_fmt(T(jxyz, jrpy))}</pose>'
            f"<parent>{parent}</parent><child>{child}</child><axis><xyz>{' '.join(map(str, axis))}</xyz>"
            "<limit><lower>-2</lower><upper>2</upper></limit></axis></joint>"
        )
        parts.append(f'<link name="{child}"><pose relative_to="{name}">{_fmt(T(cxyz, crpy))}</pose></link>')
        parent = child
    return model_sdf("".join(parts), "1.9", "arm")


def implicit_style(use_parent_model_frame: bool, joints: tuple[JointSpec, ...] = JOINTS) -> str:
    """SDF 1.6: link poses in the model frame, joint poses in the child link frame."""
    parts = ['<link name="base"/>']
    parent_pose = np.eye(4)
    parent = "base"
    for name, jtype, (jxyz, jrpy), (cxyz, crpy), axis in joints:
        child = f"link_{name}"
        joint_pose = parent_pose @ T(jxyz, jrpy)
        child_pose = joint_pose @ T(cxyz, crpy)
        xyz = np.array(axis)
        flag = ""
        if use_parent_model_frame:
            xyz = joint_pose[:3, :3] @ xyz
            flag = "<use_parent_model_frame>true</use_parent_model_frame>"
        parts.append(f'<link name="{child}"><pose>{_fmt(child_pose)}</pose></link>')
        parts.append(
            f'<joint name="{name}" type="{jtype}"><pose>{_fmt(np.linalg.inv(T(cxyz, crpy)))}</pose>'
            f"<parent>{parent}</parent><child>{child}</child><axis><xyz>{' '.join(repr(float(v)) for v in xyz)}</xyz>"
            f"{flag}<limit><lower>-2</lower><upper>2</upper></limit></axis></joint>"
        )
        parent_pose, parent = child_pose, child
    return model_sdf("".join(parts), "1.6", "arm")


@pytest.mark.parametrize("use_parent_model_frame", [False, True])
def test_relative_to_and_implicit_styles_give_the_same_robot(use_parent_model_frame: bool) -> None:
    explicit = load_from_model(read_string(relative_to_style(), source="explicit.sdf"), build_serial=False)
    implicit = load_from_model(
        read_string(implicit_style(use_parent_model_frame), source="implicit.sdf"), build_serial=False
    )
    links = [f"link_{j[0]}" for j in JOINTS]
    for link in links:
        np.testing.assert_allclose(
            implicit.frames.model("arm").pose_of(link), explicit.frames.model("arm").pose_of(link), atol=1e-12
        )
    fk_a, fk_b = ForwardKinematics(explicit.robot), ForwardKinematics(implicit.robot)
    assert fk_a.joint_names == fk_b.joint_names == ("j1", "j2", "j3", "j4")
    rng = np.random.default_rng(7)
    q = rng.uniform(-2, 2, size=(20, 4))
    np.testing.assert_allclose(fk_a.compute(q), fk_b.compute(q), atol=1e-12)


# every axis +z of its joint frame, so that strict mode accepts the arm
JOINTS_Z = tuple((name, jtype, joint, child, (0.0, 0.0, 1.0)) for name, jtype, joint, child, _ in JOINTS)


@pytest.mark.parametrize("use_parent_model_frame", [False, True])
@pytest.mark.parametrize(("joints", "strict"), [(JOINTS, False), (JOINTS_Z, True)], ids=["any-axes", "z-axes-strict"])
def test_relative_to_and_implicit_styles_give_the_same_serial_model(
    use_parent_model_frame: bool, joints: tuple[JointSpec, ...], strict: bool
) -> None:
    explicit = load_from_model(read_string(relative_to_style(joints), source="explicit.sdf"), strict=strict).serial
    implicit = load_from_model(
        read_string(implicit_style(use_parent_model_frame, joints), source="implicit.sdf"), strict=strict
    ).serial
    assert explicit is not None and implicit is not None
    assert implicit.joint_names == explicit.joint_names == ("j1", "j2", "j3", "j4")
    assert implicit.link_names == explicit.link_names
    assert (implicit.base_link, implicit.tip_link) == (explicit.base_link, explicit.tip_link) == ("base", "link_j4")
    assert implicit.actuations == explicit.actuations == ("RZ", "RZ", "RZ", "TZ")
    np.testing.assert_allclose(implicit.base_pose, explicit.base_pose, atol=1e-12)
    np.testing.assert_allclose(implicit.tip_offset, explicit.tip_offset, atol=1e-12)
    for a, b in zip(implicit.joints, explicit.joints, strict=True):
        np.testing.assert_allclose(a.offset_before, b.offset_before, atol=1e-12, err_msg=a.name)
        np.testing.assert_allclose(a.offset_after, b.offset_after, atol=1e-12, err_msg=a.name)
        np.testing.assert_allclose(a.axis, b.axis, atol=1e-12, err_msg=a.name)
        assert (a.lower, a.upper, a.velocity, a.effort) == (b.lower, b.upper, b.velocity, b.effort)
    rng = np.random.default_rng(3)
    q = rng.uniform(-2, 2, size=(20, 4))
    poses_a, poses_b = implicit.forward(q), explicit.forward(q)
    np.testing.assert_allclose(poses_a.links, poses_b.links, atol=1e-12)
    np.testing.assert_allclose(poses_a.joints, poses_b.joints, atol=1e-12)
    np.testing.assert_allclose(poses_a.end_effector, poses_b.end_effector, atol=1e-12)
    np.testing.assert_allclose(implicit.jacobian(q), explicit.jacobian(q), atol=1e-12)


# --------------------------------------------------------------------------- placement
def test_model_placement_frames(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    graph = resolve(
        read_document(corpus_dir / "sdformat/test/sdf/placement_frame.sdf", resource_paths=corpus_resource_paths)
    )
    placed = T((0, 10, 0), (1.570796326794895, 0, 0))
    f1 = T(rpy=(1.570796, 0, 0))
    f2_in_model = f1 @ T(rpy=(0, 0.785398, 0))
    l2_in_model = f1 @ T((1, 0, 0))
    cases = {
        # the placement frame ends where <pose> says
        ("model_with_link_placement_frame::L4", "link"): placed,
        ("model_with_model_placement_frame", "model"): placed,
        ("model_with_nested_model_placement_frame::nested_model", "model"): placed,
        ("model_with_frame_placement_frame::F2", "frame"): placed,
        ("model_with_joint_placement_frame::J2", "joint"): placed,
        ("placement_frame_using_link::L4", "link"): placed,
        ("placement_frame_using_frame::F2", "frame"): placed,
        ("placement_frame_using_joint::J2", "joint"): placed,
        ("placement_frame_using_model", "model"): placed,
        ("no_placement_frame", "model"): placed,
        ("parent_model_include::placement_frame_using_link::L4", "link"): placed,
        ("parent_model_include::placement_frame_using_frame::F2", "frame"): placed,
        ("include_with_placement_frame_and_pose_relative_to::L4", "link"): T((-1, 10, 0), (1.570796326794895, 0, 0))
        @ T((1, 0, 0)),
        ("model_with_placement_frame_and_pose_relative_to::L4", "link"): T((-1, 10, 0), (1.570796326794895, 0, 0))
        @ T((1, 0, 0)),
    }
    for (key, kind), expected in cases.items():
        np.testing.assert_allclose(graph.world_pose(key, kind), expected, atol=1e-12, err_msg=key)
    # and the model frame moves accordingly: L4 sits 1 m up the model's z
    np.testing.assert_allclose(
        graph.world_pose("placement_frame_using_link", "model"), placed @ T((0, 0, -1)), atol=1e-12
    )
    model = graph.world_pose("placement_frame_using_frame", "model")
    np.testing.assert_allclose(model @ f2_in_model, placed, atol=1e-12)
    j2_in_model = l2_in_model @ T((0, 1, 0)) @ T((0, 0, 1))  # J2 relative to its child L3
    np.testing.assert_allclose(
        graph.world_pose("placement_frame_using_joint", "model") @ j2_in_model, placed, atol=1e-12
    )


# --------------------------------------------------------------------------- problems
@pytest.mark.parametrize(
    ("body", "kind", "parts"),
    [
        ('<link name="a"><pose relative_to="nowhere"/></link>', "unknown_reference", ['relative_to="nowhere"', "'a'"]),
        ('<link name="a"/><frame name="f" attached_to="ghost"/>', "unknown_reference", ['attached_to="ghost"']),
        (
            '<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent>a</parent><child>b</child>'
            '<axis><xyz expressed_in="nope">0 0 1</xyz></axis></joint>',
            "unknown_reference",
            ['expressed_in="nope"', "<joint> 'm::j'"],
        ),
        (
            '<link name="a"><pose relative_to="b"/></link><link name="b"><pose relative_to="a"/></link>',
            "cycle",
            ["relative_to cycle: m::a -> m::b -> m::a"],
        ),
        (
            '<link name="a"/><frame name="f1" attached_to="f2"/><frame name="f2" attached_to="f1"/>',
            "cycle",
            ["attached_to cycle", "m::f1", "m::f2"],
        ),
        ('<link name="a"/><frame name="f" attached_to="f"/>', "cycle", ["names the frame itself"]),
        ('<link name="a"/><link name="a"/>', "duplicate_name", ["a link named 'a' already exists", "(line 1)"]),
        ('<link name="a"/><frame name="a"/>', "duplicate_name", ["also the name of a link"]),
        ('<link name="__x__"/>', "reserved_name", ["'__x__' is reserved"]),
        ('<link name="a::b"/>', "reserved_name", ["'::'"]),
        (
            '<link name="a"/><joint name="j" type="fixed"><parent>a</parent><child>world</child></joint>',
            "invalid_joint",
            ["world"],
        ),
        (
            '<link name="a"/><joint name="j" type="fixed"><parent>a</parent><child>a</child></joint>',
            "invalid_joint",
            ["both 'a'"],
        ),
        (
            '<link name="a"/><joint name="j" type="fixed"><parent>a</parent><child>ghost</child></joint>',
            "unknown_reference",
            ["<child>"],
        ),
        ('<frame name="f"/>', "missing_link", ["has no link"]),
        ('<link name="a"/>', None, []),
    ],
)
def test_frame_problems_are_reported(body: str, kind: str | None, parts: list[str]) -> None:
    text = model_sdf(body)
    if kind is None:
        graph_of(text)
        return
    with pytest.raises(FrameError) as caught:
        graph_of(text)
    error = caught.value
    assert error.kind == kind, str(error)
    message = str(error)
    assert message.startswith("test.sdf:1:"), message
    for part in parts:
        assert part in message, (part, message)
    if kind == "cycle" and "names the frame itself" not in message:
        assert error.cycle[0] == error.cycle[-1] and len(error.cycle) == 3


def test_canonical_link_must_be_a_link() -> None:
    with pytest.raises(FrameError) as caught:
        graph_of(
            '<sdf version="1.9"><model name="m" canonical_link="f"><link name="a"/><frame name="f"/></model></sdf>'
        )
    assert caught.value.kind == "canonical_link"
    assert "'a'" in str(caught.value)


def test_placement_frame_must_exist() -> None:
    with pytest.raises(FrameError) as caught:
        graph_of('<sdf version="1.9"><model name="m" placement_frame="ghost"><link name="a"/></model></sdf>')
    assert caught.value.kind == "placement_frame"


def test_several_problems_are_reported_together() -> None:
    with pytest.raises(FrameError) as caught:
        graph_of(
            model_sdf('<link name="a"><pose relative_to="x"/></link><link name="b"><pose relative_to="y"/></link>')
        )
    error = caught.value
    assert error.kind == "several"
    assert [p.kind for p in error.problems] == ["unknown_reference", "unknown_reference"]
    assert 'relative_to="x"' in str(error) and 'relative_to="y"' in str(error)


def test_references_do_not_go_up_a_scope() -> None:
    text = model_sdf('<link name="top"/><model name="inner"><link name="a"><pose relative_to="top"/></link></model>')
    with pytest.raises(FrameError) as caught:
        graph_of(text)
    assert "model 'm::inner'" in str(caught.value)


def test_resolved_poses_cover_every_element(corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    document = read_document(
        corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", resource_paths=corpus_resource_paths
    )
    poses = resolved_poses(document)
    kinds = {}
    for kind, _name in poses:
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds == {"model": 5, "link": 13, "joint": 7, "frame": 10}
    assert ("joint", "ur3e::base_joint") in poses
    world = world_poses(document)
    np.testing.assert_allclose(world[("model", "frame_x")], T((0, 1, 0)))
    np.testing.assert_allclose(
        world[("link", "frame_x::reference_link_x")], T((0.05, 1, 0), (0, math.pi / 2, 0)), atol=1e-15
    )
