"""Benchmark of the gazebo backend: ROS command → Gazebo, Gazebo joint state → ROS, lag over a minute, CPU.

    .venv/bin/python benchmarks/bench_gazebo.py            # full run (about two minutes)
    .venv/bin/python benchmarks/bench_gazebo.py --quick    # shorter runs, a smoke test

Gazebo is played by the C++ world peer of the tests (``test/gz/peer/gz_sim_peer.cc``: ign-transport
11, the wire protocol of gz-transport 13) for the seed's UR3e world: six JointPositionController
topics (``gz.msgs.Double``) and a JointStatePublisher (``gz.msgs.Model``) at the loop rate.  In
``--record`` mode it reports the last joint's position as ``k · 1e-6`` in its ``k``-th state
message and records when it published each, and when the first joint's command changed; every
process stamps with ``CLOCK_MONOTONIC``.

1. **The driver node** (a child process, ``backend: gazebo``, model = the world file, 500 Hz loop):
   this process streams sas ``target_joint_positions`` at 500 Hz with a sequence number in the
   first joint's target, and subscribes to ``joint_states``.  *ROS command → Gazebo*: this
   process's publish to the peer's receipt of that target on
   ``/model/ur3e/joint/shoulder_pan_joint/0/cmd_pos``; *Gazebo state → ROS*: the peer's publish of
   state ``k`` to this process's receipt of a ``joint_states`` carrying it.  Two configurations:
   *event-driven* for 60 s (``immediate_commands: true``, the default: the command callback writes
   to Gazebo; ``publish_rate: 0``: each Gazebo state is published by the transport's thread as it
   arrives) and *sampling* for 20 s (``immediate_commands: false``, ``publish_rate: 500``: a
   command waits for the next cycle, a state for the next cycle and the next publication).
   *Lag* (event-driven run): the state latency in the first and the last 10 s (a Python driver
   that cannot keep up falls further behind over time), and the loop's own lag from
   ``/diagnostics``.  *CPU*: user + system time of the driver process (and of the peer).
2. **The backend alone** (in this process, no ROS), 20 s: a 500 Hz loop calls ``read`` and
   ``write`` as the driver's loop does.  *write → Gazebo*: ``write`` of target ``k`` to the
   peer's receipt; *Gazebo → backend*: the peer's publish of state ``k`` to the backend's
   callback (the sample's stamp).  This is the backend's and the transport's share.

Numbers are measurements on this machine at this load, not assertions.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
import _driver_process
import numpy as np

REPO_ROOT = _common.REPO_ROOT
SECTION = "bench_gazebo"
from helpers.cpp_peer import Peer  # noqa: E402
from helpers.sim_peer import (  # noqa: E402
    UR3E_JOINTS,
    UR3E_WORLD,
    build_sim_peer,
    start_sim_peer,
    ur3e_driver_parameters,
    ur3e_peer_args,
)

BASE = 0.5
STEP = 1e-7
STATE_STEP = 1e-6
LOOPBACK = "127.0.0.1"


@dataclass
class Record:
    """The peer's record: when state ``k`` was published; when the first joint's command changed."""

    states: np.ndarray
    commands: list[tuple[int, float]]

    @classmethod
    def read(cls, path: Path) -> Record:
        states: dict[int, int] = {}
        commands: list[tuple[int, float]] = []
        for line in path.read_text().splitlines():
            kind, a, b = line.split()
            if kind == "S":
                states[int(a)] = int(b)
            else:
                commands.append((int(a), float(b)))
        array = np.zeros(max(states) + 1 if states else 0, dtype=np.int64)
        for k, t in states.items():
            array[k] = t
        return cls(array, commands)

    def command_latencies(self, sent: np.ndarray) -> np.ndarray:
        """Seconds from ``sent[k]`` to the peer's receipt of target ``BASE + k * STEP``."""
        out = []
        for t, value in self.commands:
            k = int(round((value - BASE) / STEP))
            if 0 < k < len(sent) and sent[k]:
                out.append((t - sent[k]) * 1e-9)
        return np.array(out)


