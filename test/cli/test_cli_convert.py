"""``bb-robot convert``: SDF → URDF parses (bb_robot and Pinocchio) with the same kinematics, and
URDF or SDF → Python runs and prints a URDF with the same kinematics.

"Same kinematics": ``bb-robot fk --json`` of the output file equals that of the input at random joint
values, and Pinocchio's poses of the output URDF equal the input's ``fk`` (an independent reader of
the written file).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cli_helpers import CliResult, RunCli, resource_args

SDF_FILES = [
    ("sas_robot_driver_gazebo/sdf/ur3e.sdf", False),
    ("sas_robot_driver_gazebo/sdf/iiwa14.sdf", False),
    ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", True),
    ("gz_sim/examples/worlds/world_joint.sdf", False),
    ("sdformat/test/sdf/model_joint_axis_expressed_in.sdf", False),
]


def frames(result: CliResult) -> dict[str, np.ndarray]:
    """``fk --json`` frames as 4x4 matrices."""
    assert result.returncode == 0, result
    poses = {}
    for name, frame in result.json()["frames"].items():
        x, y, z, w = frame["quat_xyzw"]
        matrix = np.eye(4)
        matrix[:3, :3] = [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
        matrix[:3, 3] = frame["xyz"]
        poses[name] = matrix
    return poses


def assert_same_frames(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert set(a) == set(b)
    for name in a:
        np.testing.assert_allclose(a[name], b[name], atol=1e-9, err_msg=name)


def movable_joints(urdf: Path) -> list[tuple[str, str]]:
    """(name, type) of every independent movable joint of a URDF, from its text."""
    return [
        (j.get("name") or "", j.get("type") or "")
        for j in ET.parse(urdf).getroot().findall("joint")
        if j.get("type") in ("revolute", "continuous", "prismatic") and j.find("mimic") is None
    ]


def random_values(joints: list[tuple[str, str]], seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {
        name: float(rng.uniform(-0.5, 0.5) if kind == "prismatic" else rng.uniform(-1.5, 1.5)) for name, kind in joints
    }


def joint_args(values: dict[str, float]) -> list[str]:
    return [arg for name, value in values.items() for arg in ("--joint", f"{name}={value!r}")]


def pinocchio_poses(urdf: Path, values: dict[str, float]) -> dict[str, np.ndarray]:
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed")
    model = pin.buildModelFromUrdf(str(urdf))
    q = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        joint, name = model.joints[joint_id], model.names[joint_id]
        value = values.get(name, 0.0)
        if joint.nq == 1:
            q[joint.idx_q] = value
        elif joint.nq == 2:
            q[joint.idx_q : joint.idx_q + 2] = (math.cos(value), math.sin(value))
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    return {f.name: data.oMf[i].homogeneous for i, f in enumerate(model.frames) if f.type == pin.FrameType.BODY}


@pytest.mark.parametrize(("relative", "needs_resources"), SDF_FILES, ids=[s[0] for s in SDF_FILES])
def test_sdf_to_urdf_parses_and_has_the_same_kinematics(
    run_cli: RunCli,
    corpus_dir: Path,
    corpus_resource_paths: tuple[Path, ...],
    tmp_path: Path,
    relative: str,
    needs_resources: bool,
) -> None:
    source = corpus_dir / relative
    extra = resource_args(corpus_resource_paths) if needs_resources else []
    out = tmp_path / "robot.urdf"
    result = run_cli("convert", source, "--to", "urdf", "-o", out, *extra)
    assert result.returncode == 0, result
    assert ET.parse(out).getroot().tag == "robot"
    check = run_cli("check", "--json", out).json()
    assert check["ok"] is True, check
    values = random_values(movable_joints(out), seed=len(relative))
    assert values, "no movable joint to compare with"
    converted = frames(run_cli("fk", "--json", out, *joint_args(values)))
    original = frames(run_cli("fk", "--json", source, *extra, *joint_args(values)))
    assert_same_frames(converted, original)
    reference = pinocchio_poses(out, values)
    for name, pose in original.items():
        if name in reference:
            np.testing.assert_allclose(pose, reference[name], atol=1e-9, err_msg=name)
    assert set(original) - set(reference) <= {"world"}


def test_urdf_to_stdout_and_json(run_cli: RunCli, corpus_dir: Path) -> None:
    source = corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e.sdf"
    printed = run_cli("convert", source, "--to", "urdf")
    assert printed.returncode == 0, printed
    assert printed.stdout.startswith('<?xml version="1.0"?>\n<robot name="ur3e">')
    data = run_cli("convert", source, "--to", "urdf", "--json").json()
    assert set(data) == {"from", "to", "robot", "source_scope", "output", "text", "warnings"}
    assert (data["from"], data["to"], data["robot"], data["source_scope"], data["output"]) == (
        "sdf",
        "urdf",
        "ur3e",
        "ur3e",
        None,
    )
    assert data["text"] == printed.stdout


def test_mesh_uris_as_file_uris(run_cli: RunCli, corpus_dir: Path, tmp_path: Path) -> None:
    source = corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e.sdf"
    kept = run_cli("convert", source, "--to", "urdf").stdout
    assert "model://" in kept
    files = run_cli("convert", source, "--to", "urdf", "--mesh-uris", "file").stdout
    # The corpus has no meshes: URIs nothing resolves stay as written.
    assert files == kept
    urdf = run_cli("convert", corpus_dir / "ur_description_ros2/ur5e.urdf", "--to", "urdf", "--mesh-uris", "file")
    assert urdf.returncode == 2 and "SDF input" in urdf.stderr


def test_a_xacro_file_is_written_out_expanded(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(
        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="h" value="0.2"/>'
        '<link name="base"/><link name="tip"/><joint name="j" type="revolute"><parent link="base"/>'
        '<child link="tip"/><origin xyz="0 0 ${h*2}"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="3" velocity="2"/></joint></robot>'
    )
    out = tmp_path / "arm.urdf"
    assert run_cli("convert", path, "--to", "urdf", "-o", out).returncode == 0
    joint = ET.parse(out).getroot().find("joint")
    assert joint is not None and joint.find("origin").get("xyz") == "0.0 0.0 0.4"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("relative", "needs_resources"),
    [
        ("moveit_resources/panda_description/urdf/panda.urdf", False),
        ("synthetic/mimic_chain.urdf", False),
        ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", True),
    ],
)
def test_python_source_rebuilds_the_robot(
    run_cli: RunCli,
    corpus_dir: Path,
    corpus_resource_paths: tuple[Path, ...],
    tmp_path: Path,
    relative: str,
    needs_resources: bool,
) -> None:
    source = corpus_dir / relative
    extra = resource_args(corpus_resource_paths) if needs_resources else []
    script = tmp_path / "robot.py"
    result = run_cli("convert", source, "--to", "python", "-o", script, *extra)
    assert result.returncode == 0, result
    text = script.read_text()
    assert "from bb_robot.authoring import" in text
    compile(text, str(script), "exec")
    printed = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    urdf = tmp_path / "rebuilt.urdf"
    urdf.write_text(printed.stdout)
    values = random_values(movable_joints(urdf), seed=7)
    assert_same_frames(
        frames(run_cli("fk", "--json", urdf, *joint_args(values))),
        frames(run_cli("fk", "--json", source, *extra, *joint_args(values))),
    )


def test_writing_over_the_input_is_refused(run_cli: RunCli, tmp_path: Path, corpus_dir: Path) -> None:
    path = tmp_path / "copy.urdf"
    path.write_bytes((corpus_dir / "synthetic/mimic_chain.urdf").read_bytes())
    result = run_cli("convert", path, "--to", "urdf", "-o", path)
    assert result.returncode == 2
    assert "is the input file" in result.stderr
    assert path.read_bytes() == (corpus_dir / "synthetic/mimic_chain.urdf").read_bytes()


def test_to_is_required(run_cli: RunCli, corpus_dir: Path) -> None:
    result: Any = run_cli("convert", corpus_dir / "synthetic/mimic_chain.urdf")
    assert result.returncode == 2 and "--to" in result.stderr
    assert run_cli("convert", corpus_dir / "synthetic/mimic_chain.urdf", "--to", "sdf").returncode == 2
