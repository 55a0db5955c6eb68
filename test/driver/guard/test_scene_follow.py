"""The guard follows the scene: objects added at run time refuse trajectories and commands into them, and stop
streamed motion short of them through the real checker process; configured obstacles stay.

The scene messages are applied as the driver node applies the move_group node's
``monitored_planning_scene`` (:func:`bb_robot.move_group.scene_updates.apply_planning_scene` on the
guard's scene, then :meth:`CollisionGuard.follow`), here as the plain data the node converts them to.
"""

from __future__ import annotations

import math
import os
import pickle
import struct
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.collision_cell import Cell, make_cell
from helpers.driver_rig import PERIOD_NS

from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.trajectory import TrajectoryPoint
from bb_robot.driver.errors import INVALID_GOAL, CommandRejected, TrajectoryRejected
from bb_robot.driver.guard.collision_checker import (
    START_TIMEOUT,
    Measurer,
    heading_format,
    pack_verdict,
    serve,
    unpack_verdict,
    update_record,
)
from bb_robot.move_group.scene_updates import INVALID_OBJECT_NAME, SceneUpdater, UpdateRefused, apply_planning_scene

#: Panned to -1 rad: clear of the post and of the table; the crate stands on the way there, at -0.6 rad.
SWING = [-1.0, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0]
CRATE_AT = [-0.6, -math.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0]


@pytest.fixture
def cell(tmp_path: Path) -> Cell:
    return make_cell(tmp_path)


def updater(cell: Cell) -> SceneUpdater:
    guard = cell.guard
    assert guard.scene is not None
    fk = guard.model.fk

    def link_pose(link: str) -> np.ndarray:
        if link not in fk.link_names:
            raise KeyError(link)
        return np.asarray(fk.compute(guard.configuration(cell.positions))[fk.link_names.index(link)])

    return SceneUpdater(guard.scene, link_pose, lambda: guard.configuration(cell.positions))


def crate(cell: Cell) -> dict[str, Any]:
    """A 10 cm box around the tool where it is at :data:`CRATE_AT`, as a ``CollisionObject`` mapping."""
    fk = cell.guard.model.fk
    x, y, z = np.asarray(fk.compute(cell.guard.configuration(np.array(CRATE_AT)))[fk.link_names.index("tcp")])[:3, 3]
    return {
        "id": "crate",
        "header": {"frame_id": ""},
        "pose": {"position": {"x": x, "y": y, "z": z}, "orientation": {"w": 1.0}},
        "primitives": [{"type": 1, "dimensions": [0.1, 0.1, 0.1]}],
        "primitive_poses": [{"orientation": {"w": 1.0}}],
        "operation": 0,
    }


def scene(*objects: dict[str, Any]) -> dict[str, Any]:
    """A full ``PlanningScene`` mapping, as the move_group node publishes it."""
    return {"is_diff": False, "world": {"collision_objects": list(objects)}, "robot_state": {}}


def follow(cell: Cell, updates: SceneUpdater, data: dict[str, Any]) -> list[UpdateRefused]:
    refused: list[UpdateRefused] = []
    assert cell.guard.scene is not None
    version = cell.guard.scene.version
    apply_planning_scene(updates, data, refused)
    if cell.guard.scene.version != version:
        cell.guard.follow(cell.guard.scene.model)
    return refused


def test_a_runtime_object_refuses_trajectories_and_commands_into_it_until_it_is_removed(cell: Cell) -> None:
    swing = [TrajectoryPoint(2.0, SWING)]
    cell.core.prepare_trajectory(cell.joints, swing)  # nothing in the way yet
    updates = updater(cell)
    assert follow(cell, updates, scene(crate(cell))) == []
    assert cell.guard.generation == 1
    with pytest.raises(TrajectoryRejected) as refused:
        cell.core.prepare_trajectory(cell.joints, swing)
    assert refused.value.code == INVALID_GOAL and "world/crate" in refused.value.reason
    command = cell.validator.from_array(CommandMode.POSITION, SWING, "/t", cell.clock.now)
    with pytest.raises(CommandRejected) as rejected:
        cell.guard.check_command(command, cell.core.snapshot.sample, cell.core.limits)
    assert "world/crate" in rejected.value.reason and "not executed" in rejected.value.reason
    # A full scene without it (the move_group node's next message) takes it away again.
    assert follow(cell, updates, scene()) == []
    cell.core.prepare_trajectory(cell.joints, swing)
    cell.guard.check_command(command, cell.core.snapshot.sample, cell.core.limits)


def test_a_configured_obstacle_cannot_be_removed_or_replaced_at_run_time(cell: Cell) -> None:
    updates = updater(cell)
    assert cell.guard.scene is not None
    before = cell.guard.scene.version
    removal = {"id": "post", "operation": 1}
    impostor = {**crate(cell), "id": "post"}
    refused = follow(cell, updates, {"is_diff": True, "world": {"collision_objects": [removal, impostor]}})
    assert [error.code for error in refused] == [INVALID_OBJECT_NAME, INVALID_OBJECT_NAME], refused
    assert "configured world" in str(refused[0]) and "'post'" in str(refused[0])
    assert cell.guard.scene.version == before and cell.guard.generation == 0
    towards_post = [TrajectoryPoint(3.0, [-math.pi / 2, -math.pi / 2, 0, 0, 0, 0, 0])]
    with pytest.raises(TrajectoryRejected) as still:
        cell.core.prepare_trajectory(cell.joints, towards_post)
    assert "world/post" in still.value.reason
    # The verified matrix cannot be allowed away: a pair of links is left as it is.
    matrix = {"entry_names": ["upper_arm_link", "world/post"], "entry_values": [{"enabled": [True, True]}] * 2}
    assert follow(cell, updates, {"is_diff": True, "allowed_collision_matrix": matrix}) == []
    with pytest.raises(TrajectoryRejected):
        cell.core.prepare_trajectory(cell.joints, towards_post)