@dataclass
class NodeRun:
    rate: float
    seconds: float
    #: Event-driven (immediate commands, publish_rate 0) or sampling (both at the loop's pace).
    event_driven: bool = True
    command_latency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    state_latency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    state_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sent: int = 0
    states_published: int = 0
    states_received: int = 0
    early: dict[str, str] = field(default_factory=dict)
    late: dict[str, str] = field(default_factory=dict)
    driver_cpu: float | None = None
    peer_cpu: float | None = None
    cpu_per_1000: float | None = None
    scheduling: str = ""


@dataclass
class BackendRun:
    rate: float
    seconds: float
    write_latency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    state_latency: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cpu: float | None = None


def _start_peer(binary: Path, partition: str, rate: float, record: Path) -> Peer:
    # The arm starts at the bench's base target, so it barely moves; MAX_VEL as the seed world's.
    args = ur3e_peer_args(rate=rate, max_velocity=0.25, initial=[BASE, 0, 0, 0, 0, 0], extra=["--record", str(record)])
    return start_sim_peer(binary, partition, args)


# ------------------------------------------------------------------------------ 1. the driver node
def measure_node(run: NodeRun, binary: Path) -> NodeRun:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_gazebo_"))
    partition = f"bb_robot_bench_{uuid.uuid4().hex[:8]}"
    domain = random.randint(0, 101)
    record = workdir / "peer_record.txt"
    peer = _start_peer(binary, partition, run.rate, record)
    driver = _driver_process.start_driver(
        ur3e_driver_parameters(
            partition,
            run.rate,
            publish_rate=0.0 if run.event_driven else run.rate,
            immediate_commands=run.event_driven,
            stale_timeout=0.5,
        ),
        workdir=workdir,
        domain=domain,
    )
    namespace = driver.namespace
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("bench_gazebo_client", context=context)
    executor = _driver_process.make_executor(context)
    executor.add_node(node)
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    count = int(run.rate * run.seconds) + 1
    received = np.zeros(1 << 20, dtype=np.int64)  # state k -> when it first arrived here
    last = [-1]

    def on_state(message: Any) -> None:
        now = time.monotonic_ns()
        if len(message.position) < 6:
            return
        k = int(round(message.position[5] / STATE_STEP))
        if k != last[0] and 0 <= k < len(received) and not received[k]:
            received[k] = now
            last[0] = k

    volatile = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    node.create_subscription(JointState, f"{namespace}/joint_states", on_state, volatile)
    sas = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    publisher = node.create_publisher(Float64MultiArray, f"{namespace}/ur3e/set/target_joint_positions", sas)
    stop_spinning = threading.Event()

    def spin() -> None:
        while not stop_spinning.is_set():
            executor.spin_once(timeout_sec=0.05)

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        driver.wait_for(
            lambda: publisher.get_subscription_count() > 0 and "gazebo: connected" in driver.log(),
            90,
            "the driver did not start",
            lambda: time.sleep(0.05),
        )
        time.sleep(1.0)
        sender, published = _driver_process.target_stream(publisher, run.rate, count, BASE, STEP, 6)
        started = time.monotonic()
        cpu_start: tuple[float, float] | None = None
        cpu_start_time = started
        sender.start()
        while sender.is_alive():
            time.sleep(0.1)
            if cpu_start is None and time.monotonic() - started >= 10.0:
                cpu_start = (driver.cpu_seconds(), _driver_process.cpu_seconds(peer.process.pid))
                cpu_start_time = time.monotonic()
                run.early = _driver_process.loop_status(diagnostics, "driver")[0]
        sender.join()
        time.sleep(1.5)  # the last states, and the next /diagnostics message
        run.late = _driver_process.loop_status(diagnostics, "driver")[0]
        if cpu_start is not None:
            elapsed = time.monotonic() - cpu_start_time
            driver_seconds = driver.cpu_seconds() - cpu_start[0]
            run.driver_cpu = driver_seconds / elapsed
            run.peer_cpu = (_driver_process.cpu_seconds(peer.process.pid) - cpu_start[1]) / elapsed
            if run.early.get("cycles") and run.late.get("cycles"):
                cycles = int(run.late["cycles"]) - int(run.early["cycles"])
                run.cpu_per_1000 = driver_seconds / cycles * 1000 if cycles > 0 else None
        run.sent = count
        run.scheduling = run.late.get("scheduling", "")
    finally:
        stop_spinning.set()
        spinner.join()
        driver.stop()
        peer.stop(10.0)
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    peer_record = Record.read(record)
    run.command_latency = peer_record.command_latencies(published)
    got = np.flatnonzero(received[: len(peer_record.states)])
    got = got[peer_record.states[got] > 0]
    run.states_published = len(peer_record.states)
    run.states_received = len(got)
    run.state_latency = (received[got] - peer_record.states[got]) * 1e-9
    run.state_times = (peer_record.states[got] - peer_record.states[got][0]) * 1e-9 if len(got) else np.zeros(0)
    return run


