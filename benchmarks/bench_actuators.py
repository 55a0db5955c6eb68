"""Benchmark of the driver's ``actuators`` backend: command → actuator topic and feedback →
``joint_states`` latencies with the bundled arm's seven actuators at the default 500 Hz loop.

    .venv/bin/python benchmarks/bench_actuators.py            # full run (about a minute)
    .venv/bin/python benchmarks/bench_actuators.py --quick    # shorter, a smoke test

The driver runs as a child process (``python -m bb_robot.nodes.driver``, ``backend: actuators``,
joint topic style: bb_arm's gripper path is too long for the path style) on ``models/bb_arm.urdf``.
This process plays the seven servo bridges and the client, on one rclpy executor (the events
executor, as the driver; its subscriptions keep the latest message only, as a bridge would):

- it publishes every actuator's feedback at 100 Hz (a burst of seven messages per period), so
  the driver stays healthy;
- **command → actuator**: at 50 Hz it sends ``~/joint_commands`` (positions of all seven joints,
  each command a new target) and timestamps it; its subscriptions on the seven actuator command
  topics timestamp the first message carrying that target (through the transmission).  Both
  times are this process's monotonic clock; the path covers DDS to the driver, its executor
  callback, which writes the command at once (``immediate_commands``, the default: the
  transmission and seven publishes), and DDS back;
- **feedback → joint_states**: each feedback burst carries new positions; the time from the
  burst's last message to the first ``joint_states`` message in which every joint reflects the
  burst, at the driver's default ``publish_rate`` (100 Hz), at 500 Hz and at 0 (each cycle's
  sample published at once; changed live).  A
  burst that a later one overtakes before ``joint_states`` went out is counted as superseded.

Also reported: the driver's own command latency (received → backend write) and cycle time from
its ``/diagnostics``, and its CPU use (``/proc/<pid>/stat``) in each phase.  This process's own
callbacks are part of the measured paths (it receives 3,500 command messages a second).
Numbers are measurements on this machine at this load, not assertions.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common  # noqa: E402  (puts the repository root on sys.path)
import _driver_process  # noqa: E402

REPO_ROOT = _common.REPO_ROOT
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
SECTION = "bench_actuators"
COMMAND_HZ = 50.0
FEEDBACK_HZ = 100.0
TARGET_STEP = 1e-5  # rad or m between two command targets
MARKER_STEP = 1e-6  # actuator units between two feedback bursts


@dataclass
class Phase:
    label: str
    latencies: list[float] = field(default_factory=list)
    all_latencies: list[float] = field(default_factory=list)
    sent: int = 0
    seen: int = 0
    cpu_percent: float | None = None
    diagnostics: dict[str, str] = field(default_factory=dict)


def run(seconds: float) -> tuple[list[Phase], str]:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.parameter import Parameter
    from rclpy.parameter_client import AsyncParameterClient
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from bb_robot.driver.commands.limits import from_robot
    from bb_robot.driver.model import driven_joints
    from bb_robot.urdf.builder import load_urdf

    robot = load_urdf(BB_ARM)
    joints = driven_joints(robot)
    limits = from_robot(robot, joints)
    middle = [
        float(0.5 * (lo + hi)) if np.isfinite(lo) and np.isfinite(hi) else 0.0
        for lo, hi in zip(limits.command_lower, limits.command_upper, strict=True)
    ]
    domain = random.SystemRandom().randint(0, 101)
    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_actuators_"))
    driver = _driver_process.start_driver(
        {
            "model": str(BB_ARM),
            "backend": "actuators",
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.0,
            "connect_timeout": 30.0,
            "actuators": {"actuator_topic_style": "joint"},
        },
        workdir=workdir,
        domain=domain,
        extra_env={"ROS_LOG_DIR": str(workdir / "ros_log")},  # even where ROS_LOG_DIR is set
    )
    namespace = driver.namespace
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_actuators", context=context)
    executor = _driver_process.make_executor(context)
    executor.add_node(node)
    latched = QoSProfile(
        depth=1,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    index: list[Any] = []
    diagnostics: list[Any] = []
    node.create_subscription(String, f"{namespace}/actuators", index.append, latched)
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    phases: list[Phase] = []

    def spin_until(condition: Any, timeout: float, what: str) -> None:
        driver.wait_for(
            condition, timeout, f"{what} not within {timeout} s", lambda: executor.spin_once(timeout_sec=0.01)
        )

    def spin_for(duration: float) -> None:
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)

    try:
        spin_until(lambda: bool(index), 60, "the actuator index")
        entries = json.loads(index[-1].data)["actuators"]
        assert [e["joint"] for e in entries] == list(joints)
        reduction = np.array([e["transmission"]["signed_reduction"] for e in entries])
        offset = np.array([e["transmission"]["offset"] for e in entries])
        names = [e["name"] for e in entries]
        n = len(entries)

        # ---- the servo side: feedback bursts at FEEDBACK_HZ
        feedback_pubs = [node.create_publisher(JointState, e["state_topic"], latest) for e in entries]
        feedback = [JointState(name=[name], position=[0.0], velocity=[0.0]) for name in names]
        marker = {"k": 0, "moving": False}
        burst_sent: dict[int, int] = {}

        def send_feedback() -> None:
            if marker["moving"]:
                marker["k"] += 1
            k = marker["k"]
            for message, publisher in zip(feedback, feedback_pubs, strict=True):
                message.position = [k * MARKER_STEP]
                publisher.publish(message)
            if marker["moving"]:
                burst_sent[k] = time.monotonic_ns()

        node.create_timer(1.0 / FEEDBACK_HZ, send_feedback)
        spin_until(lambda: "active: control loop" in driver.log(), 60, "the driver active")
        spin_for(1.0)

        # ---- phase A: command -> actuator topics
        phase = Phase("command → actuator topics")
        first_arrival: dict[tuple[int, int], int] = {}
        command_sent: dict[int, int] = {}

        def on_command(i: int, message: Any) -> None:
            now = time.monotonic_ns()
            if len(message.position) != 1:
                return
            joint = message.position[0] / reduction[i] + offset[i]
            k = round((joint - middle[i]) / TARGET_STEP)
            if k in command_sent and (k, i) not in first_arrival:
                first_arrival[(k, i)] = now

        command_subs = [
            node.create_subscription(JointState, e["command_topic"], lambda m, i=i: on_command(i, m), latest)
            for i, e in enumerate(entries)
        ]
        commands = node.create_publisher(JointState, f"{namespace}/driver/joint_commands", reliable)
        spin_until(lambda: commands.get_subscription_count() > 0, 30, "the driver's ~/joint_commands")
        command = JointState(name=list(joints))
        count = int(seconds * COMMAND_HZ)
        cpu0, t0 = driver.cpu_seconds(), time.monotonic()
        next_send = time.monotonic()
        for k in range(1, count + 1):
            command.position = [m + k * TARGET_STEP for m in middle]
            commands.publish(command)
            command_sent[k] = time.monotonic_ns()
            next_send += 1.0 / COMMAND_HZ
            while time.monotonic() < next_send:
                executor.spin_once(timeout_sec=max(0.0, min(0.005, next_send - time.monotonic())))
        spin_for(0.5)
        phase.cpu_percent = 100 * (driver.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        phase.sent = count
        for k, sent in command_sent.items():
            arrivals = [first_arrival.get((k, i)) for i in range(n)]
            phase.latencies += [(a - sent) * 1e-9 for a in arrivals if a is not None]
            if all(a is not None for a in arrivals):
                phase.seen += 1
                phase.all_latencies.append((max(a for a in arrivals if a is not None) - sent) * 1e-9)
        spin_for(1.2)
        phase.diagnostics = _driver_process.loop_status(diagnostics)[0]
        phases.append(phase)
        for subscription in command_subs:
            node.destroy_subscription(subscription)

        # ---- phase B: feedback -> joint_states, at two publish rates
        states_seen: dict[int, int] = {}

        def on_state(message: Any) -> None:
            now = time.monotonic_ns()
            index_of = {name: i for i, name in enumerate(message.name)}
            if not all(j in index_of for j in joints):
                return
            ks = [
                round(((message.position[index_of[j]] - offset[i]) * reduction[i]) / MARKER_STEP)
                for i, j in enumerate(joints)
            ]
            k = min(ks)
            if k in burst_sent and k not in states_seen:
                states_seen[k] = now

        node.create_subscription(JointState, f"{namespace}/joint_states", on_state, reliable)
        client = AsyncParameterClient(node, f"{namespace}/driver")
        spin_until(client.services_are_ready, 30, "the driver's parameter services")
        for publish_rate in (100.0, 500.0, 0.0):
            future = client.set_parameters([Parameter("publish_rate", value=publish_rate)])
            spin_until(future.done, 30, "set publish_rate")
            spin_for(0.5)
            rate_label = f"{publish_rate:g} Hz" if publish_rate > 0 else "0 (each sample)"
            phase = Phase(f"feedback → joint_states, publish_rate {rate_label}")
            burst_sent.clear()
            states_seen.clear()
            cpu0, t0 = driver.cpu_seconds(), time.monotonic()
            marker["moving"] = True
            spin_for(seconds)
            marker["moving"] = False
            spin_for(0.3)
            phase.cpu_percent = 100 * (driver.cpu_seconds() - cpu0) / (time.monotonic() - t0)
            phase.sent = len(burst_sent)
            phase.latencies = [(states_seen[k] - burst_sent[k]) * 1e-9 for k in burst_sent if k in states_seen]
            phase.seen = len(phase.latencies)
            spin_for(1.2)
            phase.diagnostics = _driver_process.loop_status(diagnostics)[0]
            phases.append(phase)
    finally:
        driver.stop(interrupt_wait=15.0, terminate_wait=15.0)
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    return phases, driver.log()


def _ms(values: list[float], q: float) -> str:
    return f"{np.percentile(values, q) * 1e3:.2f} ms" if values else "—"


def report(phases: list[Phase], seconds: float, quick: bool, machine: str) -> str:
    rows = []
    a = phases[0]
    rows.append(
        [
            "`~/joint_commands` → each actuator topic",
            _ms(a.latencies, 50),
            _ms(a.latencies, 99),
            _ms(a.latencies, 100),
            f"{len(a.latencies)} of {a.sent * 7}",
        ]
    )
    rows.append(
        [
            "`~/joint_commands` → all 7 actuator topics",
            _ms(a.all_latencies, 50),
            _ms(a.all_latencies, 99),
            _ms(a.all_latencies, 100),
            f"{a.seen} of {a.sent}",
        ]
    )
    d = a.diagnostics
    rows.append(
        [
            "(of which: received → backend write, the driver's own figure)",
            f"{d.get('command latency p50 (ms)', '—')} ms",
            f"{d.get('command latency p99 (ms)', '—')} ms",
            "",
            "",
        ]
    )
    for phase in phases[1:]:
        rows.append(
            [
                f"feedback (7 actuators) → `joint_states`, {phase.label.split(', ')[1]}",
                _ms(phase.latencies, 50),
                _ms(phase.latencies, 99),
                _ms(phase.latencies, 100),
                f"{phase.seen} of {phase.sent} bursts ({phase.sent - phase.seen} superseded)",
            ]
        )
    latency = _common.markdown_table(["Path", "p50", "p99", "max", "samples"], rows, align="lrrrl")
    cost_rows = [
        [
            phase.label,
            f"{phase.cpu_percent:.0f} %" if phase.cpu_percent is not None else "—",
            f"{phase.diagnostics.get('cycle time mean (ms)', '—')} ms",
            f"{phase.diagnostics.get('cycle time max (ms)', '—')} ms",
            f"{phase.diagnostics.get('lag p99 (ms)', '—')} ms",
            phase.diagnostics.get("skipped cycles", "—"),
        ]
        for phase in phases
    ]
    cost = _common.markdown_table(
        ["Phase", "driver CPU (of one core)", "cycle time mean", "cycle time max", "lag p99", "cycles skipped so far"],
        cost_rows,
    )
    mode = "quick run" if quick else "full run"
    return f"""
