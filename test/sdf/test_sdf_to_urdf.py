"""SDF → URDF export (``SdfLoadResult.to_urdf``, :func:`bb_robot.sdf.sdf_to_urdf`).

Round trip on every corpus SDF model that loads (``helpers.sdf_cases.CASES``, with and
without a scope): the exported URDF, read back with ``parse_string`` + ``build_robot``, is the
converted robot (links, visuals, collisions, materials, inertials, joints, limits with the
writer's documented placeholders, mimics, compared by ``repr``), and its forward kinematics puts
every SDF link and every ``<frame>`` where the SDF's resolved frames put them, relative to the
root, at zero and at random joint values (1e-9).  The expected poses come from
``helpers.sdf_cases.sdf_link_poses``: each joint rotates (or slides) its child subtree about its
world-resolved axis through its joint frame's origin, straight from the SDF frame graph.

Pinocchio, an independent URDF reader, loads the same text (``buildModelFromXML``), and its
``BODY`` frame placements equal those SDF poses at random configurations (mimic joints given the
value SDF's mimic rule computes, free links' floating joints at their neutral placement).

Then the mesh URI option: kept as written, or absolute ``file://`` URIs found from the directory of
the file that declared each link.
"""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.sdf_cases import CASES, load, relative, sdf_poses

from bb_robot.model.geometry import Box, Color, Cylinder, Material, Mesh, Sphere
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Joint, JointLimits, Robot
from bb_robot.sdf import read_string, sdf_to_urdf
from bb_robot.sdf.document import SdfJoint
from bb_robot.sdf.frames import WORLD, join
from bb_robot.sdf.loader import SdfLoadResult, load_from_file, load_from_model
from bb_robot.urdf import parse_string
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.writer import UNKNOWN_LIMIT, UrdfWriteError

TOL = 1e-9
IDS = [f"{n}:{s}" if s else n for n, s in CASES]


def read_back(text: str) -> Robot:
    return build_robot(parse_string(text))


def sdf_joint_values(result: SdfLoadResult, values: dict[str, float]) -> dict[str, float]:
    """The value of every movable SDF joint of the model (relative names): ``values`` for the
    independent ones, SDF's rule multiplier · (leader − reference) + offset for mimic joints."""
    graph = result.frames
    joints: dict[str, SdfJoint] = {}
    for sub in result.converted.model.walk():
        joints.update({join(sub.scoped_name, j.name): j for j in sub.joints if j.type != "fixed"})

    def value(key: str) -> float:
        axis = joints[key].axis
        if axis is not None and axis.mimic is not None:
            leader = graph.lookup(graph.vertex("joint", key).scope, axis.mimic.joint)
            assert leader is not None
            m = axis.mimic
            return m.multiplier * (value(leader) - m.reference) + m.offset
        return values.get(relative(result, key), 0.0)

    return {relative(result, key): value(key) for key in joints}


