"""The move_group node's scene message carries the run-time allowances, and the driver's rules apply them.

``monitored_planning_scene`` is how the driver's guard follows the move group's scene: a hand allowed
to touch the cube it closes on (``/planning_scene`` matrix entries) must be allowed in the guard as
well, or the guard stops the close the planner allowed.  In-process: the message the node publishes
(:func:`bb_robot.nodes.move_group_messages.planning_scene`) applied with the driver's rules to a
second scene.
"""

from __future__ import annotations

import pytest
from helpers.collision_robots import BUNDLED_ARM

pytest.importorskip("moveit_msgs")

from bb_robot.loading import load_file  # noqa: E402
from bb_robot.move_group.scene_updates import apply_planning_scene  # noqa: E402
from bb_robot.move_group.setup import build_core  # noqa: E402
from bb_robot.nodes.move_group_messages import planning_scene, to_data  # noqa: E402


def _box(name: str) -> dict:
    return {
        "id": name, "operation": 0, "header": {"frame_id": "base_link"},
        "primitives": [{"type": 1, "dimensions": [0.04, 0.04, 0.04]}],
        "primitive_poses": [{"position": {"x": 2.0, "y": 2.0, "z": 0.0}, "orientation": {"w": 1.0}}],
    }  # fmt: skip


def test_the_published_scene_carries_the_allowances_to_the_drivers_scene() -> None:
    planner, driver = (build_core(load_file(str(BUNDLED_ARM))) for _ in range(2))
    planner.updates.collision_object(_box("cube"))
    for link in ("left_finger", "right_finger"):
        planner.scene.allow("cube", link)
    message = planning_scene(planner, "bb_robot")
    matrix = message.allowed_collision_matrix
    assert list(matrix.entry_names) == ["cube", "left_finger", "right_finger"]
    assert [list(row.enabled) for row in matrix.entry_values] == [
        [False, True, True],
        [True, False, False],
        [True, False, False],
    ]
    apply_planning_scene(driver.updates, to_data(message), [])
    assert driver.scene.runtime_allowed == {("cube", "left_finger"), ("cube", "right_finger")}
    planner.scene.disallow("cube", "left_finger")
    apply_planning_scene(driver.updates, to_data(planning_scene(planner, "bb_robot")), [])
    assert driver.scene.runtime_allowed == {("cube", "right_finger")}
