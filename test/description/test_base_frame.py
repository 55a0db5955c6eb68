"""parent_frame and base_pose: the robot's place in a shared frame, as a /tf_static transform."""

from __future__ import annotations

import math

import pytest

from bb_robot.description.base_frame import BaseFrameError, base_transform, check_base_pose


def test_no_parent_frame_no_transform() -> None:
    assert base_transform("", (1, 2, 3, 0, 0, 0), "left/base_link") is None


def test_translation_and_yaw() -> None:
    placed = base_transform("world", (0.0, 0.4, 0.1, 0.0, 0.0, math.pi / 2), "left/base_link")
    assert placed is not None
    parent, child, translation, rotation = placed
    assert (parent, child) == ("world", "left/base_link")
    assert translation == (0.0, 0.4, 0.1)
    # a quarter turn about z: (0, 0, sin 45°, cos 45°)
    assert rotation == pytest.approx((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))


def test_bad_poses_are_refused() -> None:
    with pytest.raises(BaseFrameError, match="6 values"):
        check_base_pose((1.0, 2.0))
    with pytest.raises(BaseFrameError, match="finite"):
        check_base_pose((0, 0, math.nan, 0, 0, 0))


def test_the_parent_cannot_be_the_robots_own_frame() -> None:
    with pytest.raises(BaseFrameError, match="frame_prefix"):
        base_transform("base_link", (0, 0, 0, 0, 0, 0), "base_link")
