"""The picture of a robot at a pose: a real PNG that changes with the pose."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib import image

from bb_robot.bringup.picture import PictureError, draw_robot
from bb_robot.urdf.builder import load_urdf

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_the_picture_is_a_png_that_shows_the_pose(tmp_path: Path) -> None:
    robot = load_urdf(str(MODELS / "bb_arm.urdf"))
    zero = draw_robot(robot, {}, tmp_path / "zero.png", "tcp")
    bent = draw_robot(robot, {"shoulder_lift_joint": 1.0, "elbow_joint": -1.2}, tmp_path / "bent.png", "tcp")
    assert zero.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    a, b = image.imread(zero), image.imread(bent)
    assert a.shape == b.shape and a.shape[0] > 100
    assert float(abs(a - b).max()) > 0.1, "the two poses drew the same picture"


def test_an_unwritable_path_is_an_error_naming_it(tmp_path: Path) -> None:
    robot = load_urdf(str(MODELS / "bb_arm.urdf"))
    target = tmp_path / "missing" / "p.png"
    with pytest.raises(PictureError, match="missing/p.png"):
        draw_robot(robot, {}, target)
