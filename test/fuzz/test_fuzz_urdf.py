"""Fuzzing the URDF parser and model builder with mutations of real files.

Allowed outcomes: a robot (whose forward kinematics at the zero configuration is finite), or a
documented error with a message: the parser's :class:`~bb_robot.urdf.errors.UrdfError` family or
the builder's :class:`~bb_robot.model.errors.InvalidRobot`.
"""

from __future__ import annotations

import numpy as np
from helpers.fuzz_outcomes import OUTCOMES
from helpers.xml_mutations import mutated, seed_files
from hypothesis import given

from bb_robot.model.errors import InvalidRobot
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.robot import Robot
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.errors import UrdfError
from bb_robot.urdf.parser import parse_string

SEEDS = seed_files((".urdf",), corpus_subdirs=("synthetic", "moveit_resources", "ur_description_ros2"))


def _load(data: bytes) -> Robot:
    return build_robot(parse_string(data, source="fuzz.urdf"))


@given(mutated(SEEDS))
def test_mutated_urdf_loads_or_fails_with_a_documented_error(case: tuple[str, bytes]) -> None:
    label, data = case
    result = OUTCOMES.run("urdf", lambda: _load(data), (UrdfError, InvalidRobot), f"a mutation of {label}")
    if isinstance(result, Robot):
        poses = ForwardKinematics(result).poses({})
        assert all(np.isfinite(pose).all() for pose in poses.values()), f"non-finite pose from a mutation of {label}"
