"""A small ROS program of the network-cut test, run inside a network namespace (a "host").

    python graph_observer.py --watch /ns/actuator/j/motor/state [--name observer_a]
                             [--states /ns/joint_states --record FILE]
                             [--trajectory /ns/driver/joint_trajectory --joint J --target X --seconds S]

Prints one line per event, flushed, for the test to read in order:

- ``seen <topic>`` / ``lost <topic>``: the watched topic gains its first publisher in this
  participant's view of the ROS graph, or loses its last (the other side's participant was
  discovered, or its lease ran out).  Endpoints, not node names: after a participant was dropped
  and rediscovered, rmw_fastrtps (Kilted) lists its topics and delivers its data again but no
  longer lists its node (measured; docs/safety.md);
- ``moving``: the first joint state whose ``--joint`` is past a tenth of the way to ``--target``;
- with ``--trajectory``: once the watched node is seen and joint states arrive, a trajectory
  moving ``--joint`` to ``--target`` over ``--seconds`` is published; again, from the state then,
  whenever ``RESEND`` seconds pass without ``--joint`` moving (a driver whose joints have not yet
  reported refuses a trajectory, and over the two hosts its first values can come after the
  observer's first joint state), until ``moving``.

Every joint state is appended to ``--record`` as a JSON line (stamp in seconds, names, positions),
for the test's velocity check.  Runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from typing import Any

#: Seconds after a send without the joint moving by ``STILL`` rad before the trajectory is sent
#: again.  The slowest motion the test asks for (1.5 rad over 30 s, minimum jerk) has moved 0.013
#: rad after 3 s, a hundred times ``STILL``: an accepted trajectory is never sent twice.
RESEND = 3.0
STILL = 1e-4


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--watch", required=True, help="a topic the other side publishes")
    parser.add_argument("--name", default="observer", help="this program's node name")
    parser.add_argument("--states", default="")
    parser.add_argument("--record", default="")
    parser.add_argument("--trajectory", default="")
    parser.add_argument("--joint", default="shoulder_pan_joint")
    parser.add_argument("--target", type=float, default=1.5)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()

    import rclpy
    from builtin_interfaces.msg import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    rclpy.init()
    node = rclpy.create_node(args.name)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: stop.update(now=True))
    record = open(args.record, "a") if args.record else None  # noqa: SIM115 - closed at the end
    latest: dict[str, Any] = {}
    moving = {"said": False}

    def on_state(msg: Any) -> None:
        latest["state"] = msg
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if record is not None:
            record.write(json.dumps({"stamp": stamp, "name": list(msg.name), "position": list(msg.position)}) + "\n")
            record.flush()
        if args.joint in msg.name and not moving["said"]:
            position = msg.position[list(msg.name).index(args.joint)]
            if abs(position) > abs(args.target) / 10:
                moving["said"] = True
                print("moving", flush=True)

    # A subscription on the watched topic: with a discovery server a client learns only of the
    # endpoints that match its own.
    node.create_subscription(
        JointState, args.watch, lambda _: None, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    if args.states:
        node.create_subscription(JointState, args.states, on_state, QoSProfile(depth=100))
    publisher = (
        node.create_publisher(JointTrajectory, args.trajectory, QoSProfile(depth=10)) if args.trajectory else None
    )
    sent: dict[str, float] = {}  # the monotonic time and the joint's position of the last send
    seen = False
    while not stop["now"]:
        rclpy.spin_once(node, timeout_sec=0.05)
        if (node.count_publishers(args.watch) > 0) != seen:
            seen = not seen
            print(f"{'seen' if seen else 'lost'} {args.watch}", flush=True)
        state = latest.get("state")
        if (
            publisher is not None
            and state is not None
            and seen
            and publisher.get_subscription_count() > 0
            and not moving["said"]
            and args.joint in state.name
        ):
            index = list(state.name).index(args.joint)
            now = time.monotonic()
            if not sent or (now - sent["time"] > RESEND and abs(state.position[index] - sent["position"]) < STILL):
                positions = list(state.position)
                positions[index] = args.target
                point = JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=args.seconds))
                publisher.publish(JointTrajectory(joint_names=list(state.name), points=[point]))
                print("trajectory sent" if not sent else "trajectory sent again (the joint had not moved)", flush=True)
                sent.update(time=now, position=state.position[index])
        time.sleep(0.01)
    if record is not None:
        record.close()
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