def root_relative(result: SdfLoadResult, poses: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``poses`` in the frame of the robot's root link (the URDF's root; ``world`` is the world)."""
    root = result.robot.root_link
    inverse = np.eye(4) if root == WORLD else np.linalg.inv(poses[root])
    return {name: inverse @ pose for name, pose in poses.items()}


def configurations(result: SdfLoadResult, seed: str, count: int = 6) -> list[dict[str, float]]:
    rng = np.random.default_rng(abs(hash(seed)) % 2**32)
    names = result.joint_names
    return [dict.fromkeys(names, 0.0)] + [
        dict(zip(names, rng.uniform(-2.5, 2.5, len(names)), strict=True)) for _ in range(count - 1)
    ]


def expected_limits(joint: Joint) -> JointLimits | None:
    """The limits a joint reads back with: the robot's, plus the writer's effort/velocity placeholder."""
    limits = joint.limits or JointLimits()
    lower, upper = (limits.lower, limits.upper) if joint.type != "continuous" else (None, None)
    effort = None if limits.effort in (None, math.inf) else limits.effort
    velocity = None if limits.velocity in (None, math.inf) else limits.velocity
    if joint.type in ("revolute", "prismatic") or any(v is not None for v in (lower, upper, effort, velocity)):
        effort = UNKNOWN_LIMIT if effort is None else effort
        velocity = UNKNOWN_LIMIT if velocity is None else velocity
    expected = JointLimits(lower, upper, velocity, effort, limits.soft_lower, limits.soft_upper)
    return None if expected == JointLimits() else expected


def assert_same_robot(original: Robot, rebuilt: Robot) -> None:
    assert rebuilt.name == original.name
    assert rebuilt.root_link == original.root_link
    assert sorted(rebuilt.links) == sorted(original.links)
    assert sorted(rebuilt.joints) == sorted(original.joints)
    for name, link in original.links.items():
        assert repr(rebuilt.links[name]) == repr(link), f"link '{name}'"
    for name, joint in original.joints.items():
        assert repr(rebuilt.joints[name]) == repr(dataclasses.replace(joint, limits=expected_limits(joint))), name
    assert rebuilt.topology.joint_order == original.topology.joint_order


# --------------------------------------------------------------------------- round trip
@pytest.mark.parametrize(("name", "scope"), CASES, ids=IDS)
def test_round_trip_equals_the_sdf_frames(
    name: str, scope: str, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    result = load(corpus_dir, corpus_resource_paths, name, scope)
    text = result.to_urdf()
    assert text == sdf_to_urdf(result, mesh_uris="keep")
    robot = read_back(text)
    assert_same_robot(result.robot, robot)
    fk = ForwardKinematics(robot)
    assert fk.joint_names == result.joint_names
    checked = (*result.link_names, *result.converted.frame_links)
    for values in configurations(result, name + scope):
        expected = root_relative(result, sdf_poses(result, values))
        got = fk.poses(values)
        for link in checked:
            np.testing.assert_allclose(got[link], expected[link], atol=TOL, rtol=0, err_msg=f"{link} at {values}")


def pin_configuration(pin: Any, model: Any, values: dict[str, float]) -> np.ndarray:
    """Pinocchio's q: each named joint's value (continuous: cos, sin); others (floating) neutral."""
    q = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        name = model.names[joint_id]
        if name not in values:
            continue
        joint = model.joints[joint_id]
        if joint.nq == 2:
            q[joint.idx_q : joint.idx_q + 2] = (math.cos(values[name]), math.sin(values[name]))
        else:
            assert joint.nq == 1, name
            q[joint.idx_q] = values[name]
    return q


@pytest.mark.parametrize(("name", "scope"), CASES, ids=IDS)
def test_pinocchio_reads_the_export_with_the_sdf_kinematics(
    name: str, scope: str, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: no second reader")
    result = load(corpus_dir, corpus_resource_paths, name, scope)
    model = pin.buildModelFromXML(result.to_urdf())
    data = model.createData()
    moving = sdf_joint_values(result, {})
    floating = set(result.converted.floating_joints)
    assert set(model.names[1:]) == set(moving) | floating
    checked = (*result.link_names, *result.converted.frame_links)
    frames = {link: model.getFrameId(link, pin.BODY) for link in checked}
    assert all(frame < len(model.frames) for frame in frames.values()), frames
    for values in configurations(result, "pin" + name + scope):
        pin.framesForwardKinematics(model, data, pin_configuration(pin, model, sdf_joint_values(result, values)))
        expected = root_relative(result, sdf_poses(result, values))
        for link, frame in frames.items():
            np.testing.assert_allclose(
                data.oMf[frame].homogeneous, expected[link], atol=TOL, rtol=0, err_msg=f"{link} at {values}"
            )


# --------------------------------------------------------------------------- what is written
EVERYTHING = """<sdf version="1.11"><model name="arm">
  <link name="base">
    <inertial><pose>0 0 0.05 0 0 0</pose><mass>4</mass>
      <inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.3</izz><ixy>0.01</ixy><ixz>0.02</ixz><iyz>0.03</iyz></inertia>
    </inertial>
    <visual name="plate"><pose>0 0 0.01 0 0 0</pose><geometry><cylinder><radius>0.2</radius><length>0.02</length>
      </cylinder></geometry><material><diffuse>0.1 0.2 0.3 1</diffuse></material></visual>
    <collision name="plate"><geometry><box><size>0.4 0.4 0.02</size></box></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute"><pose relative_to="base">0 0 0.1 0 0 0</pose>
    <parent>base</parent><child>upper</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-2</lower><upper>2.5</upper><effort>30</effort><velocity>1.5</velocity></limit>
      <dynamics><damping>0.7</damping><friction>0.1</friction></dynamics></axis></joint>
  <link name="upper"><pose relative_to="shoulder">0 0 0 0 0 0</pose>
    <visual name="v"><geometry><mesh><uri>model://arm/meshes/upper.dae</uri><scale>1 1 2</scale></mesh></geometry>
      <material><ambient>0.5 0.5 0.5 0.8</ambient></material></visual>
    <collision name="c"><geometry><sphere><radius>0.05</radius></sphere></geometry></collision>
  </link>
  <joint name="finger" type="prismatic"><pose relative_to="upper">0.02 0 0.3 0 0 0</pose>
    <parent>upper</parent><child>left</child>
    <axis><xyz>1 0 0</xyz><limit><lower>0</lower><upper>0.04</upper></limit></axis></joint>
  <link name="left"><pose relative_to="finger"/></link>
  <joint name="finger_mirror" type="prismatic"><pose relative_to="upper">-0.02 0 0.3 0 0 0</pose>
    <parent>upper</parent><child>right</child>
    <axis><xyz>-1 0 0</xyz><limit><lower>0</lower><upper>0.04</upper></limit>
      <mimic joint="finger"><multiplier>1</multiplier><offset>0.001</offset><reference>0</reference></mimic></axis>
  </joint>
  <link name="right"><pose relative_to="finger_mirror"/></link>
  <frame name="tcp" attached_to="upper"><pose>0 0 0.35 0 0 0</pose></frame>
