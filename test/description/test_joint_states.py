"""Validating and merging JointState contents (without ROS)."""

from __future__ import annotations

import math
from array import array

import numpy as np
import pytest

from bb_robot.description.joint_states import JointStateMerger, RejectedMessage


def test_merges_by_name_and_keeps_last_values() -> None:
    merger = JointStateMerger(["a", "b", "c"])
    assert list(merger.update(["c", "a"], [3.0, 1.0])) == [2, 0]
    assert merger.seen.tolist() == [True, False, True] and merger.values.tolist() == [1.0, 0.0, 3.0]
    merger.update(["b"], array("d", [2.0]))  # rclpy gives array('d')
    assert merger.all_seen and merger.values.tolist() == [1.0, 2.0, 3.0]
    merger.update(["a"], np.array([-1.0]))
    assert merger.values.tolist() == [-1.0, 2.0, 3.0]


def test_unknown_names_are_ignored() -> None:
    merger = JointStateMerger(["a"])
    assert len(merger.update(["other", "mimic"], [1.0, 2.0])) == 0
    assert not merger.seen.any()
    assert len(merger.update([], [])) == 0


@pytest.mark.parametrize(
    ("names", "positions", "velocity", "effort", "kind", "text"),
    [
        (["a", "b"], [1.0], 0, 0, "length", "2 names but 1 positions"),
        (["a"], [1.0, 2.0], 0, 0, "length", "1 names but 2 positions"),
        (["a", "b"], [1.0, 2.0], 1, 0, "velocity", "velocity has 1 entries; expected none or 2"),
        (["a", "b"], [1.0, 2.0], 0, 3, "effort", "effort has 3 entries"),
        (["a", "a"], [1.0, 2.0], 0, 0, "duplicate", "'a' appear more than once"),
        (["a", "b"], [1.0, math.nan], 0, 0, "non_finite", "'b'=nan"),
        (["x", "a"], [math.inf, 0.0], 0, 0, "non_finite", "'x'=inf"),
    ],
)
def test_bad_messages_are_rejected_whole(
    names: list[str], positions: list[float], velocity: int, effort: int, kind: str, text: str
) -> None:
    merger = JointStateMerger(["a", "b"])
    with pytest.raises(RejectedMessage, match=text.replace("(", r"\(")) as caught:
        merger.update(names, positions, velocity, effort)
    assert caught.value.kind == kind
    assert not merger.seen.any() and merger.values.tolist() == [0.0, 0.0]


def test_full_velocity_and_effort_are_accepted() -> None:
    merger = JointStateMerger(["a", "b"])
    merger.update(["a", "b"], [1.0, 2.0], 2, 2)
    assert merger.all_seen


def test_duplicate_names_stay_rejected_from_the_cache() -> None:
    merger = JointStateMerger(["a"])
    for _ in range(2):
        with pytest.raises(RejectedMessage):
            merger.update(("a", "a"), [1.0, 1.0])


def test_the_name_cache_is_bounded() -> None:
    merger = JointStateMerger(["a"])
    for i in range(JointStateMerger.CACHE_SIZE * 2):
        merger.update([f"x{i}", "a"], [0.0, float(i)])
    assert merger.values[0] == JointStateMerger.CACHE_SIZE * 2 - 1
    assert len(merger._cache) <= JointStateMerger.CACHE_SIZE
