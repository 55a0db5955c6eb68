"""MoveIt's ``.scene`` text format: a file of our own (test/collision/data/cell.scene), the old format, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bb_robot.collision.errors import WorldError
from bb_robot.collision.scene_text import scene_text_obstacles
from bb_robot.collision.world import load_world
from bb_robot.loading import load_file

pytest.importorskip("coal")
CELL = Path(__file__).parent / "data" / "cell.scene"
ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


def test_the_new_format_places_object_and_shape_poses() -> None:
    parts = {p.label: p for p in scene_text_obstacles(str(CELL), np.eye(4))}
    assert sorted(parts) == ["world/funnel", "world/table/0", "world/table/1", "world/wedge"]
    np.testing.assert_allclose(parts["world/table/0"].local[:3, 3], [0.6, 0.0, 0.4])  # object + shape
    np.testing.assert_allclose(parts["world/table/1"].local[:3, 3], [0.6, 0.0, 0.2])
    funnel = parts["world/funnel"].local
    np.testing.assert_allclose(funnel[:3, 3], [0.0, 0.5, 0.55], atol=1e-7)
    np.testing.assert_allclose(funnel[:3, 0], [0.0, 1.0, 0.0], atol=1e-6)  # 90° about z
    assert parts["world/table/1"].exact.radius == pytest.approx(0.04)  # cylinder: radius, then length
    assert parts["world/table/1"].exact.halfLength == pytest.approx(0.2)
    assert parts["world/wedge"].points.shape == (4, 3)


def test_load_world_reads_a_scene_file_in_the_root_frame() -> None:
    robot = load_file(str(ARM)).robot
    placement = np.eye(4)
    placement[:3, 3] = (0.0, 0.0, 0.5)  # the robot stands 0.5 m up: obstacles come 0.5 m lower
    world = load_world(str(CELL), robot, placement)
    table = next(p for p in world.parts if p.label == "world/table/0")
    np.testing.assert_allclose(table.local[:3, 3], [0.6, 0.0, -0.1])


def test_the_old_format_has_no_object_pose(tmp_path: Path) -> None:
    path = tmp_path / "old.scene"
    path.write_text("old\n* ball\n1\nsphere\n0.2\n1 2 3\n0 0 0 1\n0 0 0 0\n.\n")
    (ball,) = scene_text_obstacles(str(path), np.eye(4))
    np.testing.assert_allclose(ball.local[:3, 3], [1, 2, 3])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "s\n* a\n1\nplane\n0 0 1 0\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n",
            "line 4: object 'a': shape 0: unknown shape type 'plane'",
        ),
        (
            "s\n* a\n0 0 0\n0 0 0 1\n1\nbox\n1 1 1\nnan 0 0\n0 0 0 1\n0 0 0 0\n0\n.\n",
            "line 8: object 'a': shape 0 pose position",
        ),
        ("s\n* a\n0 0 0\n0 0 0 0\n0\n0\n.\n", "object 'a': object pose: orientation"),
        ("s\n* a\n1\nbox\n1 1\n", "object 'a': shape 0 box dimensions"),
        ("s\n* a\n1\nsphere\n-1\n0 0 0\n0 0 0 1\n0 0 0 0\n.\n", "sphere needs 1 positive dimensions"),
        ("s\n# a\n.\n", "line 2: expected '\\*' \\(an object\\) or '.'"),
    ],
)
def test_malformed_files_name_the_line_object_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.scene"
    path.write_text(text)
    with pytest.raises(WorldError, match=message) as caught:
        scene_text_obstacles(str(path), np.eye(4))
    assert str(path) in str(caught.value)


def test_an_unreadable_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match="missing.scene: cannot read"):
        scene_text_obstacles(str(tmp_path / "missing.scene"), np.eye(4))
