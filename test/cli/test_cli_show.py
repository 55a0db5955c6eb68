"""The ``bb-robot`` command line: output on the bundled model, and clean failures on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
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