## Actuators backend: command → actuator and feedback → joint_states (`benchmarks/bench_actuators.py`)

Run {_common.timestamp()} ({mode}: {seconds:g} s per phase; commands at {COMMAND_HZ:g} Hz, feedback bursts at
{FEEDBACK_HZ:g} Hz).

Machine: {machine}; load average {_common.load_average()} at the end.

The driver (`backend: actuators`, joint topic style, control loop at the default 500 Hz, the
default real-time priority) drives `models/bb_arm.urdf`'s seven actuators; this process plays the
seven servo bridges and the client on one rclpy executor (its own callbacks are part of every
path: it takes 3,500 command messages a second). Command latency: from publishing
`~/joint_commands` (new positions for the seven joints) to the first message with that target on
each actuator's topic (transmission applied). Feedback latency: from the last of a burst of seven
feedback messages (new positions) to the first `joint_states` in which every joint reflects the
burst; at `publish_rate` 100 Hz (the default) a burst waits for the next publication, at 0 each
control cycle's sample is published as the cycle ends. Samples
count the targets and bursts seen; the others were overtaken (the next command or burst arrived
before a cycle or a publication took them) or dropped by this process's best-effort subscriptions.

{latency}

A command is written by the callback that receives it (`immediate_commands`, the default), and
feedback waits for the next cycle (0 to 2 ms at 500 Hz; the actuator topics are read by the loop)
and, with a `publish_rate`, the next `joint_states` publication: the loop and publish rates, not
the transport, set most of the feedback figures; the maxima are the machine's (other processes
compete for its CPUs).

Cost in the driver process (CPU from `/proc/<pid>/stat` over the phase; cycle time and lag from
its `/diagnostics` at the phase's end, over the last 2,047 cycles):

{cost}

Numbers are measurements on this machine at this load, not assertions.
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 s per phase instead of 20")
    parser.add_argument("--no-docs", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    seconds = 5.0 if args.quick else 20.0
    machine = _common.machine_summary(("numpy",))
    phases, _log = run(seconds)
    text = report(phases, seconds, args.quick, machine)
    print(text)
    if not args.no_docs:
        page = _common.rewrite_doc_section(SECTION, text)
        print(f"wrote the {SECTION} section of {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
