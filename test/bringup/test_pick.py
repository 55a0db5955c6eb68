"""The pure parts of ``bb-robot up --demo-pick`` (bb_robot.bringup.pick): spots, poses, judging."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import yaml

from bb_robot.bringup import pick
from bb_robot.collision.world import load_world
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import rpy_to_matrix
from bb_robot.resources import bundled_model
from bb_robot.urdf.builder import load_urdf

SIDE = 0.04


def _world() -> dict[str, Any]:
    world: dict[str, Any] = yaml.safe_load(bundled_model("bb_arm_pick.yaml").read_text())
    return world


def test_ten_steps_in_the_issues_order() -> None:
    assert len(pick.STEPS) == 10
    assert pick.STEPS[0].startswith("pre-grasp") and pick.STEPS[-1] == "straight retreat"
    assert pick.STEPS.index("close") < pick.STEPS.index("attach") < pick.STEPS.index("open")


def test_seeded_spots_are_reproducible_in_the_area_and_mirrored_across_the_wall() -> None:
    spots = [pick.seeded_spot(seed, SIDE / 2) for seed in range(200)]
    assert pick.seeded_spot(7, SIDE / 2) == spots[7]
    for spot in spots:
        assert pick.AREA.x[0] <= spot.x <= pick.AREA.x[1] and pick.AREA.y[0] <= spot.y <= pick.AREA.y[1]
        assert abs(spot.yaw) <= math.pi / 4
        place = pick.mirrored(spot)
        assert (place.x, place.y, place.z, place.yaw) == (spot.x, -spot.y, spot.z, -spot.yaw)
    # at least 20 x 30 cm, wholly on the pick side of the wall (2 cm thick) with the cube's half-diagonal
    assert pick.AREA.x[1] - pick.AREA.x[0] >= 0.2 and pick.AREA.y[1] - pick.AREA.y[0] >= 0.3
    assert pick.AREA.y[0] - SIDE * math.sqrt(0.5) > 0.01 + 0.03


def test_the_seeded_world_moves_only_the_cube_and_collision_world_reads_it() -> None:
    world = _world()
    spot, wall_y, wall_top = pick.world_spots(world)
    assert (spot.x, spot.y, wall_y) == (0.45, 0.15, 0.0) and wall_top == pytest.approx(SIDE + 0.15)
    moved = pick.with_cube_at(world, pick.Spot(0.4, 0.3, SIDE / 2, 0.3))
    assert pick.world_spots(moved)[0] == pick.Spot(0.4, 0.3, SIDE / 2, 0.3)
    assert [e for e in moved["obstacles"] if e["name"] != "cube"] == [
        e for e in world["obstacles"] if e["name"] != "cube"
    ]
    assert world["obstacles"][2]["xyz"] == [0.45, 0.15, 0.02]  # the original untouched


def test_a_world_without_a_wall_is_named() -> None:
    world = _world()
    world["obstacles"] = [e for e in world["obstacles"] if e["name"] != "wall"]
    with pytest.raises(pick.PickError, match="'wall'"):
        pick.world_spots(world)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_every_waypoint_is_reachable_with_the_tool_down_and_turned_to_the_cube(seed: int) -> None:
    world = _world()
    _, wall_y, wall_top = pick.world_spots(world)
    spot = pick.seeded_spot(seed, SIDE / 2)
    ways = pick.waypoints(spot, pick.mirrored(spot, wall_y), SIDE, wall_top)
    arm = SerialManipulator.from_urdf(str(bundled_model("bb_arm.urdf")), tip="tcp")
    for pose in vars(ways).values():
        assert pose[:3, 2] == pytest.approx([0.0, 0.0, -1.0])
        assert arm.inverse(pose, rng=1, timeout=None, max_restarts=100).success
    assert ways.pre_grasp[2, 3] - ways.grasp[2, 3] == pytest.approx(pick.APPROACH)
    assert ways.grasp[:3, 3] == pytest.approx([spot.x, spot.y, SIDE - pick.GRASP_DEPTH])
    # the cube hanging from the carried tool clears the wall's top by OVER_WALL
    assert ways.lifted[2, 3] - (SIDE - pick.GRASP_DEPTH) == pytest.approx(wall_top + pick.OVER_WALL)
    # the fingers close along the cube's faces: the tool's x axis along the cube's yaw
    assert math.atan2(ways.grasp[1, 0], ways.grasp[0, 0]) == pytest.approx(spot.yaw)
    robot = load_urdf(bundled_model("bb_arm.urdf"))
    assert {b.name for b in load_world(str(bundled_model("bb_arm_pick.yaml")), robot).bodies} >= {"cube", "wall"}


def _pose(xyz: tuple[float, float, float], rpy: tuple[float, float, float]) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rpy_to_matrix(rpy)
    pose[:3, 3] = xyz
    return pose


def test_slip_is_measured_relative_to_the_tool_not_the_world() -> None:
    watch = pick.SlipWatch()
    assert "no poses" in watch.problem()
    tool, cube = _pose((0.4, 0.1, 0.2), (math.pi, 0, 0.3)), _pose((0.4, 0.1, 0.18), (0, 0, -0.3))
    watch.add(tool, cube)
    carried = _pose((0.1, -0.2, 0.3), (0, 0, 1.0))  # the tool and cube moved together
    watch.add(carried @ tool, carried @ cube)
    assert watch.distance == pytest.approx(0.0, abs=1e-9) and watch.angle == pytest.approx(0.0, abs=1e-6)
    assert watch.problem() == ""
    watch.add(carried @ tool, carried @ cube @ _pose((0.0, 0.0, -0.006), (0, 0, 0)))
    assert watch.distance == pytest.approx(0.006) and "6.0 mm" in watch.problem()
    turned = pick.SlipWatch()
    turned.add(tool, cube)
    turned.add(tool, cube @ _pose((0, 0, 0), (math.radians(6), 0, 0)))
    assert turned.angle == pytest.approx(math.radians(6)) and "6.0°" in turned.problem()


def test_the_place_judge_takes_any_face_down_and_names_the_spot_and_pose() -> None:
    place = pick.Spot(0.45, -0.15, 0.02, 0.2)
    assert pick.judge_place(_pose((0.45, -0.15, 0.02), (0, 0, 1.0)), place).ok  # yaw is free
    assert pick.judge_place(_pose((0.452, -0.147, 0.02), (math.pi / 2, 0, 0)), place).ok  # on another face
    tilted = pick.judge_place(_pose((0.45, -0.15, 0.02), (math.radians(6), 0, 0)), place)
    assert not tilted.ok and tilted.tilt == pytest.approx(math.radians(6))
    off = pick.judge_place(_pose((0.462, -0.15, 0.02), (0, 0, 0)), place)
    assert not off.ok and off.distance == pytest.approx(0.012)
    assert "place spot (0.450, -0.150, 0.020)" in off.text and "cube at (0.462, -0.150, 0.020)" in off.text


def test_frames_compose_a_chain_at_one_moment_and_refuse_gaps() -> None:
    frames = pick.Frames()
    frames.add("base_link", "link", 0.0, _pose((0.0, 0.0, 0.5), (0, 0, 0)), static=True)
    for stamp in (1.0, 2.0):
        frames.add("link", "tcp", stamp, _pose((stamp, 0.0, 0.0), (0, 0, 0)))
    assert frames.latest("tcp") == 2.0 and frames.latest("link") is None
    assert frames.pose("tcp", "base_link")[:3, 3] == pytest.approx([2.0, 0.0, 0.5])
    assert frames.pose("tcp", "base_link", 1.001, within=0.005)[:3, 3] == pytest.approx([1.0, 0.0, 0.5])
    assert frames.pose("tcp", "base_link", 1.5, within=0.005) is None
    assert frames.pose("object/cube", "base_link") is None


@pytest.mark.parametrize("yaw", [0.0, 0.3, -0.7, 1.2, 2.0, -3.0])
def test_a_measured_cube_is_grasped_turned_the_least(yaw: float) -> None:
    spot = pick.spot_of(_pose((0.4, 0.2, 0.02), (0, 0, yaw)))
    assert (spot.x, spot.y, spot.z) == pytest.approx((0.4, 0.2, 0.02)) and abs(spot.yaw) <= math.pi / 4 + 1e-12
    assert math.sin(4 * spot.yaw) == pytest.approx(math.sin(4 * yaw), abs=1e-9)  # the same faces, by 90°
