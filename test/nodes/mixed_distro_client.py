"""A driver's client, run by ``test_mixed_distros.py`` with the python of the *other* distribution's venv.

    python mixed_distro_client.py NODE_NAME NAMESPACE JOINT TARGET_COMMAND TARGET_GOAL TIMEOUT

Against the driver ``NODE_NAME`` (in ``NAMESPACE``) it: waits for ``joint_states``; sends a
``sensor_msgs/JointState`` command moving ``JOINT`` to ``TARGET_COMMAND`` and waits until the joint
states show it there; sends a ``control_msgs/FollowJointTrajectory`` goal moving it to
``TARGET_GOAL`` through four points 0.5 s apart and waits for the result, recording of each
feedback message that arrives the joints it names, its desired point's ``time_from_start`` and how
many ``multi_dof_joint_names`` it holds.  Prints one JSON object (what happened, this side's type hashes
of the feedback and of the goal request) and exits 0; each step that does not happen within
``TIMEOUT`` seconds is reported as such, not raised.  Only API that both rclpy 7 (Jazzy) and 9
(Kilted) have is used.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _hash_of(package: str, interface: str, type_name: str) -> str:
    """This venv's type hash of ``type_name`` (from the type description the build installed)."""
    from ament_index_python.packages import get_package_share_directory

    description = Path(get_package_share_directory(package)) / f"{interface}.json"
    hashes = json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    return next(h["hash_string"] for h in hashes if h["type_name"] == type_name)


def main(argv: list[str]) -> int:
    node_name, namespace, joint, command_target, goal_target, timeout = argv
    command_position, goal_position, limit = float(command_target), float(goal_target), float(timeout)

    import rclpy
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectoryPoint

    rclpy.init()
    node = rclpy.create_node("mixed_distro_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    states: list[Any] = []
    node.create_subscription(JointState, f"{namespace}/joint_states", states.append, qos)
    commands = node.create_publisher(JointState, f"{node_name}/joint_commands", qos)
    action = ActionClient(node, FollowJointTrajectory, f"{node_name}/follow_joint_trajectory")

    def spin_until(condition: Callable[[], bool], seconds: float = limit) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not condition():
            executor.spin_once(timeout_sec=0.02)
        return condition()

    def position() -> float | None:
        if not states or joint not in states[-1].name:
            return None
        return float(states[-1].position[list(states[-1].name).index(joint)])

    def near(target: float) -> bool:
        now = position()
        return now is not None and abs(now - target) < 1e-3

    action_type = "control_msgs/action/FollowJointTrajectory"
    report: dict[str, Any] = {
        "rclpy": rclpy.__file__,
        "feedback_hash": _hash_of("control_msgs", "action/FollowJointTrajectory", f"{action_type}_Feedback"),
        "goal_hash": _hash_of("control_msgs", "action/FollowJointTrajectory", f"{action_type}_Goal"),
        "joint_state_hash": _hash_of("sensor_msgs", "msg/JointState", "sensor_msgs/msg/JointState"),
    }
    report["joint_states"] = spin_until(lambda: position() is not None)
    # A command, resent until it shows (the first can go out before DDS matched the driver's reader).
    command = JointState(name=[joint], position=[command_position])
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and not near(command_position):
        commands.publish(command)
        spin_until(lambda: near(command_position), 0.5)
    report["command_reached"] = near(command_position)

    feedback: list[Any] = []
    report["action_server"] = action.wait_for_server(timeout_sec=limit)
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [joint]
    start = position() or 0.0
    goal.trajectory.points = [
        JointTrajectoryPoint(
            positions=[start + (goal_position - start) * k / 4],
            time_from_start=Duration(sec=k // 2, nanosec=(k % 2) * 500_000_000),
        )
        for k in range(1, 5)
    ]
    sent = action.send_goal_async(goal, feedback_callback=feedback.append)
    report["goal_answered"] = spin_until(sent.done)
    handle = sent.result() if sent.done() else None
    report["goal_accepted"] = bool(handle and handle.accepted)
    if handle is not None and handle.accepted:
        result = handle.get_result_async()
        spin_until(result.done, limit + 2.0)
        if result.done():
            answer = result.result()
            report["result_status"], report["error_code"] = int(answer.status), int(answer.result.error_code)
            report["error_string"] = answer.result.error_string
    spin_until(lambda: near(goal_position))  # the joint state that shows it may still be on its way
    report["goal_reached"] = near(goal_position)
    report["feedback"] = [
        {
            "joint_names": list(f.feedback.joint_names),
            "t": f.feedback.desired.time_from_start.sec + 1e-9 * f.feedback.desired.time_from_start.nanosec,
            "multi_dof_joint_names": len(f.feedback.multi_dof_joint_names),
        }
        for f in feedback
    ]
    print(json.dumps(report), flush=True)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
