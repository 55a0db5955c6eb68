#!/usr/bin/env python3
"""A test-like subscriber that runs a command and records the streams it sees, for ``_streams.py``.

    python benchmarks/_stamp_probe.py OUT.json -- bb-robot up --demo ...

It subscribes, as the node tests' probe does, to ``/joint_states`` and ``/tf`` (reliable, deep
queues, so that this process loses nothing it was sent) and to ``/diagnostics``; starts the command
as its child; spins until the child exits; then writes what it received to ``OUT.json``: each
message's stamp and arrival time (ns, this host's clocks), and the driver's last ``control loop``
and ``joint_states`` diagnostics.  Run it inside ``scripts/slow-host`` so that the probe, the
command and everything the command starts share the slow host.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    out, command = Path(argv[0]), argv[argv.index("--") + 1 :]
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    rclpy.init()
    node = rclpy.create_node("stamp_probe")
    deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    states: list[tuple[int, int]] = []
    tf: list[tuple[int, int]] = []
    diagnostics: dict[str, dict[str, str]] = {}

    def stamp_ns(header: object) -> int:
        stamp = header.stamp  # type: ignore[attr-defined]
        return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)

    def on_state(msg: JointState) -> None:
        states.append((stamp_ns(msg.header), time.monotonic_ns()))

    def on_tf(msg: TFMessage) -> None:
        now = time.monotonic_ns()
        # One dynamic frame stands for the message: the first transform's stamp.
        if msg.transforms:
            tf.append((stamp_ns(msg.transforms[0].header), now))

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith(("control loop", "joint_states")):
                diagnostics[status.name] = {"message": status.message, **{v.key: v.value for v in status.values}}

    node.create_subscription(JointState, "/joint_states", on_state, deep)
    node.create_subscription(TFMessage, "/tf", on_tf, deep)
    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 100)
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(child.stdout or ()), daemon=True)
    reader.start()
    while child.poll() is None:
        rclpy.spin_once(node, timeout_sec=0.05)
    for _ in range(20):  # what is still queued here
        rclpy.spin_once(node, timeout_sec=0.01)
    reader.join(timeout=5)
    out.write_text(
        json.dumps(
            {
                "command": command,
                "status": child.returncode,
                "seconds": time.monotonic() - started,
                "joint_states": states,
                "tf": tf,
                "diagnostics": diagnostics,
                "output": "".join(output)[-4000:],
            }
        )
    )
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
