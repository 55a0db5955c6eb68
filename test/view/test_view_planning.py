"""Run-time objects, attached objects and the planned path as Foxglove scenes (bb_robot.view.planning),
decoded with the protobuf runtime from the schema alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed")

from foxglove.messages import SceneUpdate  # noqa: E402
from helpers.foxglove_client import decode_protobuf  # noqa: E402

from bb_robot.collision.objects import Cone, TriangleMesh, pose_matrix, primitive  # noqa: E402
from bb_robot.loading import load_file  # noqa: E402
from bb_robot.model.kinematics import ForwardKinematics  # noqa: E402
from bb_robot.view.planning import (  # noqa: E402
    PATH_ID,
    PATH_STEP,
    DrawingError,
    SceneObject,
    objects_scene,
    path_scene,
    tool_path,
)

ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint"]


def decoded(update: SceneUpdate) -> Any:
    schema = SceneUpdate.get_schema()
    return decode_protobuf(schema.name, schema.data, update.encode())


def at(x: float, y: float, z: float) -> np.ndarray:
    return pose_matrix([x, y, z], [0.0, 0.0, 0.0, 1.0])


def test_world_and_attached_objects_are_entities_in_their_frames_each_update_replacing_the_last() -> None:
    cube = np.array([[x, y, z] for x in (0, 0.1) for y in (0, 0.1) for z in (0, 0.1)])
    faces = np.array([[0, 1, 2], [1, 3, 2], [4, 6, 5], [5, 6, 7], [0, 4, 1], [1, 4, 5], [2, 3, 6], [3, 7, 6]])
    quarter = pose_matrix([0.0, 0.0, 0.0], [0.0, 0.0, np.sin(np.pi / 8), np.cos(np.pi / 8)])
    objects = [
        SceneObject(
            "crate",
            "",
            at(0.4, 0.1, 0.2),
            ((primitive("box", [0.2, 0.3, 0.4]), np.eye(4)), (primitive("sphere", [0.05]), at(0.0, 0.0, 0.3))),
        ),
        SceneObject("drum", "base_link", quarter, ((primitive("cylinder", [0.4, 0.1]), np.eye(4)),)),
        SceneObject("funnel", "", np.eye(4), ((Cone(0.1, 0.2), np.eye(4)),)),
        SceneObject("part", "", at(-0.3, 0.0, 0.0), ((TriangleMesh(cube, faces), np.eye(4)),)),
        SceneObject("tool", "tcp", at(0.0, 0.0, 0.05), ((primitive("box", [0.02, 0.02, 0.1]), np.eye(4)),), True),
    ]
    update, problems = objects_scene(objects, "base_link", "left/", 5_000_000_123)
    assert problems == []
    message = decoded(update)
    assert [(d.type, d.timestamp.seconds, d.timestamp.nanos) for d in message.deletions] == [(1, 5, 123)]  # ALL
    entities = {e.id: e for e in message.entities}
    assert sorted(entities) == ["attached/tool", "object/crate", "object/drum", "object/funnel", "object/part"]
    assert all(e.frame_locked and (e.timestamp.seconds, e.timestamp.nanos) == (5, 123) for e in entities.values())

    crate = entities["object/crate"]
    assert crate.frame_id == "left/base_link"
    box, ball = crate.cubes[0], crate.spheres[0]
    assert (box.size.x, box.size.y, box.size.z) == pytest.approx((0.2, 0.3, 0.4))
    assert (box.pose.position.x, box.pose.position.y, box.pose.position.z) == pytest.approx((0.4, 0.1, 0.2))
    assert (ball.pose.position.z, ball.size.x) == pytest.approx((0.5, 0.1))  # the object's pose, then the shape's
    assert (box.color.b, box.color.a) == pytest.approx((0.95, 0.6))  # OBJECT_COLOR: blue, apart from the orange

    drum = entities["object/drum"].cylinders[0]
    assert (drum.size.x, drum.size.z, drum.top_scale) == pytest.approx((0.2, 0.4, 1.0))
    assert (drum.pose.orientation.z, drum.pose.orientation.w) == pytest.approx((np.sin(np.pi / 8), np.cos(np.pi / 8)))
    assert entities["object/funnel"].cylinders[0].top_scale == 0.0
    triangles = entities["object/part"].triangles[0]
    assert len(triangles.points) == 3 * len(faces) and triangles.pose.position.x == pytest.approx(-0.3)

    tool = entities["attached/tool"]
    assert tool.frame_id == "left/tcp"  # locked to its link: it moves with the arm
    assert tool.cubes[0].pose.position.z == pytest.approx(0.05)
    assert (tool.cubes[0].color.g, tool.cubes[0].color.a) == pytest.approx((0.8, 0.7))  # ATTACHED_COLOR: green

    # the next scene has none of them: its update deletes them all and adds nothing
    empty = decoded(objects_scene([], "base_link", "", 6_000_000_000)[0])
    assert list(empty.entities) == [] and [(d.type, d.timestamp.seconds) for d in empty.deletions] == [(1, 6)]


def test_an_object_that_cannot_be_drawn_is_named_and_the_others_are_drawn() -> None:
    flat = TriangleMesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=float), np.array([[0, 1, 2]]))
    objects = [
        SceneObject("flat", "", np.eye(4), ((flat, np.eye(4)),)),
        SceneObject("ball", "", np.eye(4), ((primitive("sphere", [0.1]), np.eye(4)),)),
    ]
    update, problems = objects_scene(objects, "base_link", "", 1)
    assert [e.id for e in decoded(update).entities] == ["object/ball"]
    assert len(problems) == 1 and "object 'flat'" in problems[0] and "one plane" in problems[0]


def test_the_path_is_the_tool_by_forward_kinematics_through_every_point_and_between_them() -> None:
    robot = load_file(str(ARM)).robot
    fk = ForwardKinematics(robot)
    start = {"shoulder_pan_joint": 0.0, "shoulder_lift_joint": -0.5, "elbow_joint": 1.2, "wrist_3_joint": 0.3}
    points = [[0.0, -0.5, 1.2, 0.0, 0.0], [0.2, -0.4, 1.0, 0.1, 0.0], [0.9, -0.4, 1.0, 0.1, 0.05]]
    positions = tool_path(fk, "tcp", start, ARM_JOINTS, points)

    def tool(point: list[float]) -> np.ndarray:
        return fk.poses({**start, **dict(zip(ARM_JOINTS, point, strict=True))})["tcp"][:3, 3]

    # the first and last are the tool at the first and last points (wrist_3 kept from the start state)
    assert positions[0] == pytest.approx(tool(points[0]), abs=1e-12)
    assert positions[-1] == pytest.approx(tool(points[-1]), abs=1e-12)
    # every point of the trajectory is on the line, and the joints move at most PATH_STEP between samples
    for point in points:
        assert np.min(np.linalg.norm(positions - tool(point), axis=1)) < 1e-12
    assert len(positions) == 1 + int(np.ceil(0.2 / PATH_STEP)) + int(np.ceil(0.7 / PATH_STEP))
    middle = tool([0.2 + 0.7 * 7 / 35, -0.4, 1.0, 0.1, 0.05 * 7 / 35])  # 7 of the last segment's 35 steps
    assert np.min(np.linalg.norm(positions - middle, axis=1)) < 1e-9

    message = decoded(path_scene(positions, "left/base_link", 7_000_000_000))
    assert [d.type for d in message.deletions] == [1]  # the last plan's path goes
    (path,) = message.entities
    assert (path.id, path.frame_id, path.frame_locked) == (PATH_ID, "left/base_link", True)
    (line,) = path.lines
    assert line.type == 0  # LINE_STRIP
    drawn = np.array([[p.x, p.y, p.z] for p in line.points])
    assert drawn == pytest.approx(positions)
    assert list(decoded(path_scene(np.zeros((0, 3)), "base_link", 8)).entities) == []


def test_a_path_that_cannot_be_computed_says_why() -> None:
    fk = ForwardKinematics(load_file(str(ARM)).robot)
    with pytest.raises(DrawingError, match="no link 'nowhere'"):
        tool_path(fk, "nowhere", {}, ARM_JOINTS, [[0.0] * 5])
    with pytest.raises(DrawingError, match="point 1 has 4 positions for 5 joints"):
        tool_path(fk, "tcp", {}, ARM_JOINTS, [[0.0] * 5, [0.0] * 4])
    with pytest.raises(DrawingError, match="not finite"):
        tool_path(fk, "tcp", {}, ARM_JOINTS, [[float("nan")] * 5])
    # joints the robot does not have are left out: the tool stays where the known joints put it
    still = tool_path(fk, "tcp", {}, ["other_joint"], [[1.0], [2.0]])
    assert still.shape == (2, 3) and still[0] == pytest.approx(still[1])