def live(cell: Cell, seconds: float) -> None:
    for _ in range(int(round(seconds * 1e9 / PERIOD_NS))):
        cell.clock.now = cell.core.run_cycles(1, PERIOD_NS, cell.clock.now)
        time.sleep(PERIOD_NS * 1e-9)


def test_streamed_motion_through_the_checker_process_stops_short_of_a_runtime_object(cell: Cell) -> None:
    cell.guard.start()
    try:
        live(cell, 0.1)
        follow(cell, updater(cell), scene(crate(cell)))
        deadline = time.monotonic() + START_TIMEOUT
        while (verdict := cell.guard.verdict) is None or verdict.generation != 1:  # the process has the new scene
            assert time.monotonic() < deadline, "the checker process gave no verdict on the new scene"
            live(cell, PERIOD_NS * 1e-9)
        # Panning at 0.5 rad/s towards the crate (a velocity stream: the servo's and a joystick's kind of motion).
        velocity = cell.validator.from_array(CommandMode.VELOCITY, [-0.5, 0, 0, 0, 0, 0, 0], "/t", cell.clock.now)
        cell.core.submit(velocity)
        distances = []
        for _ in range(60):  # 3 s: the pan would reach -1.5 rad unhindered
            live(cell, 0.05)
            pairs = cell.guard.model.pair_distances(cell.guard.configuration(cell.positions))
            distances.append(min(d for labels, d in pairs.items() if "world/crate" in labels))
        assert min(distances) >= 0.02 - 0.005, "stopped short of the stop distance (within a cycle's braking)"
        assert distances[-1] < 0.08 and cell.positions[0] > CRATE_AT[0], "it approached, and did not pass the crate"
        verdict = cell.guard.verdict
        assert verdict is not None and verdict.nearest is not None and "world/crate" in verdict.nearest.links
    finally:
        cell.guard.stop()


def test_the_checker_process_takes_a_new_measurer_between_headings_in_pieces(cell: Cell) -> None:
    """``serve`` on real pipes, in a thread: the update's record arrives a few bytes at a time, then a heading."""
    measurer = Measurer(cell.guard.model, cell.joints, cell.guard.settings)
    updates = updater(cell)
    follow(cell, updates, scene(crate(cell)))
    newer = Measurer(cell.guard.model, cell.joints, cell.guard.settings, generation=7)
    source_read, source_write = os.pipe()
    sink_read, sink_write = os.pipe()
    ended_with: list[object] = []
    thread = threading.Thread(target=lambda: ended_with.append(serve(source_read, sink_write)), daemon=True)
    thread.start()
    size = len(pack_verdict(0, None))

    def verdict() -> tuple[int, Any, str]:
        record = b""
        while len(record) < size:
            record += os.read(sink_read, size - len(record))
        return unpack_verdict(record)

    try:
        payload = pickle.dumps(measurer, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(source_write, struct.pack("<Q", len(payload)) + payload)
        assert verdict()[2] == ""  # ready
        heading = heading_format(len(cell.joints))
        os.write(source_write, heading.pack(1, *CRATE_AT, *CRATE_AT))
        stamp, found, _ = verdict()
        assert stamp == 1 and found is not None and found.generation == 0
        assert found.pair < 0 or "world/crate" not in measurer.model.pair_contact(found.pair, found.distance).links
        record = update_record(len(cell.joints), newer)
        for start in range(0, len(record), 4093):
            os.write(source_write, record[start : start + 4093])
        os.write(source_write, heading.pack(2, *CRATE_AT, *CRATE_AT))
        stamp, found, _ = verdict()
        assert stamp == 2 and found is not None and found.generation == 7
        assert "world/crate" in cell.guard.model.pair_contact(found.pair, found.distance).links
    finally:
        os.close(source_write)
        thread.join(20.0)
        for fd in (source_read, sink_read, sink_write):
            os.close(fd)
    assert ended_with == [0]


def test_an_attached_object_moves_with_its_link_and_is_checked_against_the_configured_world(cell: Cell) -> None:
    """A ball held 5 cm wide where the tool would put it into the post at :data:`SWING` (the arm itself clear)."""
    fk = cell.guard.model.fk
    post = next(p for p in cell.guard.model.obstacles if p.link == "world/post")
    tcp_at_swing = np.asarray(fk.compute(cell.guard.configuration(np.array(SWING)))[fk.link_names.index("tcp")])
    x, y, z = (np.linalg.inv(tcp_at_swing) @ np.append(post.local[:3, 3][:2].tolist() + [tcp_at_swing[2, 3]], 1.0))[:3]
    held = {
        "link_name": "tcp",
        "object": {
            "id": "ball",
            "header": {"frame_id": "tcp"},
            "pose": {"position": {"x": x, "y": y, "z": z}, "orientation": {"w": 1.0}},
            "primitives": [{"type": 2, "dimensions": [0.05]}],
            "primitive_poses": [{"orientation": {"w": 1.0}}],
            "operation": 0,
        },
        "touch_links": ["left_finger", "right_finger"],
    }
    swing = [TrajectoryPoint(2.0, SWING)]
    cell.core.prepare_trajectory(cell.joints, swing)  # the arm alone passes
    refused = follow(cell, updater(cell), {"is_diff": False, "robot_state": {"attached_collision_objects": [held]}})
    assert refused == [] and cell.guard.generation == 1
    with pytest.raises(TrajectoryRejected) as held_into_post:
        cell.core.prepare_trajectory(cell.joints, swing)
    assert "attached/ball" in held_into_post.value.reason and "world/post" in held_into_post.value.reason
