"""Publication rules of the description node (without ROS): what goes on /tf and /tf_static."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.robots import UR3E_JOINTS

from bb_robot.description.core import JointStateTf, prepare, static_transforms
from bb_robot.description.sources import LoadedModel, RootPlacement, load_description_text, load_model
from bb_robot.description.tf_plan import TfPlan
from bb_robot.description.timing import process_age
from bb_robot.errors import BbRobotError

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS = [str(REPO_ROOT / "models")]
ARM = list(UR3E_JOINTS)


@pytest.fixture(scope="module")
def arm() -> LoadedModel:
    return load_model("bb_arm.urdf", MODELS)


def _children(state: JointStateTf, edges: np.ndarray) -> set[str]:
    return {state.plan.movable_children[i] for i in edges}


def test_only_seen_joints_then_all_of_them_with_their_last_values(arm: LoadedModel) -> None:
    state = JointStateTf(TfPlan(arm.robot))
    updated = state.merge(["elbow_joint"], [0.5])
    edges, rows = state.publication(1, updated)
    assert _children(state, edges) == {"forearm_link"}
    updated = state.merge(["left_finger_joint"], [0.01])
    edges, rows = state.publication(2, updated)
    assert _children(state, edges) == {"forearm_link", "left_finger", "right_finger"}  # held, and the mimic
    first = state.plan.transforms(state.values, edges)
    assert np.array_equal(rows, first)


def test_a_repeated_stamp_publishes_only_what_the_message_named(arm: LoadedModel) -> None:
    state = JointStateTf(TfPlan(arm.robot))
    state.publication(5, state.merge(ARM, [0.0] * 6))
    edges, _ = state.publication(5, state.merge(["left_finger_joint"], [0.02]))
    assert _children(state, edges) == {"left_finger", "right_finger"}
    assert state.publication(5, state.merge([], [])) is None
    edges, _ = state.publication(6, state.merge([], []))
    assert len(edges) == 8


def test_nothing_is_published_before_any_joint_is_seen(arm: LoadedModel) -> None:
    state = JointStateTf(TfPlan(arm.robot))
    assert state.publication(1, state.merge(["unknown"], [1.0])) is None


def test_a_reload_keeps_the_values_of_joints_both_models_have(arm: LoadedModel) -> None:
    old = JointStateTf(TfPlan(arm.robot))
    old.merge(["elbow_joint", "wrist_1_joint"], [0.5, 0.25])
    text = (
        '<robot name="r"><link name="upper_arm_link"/><link name="forearm_link"/><link name="x"/>'
        '<joint name="elbow_joint" type="continuous">'
        '<parent link="upper_arm_link"/><child link="forearm_link"/></joint>'
        '<joint name="other" type="continuous"><parent link="forearm_link"/><child link="x"/></joint></robot>'
    )
    new = JointStateTf(TfPlan(load_description_text(text).robot), old)
    assert new.seen.tolist() == [True, False] and new.values[0] == 0.5
    edges, _ = new.publication(1)
    assert _children(new, edges) == {"forearm_link"}


def test_static_transforms_are_prefixed_and_include_a_world_placement(arm: LoadedModel) -> None:
    prepared = prepare(arm)
    frames = [(p, c) for p, c, _, _ in static_transforms(prepared, "left/")]
    assert frames == [
        ("left/wrist_3_link", "left/tool0"),
        ("left/tool0", "left/gripper_base"),
        ("left/gripper_base", "left/tcp"),
    ]
    pose = np.eye(4)
    pose[:3, 3] = (1.0, 2.0, 3.0)
    placed = prepare(LoadedModel(arm.robot, arm.description, "sdf", "x.sdf", placement=RootPlacement("world", pose)))
    first = static_transforms(placed, "p/")[0]
    assert first[:3] == ("p/world", "p/base_link", (1.0, 2.0, 3.0)) and first[3] == (0.0, 0.0, 0.0, 1.0)


def test_serial_manipulator_with_and_without_tip_link(arm: LoadedModel) -> None:
    prepared = prepare(arm, "tcp")
    assert prepared.serial is not None and prepared.serial.tip_link == "tcp" and prepared.tip is not None
    assert json.loads(prepared.serial_text(""))["tip_link"] == "tcp"
    assert prepared.held_warning() is None
    # two fingers make a tree: no chain without tip_link, and the published JSON says why
    without = prepare(arm)
    assert without.serial is None and without.tip is None
    note = json.loads(without.serial_text(""))
    assert note["available"] is False and "tip_link" in note["reason"] and "left_finger" in note["reason"]
    with pytest.raises(BbRobotError, match="nowhere"):
        prepare(arm, "nowhere")


def test_held_warning(arm: LoadedModel) -> None:
    floating = load_description_text(
        '<robot name="f"><link name="w"/><link name="b"/><joint name="free" type="floating">'
        '<parent link="w"/><child link="b"/></joint></robot>'
    )
    warning = prepare(floating).held_warning()
    assert warning is not None and "'free' (floating)" in warning


def test_process_age_is_positive_and_small() -> None:
    age = process_age()
    assert age is None or 0.0 < age < 24 * 3600
