"""The description node's parent_frame and base_pose, as a real process over DDS: the robot's place in
a shared frame on /tf_static, changed at run time, and a bad pose refused with the node running on."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from helpers.nodes import NodeProcess, Probe

STATIC = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _base(messages: list[Any], child: str) -> Any | None:
    for message in reversed(messages):
        for transform in message.transforms:
            if transform.child_frame_id == child:
                return transform
    return None


def test_the_base_transform_is_published_and_follows_the_parameters(
    probe: Probe, start_node: Callable[..., NodeProcess]
) -> None:
    prefix = f"r{uuid.uuid4().hex[:6]}/"
    static = probe.subscribe(TFMessage, "/tf_static", STATIC)
    node = start_node(
        {
            "model": "bb_arm.urdf",
            "tip_link": "tcp",
            "frame_prefix": prefix,
            "parent_frame": "world",
            "base_pose": [0.5, -0.4, 0.1, 0.0, 0.0, math.pi / 2],
        }
    )
    child = f"{prefix}base_link"
    assert probe.spin_until(lambda: _base(static, child) is not None), node.log()
    base = _base(static, child)
    assert base.header.frame_id == "world"
    t, r = base.transform.translation, base.transform.rotation
    assert (t.x, t.y, t.z) == pytest.approx((0.5, -0.4, 0.1))
    assert (r.x, r.y, r.z, r.w) == pytest.approx((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))

    count = len(static)
    results = probe.set_parameters(node.name, {"base_pose": [1.0, 2.0, 3.0, 0.0, 0.0, 0.0]})
    assert all(result.successful for result in results)
    assert probe.spin_until(lambda: len(static) > count and _base(static[count:], child) is not None)
    moved = _base(static[count:], child).transform.translation
    assert (moved.x, moved.y, moved.z) == pytest.approx((1.0, 2.0, 3.0))

    (refused,) = probe.set_parameters(node.name, {"base_pose": [1.0, 2.0]})
    assert not refused.successful and "6 values" in refused.reason
    assert node.alive()