# ------------------------------------------------------------------------------ 2. the backend alone
def measure_backend(run: BackendRun, binary: Path) -> BackendRun:
    import logging

    from bb_robot.driver.backends.base import BackendCommand, BackendContext
    from bb_robot.driver.backends.gazebo import GazeboBackend
    from bb_robot.driver.commands import limits as L
    from bb_robot.driver.model import driven_joints, load_model_file
    from bb_robot.driver.timing.loop import RateLoop

    workdir = Path(tempfile.mkdtemp(prefix="bb_robot_bench_gazebo_backend_"))
    partition = f"bb_robot_bench_{uuid.uuid4().hex[:8]}"
    record = workdir / "peer_record.txt"
    peer = _start_peer(binary, partition, run.rate, record)
    loaded = load_model_file(str(UR3E_WORLD), [])
    joints = driven_joints(loaded.robot)
    logging.basicConfig(level=logging.WARNING)
    context = BackendContext(
        loaded.robot,
        joints,
        L.from_robot(loaded.robot, joints),
        run.rate,
        logging.getLogger("bench.gazebo"),
        {"partition": partition, "ip": LOOPBACK, "wait_at_configure": 10.0},
        model_source=loaded.source,
    )
    backend = GazeboBackend(context)
    count = int(run.rate * run.seconds) + 1
    written = np.zeros(count + 1, dtype=np.int64)
    stamps = np.zeros(1 << 20, dtype=np.int64)
    n = len(joints)
    position = np.zeros(n)
    modes = np.full(n, 1, dtype=np.int8)
    zeros, nan = np.zeros(n), np.full(n, np.nan)
    try:
        backend.connect(30.0)
        loop = RateLoop(run.rate)

        def cycle(info: Any) -> None:
            k = info.index + 1
            if k > count:
                loop.stop()
                return
            sample = backend.read(info.start_ns)
            s = int(round(sample.positions[5] / STATE_STEP))
            if 0 <= s < len(stamps) and not stamps[s]:
                stamps[s] = sample.stamps[5]
            position[0] = BASE + k * STEP
            written[k] = time.monotonic_ns()
            backend.write(BackendCommand(modes, position, zeros, zeros, nan), info.start_ns)

        cpu0, t0 = time.process_time(), time.monotonic()
        loop.run(cycle)
        run.cpu = (time.process_time() - cpu0) / (time.monotonic() - t0)  # this whole process
        time.sleep(0.5)
    finally:
        backend.disconnect()
        peer.stop(10.0)
    peer_record = Record.read(record)
    run.write_latency = peer_record.command_latencies(written)
    got = np.flatnonzero(stamps[: len(peer_record.states)])
    got = got[peer_record.states[got] > 0]
    run.state_latency = (stamps[got] - peer_record.states[got]) * 1e-9
    return run


