#!/usr/bin/env python3
"""Gazebo messages and transport: decode/encode cost of gz.msgs10 classes, and loopback latency.

Run ``python benchmarks/bench_gz.py [--quick]``. Prints a Markdown report (numbers are
measurements, never assertions; docs/gazebo-transport.md quotes a run):

(a) a 7-joint ``gz.msgs.Model`` (joint state as Gazebo's JointStatePublisher sends it) and a
    ``gz.msgs.Double`` (a JointPositionController command): ``FromString`` and
    ``SerializeToString`` per message, with bb_robot.gz.messages' classes on this venv's protobuf
    (upb) and, in a child process, the same classes under ``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python``
    (what importing gazebo-py-bindings' generated modules on protobuf >= 4.21 would force);
(b) built-in transport to built-in transport on loopback: publish of a 7-joint Model at 500 Hz to the
    subscriber's callback, latency p50 / p99 / max over the run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bb_robot.gz.builtin import BuiltinTransport  # noqa: E402
from bb_robot.gz.messages import default_messages, protobuf_implementation  # noqa: E402


def model(joints: int = 7) -> object:
    message = default_messages().new("gz.msgs.Model", name="ur3e")
    message.header.stamp.sec = 12
    message.header.stamp.nsec = 345
    for index in range(joints):
        joint = message.joint.add(name=f"joint_{index}", id=index)
        joint.axis1.position = 0.1 * index
        joint.axis1.velocity = -0.2 * index
        joint.axis1.force = 1.5
    return message


def per_call(function: object, number: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            function()  # type: ignore[operator]
        best = min(best, (time.perf_counter() - start) / number)
    return best


def codec_times(number: int) -> dict[str, float]:
    messages = default_messages()
    results = {}
    for label, message in (("Model (7 joints)", model()), ("Double", messages.new("gz.msgs.Double", data=0.5))):
        cls = type(message)
        data = message.SerializeToString()  # type: ignore[attr-defined]
        results[f"{label} decode"] = per_call(lambda cls=cls, data=data: cls.FromString(data), number)
        results[f"{label} encode"] = per_call(message.SerializeToString, number)  # type: ignore[attr-defined]
        results[f"{label} bytes"] = len(data)
    return results


def latency(count: int, rate: float) -> list[float]:
    partition = f"bench_{uuid.uuid4().hex[:8]}"
    sender = BuiltinTransport(partition=partition, ip="127.0.0.1", relays=[])
    receiver = BuiltinTransport(partition=partition, ip="127.0.0.1", relays=[])
    samples: list[float] = []
    done = threading.Event()
    stamps: dict[int, int] = {}

    def on_state(message: object, info: object) -> None:
        sent = stamps.get(message.header.stamp.nsec)  # type: ignore[attr-defined]
        if sent is not None:
            samples.append((info.received_ns - sent) / 1e3)  # type: ignore[attr-defined]
        if len(samples) >= count:
            done.set()

    try:
        receiver.subscribe("/joint_state", "gz.msgs.Model", on_state)
        publisher = sender.advertise("/joint_state", "gz.msgs.Model", resend_latest=False)
        deadline = time.monotonic() + 10
        while not publisher.has_connections() and time.monotonic() < deadline:
            time.sleep(0.01)
        message = model()
        period = 1.0 / rate
        next_time = time.monotonic()
        for index in range(count + 10):
            message.header.stamp.nsec = index  # type: ignore[attr-defined]
            stamps[index] = time.monotonic_ns()
            publisher.publish(message)  # type: ignore[arg-type]
            next_time += period
            time.sleep(max(0.0, next_time - time.monotonic()))
        done.wait(5)
    finally:
        sender.close()
        receiver.close()
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--codec-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    number = 2000 if args.quick else 20000
    if args.codec_only:
        print(json.dumps({"implementation": protobuf_implementation(), **codec_times(number // 10)}))
        return 0
    fast = codec_times(number)
    env = dict(os.environ, PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
    slow = json.loads(
        subprocess.run(
            [sys.executable, __file__, "--codec-only", *(["--quick"] if args.quick else [])],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    import google.protobuf

    print(f"## bench_gz (protobuf {google.protobuf.__version__}, {os.cpu_count()} CPUs)\n")
    fallback = slow["implementation"]
    print(f"| per message | {protobuf_implementation()} (bb_robot.gz.messages) | {fallback} fallback | ratio |")
    print("|---|---|---|---|")
    for key, value in fast.items():
        if key.endswith("bytes"):
            continue
        print(f"| {key} | {value * 1e6:.2f} µs | {slow[key] * 1e6:.1f} µs | {slow[key] / value:.0f}× |")
    print(f"\nSizes: Model (7 joints) {fast['Model (7 joints) bytes']:.0f} B, Double {fast['Double bytes']:.0f} B.\n")
    count = 1000 if args.quick else 5000
    samples = sorted(latency(count, 500.0))
    if samples:
        p99 = samples[int(0.99 * (len(samples) - 1))]
        print(
            f"Loopback latency, built-in → built-in, 7-joint Model at 500 Hz, {len(samples)} messages: "
            f"p50 {statistics.median(samples):.0f} µs, p99 {p99:.0f} µs, max {samples[-1]:.0f} µs "
            f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
