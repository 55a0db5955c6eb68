"""The bundled models (``models/``), written by ``bb_robot/authoring/bundled.py``.

* The committed files are exactly what the generator writes (they never drift).
* ``bb_arm.urdf`` keeps the kinematics of the hand-written arm it replaced: the facts of that
  file are copied below as numbers (links, joints with origins, axes, limits, dynamics, soft
  limits, the mimic, transmissions), compared exactly, and forward kinematics computed here
  from those numbers alone (rotation matrices from rpy and axis-angle, in numpy) equals
  bb_robot's on the new file at random configurations.
* ``bb_arm_world.sdf`` loads with bb_robot's SDF loader, and its robot puts every link of the
  URDF where the URDF does; each independent joint has a JointPositionController, and there is
  a JointStatePublisher.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers.robots import BB_ARM_LINKS

from bb_robot.authoring import bundled
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.sdf.loader import load_from_file
from bb_robot.urdf.builder import load_urdf
from bb_robot.urdf.parser import parse_file

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS = REPO_ROOT / "models"

# ------------------------------------------------------------------------------ the old arm's facts
# Copied from the hand-written models/bb_arm.urdf this generator replaced (`git show f1132a9:models/bb_arm.urdf`).
OLD_LINKS = BB_ARM_LINKS
# name: (type, parent, child, xyz, rpy, axis, (lower, upper, effort, velocity), (damping, friction))
OLD_JOINTS = {
    "shoulder_pan_joint": (
        "revolute", "base_link", "shoulder_link", (0, 0, 0.15), (0, 0, 0), (0, 0, 1),
        (-3.14159, 3.14159, 150, 2.0), (0.5, 0.1),
    ),
    "shoulder_lift_joint": (
        "revolute", "shoulder_link", "upper_arm_link", (0, 0, 0.12), (0, 0, 0), (0, 1, 0),
        (-2.0, 2.0, 150, 2.0), (0.5, 0.1),
    ),
    "elbow_joint": (
        "revolute", "upper_arm_link", "forearm_link", (0, 0, 0.40), (0, 0, 0), (0, 1, 0),
        (-2.6, 2.6, 100, 2.5), (0.3, 0.05),
    ),
    "wrist_1_joint": (
        "revolute", "forearm_link", "wrist_1_link", (0, 0, 0.35), (0, 0, 0), (0, 1, 0),
        (-3.14159, 3.14159, 28, 3.0), None,
    ),
    "wrist_2_joint": (
        "revolute", "wrist_1_link", "wrist_2_link", (0, 0, 0.09), (0, 0, 0), (0, 0, 1),
        (-3.14159, 3.14159, 28, 3.0), None,
    ),
    "wrist_3_joint": (
        "revolute", "wrist_2_link", "wrist_3_link", (0, 0, 0.09), (0, 0, 0), (0, 1, 0),
        (-6.28318, 6.28318, 28, 3.0), None,
    ),
    "tool0_joint": ("fixed", "wrist_3_link", "tool0", (0, 0, 0.08), (0, 0, 0), None, None, None),
    "gripper_mount_joint": (
        "fixed", "tool0", "gripper_base", (0, 0, 0), (0, 0, 1.5707963267948966), None, None, None,
    ),
    "left_finger_joint": (
        "prismatic", "gripper_base", "left_finger", (0, 0.01, 0.05), (0, 0, 0), (0, 1, 0),
        (0.0, 0.04, 40, 0.1), None,
    ),
    "right_finger_joint": (
        "prismatic", "gripper_base", "right_finger", (0, -0.01, 0.05), (0, 0, 0), (0, -1, 0),
        (0.0, 0.04, 40, 0.1), None,
    ),
    "tcp_joint": ("fixed", "gripper_base", "tcp", (0, 0, 0.10), (0, 0, 0), None, None, None),
}  # fmt: skip
OLD_MIMIC = ("right_finger_joint", "left_finger_joint", 1.0, 0.0)
# shoulder_pan_joint's <safety_controller>: soft limits, k_position, k_velocity
OLD_SAFETY = (-3.1, 3.1, 20.0, 0.5)
# transmission name: (joint, actuator, reduction)
OLD_TRANSMISSIONS = {
    "shoulder_pan_transmission": ("shoulder_pan_joint", "shoulder_pan_motor", 100.0),
    "shoulder_lift_transmission": ("shoulder_lift_joint", "shoulder_lift_motor", 100.0),
    "elbow_transmission": ("elbow_joint", "elbow_motor", 80.0),
    "wrist_1_transmission": ("wrist_1_joint", "wrist_1_motor", 50.0),
    "wrist_2_transmission": ("wrist_2_joint", "wrist_2_motor", 50.0),
    "wrist_3_transmission": ("wrist_3_joint", "wrist_3_motor", -50.0),
    "gripper_transmission": ("left_finger_joint", "gripper_motor", 314.159),
}
OLD_MOVABLE = [name for name, facts in OLD_JOINTS.items() if facts[0] != "fixed" and name != OLD_MIMIC[0]]


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def _axis_angle(axis: tuple[float, ...], angle: float) -> np.ndarray:
    k = np.array(axis, dtype=float)
    k /= np.linalg.norm(k)
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


def old_arm_poses(q: dict[str, float]) -> dict[str, np.ndarray]:
    """Every link's pose in base_link, from OLD_JOINTS alone (the mimic finger follows its leader)."""
    values = dict(q)
    joint, leader, multiplier, offset = OLD_MIMIC
    values[joint] = multiplier * values[leader] + offset
    poses = {"base_link": np.eye(4)}
    for name, (kind, parent, child, xyz, rpy, axis, _, _) in OLD_JOINTS.items():  # parents come first
        local = np.eye(4)
        local[:3, :3] = _rpy(*rpy)
        local[:3, 3] = xyz
        motion = np.eye(4)
        if kind == "revolute":
            assert axis is not None
            motion[:3, :3] = _axis_angle(axis, values[name])
        elif kind == "prismatic":
            assert axis is not None
            motion[:3, 3] = np.array(axis, dtype=float) * values[name]
        poses[child] = poses[parent] @ local @ motion
    return poses


