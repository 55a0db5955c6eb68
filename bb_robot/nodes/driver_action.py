"""The driver's ``~/follow_joint_trajectory`` action server (``control_msgs/FollowJointTrajectory``).

A goal's whole life is a coroutine in the executor: it awaits the end of its execution without
blocking (a timer at ``action_monitor_rate`` publishes feedback, forwards cancel requests and
resolves the future the coroutine awaits).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.clock import Clock
from rclpy.node import Node
from rclpy.task import Future
from rclpy.timer import Timer

from bb_robot.driver.commands.tolerances import JointToleranceSpec, Outcome, ToleranceDefaults, resolve_tolerances
from bb_robot.driver.core import DriverCore
from bb_robot.driver.cycle.execution import Execution, Feedback
from bb_robot.driver.errors import INVALID_GOAL, INVALID_JOINTS, CommandRejected, TrajectoryRejected
from bb_robot.nodes.driver_commands import resolve, start_ns, trajectory_points

Result = FollowJointTrajectory.Result


def _tolerances(items: Sequence[JointTolerance]) -> list[JointToleranceSpec]:
    return [JointToleranceSpec(t.name, t.position, t.velocity, t.acceleration) for t in items]


class MonitoredAction:
    """An action server whose goals a timer on the steady clock monitors (the driver's trajectory and
    gripper actions): :meth:`close` ends its goals and removes the server and the timer."""

    _node: Node
    _released: bool
    _timer: Timer | None
    _server: ActionServer | None

    def monitor(self) -> None:
        """Judge the goals being executed; once released, end them (aborted)."""
        raise NotImplementedError

    def close(self) -> None:
        """End its goals (aborted: the driver was cleaned up), then remove the server and its timer."""
        self._released = True
        self.monitor()
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None
        server, self._server = self._server, None
        if server is not None:
            server.destroy()


class TrajectoryAction(MonitoredAction):
    """The action server of one configured session, and its goals.

    Args:
        node: The driver node.
        core: The session's core.
        tolerance_defaults: The ``constraints.*`` parameters now.
        monitor_rate: ``action_monitor_rate`` (Hz).
        steady: The clock of the monitor timer.
    """

    def __init__(
        self,
        node: Node,
        core: DriverCore,
        tolerance_defaults: Callable[[], ToleranceDefaults],
        monitor_rate: float,
        steady: Clock,
    ) -> None:
        self._node, self._core, self._defaults, self._steady = node, core, tolerance_defaults, steady
        #: Goals being executed: the execution, its goal handle, the future its coroutine awaits.
        self._goals: list[tuple[Execution, ServerGoalHandle, Future]] = []
        self._released = False
        self._timer: Timer | None = None
        self._server: ActionServer | None = ActionServer(
            node,
            FollowJointTrajectory,
            "~/follow_joint_trajectory",
            execute_callback=self._execute_goal,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal_handle: CancelResponse.ACCEPT,
        )
        self.set_monitor_rate(monitor_rate)

    def set_monitor_rate(self, rate: float) -> None:
        """(Re)start the goal monitor at ``rate`` Hz."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
        self._timer = self._node.create_timer(1.0 / rate, self.monitor, clock=self._steady)

    async def _execute_goal(self, goal_handle: ServerGoalHandle) -> FollowJointTrajectory.Result:
        node, core = self._node, self._core
        logger = node.get_logger()
        source = f"a goal on '{resolve(node, '~/follow_joint_trajectory')}'"
        goal = goal_handle.request
        try:
            if self._released:
                raise CommandRejected("inactive", "the driver is not configured")
            if goal.multi_dof_trajectory.joint_names or goal.multi_dof_trajectory.points:
                raise TrajectoryRejected(INVALID_JOINTS, "multi-DOF trajectories are not supported")
            if goal.component_path_tolerance or goal.component_goal_tolerance:
                raise TrajectoryRejected(INVALID_JOINTS, "component tolerances (multi-DOF joints) are not supported")
            trajectory = core.prepare_trajectory(
                goal.trajectory.joint_names,
                trajectory_points(goal.trajectory.points),
                start_ns=start_ns(node, goal.trajectory.header.stamp),
                source=source,
            )
            tolerances = resolve_tolerances(
                self._defaults().for_joints(trajectory.names),
                trajectory.names,
                _tolerances(goal.path_tolerance),
                _tolerances(goal.goal_tolerance),
                goal.goal_time_tolerance.sec + goal.goal_time_tolerance.nanosec * 1e-9,
            )
            execution = core.execute(trajectory, tolerances, source)
        except (TrajectoryRejected, CommandRejected) as error:
            code = error.code if isinstance(error, TrajectoryRejected) else INVALID_GOAL
            logger.warning(f"{source} rejected: {error}")
            goal_handle.abort()
            return Result(error_code=code, error_string=str(error))
        logger.info(f"{source} accepted: {len(trajectory.point_times)} points over {trajectory.duration:.3f} s")
        finished: Future = Future()
        self._goals.append((execution, goal_handle, finished))
        self.monitor()
        await finished
        outcome = execution.outcome
        assert outcome is not None
        try:
            if outcome.status == "succeeded":
                goal_handle.succeed()
            elif outcome.status == "canceled" and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:
                goal_handle.abort()
        except Exception as error:  # noqa: BLE001 - the action server may be gone (cleanup)
            logger.debug(f"could not report the goal's end: {error!r}")
        if outcome.status != "succeeded":
            logger.info(f"{execution.source} {outcome.status}: {outcome.message}")
        return Result(error_code=outcome.code, error_string=outcome.message)

    def monitor(self) -> None:
        """Feedback, cancel requests, and the end of each goal (after :meth:`close`: every goal ends)."""
        remaining = []
        for execution, goal_handle, finished in self._goals:
            if execution.done.is_set() or self._released:
                if not execution.done.is_set():
                    execution.finish(Outcome("aborted", INVALID_GOAL, "the driver was cleaned up"))
                finished.set_result(True)
                continue
            if goal_handle.is_cancel_requested and not execution.cancel_sent:
                self._core.cancel(execution, "canceled by the client")
                execution.cancel_sent = True
            feedback = execution.feedback
            if feedback is not None and goal_handle.is_active:
                goal_handle.publish_feedback(self._feedback(execution, feedback))
            remaining.append((execution, goal_handle, finished))
        self._goals = remaining

    def _feedback(self, execution: Execution, feedback: Feedback) -> FollowJointTrajectory.Feedback:
        message = FollowJointTrajectory.Feedback()
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.joint_names = list(execution.trajectory.names)
        p, v, a = feedback.desired
        ap, av = feedback.actual
        t = max((feedback.now_ns - execution.trajectory.start_ns) * 1e-9, 0.0)
        for point in (message.desired, message.actual, message.error):
            point.time_from_start.sec = int(t)
            point.time_from_start.nanosec = int((t - int(t)) * 1e9)
        message.desired.positions, message.desired.velocities = p.tolist(), v.tolist()
        message.desired.accelerations = a.tolist()
        message.actual.positions, message.actual.velocities = ap.tolist(), av.tolist()
        message.error.positions, message.error.velocities = (p - ap).tolist(), (v - av).tolist()
        if hasattr(message, "index"):  # control_msgs 6.3+ (Kilted); Jazzy's 5.x feedback has no index
            message.index = int(feedback.index)
        return message
