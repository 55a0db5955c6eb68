"""``bb-robot show``: output on the bundled model, and clean failures on bad input.

The first tests call :func:`bb_robot.cli.main` in-process (fast, and they cover the helpers
``default_tip`` and ``format_tree``); the others run the command as a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.cli_helpers import RunCli, resource_args

from bb_robot.cli import default_tip, format_tree, main
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.resources import bundled_model
from bb_robot.urdf.builder import load_urdf


def test_show_prints_tree_and_tcp_pose_of_bundled_arm(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show"]) == 0
    out = capsys.readouterr().out
    assert "robot 'bb_arm'" in out
    assert "12 links, 11 joints, 8 movable (1 mimic), 7 actuators" in out
    assert "shoulder_pan_joint [revolute; axis 0 0 1; actuator shoulder_pan_motor] → shoulder_link" in out
    assert "right_finger_joint [prismatic; axis 0 -1 0; mimics left_finger_joint]" in out
    assert "end effector 'tcp' in 'base_link'" in out
    # Stacked link lengths along z at zero: 0.15 + 0.12 + 0.40 + 0.35 + 0.09 + 0.09 + 0.08 + 0.10.
    assert "xyz  =  0.000000  0.000000  1.380000" in out


def test_show_joint_values_move_the_tip(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--joint", "elbow_joint=0.5"]) == 0
    out = capsys.readouterr().out
    # Everything above the elbow (0.71 m) swings about y by 0.5 rad.
    x = 0.71 * np.sin(0.5)
    z = 0.15 + 0.12 + 0.40 + 0.71 * np.cos(0.5)
    assert f"xyz  =  {x:.6f}  0.000000  {z:.6f}" in out


def test_default_tip_prefers_the_deepest_tool_frame() -> None:
    robot = load_urdf(bundled_model())
    assert default_tip(robot) == "tcp"


def test_format_tree_lists_every_joint_once_with_siblings_marked() -> None:
    robot = load_urdf(bundled_model())
    text = format_tree(robot)
    for joint in robot.joints:
        assert text.count(f"{joint} [") == 1
    assert "├─ left_finger_joint" in text and "└─ tcp_joint" in text


def test_show_on_a_deep_chain_does_not_recurse(corpus_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(corpus_dir / "synthetic/long_chain_1000.urdf")]) == 0
    assert capsys.readouterr().out.count("→") == 1000


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["show", "{corpus}/synthetic/cycle.urdf"], "kinematic loop"),
        (["show", "{corpus}/synthetic/non_numeric.urdf"], "non_numeric.urdf"),
        (["show", "{corpus}/synthetic/xxe_external_entity.urdf"], "xxe_external_entity.urdf"),
        (["show", "/nonexistent/robot.urdf"], "/nonexistent/robot.urdf"),
        (["show", "--tip", "no_such_link"], "no_such_link"),
        (["show", "--joint", "tcp_joint=1"], "tcp_joint"),
        (["show", "--joint", "nope=1"], "nope"),
    ],
)
def test_bad_input_exits_1_with_a_message_naming_the_culprit(
    corpus_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    argv = [a.format(corpus=corpus_dir) for a in args]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("bb-robot: error: ")
    assert expected in err


def test_malformed_joint_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["show", "--joint", "elbow_joint"])
    assert exit_info.value.code == 2
    assert "NAME=VALUE" in capsys.readouterr().err


def test_console_entry_point_prints_no_traceback(corpus_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bb_robot.cli", "show", str(corpus_dir / "synthetic/billion_laughs.urdf")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "billion_laughs.urdf" in result.stderr


def test_pan_rotates_the_elbow_offset_about_z() -> None:
    robot = load_urdf(bundled_model())
    pose = ForwardKinematics(robot).poses({"shoulder_pan_joint": 1.0, "elbow_joint": 0.5})["tcp"]
    reach = 0.71 * np.sin(0.5)
    assert pose[:3, 3] == pytest.approx(
        [reach * np.cos(1.0), reach * np.sin(1.0), 0.67 + 0.71 * np.cos(0.5)], abs=1e-12
    )


# ------------------------------------------------------------------ as a subprocess, SDF, --json
def test_show_json_gives_the_tip_pose_of_the_bundled_arm(run_cli: RunCli) -> None:
    result = run_cli("show", "--json", "--joint", "elbow_joint=0.5")
    assert result.returncode == 0, result
    data = result.json()
    assert set(data) == {"robot", "root", "tip", "joints", "xyz", "quat_xyzw"}
    assert (data["robot"], data["root"], data["tip"]) == ("bb_arm", "base_link", "tcp")
    assert data["joints"] == {"elbow_joint": 0.5}
    assert data["xyz"] == pytest.approx([0.71 * np.sin(0.5), 0.0, 0.67 + 0.71 * np.cos(0.5)], abs=1e-12)
    # Everything above the elbow turns 0.5 rad about the base's y axis: q = q_y(0.5) * q(0).
    zero = run_cli("show", "--json").json()["quat_xyzw"]
    turned = _quat_product([0.0, np.sin(0.25), 0.0, np.cos(0.25)], zero)
    assert data["quat_xyzw"] == pytest.approx(turned if turned[3] >= 0 else [-c for c in turned], abs=1e-12)


def _quat_product(a: list[float], b: list[float]) -> list[float]:
    """Hamilton product of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def test_show_reads_an_sdf_world_with_scope_and_resource_path(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    world = corpus_dir / "synthetic/sdf_world_two_ur3e_includes.sdf"
    result = run_cli("show", world, "--scope", "right_arm", *resource_args(corpus_resource_paths))
    assert result.returncode == 0, result
    assert "model 'right_arm'" in result.stdout
    assert "shoulder_pan_joint [revolute; axis 0 0 1]" in result.stdout
    assert "Traceback" not in result.stderr


def test_show_scope_on_a_urdf_is_a_usage_error(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("show", corpus_dir / "ur_description_ros2/ur5e.urdf", "--scope", "x")
    assert result.returncode == 2, result
    assert "--scope" in result.stderr and "usage: bb-robot show" in result.stderr
