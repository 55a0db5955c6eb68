"""The driver's ``~/gripper_cmd`` (control_msgs/GripperCommand) over real DDS, on the sim backend.

The driver runs as a child process with ``gripper.joints: [left_finger_joint]``; this process sends
goals and judges from the joint states it receives: a goal with nothing between the fingers ends
reached_goal with the fingers (and their mimic) at the goal; a cancel ends the goal with the
fingers at rest short of it; a goal that makes no sense (NaN, a negative max_effort, a position
outside the stroke) is refused, and nothing moves.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from helpers.nodes import TIMEOUT, Probe, StartNode

control_msgs = pytest.importorskip("control_msgs", reason="control_msgs is not built: run scripts/setup")
from control_msgs.action import GripperCommand  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

BB_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
FINGER, MIMIC = "left_finger_joint", "right_finger_joint"
OPEN, CLOSED = 0.04, 0.0
SUCCEEDED, CANCELED = 4, 5


class Gripper:
    """A driver with a gripper, and this process's action client and joint states."""

    def __init__(self, probe: Probe, start_node: StartNode) -> None:
        values: dict[str, Any] = {
            "model": str(BB_ARM),
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.5,
            "collision.check": False,
            "gripper.joints": [FINGER],
        }
        self.probe = probe
        self.node = start_node(values, module="bb_robot.nodes.driver", node="driver")
        self.states = probe.subscribe(JointState, f"{self.node.namespace}/joint_states", VOLATILE)
        self.action = ActionClient(probe.node, GripperCommand, f"{self.node.name}/gripper_cmd")
        self.node.wait_for_log("active: control loop")
        assert probe.spin_until(lambda: bool(self.states)), f"no joint states:\n{self.node.log()}"
        assert probe.spin_until(self.action.server_is_ready), f"no gripper action server:\n{self.node.log()}"

    def position(self, joint: str = FINGER) -> float:
        state = self.states[-1]
        return float(state.position[list(state.name).index(joint)])

    def send(self, position: float, max_effort: float = 0.0) -> tuple[Any, list[Any]]:
        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = position, max_effort
        feedback: list[Any] = []
        future = self.action.send_goal_async(goal, feedback_callback=feedback.append)
        assert self.probe.spin_until(future.done), f"the goal was not answered:\n{self.node.log()}"
        return future.result(), feedback

    def result(self, handle: Any) -> Any:
        future = handle.get_result_async()
        assert self.probe.spin_until(future.done, TIMEOUT), f"no result:\n{self.node.log()}"
        return future.result()

    def at_rest(self) -> bool:
        state = self.states[-1]
        return not any(state.velocity[list(state.name).index(j)] for j in (FINGER,))


def test_reached_goal_when_empty_cancel_and_malformed_goals(probe: Probe, start_node: StartNode) -> None:
    gripper = Gripper(probe, start_node)
    # nothing between the fingers: reached, the mimic finger with it
    handle, feedback = gripper.send(OPEN, 10.0)
    assert handle.accepted
    result = gripper.result(handle)
    assert result.status == SUCCEEDED and result.result.reached_goal and not result.result.stalled
    assert feedback, "no feedback while the fingers moved"
    assert probe.spin_until(lambda: abs(gripper.position() - OPEN) < 1e-4 and gripper.at_rest())
    assert abs(gripper.position(MIMIC) - OPEN) < 1e-4
    # cancel: the goal ends canceled, the fingers at rest short of the goal
    handle, feedback = gripper.send(CLOSED)
    assert probe.spin_until(lambda: bool(feedback)), f"no feedback:\n{gripper.node.log()}"
    cancel = handle.cancel_goal_async()
    assert probe.spin_until(cancel.done)
    result = gripper.result(handle)
    assert result.status == CANCELED and not result.result.reached_goal
    assert probe.spin_until(gripper.at_rest)
    held = gripper.position()
    assert held > CLOSED + 1e-3, f"the fingers closed anyway ({held})"
    # goals that make no sense: refused, nothing moves
    for position, effort, why in (
        (math.nan, 10.0, "not a finite number"),
        (CLOSED, -1.0, "max_effort -1"),
        (0.5, 10.0, "outside joint 'left_finger_joint''s range"),
    ):
        handle, _ = gripper.send(position, effort)
        assert not handle.accepted
        gripper.node.wait_for_log(why)
    before = len(gripper.states)
    assert probe.spin_until(lambda: len(gripper.states) > before + 20)
    assert abs(gripper.position() - held) < 1e-9, "a refused goal moved the fingers"
