"""The driver's ``~/gripper_cmd`` action server (``control_msgs/GripperCommand``).

A goal commands every joint of ``gripper.joints`` to its position through the driver's own command
path (checked by the :class:`~bb_robot.driver.commands.commands.CommandValidator` and the collision
guard, then queued in the core like a ``~/joint_commands`` message; mimic joints follow).  What the
fingers do is the backend's: MuJoCo's position actuator squeezes an object until its force limit,
the simulator moves them as commanded, gazebo and actuators forward the joint command.  A timer at
``action_monitor_rate`` sends the command again (so the watchdog sees a live command), judges the
measured state (:class:`~bb_robot.driver.commands.gripper.GripperWatch`: reached, or stalled on an
object) and publishes feedback; a goal ends reached or stalled (succeeded), canceled (the fingers
hold where they are), aborted (disarmed, rejected by the guard, preempted by a newer goal, the
driver cleaned up).  A goal that ends reached or stalled leaves its command in place
(:meth:`~bb_robot.driver.core.DriverCore.keep_command`): fingers stalled on an object keep squeezing
it until another command takes them, as ``control_msgs``' gripper controllers do, and the watchdog
(``command_timeout``), which watches streams, does not release the grasp.  A goal that makes no
sense (NaN, a negative ``max_effort``, a position outside a gripper joint's range) is refused before
anything moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from control_msgs.action import GripperCommand
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.clock import Clock
from rclpy.node import Node
from rclpy.task import Future
from rclpy.timer import Timer

from bb_robot.driver.commands.commands import CommandValidator, JointCommand
from bb_robot.driver.commands.gripper import GripperSettings, GripperState, GripperWatch, check_goal
from bb_robot.driver.core import DriverCore
from bb_robot.driver.errors import CommandRejected
from bb_robot.driver.model import ModelError
from bb_robot.nodes.driver_action import MonitoredAction
from bb_robot.nodes.driver_commands import resolve

__all__ = ["GripperAction", "gripper_settings"]


def gripper_settings(value: Callable[[str], Any], driven: tuple[str, ...]) -> GripperSettings:
    """The ``gripper.*`` parameters, checked against the driven joints.

    Args:
        value: Reads a parameter by name.
        driven: The driver's joints.

    Returns:
        The settings (no joints: no gripper).

    Raises:
        ModelError: A gripper joint the driver does not drive (named, with the driven ones).
    """
    joints = tuple(str(j) for j in value("gripper.joints") or ())
    for joint in joints:
        if joint not in driven:
            raise ModelError(
                f"gripper.joints names '{joint}', which the driver does not drive (driven: {', '.join(driven)}; "
                "a mimic joint follows its leader: name the leader)"
            )
    return GripperSettings(
        joints,
        tolerance=float(value("gripper.tolerance")),
        stall_time=float(value("gripper.stall_time")),
    )


@dataclass
class _Goal:
    handle: ServerGoalHandle
    watch: GripperWatch
    finished: Future
    state: GripperState | None = None
    #: The stamp of the sample ``state`` was judged from.
    measured_ns: int = -1
    #: "succeeded", "canceled" or "aborted" once it ended; why, for the log.
    status: str = ""
    why: str = ""


class GripperAction(MonitoredAction):
    """The action server of one configured session (see the module docstring).

    Args:
        node: The driver node.
        core: The session's core.
        validator: The session's command validator.
        check: The collision guard's command check (``None``: no guard).
        settings: The ``gripper.*`` parameters.
        monitor_rate: ``action_monitor_rate`` (Hz).
        steady: The clock of the monitor timer.
    """

    def __init__(
        self,
        node: Node,
        core: DriverCore,
        validator: CommandValidator,
        check: Callable[[JointCommand], None] | None,
        settings: GripperSettings,
        monitor_rate: float,
        steady: Clock,
    ) -> None:
        self._node, self._core, self._validator, self._check = node, core, validator, check
        self._settings, self._steady = settings, steady
        self._name = resolve(node, "~/gripper_cmd")
        self._goal: _Goal | None = None
        self._released = False
        self._timer: Timer | None = node.create_timer(1.0 / monitor_rate, self.monitor, clock=steady)
        self._server: ActionServer | None = ActionServer(
            node,
            GripperCommand,
            "~/gripper_cmd",
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
        )

    # ------------------------------------------------------------------ goals
    def _ranges(self) -> list[tuple[float, float]]:
        limits = self._core.limits
        index = {name: k for k, name in enumerate(limits.names)}
        return [
            (float(limits.command_lower[index[j]]), float(limits.command_upper[index[j]]))
            for j in self._settings.joints
        ]

    def _on_goal(self, request: GripperCommand.Goal) -> GoalResponse:
        command = request.command
        try:
            if self._released:
                raise CommandRejected("inactive", "the driver is not configured")
            check_goal(command.position, command.max_effort, self._settings.joints, self._ranges())
        except CommandRejected as error:
            self._node.get_logger().warning(f"refused a goal on '{self._name}': {error.reason}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _submit(self, position: float) -> None:
        joints = self._settings.joints
        command = self._validator.from_joint_state(
            joints, [position] * len(joints), [], [], f"'{self._name}'", time.monotonic_ns()
        )
        if self._check is not None:
            self._check(command)
        self._core.submit(command)

    async def _execute(self, handle: ServerGoalHandle) -> GripperCommand.Result:
        command = handle.request.command
        logger = self._node.get_logger()
        previous, self._goal = self._goal, None
        if previous is not None:
            self._end(previous, "aborted", "preempted by a newer goal")
        now = self._steady.now().nanoseconds * 1e-9
        goal = _Goal(handle, GripperWatch(command.position, command.max_effort, self._settings, now), Future())
        try:
            self._submit(command.position)
        except CommandRejected as error:
            self._end(goal, "aborted", error.reason)
        else:
            logger.info(
                f"'{self._name}': {', '.join(self._settings.joints)} to {command.position:g} "
                f"(max_effort {command.max_effort:g})"
            )
            self._goal = goal
            self.monitor()
        await goal.finished
        try:
            if goal.status == "succeeded":
                handle.succeed()
            elif goal.status == "canceled":
                handle.canceled()
            else:
                handle.abort()
        except Exception as error:  # noqa: BLE001 - the action server may be gone (cleanup)
            logger.debug(f"could not report the gripper goal's end: {error!r}")
        if goal.status != "succeeded":
            logger.info(f"'{self._name}' goal {goal.status}: {goal.why}")
        return self._result(goal.state)

    def _measure(self, goal: _Goal) -> GripperState | None:
        sample = self._core.snapshot.sample
        if sample is None or sample.stamp_ns == goal.measured_ns:
            return goal.state  # nothing measured since: the same state (no motion judged from a repeat)
        goal.measured_ns = sample.stamp_ns
        names = self._core.limits.names
        index = [names.index(j) for j in self._settings.joints]
        efforts = None if sample.efforts is None else np.asarray(sample.efforts)[index].tolist()
        now = self._steady.now().nanoseconds * 1e-9
        goal.state = goal.watch.update(now, np.asarray(sample.positions)[index].tolist(), efforts)
        return goal.state

    def _end(self, goal: _Goal, status: str, why: str, *, measure: bool = True) -> None:
        if goal.finished.done():
            return
        if measure:
            self._measure(goal)
        goal.status, goal.why = status, why
        goal.finished.set_result(True)

    def monitor(self) -> None:
        """Send the command again, judge the measured state, publish feedback, end the goal when due."""
        goal = self._goal
        if goal is None:
            return
        if self._released:
            self._goal = None
            self._end(goal, "aborted", "the driver was cleaned up")
            return
        state = self._measure(goal)
        try:
            if goal.handle.is_cancel_requested:
                self._goal = None
                if state is not None:
                    self._submit(state.position)  # the fingers hold where they are
                self._end(goal, "canceled", "canceled by the client")
                return
            self._submit(goal.watch.goal)
        except CommandRejected as error:
            self._goal = None
            self._end(goal, "aborted", error.reason)
            return
        if state is None:
            return
        if state.done:
            self._goal = None
            # ended on the state just judged: a newer sample must not turn the result against its status
            self._end(goal, "succeeded", "stalled" if state.stalled else "reached", measure=False)
            # The command outlives the goal: fingers stalled on an object keep squeezing it (the
            # watchdog would otherwise hold them where they rest, command_timeout after the goal).
            joints = self._settings.joints
            self._core.keep_command(joints, [goal.watch.goal] * len(joints))
        elif goal.handle.is_active:
            goal.handle.publish_feedback(self._feedback(state))

    @staticmethod
    def _feedback(state: GripperState) -> GripperCommand.Feedback:
        message = GripperCommand.Feedback()
        message.position, message.effort = state.position, 0.0 if np.isnan(state.effort) else state.effort
        message.stalled, message.reached_goal = state.stalled, state.reached_goal
        return message

    @staticmethod
    def _result(state: GripperState | None) -> GripperCommand.Result:
        result = GripperCommand.Result()
        if state is not None:
            result.position, result.effort = state.position, 0.0 if np.isnan(state.effort) else state.effort
            result.stalled, result.reached_goal = state.stalled, state.reached_goal
        return result