# ------------------------------------------------------------------------------ generated files
@pytest.mark.parametrize("name", sorted(bundled.MODELS))
def test_committed_file_is_what_the_generator_writes(name: str) -> None:
    committed = (MODELS / name).read_text(encoding="utf-8")
    assert committed == bundled.MODELS[name](), f"models/{name} is out of date: run scripts/generate_models"


def test_generate_models_script(tmp_path: Path) -> None:
    script = REPO_ROOT / "scripts" / "generate_models"
    check = subprocess.run([str(script), "--check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    written = subprocess.run([str(script), "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    srdfs = [Path(name).with_suffix(".srdf").name for name in bundled.MODELS]  # bb_robot/collision/bundled.py
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*bundled.MODELS, *srdfs])
    (tmp_path / "bb_gripper.urdf").write_text("edited by hand", encoding="utf-8")
    stale = subprocess.run(
        [str(script), "--check", "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert stale.returncode == 1 and "bb_gripper.urdf" in stale.stderr
    assert (tmp_path / "bb_gripper.urdf").read_text(encoding="utf-8") == "edited by hand"  # --check writes nothing


# ------------------------------------------------------------------------------ the arm
def test_arm_keeps_the_old_kinematic_facts() -> None:
    doc = parse_file(MODELS / "bb_arm.urdf")
    assert doc.name == "bb_arm"
    assert tuple(link.name for link in doc.links) == OLD_LINKS
    assert [joint.name for joint in doc.joints] == list(OLD_JOINTS)
    for joint in doc.joints:
        kind, parent, child, xyz, rpy, axis, limit, dynamics = OLD_JOINTS[joint.name]
        assert (joint.type, joint.parent, joint.child) == (kind, parent, child)
        assert joint.origin is not None
        assert joint.origin.xyz == tuple(map(float, xyz)) and joint.origin.rpy == tuple(map(float, rpy))
        assert joint.axis == (None if axis is None else tuple(map(float, axis)))
        if limit is None:
            assert joint.limit is None
        else:
            assert joint.limit is not None
            assert (joint.limit.lower, joint.limit.upper, joint.limit.effort, joint.limit.velocity) == limit
        if dynamics is None:
            assert joint.dynamics is None
        else:
            assert joint.dynamics is not None and (joint.dynamics.damping, joint.dynamics.friction) == dynamics
        if joint.name == OLD_MIMIC[0]:
            assert joint.mimic is not None
            assert (joint.mimic.joint, joint.mimic.multiplier, joint.mimic.offset) == OLD_MIMIC[1:]
        else:
            assert joint.mimic is None
        if joint.name == "shoulder_pan_joint":
            s = joint.safety_controller
            assert s is not None
            assert (s.soft_lower_limit, s.soft_upper_limit, s.k_position, s.k_velocity) == OLD_SAFETY
        else:
            assert joint.safety_controller is None
    assert {k: (t.joint, t.actuator, t.reduction) for k, t in doc.transmissions.items()} == OLD_TRANSMISSIONS


def test_arm_forward_kinematics_equals_the_old_arms() -> None:
    robot = load_urdf(MODELS / "bb_arm.urdf")
    fk = ForwardKinematics(robot)
    assert list(fk.joint_names) == OLD_MOVABLE
    rng = np.random.default_rng(2024)
    for _ in range(20):
        q = {}
        for name in OLD_MOVABLE:
            lower, upper = OLD_JOINTS[name][6][:2]  # type: ignore[index]
            q[name] = float(rng.uniform(lower, upper))
        expected = old_arm_poses(q)
        poses = fk.poses(q)
        for link in OLD_LINKS:
            np.testing.assert_allclose(poses[link], expected[link], atol=1e-12, err_msg=link)
    # the README's main job: the tcp 1.38 m above the base at zero
    np.testing.assert_allclose(fk.poses({})["tcp"][:3, 3], [0.0, 0.0, 1.38], atol=1e-12)


def test_arm_inertias_are_the_solid_bodies() -> None:
    doc = parse_file(MODELS / "bb_arm.urdf")
    links = {link.name: link for link in doc.links}
    upper_arm = links["upper_arm_link"].inertial
    assert upper_arm is not None and upper_arm.mass == 8.4
    assert upper_arm.inertia.ixx == pytest.approx(8.4 * (3 * 0.055**2 + 0.4**2) / 12, rel=1e-15)
    assert upper_arm.inertia.izz == pytest.approx(8.4 * 0.055**2 / 2, rel=1e-15)
    assert upper_arm.origin is not None and upper_arm.origin.xyz == (0.0, 0.0, 0.2)  # the centre of the cylinder
    gripper = links["gripper_base"].inertial
    assert gripper is not None
    ixx, iyy, izz = gripper.inertia.ixx, gripper.inertia.iyy, gripper.inertia.izz
    assert (ixx, iyy, izz) == pytest.approx(
        (0.8 * (0.12**2 + 0.05**2) / 12, 0.8 * (0.06**2 + 0.05**2) / 12, 0.8 * (0.06**2 + 0.12**2) / 12), rel=1e-15
    )
    assert links["tool0"].inertial is None and links["tcp"].inertial is None


# ------------------------------------------------------------------------------ gripper, pan-tilt
def test_gripper_is_the_arms_gripper() -> None:
    gripper = load_urdf(MODELS / "bb_gripper.urdf")
    arm = load_urdf(MODELS / "bb_arm.urdf")
    assert gripper.root_link == "gripper_base"
    assert sorted(gripper.links) == ["gripper_base", "left_finger", "right_finger", "tcp"]
    for name in ("left_finger_joint", "right_finger_joint", "tcp_joint"):
        assert gripper.joints[name] == arm.joints[name]
    assert gripper.joints["right_finger_joint"].mimic is not None
    assert list(gripper.actuators) == ["gripper_motor"]
    pose = ForwardKinematics(gripper).poses({"left_finger_joint": 0.03})
    assert pose["left_finger"][:3, 3] == pytest.approx([0.0, 0.04, 0.05])
    assert pose["right_finger"][:3, 3] == pytest.approx([0.0, -0.04, 0.05])


def test_pan_tilt_head() -> None:
    head = load_urdf(MODELS / "bb_pan_tilt.urdf")
    fk = ForwardKinematics(head)
    assert list(fk.joint_names) == ["pan_joint", "tilt_joint"]
    assert sorted(head.actuators) == ["pan_motor", "tilt_motor"]
    optical = fk.poses({})["camera_optical_frame"]
    # REP 103 optical frame: z forward (the camera's x), x right (−y), y down (−z)
    np.testing.assert_allclose(optical[:3, :3], [[0, 0, 1], [-1, 0, 0], [0, -1, 0]], atol=1e-15)
    panned = fk.poses({"pan_joint": math.pi / 2})["camera_link"]
    np.testing.assert_allclose(panned[:3, 3], [0.0, 0.02, 0.11], atol=1e-12)


# ------------------------------------------------------------------------------ the world
def test_world_loads_with_the_urdfs_kinematics() -> None:
    result = load_from_file(MODELS / "bb_arm_world.sdf", build_serial=False)
    assert result.world.name == "bb_arm_world"
    assert result.source_scope == "bb_arm"
    robot = result.robot
    urdf = load_urdf(MODELS / "bb_arm.urdf")
    assert set(robot.links) == set(urdf.links) | {"world"}
    movable = {n: j for n, j in urdf.joints.items() if j.type != "fixed"}
    for name, joint in movable.items():
        loaded = robot.joints[name]
        assert (loaded.type, loaded.parent_link, loaded.child_link, loaded.mimic) == (
            joint.type,
            joint.parent_link,
            joint.child_link,
            joint.mimic,
        )
        assert loaded.axis == pytest.approx(joint.axis, abs=1e-15)
        assert loaded.limits is not None and joint.limits is not None
        limits = (joint.limits.lower, joint.limits.upper, joint.limits.effort, joint.limits.velocity)
        assert (loaded.limits.lower, loaded.limits.upper, loaded.limits.effort, loaded.limits.velocity) == limits
    fk_sdf, fk_urdf = ForwardKinematics(robot), ForwardKinematics(urdf)
    assert list(fk_sdf.joint_names) == list(fk_urdf.joint_names)
    rng = np.random.default_rng(11)
    for _ in range(10):
        q = {name: float(rng.uniform(-1.5, 1.5)) for name in fk_urdf.joint_names}
        q["left_finger_joint"] = float(rng.uniform(0.0, 0.04))
        sdf_poses, urdf_poses = fk_sdf.poses(q), fk_urdf.poses(q)
        base = np.linalg.inv(sdf_poses["base_link"])
        for link in urdf.links:
            np.testing.assert_allclose(base @ sdf_poses[link], urdf_poses[link], atol=1e-12, err_msg=link)


def test_world_plugins() -> None:
    result = load_from_file(MODELS / "bb_arm_world.sdf", build_serial=False)
    plugins = result.world.plugins["bb_arm"]
    controllers = [p for p in plugins if p.name == "gz::sim::systems::JointPositionController"]
    assert all(p.filename == "gz-sim-joint-position-controller-system" for p in controllers)
    controlled = []
    for plugin in controllers:
        joint = plugin.xml.split("<joint_name>", 1)[1].split("</joint_name>", 1)[0]
        controlled.append(joint)
        assert f"<topic>{bundled.command_topic(joint)}</topic>" in plugin.xml
    assert controlled == list(result.joint_names) == OLD_MOVABLE  # every independent joint, the mimic follows
    publishers = [p for p in plugins if p.name == "gz::sim::systems::JointStatePublisher"]
    assert len(publishers) == 1 and publishers[0].filename == "gz-sim-joint-state-publisher-system"
    names = {p.name for p in result.world.world_plugins}
    assert "gz::sim::systems::Physics" in names and "gz::sim::systems::SceneBroadcaster" in names


@pytest.mark.parametrize("name", ["bb_arm", "bb_gripper", "bb_pan_tilt"])
def test_peers_accept_the_bundled_urdfs(name: str) -> None:
    """urdf_parser_py (strict about required attributes) and Pinocchio read the generated files."""
    text = (MODELS / f"{name}.urdf").read_text(encoding="utf-8")
    robot = load_urdf(MODELS / f"{name}.urdf")
    urdf = pytest.importorskip("urdf_parser_py.urdf", reason="PyPI urdf-parser-py is not installed")
    parsed = urdf.URDF.from_xml_string(text.encode())
    assert sorted(link.name for link in parsed.links) == sorted(robot.links)
    assert len(parsed.transmissions) == len(robot.actuators)
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed")
    model = pin.buildModelFromXML(text)
    assert {n for n in model.names if n != "universe"} == {n for n, j in robot.joints.items() if j.type != "fixed"}