</model></sdf>"""


def test_links_joints_limits_mimic_geometry_materials_inertials_and_frames() -> None:
    result = load_from_model(read_string(EVERYTHING, source="arm.sdf"), build_serial=False)
    text = result.to_urdf()
    root = ET.fromstring(text)
    assert root.tag == "robot" and root.get("name") == "arm"
    robot = read_back(text)
    assert_same_robot(result.robot, robot)
    base, upper = robot.links["base"], robot.links["upper"]
    assert base.inertial is not None and base.inertial.mass == 4.0
    assert (base.inertial.inertia.ixx, base.inertial.inertia.iyz) == (0.1, 0.03)
    assert base.visuals[0].geometry == Cylinder(0.2, 0.02)
    assert base.visuals[0].material == Material(color=Color(0.1, 0.2, 0.3, 1.0))
    assert base.collisions[0].geometry == Box((0.4, 0.4, 0.02))
    assert upper.visuals[0].geometry == Mesh("model://arm/meshes/upper.dae", 1.0, (1.0, 1.0, 2.0))
    assert upper.visuals[0].material == Material(color=Color(0.5, 0.5, 0.5, 0.8))
    assert upper.collisions[0].geometry == Sphere(0.05)
    shoulder = robot.joints["shoulder"]
    assert shoulder.limits == JointLimits(-2.0, 2.5, 1.5, 30.0)
    assert shoulder.dynamics is not None and (shoulder.dynamics.damping, shoulder.dynamics.friction) == (0.7, 0.1)
    mirror = robot.joints["finger_mirror"]
    assert mirror.mimic is not None and (mirror.mimic.joint, mirror.mimic.multiplier) == ("finger", 1.0)
    assert mirror.mimic.offset == pytest.approx(0.001, abs=1e-15)
    limits = mirror.limits
    assert limits is not None and (limits.effort, limits.velocity) == (UNKNOWN_LIMIT, UNKNOWN_LIMIT)
    # the <frame> is a link and a fixed joint of its own name
    tcp = robot.joints["tcp"]
    assert (tcp.type, tcp.parent_link, tcp.child_link) == ("fixed", "upper", "tcp")
    assert robot.links["tcp"].visuals == ()
    poses = ForwardKinematics(robot).poses({"shoulder": 0.5, "finger": 0.01})
    expected = root_relative(result, sdf_poses(result, {"shoulder": 0.5, "finger": 0.01}))
    for link in ("upper", "left", "right", "tcp"):
        np.testing.assert_allclose(poses[link], expected[link], atol=TOL, err_msg=link)
    # right: 0.02 to -x of the upper axis, then the mimic (0.01 + 0.001) further along -x
    np.testing.assert_allclose(expected["right"][:3, 3], (-0.031 * math.cos(0.5), -0.031 * math.sin(0.5), 0.4))


def test_the_unknown_limit_placeholder_can_be_chosen() -> None:
    result = load_from_model(read_string(EVERYTHING, source="arm.sdf"), build_serial=False)
    limits = read_back(result.to_urdf(unknown_limit=1e6)).joints["finger"].limits
    assert limits is not None and (limits.effort, limits.velocity) == (1e6, 1e6)


def test_an_unknown_mesh_uri_mode_is_refused() -> None:
    result = load_from_model(read_string(EVERYTHING, source="arm.sdf"), build_serial=False)
    with pytest.raises(ValueError, match="'keep', 'file'"):
        result.to_urdf(mesh_uris="package")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- mesh URIs
ARM_MODEL = """<sdf version="1.9"><model name="arm">
  <link name="base"><visual name="v"><geometry><mesh><uri>meshes/base.stl</uri></mesh></geometry></visual>
    <collision name="c"><geometry><mesh><uri>model://arm/meshes/base_collision.stl</uri></mesh></geometry></collision>
  </link>
  <link name="upper"><pose>0 0 0.2 0 0 0</pose>
    <visual name="v"><geometry><mesh><uri>meshes/missing.dae</uri></mesh></geometry></visual></link>
  <joint name="j" type="revolute"><parent>base</parent><child>upper</child></joint>
