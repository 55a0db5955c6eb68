"""The MJCF writer (:mod:`bb_robot.mjcf`) against MuJoCo itself.

MuJoCo reads URDF on its own: for the bundled arm, the mass matrix and the gravity and Coriolis
forces of our document equal those of MuJoCo's URDF import at random configurations, and the
bodies' poses equal bb_robot's forward kinematics.  Meshes, mimics, damping and friction, the
floor and what MJCF cannot carry are checked on small robots written for the purpose.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from bb_robot.mjcf import MjcfOptions, robot_to_mjcf  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.resources import bundled_model  # noqa: E402
from bb_robot.urdf.builder import build_robot, load_urdf  # noqa: E402
from bb_robot.urdf.parser import parse_string  # noqa: E402


def load_elsewhere(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> mujoco.MjModel:
    """Write the document in one directory and load it with from_xml_path from another."""
    path = tmp_path / "doc" / "robot.xml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    monkeypatch.chdir(elsewhere)
    return mujoco.MjModel.from_xml_path(str(path))


def test_the_arm_has_the_dynamics_of_mujocos_own_urdf_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    robot = load_urdf(str(bundled_model()))
    document = robot_to_mjcf(robot)
    assert document.warnings == ()
    ours = load_elsewhere(document.text, tmp_path, monkeypatch)
    reference = mujoco.MjModel.from_xml_path(str(bundled_model()))
    names = [reference.joint(i).name for i in range(reference.njnt)]
    assert sorted(ours.joint(i).name for i in range(ours.njnt)) == sorted(names)
    ours_data, reference_data = mujoco.MjData(ours), mujoco.MjData(reference)
    rng = np.random.default_rng(16)
    for _ in range(5):
        for name in names:
            joint = reference.joint(name)
            low, high = joint.range if reference.jnt_limited[joint.id] else (-np.pi, np.pi)
            value = rng.uniform(low, high)
            mimic = robot.get_joint(name).mimic
            if mimic is not None:  # where its leader (set before it: the tree's order) puts it
                value = mimic.offset + mimic.multiplier * ours_data.qpos[ours.joint(mimic.joint).qposadr[0]]
            reference_data.qpos[joint.qposadr[0]] = value
            ours_data.qpos[ours.joint(name).qposadr[0]] = value
            ours_data.qvel[ours.joint(name).dofadr[0]] = reference_data.qvel[joint.dofadr[0]] = rng.normal()
        mujoco.mj_forward(reference, reference_data)
        mujoco.mj_forward(ours, ours_data)
        order = [ours.joint(name).dofadr[0] for name in names]
        reference_order = [reference.joint(name).dofadr[0] for name in names]
        mass, reference_mass = np.zeros((ours.nv, ours.nv)), np.zeros((reference.nv, reference.nv))
        mujoco.mj_fullM(ours, ours_data, mass)
        mujoco.mj_fullM(reference, reference_data, reference_mass)
        np.testing.assert_allclose(
            mass[np.ix_(order, order)], reference_mass[np.ix_(reference_order, reference_order)], atol=1e-5
        )
        np.testing.assert_allclose(
            ours_data.qfrc_bias[order], reference_data.qfrc_bias[reference_order], rtol=1e-6, atol=1e-5
        )
        # the bodies sit where bb_robot's forward kinematics puts the links
        q = {
            name: float(ours_data.qpos[ours.joint(name).qposadr[0]])
            for name in names
            if robot.get_joint(name).mimic is None
        }
        poses = ForwardKinematics(robot).poses(q)
        for body in range(1, ours.nbody):
            pose = poses[ours.body(body).name]
            np.testing.assert_allclose(ours_data.xpos[body], pose[:3, 3], atol=1e-9)
            np.testing.assert_allclose(ours_data.xmat[body].reshape(3, 3), pose[:3, :3], atol=1e-9)
    # limits, damping, friction as the URDF says
    for name in names:
        joint = robot.get_joint(name)
        np.testing.assert_allclose(ours.joint(name).range, (joint.limits.lower, joint.limits.upper))
        dynamics = joint.dynamics
        assert ours.dof_damping[ours.joint(name).dofadr[0]] == ((dynamics.damping or 0.0) if dynamics else 0.0)
        assert ours.dof_frictionloss[ours.joint(name).dofadr[0]] == ((dynamics.friction or 0.0) if dynamics else 0.0)
    np.testing.assert_allclose(ours.opt.gravity, (0, 0, -9.81))
    assert document.floor and ours.geom("floor").type == mujoco.mjtGeom.mjGEOM_PLANE
    # one motor per driven joint, within its effort limit; the mimic is an equality constraint
    assert document.actuated == tuple(ours.actuator(i).name for i in range(ours.nu))
    for name in document.actuated:
        effort = robot.get_joint(name).limits.effort
        np.testing.assert_allclose(ours.actuator(name).forcerange, (-effort, effort))
    assert ours.neq == 1 and ours.eq_type[0] == mujoco.mjtEq.mjEQ_JOINT


def ascii_cube_stl(path: Path, half: float = 0.05) -> None:
    """A closed cube as binary STL."""
    corners = np.array([[x, y, z] for x in (-half, half) for y in (-half, half) for z in (-half, half)])
    faces = [
        (0, 1, 3),
        (0, 3, 2),
        (4, 6, 7),
        (4, 7, 5),
        (0, 4, 5),
        (0, 5, 1),
        (2, 3, 7),
        (2, 7, 6),
        (0, 2, 6),
        (0, 6, 4),
        (1, 5, 7),
        (1, 7, 3),
    ]
    data = bytearray(80) + struct.pack("<I", len(faces))
    for face in faces:
        data += struct.pack("<3f", 0, 0, 0)
        for index in face:
            data += struct.pack("<3f", *corners[index])
        data += b"\0\0"
    path.write_bytes(bytes(data))


MESHY = """<robot name="meshy">
  <link name="base"><collision><geometry><mesh filename="meshes/cube.stl" scale="2 1 1"/></geometry></collision></link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="meshes/arm.dae"/></geometry></visual>
    <visual><geometry><mesh filename="package://no_such_package/meshes/gone.stl"/></geometry></visual>
    <collision><geometry><mesh filename="meshes/cube.stl"/></geometry></collision>
  </link>
  <link name="finger_a"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4"/></inertial></link>
  <link name="finger_b"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4"/></inertial></link>
  <link name="ghost"/>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>
    <dynamics damping="0.25" friction="0.125"/></joint>
  <joint name="a" type="prismatic"><parent link="arm"/><child link="finger_a"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" effort="5" velocity="1"/></joint>
  <joint name="b" type="prismatic"><parent link="arm"/><child link="finger_b"/><axis xyz="0 1 0"/>
    <limit lower="-0.2" upper="0.2" effort="5" velocity="1"/><mimic joint="a" multiplier="-2" offset="0.01"/></joint>
  <joint name="g" type="revolute"><parent link="arm"/><child link="ghost"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>