# ------------------------------------------------------------------------------ the report
def _ms(value: float | None) -> str:
    return "—" if value is None or not np.isfinite(value) else f"{value * 1e3:.3f} ms"


def _p(values: np.ndarray, q: float) -> float | None:
    return float(np.percentile(values, q)) if len(values) else None


def _dist(values: np.ndarray) -> str:
    if not len(values):
        return "—"
    return f"{_ms(_p(values, 50))} / {_ms(_p(values, 99))} / {_ms(float(values.max()))}"


def _label(run: NodeRun) -> str:
    kind = "event-driven" if run.event_driven else "sampling"
    return f"driver node, {kind}, {run.rate:g} Hz, {run.seconds:g} s"


def _node_rows(run: NodeRun) -> list[list[str]]:
    return [
        [
            _label(run),
            "ROS command → Gazebo",
            _dist(run.command_latency),
            f"{len(run.command_latency)} of {run.sent} targets seen by Gazebo",
        ],
        [
            "",
            "Gazebo state → ROS `joint_states`",
            _dist(run.state_latency),
            f"{run.states_received} of {run.states_published} states published on ROS",
        ],
    ]


def _cpu(run: NodeRun) -> str:
    if run.driver_cpu is None or run.peer_cpu is None:
        return "—"
    per_cycle = f" ({run.cpu_per_1000 * 1e3:.0f} ms per 1,000 cycles)" if run.cpu_per_1000 else ""
    return f"driver process {run.driver_cpu * 100:.0f} % of one CPU{per_cycle}, the C++ Gazebo stand-in " + (
        f"{run.peer_cpu * 100:.0f} %"
    )


