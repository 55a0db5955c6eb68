"""A pickled :class:`~bb_robot.model.robot.Robot` (``Robot.__reduce__``) is the same robot again.

The driver hands its collision model, robot included, to a checker process of its own, so a
robot must cross a process boundary whole: every link, joint, actuator, sensor, the topology, the
warnings and the source, for the real robots of the corpus and example-robot-data.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from helpers.robot_files import REJECTED_BY_US, robot_label, urdf_params

from bb_robot.loading import load_file
from bb_robot.model.robot import Robot


def fields(robot: Robot) -> dict[str, str]:
    """Every field of a robot as exact ``repr`` text (mappings as plain dicts)."""
    return {
        "name": repr(robot.name),
        "links": repr(dict(robot.links)),
        "joints": repr(dict(robot.joints)),
        "actuators": repr(dict(robot.actuators)),
        "sensors": repr(dict(robot.sensors)),
        "root_link": repr(robot.root_link),
        "joint_order": repr(robot.topology.joint_order),
        "link_order": repr(robot.topology.link_order),
        "param_subscriptions": repr(dict(robot.param_subscriptions)),
        "warnings": repr(robot.warnings),
        "source": repr(robot.source),
    }


@pytest.mark.parametrize("path", urdf_params())
def test_a_pickled_robot_is_the_same_robot(path: Path) -> None:
    known = REJECTED_BY_US.get(robot_label(path).split(":", 1)[1])
    if known is not None:
        pytest.skip(f"bb_robot rejects it as expected: {known[1]}")
    robot = load_file(str(path)).robot
    again = pickle.loads(pickle.dumps(robot))
    assert isinstance(again, Robot)
    assert fields(again) == fields(robot)


def test_a_robot_pickled_twice_is_the_same() -> None:
    bundled = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
    robot = load_file(str(bundled)).robot
    twice = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(robot))))
    assert fields(twice) == fields(robot)
