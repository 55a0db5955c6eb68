"""The ROS side of ``bb-robot gripper``: one ``control_msgs/GripperCommand`` goal, sent and awaited.

:func:`send_gripper_goal` starts rclpy, sends the goal to the driver's ``~/gripper_cmd`` and returns
its end as plain data (:class:`GripperOutcome`), so the command line never imports rclpy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import rclpy
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor

from bb_robot.errors import BbRobotError

__all__ = ["GripperClientError", "GripperOutcome", "send_gripper_goal"]


class GripperClientError(BbRobotError):
    """No gripper action server answered, or the goal was refused (the message names the action)."""


@dataclass(frozen=True)
class GripperOutcome:
    """How a goal ended.

    Attributes:
        status: ``succeeded``, ``canceled`` or ``aborted``.
        position: The measured position at the end.
        effort: The measured effort (0 where the backend reports none).
        stalled: The fingers stopped on something short of the goal.
        reached_goal: The fingers reached the goal.
    """

    status: str
    position: float
    effort: float
    stalled: bool
    reached_goal: bool


_STATUS = {4: "succeeded", 5: "canceled", 6: "aborted"}


def send_gripper_goal(action: str, position: float, max_effort: float, timeout: float) -> GripperOutcome:
    """Send one goal and wait for its end.

    Args:
        action: The action's name (``/driver/gripper_cmd``).
        position: The goal position.
        max_effort: The goal's ``max_effort`` (0: no effort threshold).
        timeout: Seconds to wait for the server, and again for the result.

    Returns:
        The goal's end.

    Raises:
        GripperClientError: No server on ``action`` within ``timeout``, the goal refused, or no result.
    """
    from control_msgs.action import GripperCommand

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bb_robot_gripper", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        client: Any = ActionClient(node, GripperCommand, action)
        if not client.wait_for_server(timeout_sec=timeout):
            raise GripperClientError(f"no GripperCommand server on '{action}' within {timeout:g} s (is the driver up?)")
        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = float(position), float(max_effort)
        sent = client.send_goal_async(goal)
        executor.spin_until_future_complete(sent, timeout_sec=timeout)
        handle = sent.result()
        if handle is None or not handle.accepted:
            raise GripperClientError(
                f"'{action}' refused position {position:g} with max_effort {max_effort:g} (the driver's log says why)"
            )
        done = handle.get_result_async()
        deadline = time.monotonic() + timeout
        while not done.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        response = done.result()
        if response is None:
            raise GripperClientError(f"no result from '{action}' within {timeout:g} s")
        result = response.result
        return GripperOutcome(
            _STATUS.get(response.status, str(response.status)),
            result.position,
            result.effort,
            result.stalled,
            result.reached_goal,
        )
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
