"""Executing plans through the driver's ``FollowJointTrajectory`` action (its checks, its guard), and stopping them.

:class:`TrajectoryExecutor` sends one ``JointTrajectory`` as a goal and awaits its result in the
executor (a coroutine: the node keeps serving while the arm moves).  ``stop`` (from
``/trajectory_execution_event``, or a cancelled MoveIt goal) cancels the driver's goals, which
the driver ends by holding the arm.  The outcome is a ``MoveItErrorCodes`` value and a message:
``SUCCESS``; ``PREEMPTED`` when stopped; ``CONTROL_FAILED`` when the driver is not there, refuses
the goal (naming its reason) or ends it with an error.
"""

from __future__ import annotations

import time

from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.node import Node
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory

from bb_robot.move_group.moveit_goals import Code

#: ``action_msgs/GoalStatus`` values.
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6


class TrajectoryExecutor:
    """Sends trajectories to the driver's action and stops them.

    Args:
        node: the move_group node.
        action: the FollowJointTrajectory action's name.
        server_timeout: how long to wait for the server (s).
    """

    def __init__(self, node: Node, action: str, server_timeout: float) -> None:
        self._node = node
        self._client: ActionClient = ActionClient(node, FollowJointTrajectory, action)
        self._action = node.resolve_topic_name(action)
        self._server_timeout = server_timeout
        self._running: list[ClientGoalHandle] = []
        self._stopped = False

    @property
    def busy(self) -> bool:
        """Whether a trajectory is being executed."""
        return bool(self._running)

    async def _wait_for_server(self) -> bool:
        deadline = time.monotonic() + self._server_timeout
        while not self._client.server_is_ready():
            if time.monotonic() > deadline:
                return False
            await self._pause(0.05)
        return True

    async def _pause(self, seconds: float) -> None:
        """Let the executor serve others for ``seconds`` (a one-shot timer completes the awaited future)."""
        future: Future = Future()

        def done() -> None:
            if not future.done():
                future.set_result(None)

        timer = self._node.create_timer(seconds, done)
        try:
            await future
        finally:
            self._node.destroy_timer(timer)

    async def execute(self, trajectory: JointTrajectory) -> tuple[int, str]:
        """Execute ``trajectory`` on the driver; its outcome.

        Returns:
            ``(MoveItErrorCodes value, message)``.
        """
        if not trajectory.points:
            return Code.INVALID_MOTION_PLAN, "the trajectory has no points"
        if not await self._wait_for_server():
            return Code.CONTROL_FAILED, f"no FollowJointTrajectory server on '{self._action}' (is the driver running?)"
        self._stopped = False
        goal = FollowJointTrajectory.Goal(trajectory=trajectory)
        handle = await self._client.send_goal_async(goal)
        if handle is None or not handle.accepted:
            return Code.CONTROL_FAILED, f"the driver ('{self._action}') refused the goal"
        self._running.append(handle)
        try:
            if self._stopped:
                await handle.cancel_goal_async()
            response = await handle.get_result_async()
        finally:
            self._running.remove(handle)
        if response is None:
            return Code.CONTROL_FAILED, f"the driver ('{self._action}') gave no result"
        result = response.result
        if response.status == STATUS_SUCCEEDED and result.error_code == FollowJointTrajectory.Result.SUCCESSFUL:
            return Code.SUCCESS, ""
        if response.status == STATUS_CANCELED or self._stopped:
            return Code.PREEMPTED, "execution stopped (trajectory_execution_event 'stop' or a cancelled goal)"
        return (
            Code.CONTROL_FAILED,
            f"the driver ended the trajectory: error {result.error_code} {result.error_string}".strip(),
        )

    def stop(self) -> int:
        """Cancel every trajectory being executed; how many there were."""
        self._stopped = True
        for handle in list(self._running):
            handle.cancel_goal_async()
        return len(self._running)

    def destroy(self) -> None:
        """Destroy the action client."""
        self._client.destroy()
