"""The importer: URDF or SDF → Python source that rebuilds the robot with the authoring API.

Round trip: URDF file → IR → Python source → (exec) → ``robot.to_urdf()`` → IR must equal the
file's IR — name, links, joints, transmissions, top-level materials — compared through ``repr``
(every float bit for bit, ``-0.0`` included), on every real URDF of the shared corpus and of
example-robot-data.  For SDF, the executed robot's model must equal the SDF loader's (its IR,
and forward kinematics at random configurations), on every corpus SDF file that loads.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.robot_files import CORPUS_DIR, urdf_params
from helpers.sdf_corpus import REJECTS

from bb_robot.authoring import AuthoringError, Robot
from bb_robot.authoring.importer import (
    import_sdf,
    import_urdf,
    python_source_for,
    robot_from_ir,
    robot_from_model,
    robot_to_python,
)
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.sdf.loader import load_from_file
from bb_robot.urdf import ir
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.parser import parse_file, parse_string
from bb_robot.urdf.writer import model_to_ir

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_source(source: str) -> Robot:
    """Execute generated source (not as ``__main__``) and return its ``robot``."""
    namespace: dict[str, Any] = {"__name__": "generated"}
    exec(compile(source, "<generated>", "exec"), namespace)
    robot = namespace["robot"]
    assert isinstance(robot, Robot)
    return robot


def ir_fields(doc: ir.Robot) -> dict[str, str]:
    return {
        "name": repr(doc.name),
        "links": repr(doc.links),
        "joints": repr(doc.joints),
        "transmissions": repr(doc.transmissions),
        "materials": repr(doc.materials),
    }


def round_trip(doc: ir.Robot) -> tuple[str, ir.Robot]:
    source = python_source_for(doc)
    return source, parse_string(run_source(source).to_urdf())


# ------------------------------------------------------------------------------ real files
@pytest.mark.parametrize("path", urdf_params())
def test_urdf_round_trip(path: Path) -> None:
    doc = parse_file(path)
    source = import_urdf(path)
    assert source == python_source_for(doc)  # deterministic, from the file's IR
    back = parse_string(run_source(source).to_urdf())
    assert ir_fields(back) == ir_fields(doc)


def test_bundled_arm_round_trip() -> None:
    doc = parse_file(REPO_ROOT / "models" / "bb_arm.urdf")
    _, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)


def _sdf_files() -> list[Any]:
    paths = sorted(CORPUS_DIR.rglob("*.sdf")) if CORPUS_DIR.is_dir() else []
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason="no shared corpus"))]
    return [pytest.param(path, id=str(path.relative_to(CORPUS_DIR))) for path in paths]


@pytest.mark.parametrize("path", _sdf_files())
def test_sdf_round_trip(path: Path, corpus_resource_paths: tuple[Path, ...]) -> None:
    rejected = REJECTS.get(path.relative_to(CORPUS_DIR).as_posix())
    if rejected is not None:  # the loader's own tests check the error and its message
        with pytest.raises(rejected[0]):
            load_from_file(path, resource_paths=corpus_resource_paths, build_serial=False)
        pytest.skip(f"the SDF loader rejects {path.name} on purpose ({rejected[0].__name__}): nothing to import")
    result = load_from_file(path, resource_paths=corpus_resource_paths, build_serial=False)
    source = import_sdf(path, resource_paths=corpus_resource_paths)
    robot = run_source(source)
    assert f"from {path.name} (model {result.source_scope})" in source
    assert ir_fields(parse_string(robot.to_urdf())) == ir_fields(model_to_ir(result.robot))
    model = robot.to_model()
    fk, fk2 = ForwardKinematics(result.robot), ForwardKinematics(model)
    assert fk2.joint_names == fk.joint_names and fk2.link_names == fk.link_names
    q = np.random.default_rng(5).uniform(-2.0, 2.0, size=(6, len(fk.joint_names)))
    np.testing.assert_array_equal(fk2.compute(q), fk.compute(q))


# ------------------------------------------------------------------------------ hand-written cases
def _doc(body: str, name: str = "r") -> ir.Robot:
    return parse_string(f'<robot name="{name}">{body}</robot>')


NAMES = ["1st link", "class", "Robot", "a-b", "a_b", "ünïcode", "print", "x.y", "-", 'it\'s "quoted"\n']


def test_names_that_are_not_identifiers() -> None:
    links = "".join(f'<link name="{n.replace(chr(34), "&quot;").replace(chr(10), "&#10;")}"/>' for n in NAMES)
    joints = "".join(
        f'<joint name="{n.replace(chr(34), "&quot;").replace(chr(10), "&#10;")}" type="fixed">'
        f'<parent link="1st link"/><child link="{n.replace(chr(34), "&quot;").replace(chr(10), "&#10;")}"/></joint>'
        for n in NAMES[1:]
    )
    doc = _doc(links + joints, name="we'ird\\name")
    source, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)
    assert [link.name for link in back.links] == NAMES
    # variables: sanitised, unique, never shadowing the API or builtins; names kept as strings
    for variable in ("link_1st_link = Link(", "class_2 = Link(", "Robot_2 = Link(", "a_b = Link(", "a_b_2 = Link("):
        assert variable in source
    assert "print_2 = Link(" in source and "x_y = Link(" in source and "link__ = Link(" in source
    assert '"ünïcode"' in source and "_n_code = Link(" in source


def test_a_joint_and_a_link_of_one_name() -> None:
    doc = _doc(
        '<link name="arm"/><link name="hand"/>'
        '<joint name="hand" type="fixed"><parent link="arm"/><child link="hand"/></joint>'
    )
    source, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)
    assert "hand = Link(" in source and "hand_2 = Joint(" in source


def test_world_anchor() -> None:
    doc = _doc(
        '<link name="base"/><joint name="anchor" type="fixed"><parent link="world"/><child link="base"/>'
        '<origin xyz="1 2 3"/></joint>'
    )
    source, back = round_trip(doc)
    assert "parent=WORLD" in source
    assert ir_fields(back) == ir_fields(doc)
    defined = _doc(
        '<link name="world"/><link name="base"/>'
        '<joint name="anchor" type="fixed"><parent link="world"/><child link="base"/></joint>'
    )
    source, back = round_trip(defined)
    assert "parent=world" in source and ir_fields(back) == ir_fields(defined)


MATERIALS = """
<material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
<material name="unused"><color rgba="0 1 0 1"/></material>
<material name="skin"><texture filename="package://p/skin.png"/></material>
<link name="a">
  <visual><geometry><sphere radius="1"/></geometry><material name="grey"/></visual>
  <visual><geometry><sphere radius="2"/></geometry><material name="grey"/></visual>
  <visual><geometry><sphere radius="3"/></geometry>
    <material name="grey"><color rgba="0.2 0.2 0.2 1"/></material></visual>
  <visual><geometry><sphere radius="4"/></geometry><material name="local"><color rgba="1 0 0 1"/></material></visual>
  <visual><geometry><sphere radius="5"/></geometry><material name="local"/></visual>
  <visual><geometry><sphere radius="6"/></geometry><material name=""><color rgba="0 0 1 1"/></material></visual>
  <visual><geometry><sphere radius="7"/></geometry><material name="nowhere"/></visual>
  <visual><geometry><sphere radius="8"/></geometry><material name="skin"/></visual>
