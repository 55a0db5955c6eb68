"""``backend: sim`` with the world's objects: the fingers stop on a cube, and a held cube follows the hand.

The bundled arm, its tool pointing down, holds its open fingers around a 4 cm cube.  Closing, the
fingers stop where their inner faces meet the cube's (each 5 mm from the middle at 0: at 15 mm),
not at the goal; the cube, touched by both, then moves with the hand as the arm lifts it 10 cm
(its pose in the tcp frame unchanged), and stays where it was when the fingers open.  With no cube
the fingers close to the goal.  The backend is driven directly (connect, write, read), on a
simulated clock.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from bb_robot.driver.backends.base import BackendCommand, BackendContext
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.commands import limits as L
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.mjcf import actuated_joints
from bb_robot.mjcf.bodies import SceneBody
from bb_robot.model.geometry import Box
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import quaternion_to_matrix
from bb_robot.resources import bundled_model
from bb_robot.urdf.builder import load_urdf

SIDE = 0.04
CONTACT = SIDE / 2 - 0.005  # where each finger's inner face (5 mm from the middle at 0) meets the cube
OPEN, CLOSED = 0.04, 0.0
PERIOD_NS = 2_000_000


def tool_down(x: float, y: float, z: float) -> np.ndarray:
    pose = np.diag([1.0, -1.0, -1.0, 1.0])
    pose[:3, 3] = (x, y, z)
    return pose


class Hand:
    """The sim backend of the bundled arm, its fingers open around a cube (or around nothing)."""

    def __init__(self, with_cube: bool = True) -> None:
        path = bundled_model("bb_arm.urdf")
        self.robot = load_urdf(path)
        arm = SerialManipulator.from_urdf(path, tip="tcp")
        grasp = tool_down(0.45, 0.0, 0.15)
        self.q0 = arm.inverse(grasp, rng=1, timeout=None, max_restarts=100).q
        self.q1 = arm.inverse(tool_down(0.45, 0.0, 0.25), seed=self.q0, rng=1, timeout=None, max_restarts=100).q
        self.centre = grasp @ np.array([0.0, 0.0, -0.01, 1.0])
        cube = np.eye(4)
        cube[:3, 3] = self.centre[:3]
        table = np.eye(4)
        table[2, 3] = self.centre[2] - SIDE / 2 - 0.02
        bodies = (SceneBody("table", ((Box((1.0, 1.0, 0.04)), np.eye(4)),), table),) + (
            (SceneBody("cube", ((Box((SIDE,) * 3), np.eye(4)),), cube, 0.1),) if with_cube else ()
        )
        self.joints = actuated_joints(self.robot)
        self.limits = L.from_robot(self.robot, self.joints)
        context = BackendContext(
            self.robot,
            self.joints,
            self.limits,
            500.0,
            logging.getLogger("test"),
            {"initial_positions": [*self.q0, OPEN]},
            model_source=path,
            world_objects=lambda: bodies,
            gripper_joints=("left_finger_joint",),
        )
        self.backend = SimBackend(context)
        self.backend.connect(1.0)
        self.now = 1_000_000_000
        self.sample = self.backend.read(self.now)
        self.fk = ForwardKinematics(self.robot)

    def move(self, q: np.ndarray, finger: float, seconds: float) -> None:
        n = len(self.joints)
        target = np.array([*q, finger])
        modes = np.full(n, int(CommandMode.POSITION), dtype=np.int8)
        nan = np.full(n, np.nan)
        self.backend.write(BackendCommand(modes, target, nan.copy(), nan.copy(), nan.copy()), self.now)
        for _ in range(int(seconds * 1e9 / PERIOD_NS)):
            self.now += PERIOD_NS
            self.sample = self.backend.read(self.now)

    @property
    def finger(self) -> float:
        return float(self.sample.positions[-1])

    def cube(self) -> np.ndarray:
        poses = self.backend.object_poses()
        assert poses is not None
        k = poses.names.index("cube")
        pose = np.eye(4)
        pose[:3, :3] = quaternion_to_matrix(poses.quaternions[k])[:3, :3]
        pose[:3, 3] = poses.positions[k]
        return pose

    def tcp(self) -> np.ndarray:
        q = dict(zip(self.joints, (float(v) for v in self.sample.positions), strict=True))
        return self.fk.poses(q)["tcp"]


def test_the_fingers_stop_on_the_cube_carry_it_and_leave_it_where_they_open() -> None:
    hand = Hand()
    hand.move(hand.q0, CLOSED, 1.0)
    # stopped where the faces meet (to the bisection's micrometre), at rest, short of the goal
    assert hand.finger == pytest.approx(CONTACT, abs=2e-6)
    assert hand.sample.velocities[-1] == 0.0
    assert hand.backend.objects is not None and hand.backend.objects.held() == ("cube",)
    grasped = np.linalg.inv(hand.tcp()) @ hand.cube()
    # lifted 10 cm: the cube goes with the hand, exactly
    hand.move(hand.q1, CLOSED, 2.0)
    assert hand.finger == pytest.approx(CONTACT, abs=2e-6)
    assert np.linalg.inv(hand.tcp()) @ hand.cube() == pytest.approx(grasped, abs=1e-9)
    assert hand.cube()[2, 3] == pytest.approx(hand.centre[2] + 0.1, abs=1e-4)
    # opened: released where it was, and it stays there as the hand goes down again
    lifted = hand.cube()
    hand.move(hand.q1, OPEN, 1.0)
    assert hand.finger == pytest.approx(OPEN, abs=1e-9)
    assert hand.backend.objects.held() == ()
    hand.move(hand.q0, OPEN, 2.0)
    assert hand.cube() == pytest.approx(lifted, abs=1e-12)


def test_with_nothing_between_them_the_fingers_close_to_the_goal() -> None:
    hand = Hand(with_cube=False)
    hand.move(hand.q0, CLOSED, 1.0)
    assert hand.finger == pytest.approx(CLOSED, abs=1e-9)
    poses = hand.backend.object_poses()
    assert poses is not None and poses.names == ("table",)