</model></sdf>"""


def mesh_tree(tmp_path: Path) -> Path:
    """A world including ``model://arm`` from ``models/``, with a decoy ``meshes/`` beside the world."""
    arm = tmp_path / "my models" / "arm"
    (arm / "meshes").mkdir(parents=True)
    for mesh in ("base.stl", "base_collision.stl"):
        (arm / "meshes" / mesh).write_text("solid")
    (arm / "model.sdf").write_text(ARM_MODEL)
    (arm / "model.config").write_text('<model><sdf version="1.9">model.sdf</sdf></model>')
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "base.stl").write_text("decoy")
    world = tmp_path / "world.sdf"
    world.write_text('<sdf version="1.9"><world name="w"><include><uri>model://arm</uri></include></world></sdf>')
    return world


def meshes(text: str) -> list[str]:
    return [str(element.get("filename")) for element in ET.fromstring(text).iter("mesh")]


def test_mesh_uris_are_kept_by_default(tmp_path: Path) -> None:
    world = mesh_tree(tmp_path)
    result = load_from_file(world, resource_paths=[tmp_path / "my models"], build_serial=False)
    assert meshes(result.to_urdf()) == [
        "meshes/base.stl",
        "model://arm/meshes/base_collision.stl",
        "meshes/missing.dae",
    ]


def test_mesh_uris_resolve_to_absolute_file_uris_from_the_declaring_file(tmp_path: Path) -> None:
    world = mesh_tree(tmp_path)
    result = load_from_file(world, resource_paths=[tmp_path / "my models"], build_serial=False)
    text = result.to_urdf(mesh_uris="file")
    arm = (tmp_path / "my models" / "arm").resolve()
    assert meshes(text) == [
        (arm / "meshes" / "base.stl").as_uri(),  # the model's, not the decoy beside the world file
        (arm / "meshes" / "base_collision.stl").as_uri(),
        "meshes/missing.dae",  # not found: kept as written
    ]
    assert "%20" in meshes(text)[0]  # percent-encoded: a URI, not a path
    # only the URIs change: the model is the same
    kept = read_back(result.to_urdf())
    resolved = read_back(text)
    for name in kept.joints:
        assert repr(resolved.joints[name]) == repr(kept.joints[name])
    np.testing.assert_array_equal(ForwardKinematics(resolved).compute([0.3]), ForwardKinematics(kept).compute([0.3]))
    with pytest.raises(UrdfWriteError, match="meshes/missing.dae"):
        result.to_urdf(mesh_uris="file", strict_uris=True)


def test_file_mode_leaves_the_loaded_robot_unchanged(tmp_path: Path) -> None:
    world = mesh_tree(tmp_path)
    result = load_from_file(world, resource_paths=[tmp_path / "my models"], build_serial=False)
    before = repr(result.robot.links)
    result.to_urdf(mesh_uris="file")
    assert repr(result.robot.links) == before


def test_corpus_meshes_are_absent_so_file_mode_keeps_them(
    corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    # the corpus ships no meshes: every URI stays as written, and strict mode says which one is missing
    result = load(corpus_dir, corpus_resource_paths, "sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "")
    assert result.to_urdf(mesh_uris="file") == result.to_urdf()
    with pytest.raises(UrdfWriteError, match="model://"):
        result.to_urdf(mesh_uris="file", strict_uris=True)