"""


def test_meshes_resolved_and_what_mjcf_cannot_carry_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "robot" / "meshy.urdf"
    (source.parent / "meshes").mkdir(parents=True)
    source.write_text(MESHY)
    ascii_cube_stl(source.parent / "meshes" / "cube.stl")
    (source.parent / "meshes" / "arm.dae").write_text("<COLLADA/>")
    robot = build_robot(parse_string(MESHY, source=str(source)))
    document = robot_to_mjcf(robot)
    warnings = "\n".join(document.warnings)
    assert "link 'arm': mesh 'meshes/arm.dae' (.dae) is in a format MuJoCo does not read" in warnings
    assert "link 'arm': mesh 'package://no_such_package/meshes/gone.stl' not found" in warnings
    assert "link 'ghost' moves but has no mass" in warnings
    assert len(document.meshes) == 1 and Path(document.meshes[0]).is_absolute()
    model = load_elsewhere(document.text, tmp_path, monkeypatch)
    assert model.nmesh == 2  # the cube, and the cube scaled 2 × 1 × 1
    # edge lengths (MuJoCo turns a mesh to its principal axes: compare them sorted)
    extents = sorted(
        tuple(sorted(np.ptp(model.mesh_vert[model.mesh_vertadr[i] : model.mesh_vertadr[i] + model.mesh_vertnum[i]], 0)))
        for i in range(2)
    )
    np.testing.assert_allclose(extents, [(0.1, 0.1, 0.1), (0.1, 0.1, 0.2)], rtol=1e-6)
    dof = model.joint("j").dofadr[0]
    assert model.dof_damping[dof] == 0.25 and model.dof_frictionloss[dof] == 0.125
    assert not model.jnt_limited[model.joint("j").id]
    # the mimic: b = 0.01 - 2 a, held by the equality constraint while a is pushed
    data = mujoco.MjData(model)
    data.ctrl[model.actuator("a").id] = 2.0
    for _ in range(300):
        mujoco.mj_step(model, data)
    a, b = data.qpos[model.joint("a").qposadr[0]], data.qpos[model.joint("b").qposadr[0]]
    assert a > 0.01
    assert b == pytest.approx(0.01 - 2.0 * a, abs=2e-3)
    assert document.actuated == ("j", "a", "g")


def test_a_floor_only_when_the_model_has_none() -> None:
    ground = """<robot name="r">
      <link name="world_box"><collision><geometry><box size="20 20 0.1"/></geometry></collision></link>
      <link name="l"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
      <joint name="j" type="continuous"><parent link="world_box"/><child link="l"/></joint></robot>"""
    robot = build_robot(parse_string(ground))
    assert not robot_to_mjcf(robot).floor
    assert robot_to_mjcf(robot, MjcfOptions(floor=True)).floor
    plain = build_robot(parse_string(ground.replace("20 20 0.1", "0.2 0.2 0.1")))
    assert robot_to_mjcf(plain).floor
    assert 'name="floor"' not in robot_to_mjcf(plain, MjcfOptions(floor=False)).text


def test_floating_and_planar_joints() -> None:
    urdf = """<robot name="r"><link name="world"/>
      <link name="body"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
      <link name="slab"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
      <joint name="free" type="floating"><parent link="world"/><child link="body"/></joint>
      <joint name="plane" type="planar"><parent link="body"/><child link="slab"/><axis xyz="0 0 1"/></joint></robot>"""
    document = robot_to_mjcf(build_robot(parse_string(urdf)))
    assert "joint 'plane': planar joints are not converted; written as fixed" in document.warnings
    model = mujoco.MjModel.from_xml_string(document.text)
    assert model.njnt == 1 and model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE


def test_the_convert_command_writes_mjcf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bb_robot.cli.main import main

    out = tmp_path / "bb_arm.xml"
    assert main(["convert", str(bundled_model()), "--to", "mjcf", "-o", str(out)]) == 0
    model = load_elsewhere(out.read_text(), tmp_path, monkeypatch)
    assert model.nu == 7 and model.neq == 1
    with pytest.raises(SystemExit) as refused:
        main(["convert", str(bundled_model()), "--to", "mjcf", "--mesh-uris", "file"])
    assert refused.value.code == 2


TILTED = """<robot name="tilted">
  <link name="base"/>
  <link name="a">
    <inertial><origin xyz="0.1 0.02 -0.05" rpy="0.4 -0.7 1.1"/><mass value="2.5"/>
      <inertia ixx="0.03" iyy="0.02" izz="0.012" ixy="0.002" ixz="-0.001" iyz="0.003"/></inertial>
  </link>
  <link name="b">
    <inertial><origin xyz="0 0.2 0.1" rpy="-1.2 0.3 0.5"/><mass value="1.1"/>
      <inertia ixx="0.01" iyy="0.008" izz="0.006" ixy="0" ixz="0.0005" iyz="0"/></inertial>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.3" rpy="0.2 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.2 0 0" rpy="0 0.5 -0.3"/>
    <axis xyz="1 1 0"/><limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
