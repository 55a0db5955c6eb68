"""The pick and place world (models/bb_arm_pick.yaml) in MuJoCo's physics, against its description.

The cube comes to rest on the table at half its side (MuJoCo's soft contact: within 0.2 mm), at
the pick spot; the wall stands between the pick spot and its mirror image, 15 cm higher than the
cube's top, welded; the arm reaches, tool down, the pick spot, the place spot and over the wall
with the cube held.  Lockstep on a simulated clock (:mod:`mujoco_rig`).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from helpers.mujoco_rig import make_rig  # noqa: E402

from bb_robot.collision.world import load_world  # noqa: E402
from bb_robot.model.geometry import Box  # noqa: E402
from bb_robot.model.serial import SerialManipulator  # noqa: E402
from bb_robot.resources import bundled_model  # noqa: E402
from bb_robot.urdf.builder import load_urdf  # noqa: E402

SIDE = 0.04


def test_the_cube_rests_at_the_pick_spot_and_the_wall_stands_15_cm_above_its_top() -> None:
    robot = load_urdf(bundled_model("bb_arm.urdf"))
    world = load_world(str(bundled_model("bb_arm_pick.yaml")), robot)
    bodies = {body.name: body for body in world.bodies}
    cube, wall = bodies["cube"], bodies["wall"]
    assert cube.movable and not wall.movable and not bodies["table"].movable
    (wall_box, _), (cube_box, _) = wall.shapes[0], cube.shapes[0]
    assert isinstance(wall_box, Box) and isinstance(cube_box, Box)
    wall_top = wall.pose[2, 3] + wall_box.size[2] / 2
    assert wall_top == pytest.approx(SIDE + 0.15)
    pick = cube.pose[:3, 3]
    place = pick * np.array([1.0, -1.0, 1.0])  # mirrored across the wall (y = 0)
    assert abs(wall.pose[1, 3]) < 1e-12 and pick[1] > wall_box.size[1] / 2 + SIDE
    rig = make_rig(robot, objects=world.bodies)
    rig.run(1.0)
    poses = rig.backend.object_poses()
    assert poses is not None
    at_rest = poses.positions[poses.names.index("cube")]
    assert at_rest == pytest.approx([pick[0], pick[1], SIDE / 2], abs=2e-4)
    assert poses.positions[poses.names.index("wall")] == pytest.approx(wall.pose[:3, 3])
    # reachable with the tool down: at the pick and place spots, and over the wall with the cube held
    arm = SerialManipulator.from_urdf(str(bundled_model("bb_arm.urdf")), tip="tcp")
    for x, y, z in ((*pick[:2], 0.01), (*place[:2], 0.01), (pick[0], 0.0, wall_top + 0.05)):
        target = np.diag([1.0, -1.0, -1.0, 1.0])
        target[:3, 3] = (x, y, z)
        assert arm.inverse(target, rng=1, timeout=None, max_restarts=100).success, (x, y, z)
