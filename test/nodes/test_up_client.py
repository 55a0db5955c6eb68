"""``bb-robot up``'s client node (:class:`bb_robot.nodes.up_client.UpClient`) against a real action
server over real DDS: every goal it sends gets its result.

The client spins on its own thread while the command line sends goals from another.  Jazzy's rclpy
(7.1) files a goal's sequence number only after sending its request, without a lock (Kilted's
holds one), so a goal sent from a thread other than the spinning one can have its response
dropped ("Ignoring unexpected goal response"); the goal then runs but its result never comes
(CI's Jazzy Cartesian demo: "the move to the ready pose failed: no result (status None)").  The
client therefore sends from its spinning thread.  The race needs the spinning thread to take the
response while the sending thread waits for the interpreter; it was not reproduced on demand here
(not with the interpreter's switch interval at 1 µs or 20 ms, a busy spinning thread, or both
threads on one loaded CPU), so this test checks what the fix must keep: every goal sent while the
server floods the client's joint-state subscription gets its result.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import rclpy
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

from bb_robot.bringup.demo import DemoPoint
from bb_robot.nodes.up_client import UpClient

GOALS = 60
SUCCEEDED = 4


@pytest.fixture
def server() -> Iterator[str]:
    """A FollowJointTrajectory server (its own context and thread) that succeeds every goal at once;
    yields its namespace."""
    namespace = f"up_client_{uuid.uuid4().hex[:6]}"
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("driver", namespace=namespace, context=context)

    def execute(handle: object) -> object:
        handle.succeed()  # type: ignore[attr-defined]
        return FollowJointTrajectory.Result()

    action = ActionServer(node, FollowJointTrajectory, "driver/follow_joint_trajectory", execute)
    states = node.create_publisher(JointState, "joint_states", 10)
    state = JointState(name=[f"j{i}" for i in range(50)], position=[0.0] * 50)
    node.create_timer(0.0005, lambda: states.publish(state))
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield namespace
    finally:
        executor.shutdown(timeout_sec=2.0)
        action.destroy()
        node.destroy_node()
        rclpy.shutdown(context=context)
        thread.join(timeout=5.0)


def test_every_goal_sent_from_another_thread_gets_its_result(server: str) -> None:
    client = UpClient([server])
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.02)  # (the interpreter's 5 ms, made longer)
    try:
        for number in range(GOALS):
            progress = client.send_goal(server, ["j1"], [DemoPoint(0.01, (0.0,))])
            deadline = time.monotonic() + 10.0
            while not progress.done and time.monotonic() < deadline:
                time.sleep(0.001)
            assert progress.done, f"goal {number + 1} of {GOALS}: no result within 10 s ({progress})"
            assert progress.accepted and progress.status == SUCCEEDED, f"goal {number + 1}: {progress}"
    finally:
        sys.setswitchinterval(interval)
        client.close()