def report(node_run: NodeRun, sampling_run: NodeRun, backend_run: BackendRun, quick: bool, machine: str) -> str:
    first = node_run.state_latency[node_run.state_times < 10.0]
    end = node_run.state_times[-1] if len(node_run.state_times) else 0.0
    last = node_run.state_latency[node_run.state_times >= end - 10.0]
    loop_early = float(node_run.early.get("lag p99 (ms)", "nan")) * 1e-3
    loop_late = float(node_run.late.get("lag p99 (ms)", "nan")) * 1e-3
    skipped = node_run.late.get("skipped cycles", "—")
    rows = [
        *_node_rows(node_run),
        ["", "… first 10 s", _dist(first), ""],
        ["", "… last 10 s", _dist(last), ""],
        *_node_rows(sampling_run),
        [
            f"backend alone, {backend_run.rate:g} Hz, {backend_run.seconds:g} s",
            "`write` → Gazebo",
            _dist(backend_run.write_latency),
            "",
        ],
        ["", "Gazebo state → backend sample", _dist(backend_run.state_latency), ""],
    ]
    table = _common.markdown_table(["run", "path", "p50 / p99 / max", "count"], rows, align="llrr")
    growth = (_p(last, 50) or 0) - (_p(first, 50) or 0)
    no_growth = len(first) > 0 and len(last) > 0 and growth < 0.5e-3 and (_p(last, 99) or 1) < 3 * (_p(first, 99) or 1)
    state_p99 = _p(node_run.state_latency, 99)
    command_p99 = _p(node_run.command_latency, 99)
    backend_ok = all((_p(v, 99) or 1) < 2e-3 for v in (backend_run.write_latency, backend_run.state_latency))
    verdicts = [
        f"- **No growing lag after {node_run.seconds:.0f} s at {node_run.rate:g} Hz with 6 joints: "
        f"{'met' if no_growth else 'missed'}** (state latency p50 {_ms(_p(first, 50))} in the first 10 s, "
        f"{_ms(_p(last, 50))} in the last 10 s; the loop's lag p99 {_ms(loop_early)} at 10 s, {_ms(loop_late)} at "
        f"the end; {skipped} cycles skipped).",
        f"- **p99 under 2 ms, end to end through the driver node (event-driven, the settings in "
        f"`config/worlds/ur3e_world_gazebo.yaml`): "
        f"{'met' if (state_p99 or 1) < 2e-3 and (command_p99 or 1) < 2e-3 else 'missed'}** (command p99 "
        f"{_ms(command_p99)}, state p99 {_ms(state_p99)}). Sampling, for comparison: command p99 "
        f"{_ms(_p(sampling_run.command_latency, 99))}, state p99 {_ms(_p(sampling_run.state_latency, 99))} (a "
        "command waits for the next cycle, up to 2 ms at 500 Hz, and a state for the next cycle and the next "
        "publication).",
        f"- **p99 under 2 ms in the backend and transport: {'met' if backend_ok else 'missed'}** (`write` → "
        f"Gazebo p99 {_ms(_p(backend_run.write_latency, 99))}, Gazebo → backend p99 "
        f"{_ms(_p(backend_run.state_latency, 99))}).",
        f"- **CPU** (from 10 s to the end): event-driven {_cpu(node_run)}; sampling {_cpu(sampling_run)}. The "
        "driver's figure includes its 500 Hz loop, the six gz publishers, the joint-state subscription and "
        "500 Hz `joint_states` (event-driven: also a second write of each command, from the callback); this "
        "benchmark process ran the backend alone at "
        f"{backend_run.cpu * 100 if backend_run.cpu is not None else float('nan'):.0f} % of one CPU.",
    ]
    lines = [
        "## Gazebo backend (`benchmarks/bench_gazebo.py`)",
        "",
        f"Run {_common.timestamp()} ({'quick run: shorter runs' if quick else 'full run'}).",
        "",
        f"Machine (before the run): {machine}; loop thread {node_run.scheduling or '—'}.",
        "",
        "Gazebo is the C++ world peer of the tests (ign-transport 11 = gz-transport 13 on the wire) playing "
        "the seed's UR3e world (six `cmd_pos` topics, `gz.msgs.Model` joint states at 500 Hz); the driver "
        "(`backend: gazebo`, model = `ur3e_world.sdf`) runs as a child process; this process streams sas "
        "targets at 500 Hz and reads `joint_states`. *Event-driven*: `immediate_commands: true` (the default) "
        "and `publish_rate: 0`; *sampling*: `immediate_commands: false` and `publish_rate: 500`. Every latency "
        "is between two processes' `CLOCK_MONOTONIC` stamps; the first joint's target and the last joint's "
        "reported position carry sequence numbers. *Backend alone*: the backend in this process, a 500 Hz "
        "loop calling `read` and `write` as the driver's does, against the same peer.",
        "",
        table,
        "",
        *verdicts,
        "",
        f"Load average at the end: {_common.load_average()}.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="15 s and 5 s runs instead of 60 s and 20 s")
    parser.add_argument("--no-doc", action="store_true", help="print the report, do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    binary = build_sim_peer()
    machine = _common.machine_summary(("numpy", "pyzmq", "protobuf"))  # before the run: the start's load
    seconds, short = (15.0, 5.0) if args.quick else (60.0, 20.0)
    print(f"running: the driver node, event-driven, 500 Hz, {seconds:g} s...", flush=True)
    node_run = measure_node(NodeRun(500.0, seconds), binary)
    print(f"running: the driver node, sampling, 500 Hz, {short:g} s...", flush=True)
    sampling_run = measure_node(NodeRun(500.0, short, event_driven=False), binary)
    print(f"running: the backend alone, 500 Hz, {short:g} s...", flush=True)
    backend_run = measure_backend(BackendRun(500.0, short), binary)
    text = report(node_run, sampling_run, backend_run, args.quick, machine)
    print(text)
    if not args.no_doc:
        page = _common.rewrite_doc_section(SECTION, text)
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    assert len(UR3E_JOINTS) == 6
    sys.exit(main())
