"""Robots shared by the model tests: the bundled bb_arm and a small hand-made branching tree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bb_robot.model.geometry import Origin
from bb_robot.model.robot import ActuatorInfo, Joint, JointLimits, Link, Robot, SensorInfo, Transmission

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"


@pytest.fixture(scope="session")
def bb_arm() -> Robot:
    """The bundled 6-DOF arm with gripper, loaded through the URDF parser and builder."""
    from bb_robot.urdf.builder import load_urdf

    return load_urdf(BB_ARM)


def rover() -> Robot:
    """A branching tree whose declaration order is neither alphabetical nor depth-first.

    ::

        chassis
        ├── mast (fixed) ─────────── sensor_head
        │                            └── pan (revolute) ── pan_link
        ├── left_wheel_joint (continuous) ── left_wheel
        └── arm_joint (revolute) ── arm
                                    └── gripper_joint (prismatic) ── gripper

    Links and joints are declared out of tree order on purpose.
    """
    links = [Link(n) for n in ("gripper", "arm", "chassis", "left_wheel", "pan_link", "sensor_head")]
    joints = [
        Joint("mast", "fixed", "chassis", "sensor_head", Origin((0.0, 0.0, 0.5))),
        Joint(
            "gripper_joint",
            "prismatic",
            "arm",
            "gripper",
            axis=(1.0, 0.0, 0.0),
            limits=JointLimits(0.0, 0.05, 0.1, 20.0),
        ),
        Joint(
            "left_wheel_joint",
            "continuous",
            "chassis",
            "left_wheel",
            axis=(0.0, 1.0, 0.0),
            limits=JointLimits(velocity=10.0, effort=5.0),
        ),
        Joint(
            "pan", "revolute", "sensor_head", "pan_link", axis=(0.0, 0.0, 1.0), limits=JointLimits(-1.5, 1.5, 2.0, 3.0)
        ),
        Joint(
            "arm_joint", "revolute", "chassis", "arm", axis=(0.0, 1.0, 0.0), limits=JointLimits(-1.0, 1.0, 1.0, 50.0)
        ),
    ]
    actuators = [
        ActuatorInfo("pan_servo", "pan", Transmission(reduction=2.0, offset=0.1)),
        ActuatorInfo("wheel_motor", "left_wheel_joint", None),
    ]
    sensors = [
        SensorInfo("camera", ("link", "sensor_head")),
        SensorInfo("pan_encoder", ("joint", "pan")),
        SensorInfo("battery", ("robot", "")),
    ]
    return Robot.assemble("rover", links, joints, actuators=actuators, sensors=sensors)


@pytest.fixture(scope="session")
def tree() -> Robot:
    return rover()


@pytest.fixture(autouse=True)
def _kernel_mode_from_the_environment() -> Iterator[None]:
    """Each test starts with bb_robot.model.compiled's mode unchosen (read from BB_ROBOT_KERNEL):
    a test that runs the command line in-process chooses ``batch`` for the rest of the process."""
    from bb_robot.model import compiled

    saved = list(compiled._mode)
    compiled._mode.clear()
    yield
    compiled._mode[:] = saved