</robot>
"""


def test_rotated_inertials_match_mujocos_urdf_import() -> None:
    robot = build_robot(parse_string(TILTED))
    ours = mujoco.MjModel.from_xml_string(robot_to_mjcf(robot, MjcfOptions(floor=False)).text)
    reference = mujoco.MjModel.from_xml_string(TILTED)
    ours_data, reference_data = mujoco.MjData(ours), mujoco.MjData(reference)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v = rng.uniform(-2, 2, 2), rng.normal(size=2)
        ours_data.qpos[:], ours_data.qvel[:] = q, v
        reference_data.qpos[:], reference_data.qvel[:] = q, v
        mujoco.mj_forward(ours, ours_data)
        mujoco.mj_forward(reference, reference_data)
        mass, reference_mass = np.zeros((2, 2)), np.zeros((2, 2))
        mujoco.mj_fullM(ours, ours_data, mass)
        mujoco.mj_fullM(reference, reference_data, reference_mass)
        np.testing.assert_allclose(mass, reference_mass, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ours_data.qfrc_bias, reference_data.qfrc_bias, rtol=1e-9, atol=1e-12)


def test_the_ur3e_world_of_the_corpus_converts_and_loads(
    corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SDF world with includes, rotated inertials and meshes it cannot find (not in the corpus)."""
    from bb_robot.cli.common import load
    from bb_robot.cli.main import main

    world = corpus_dir / "sas_robot_driver_gazebo" / "sdf" / "ur3e_world.sdf"
    out = tmp_path / "ur3e.xml"
    assert main(["convert", str(world), "--to", "mjcf", "-o", str(out)]) == 0
    assert "link 'wrist_3_link': mesh 'model://../vendor/" in capsys.readouterr().err
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.nu == 6 and model.nq == 6
    # every link's mass but the root's (welded to the world) is on a body
    robot = load(str(world)).robot
    masses = [
        link.inertial.mass
        for link in robot.links.values()
        if link.inertial is not None and link.inertial.mass and link.name != robot.root_link
    ]
    assert float(model.body_mass[1:].sum()) == pytest.approx(sum(masses), abs=1e-4)
