"""The scene against Pinocchio + coal: MotionBenchMaker's Panda in its scene, holding an object.

Pinocchio builds the Panda from the MBM URDF itself, and the test places the scene's primitives
itself, straight from the YAML (MoveIt's dimensions and quaternions, not our reader), plus a box
held by the hand: on the hand's frame, placed by Pinocchio's kinematics.  At seeded random
configurations, every pair we check has the same hull distance in both, and the pairs Pinocchio
has that we do not check are exactly those the scene allows (the robot's matrix, the hand and
fingers the box may touch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers.collision_robots import build, pin_labels, pin_q, to_hulls
from helpers.mbm_problems import MBM_DIR, mbm_robot, mbm_scenes

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.model import link_pair
from bb_robot.collision.objects import pose_matrix
from bb_robot.collision.scene import Scene
from bb_robot.collision.world import load_world
from bb_robot.model.geometry import Box

pin = pytest.importorskip("pinocchio")
coal = pytest.importorskip("coal")
pytestmark = pytest.mark.filterwarnings("ignore:You passed package dir")

SAMPLES = 40
HELD = pose_matrix([0.0, 0.0, 0.12], [0.0, 0.0, 0.3826834, 0.9238795])  # 45° about z, between the fingers
HELD_SIZE = (0.04, 0.04, 0.1)


def _se3(pose: np.ndarray) -> Any:
    return pin.SE3(pose[:3, :3].copy(), pose[:3, 3].copy())


def add_scene(model: Any, geometry: Any, path: Path) -> dict[int, str]:
    """The scene's primitives as Pinocchio objects on the universe; returns index → our link name."""
    names = {}
    for entry in yaml.safe_load(path.read_text())["world"]["collision_objects"]:
        for primitive, pose in zip(entry["primitives"], entry["primitive_poses"], strict=True):
            dims = primitive["dimensions"]
            shape = coal.Box(*dims) if primitive["type"] == "box" else coal.Cylinder(dims[1], dims[0])
            x, y, z, w = pose["orientation"]
            placement = pin.SE3(pin.Quaternion(w, x, y, z).normalized().matrix(), np.array(pose["position"], float))
            index = geometry.addGeometryObject(pin.GeometryObject(f"world/{entry['id']}", 0, 0, placement, shape))
            names[index] = f"world/{entry['id']}"
    return names


@pytest.mark.parametrize("problem_set", ["box", "cage", "table_pick"])
def test_the_scene_agrees_with_pinocchio(problem_set: str, tmp_path: Path) -> None:
    urdf, srdf = mbm_robot("panda")
    (scene_file,) = [p for p in mbm_scenes("panda", range(1, 2), tmp_path) if f"/{problem_set}_panda/" in p.as_posix()]
    ours, model, geometry = build(urdf, srdf, MBM_DIR / "panda")
    scene = Scene(ours, load_world(str(scene_file), ours.robot))
    scene.add_object(
        "held",
        [(Box(HELD_SIZE), np.eye(4))],
        HELD,
        link="panda_hand",
        touch_links=["panda_leftfinger", "panda_rightfinger"],
    )

    to_hulls(geometry)
    labels = pin_labels(model, geometry, ours)  # robot objects first
    robot_objects = len(labels)
    link_of = [model.frames[g.parentFrame].name for g in geometry.geometryObjects]
    obstacles = add_scene(model, geometry, scene_file)
    hand = model.frames[model.getFrameId("panda_hand")]
    held = geometry.addGeometryObject(
        pin.GeometryObject(
            "held", hand.parentJoint, model.getFrameId("panda_hand"), hand.placement * _se3(HELD), coal.Box(*HELD_SIZE)
        )
    )
    labels += [obstacles[i] for i in sorted(obstacles)] + ["attached/held"]
    link_of += [obstacles[i] for i in sorted(obstacles)] + ["attached/held"]
    for i in range(robot_objects, len(labels)):  # obstacles and the held box against the robot and each other
        for j in range(len(labels)):
            if j < i and (j < robot_objects or i == held):
                geometry.addCollisionPair(pin.CollisionPair(j, i))

    pairs = [(p.first, p.second) for p in geometry.collisionPairs]
    allowed = scene.allowed
    mine_keys = {tuple(sorted(k)) for k in scene.model.pair_distances(np.zeros(7))}
    theirs_keys = {tuple(sorted((labels[a], labels[b]))) for a, b in pairs}
    skipped = {(labels[a], labels[b]) for a, b in pairs if tuple(sorted((labels[a], labels[b]))) not in mine_keys}
    assert mine_keys <= theirs_keys
    assert all(
        link_pair(link_of[a], link_of[b]) in allowed
        for a, b in pairs
        if tuple(sorted((labels[a], labels[b]))) not in mine_keys
    ), skipped
    assert {"panda_hand", "panda_leftfinger", "panda_rightfinger"} <= {
        link_of[b] if link_of[a] == "attached/held" else link_of[a]
        for a, b in pairs
        if "attached/held" in (link_of[a], link_of[b]) and tuple(sorted((labels[a], labels[b]))) not in mine_keys
    }

    lower, upper = joint_bounds(ours.robot, ours.fk.joint_names)
    data = model.createData()
    touching_world = 0
    for q in np.random.default_rng(7).uniform(lower, upper, size=(SAMPLES, len(lower))):
        geometry_data = pin.GeometryData(geometry)  # fresh each time (see test_against_pinocchio)
        pin.computeDistances(model, data, geometry, geometry_data, pin_q(model, ours.robot, ours.fk.joint_names, q))
        theirs = {
            tuple(sorted((labels[a], labels[b]))): result.min_distance
            for (a, b), result in zip(pairs, geometry_data.distanceResults, strict=True)
        }
        mine = {tuple(sorted(k)): d for k, d in scene.model.pair_distances(q).items()}
        for key, distance in mine.items():
            if distance > 0 or theirs[key] > 0:  # penetration depths differ by method; contact must agree
                assert distance == pytest.approx(theirs[key], abs=1e-5), (key, q.tolist())
        touching_world += any(
            d <= 0
            for k, d in mine.items()
            if k[0].startswith(("world/", "attached/")) or k[1].startswith(("world/", "attached/"))
        )
    assert 0 < touching_world < SAMPLES, "some configurations should touch the scene, some not"