</link>
"""


def test_shared_materials_are_one_variable_each() -> None:
    doc = _doc(MATERIALS)
    source, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)
    # grey (top), unused, skin, grey (inline, different), local, anonymous, nowhere: one definition each
    assert source.count("Material(") == 7
    assert source.count("material=grey)") == 2
    assert "materials=[grey, unused, skin]" in source


def test_mimic_transmissions_extra_visuals_and_scales() -> None:
    doc = _doc(
        '<link name="a"><visual><geometry><mesh filename="m.stl" scale="0.001 0.002 -0.003"/></geometry></visual>'
        '<visual name="2nd"><origin xyz="0 0 0.1"/><geometry><mesh filename="n.dae" scale="2 2 2"/></geometry></visual>'
        '<collision><geometry><mesh filename="c.stl" scale="1 1 1"/></geometry></collision></link>'
        '<link name="b"/><link name="c"/>'
        '<joint name="follower" type="prismatic"><parent link="a"/><child link="c"/>'
        '<limit lower="0" upper="0.04" effort="1" velocity="1"/>'
        '<mimic joint="leader" multiplier="-2" offset="0.5"/></joint>'
        '<joint name="leader" type="prismatic"><parent link="a"/><child link="b"/>'
        '<limit lower="0" upper="0.04" effort="1" velocity="1"/><safety_controller k_velocity="3"/></joint>'
        "<transmission><type>transmission_interface/SimpleTransmission</type>"
        '<joint name="leader"><offset>-0.0</offset></joint><mechanicalReduction>-3</mechanicalReduction></transmission>'
        '<transmission name="t2"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="follower"/><actuator name="m2"><mechanicalReduction>7.5</mechanicalReduction></actuator>'
        "</transmission>"
    )
    source, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)
    assert back.links[0].visual is not None
    assert back.links[0].visual.geometry == ir.Mesh("m.stl", 0.001, (0.001, 0.002, -0.003))
    assert len(back.links[0].extra_visuals) == 1
    assert 'Mimic("leader", multiplier=-2.0, offset=0.5)' in source  # defined later: by name
    assert "Transmission(None, leader, reduction=-3.0, offset=-0.0)" in source
    assert 'Transmission("t2", follower, "m2", reduction=7.5)' in source


def test_floats_are_exact() -> None:
    awkward = [0.1 + 0.2, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 1 / 3, -(2.0**-60), 123456789.123456789]
    text = " ".join(repr(v) for v in awkward[:3])
    doc = _doc(
        f'<link name="a"><inertial><origin xyz="{text}" rpy="{" ".join(repr(v) for v in awkward[3:6])}"/>'
        f'<mass value="{awkward[7]!r}"/><inertia ixx="{awkward[0]!r}" ixy="{awkward[1]!r}" ixz="{awkward[6]!r}" '
        f'iyy="{awkward[5]!r}" iyz="0" izz="{awkward[4]!r}"/></inertial></link>'
    )
    source, back = round_trip(doc)
    assert ir_fields(back) == ir_fields(doc)
    for value in awkward:
        if value != 0.0:
            assert repr(value) in source


def test_source_runs_as_a_script_and_prints_the_urdf(tmp_path: Path) -> None:
    script = tmp_path / "arm.py"
    script.write_text(import_urdf(REPO_ROOT / "models" / "bb_arm.urdf"), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert ir_fields(parse_string(result.stdout)) == ir_fields(parse_file(REPO_ROOT / "models" / "bb_arm.urdf"))


def test_warnings_are_listed_without_directories() -> None:
    doc = parse_string('<robot name="r"><link name="a"/><gazebo/></robot>', source="/some/dir/r.urdf")
    source = python_source_for(doc)
    assert "# - r.urdf:1: <gazebo> is Gazebo-specific" in source
    assert "/some/dir" not in source
    assert '"""Robot \'r\' from r.urdf, written' in source


def test_what_the_authoring_api_refuses_is_reported() -> None:
    doc = _doc(
        '<link name="a"/><link name="b"/><joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>'
    )
    with pytest.raises(AuthoringError, match="Joint 'j': a revolute joint needs a limit"):
        python_source_for(doc)
    colour = _doc(
        '<link name="a"><visual><geometry><sphere radius="1"/></geometry><material name="m">'
        '<color rgba="2 0 0 1"/></material></visual></link>'
    )
    with pytest.raises(AuthoringError, match="outside \\[0, 1\\]"):
        python_source_for(colour)


def test_from_the_model() -> None:
    doc = parse_file(REPO_ROOT / "models" / "bb_arm.urdf")
    model = build_robot(doc)
    robot = run_source(robot_to_python(model))
    assert robot == robot_from_model(model)
    rebuilt = robot.to_model()
    fk, fk2 = ForwardKinematics(model), ForwardKinematics(rebuilt)
    q = np.random.default_rng(1).uniform(-1, 1, size=(4, len(fk.joint_names)))
    np.testing.assert_array_equal(fk2.compute(q), fk.compute(q))
    assert robot_from_ir(doc).to_ir().joints == doc.joints
    assert not math.isnan(rebuilt.joints["elbow_joint"].axis[1])
