#!/usr/bin/env python3
"""The description node's /tf path and start-up, between separate processes, against a ceiling.

Run ``python benchmarks/bench_description.py [--quick] [--no-docs]`` in the environment of
``scripts/env.sh``.  On a 7-DOF arm (example-robot-data's xArm7, else the corpus Panda):

(a) joint_states → /tf: this process publishes ``sensor_msgs/JointState`` messages, each stamped
    with its send time, at 100 Hz, 1 kHz and flat out (as fast as one Python thread can publish),
    to three child processes in turn, and times each answer on ``/tf`` (remapped per party) by the
    stamp it carries:

    - *description node*: ``python -m bb_robot.nodes.description`` with the arm;
    - *ceiling*: ``benchmarks/tf_ceiling_node.py``, which answers each JointState with a
      precomputed TFMessage object of the same size (same frames) and does nothing else: the
      cost of rclpy and the middleware, the issue's ceiling;
    - *ceiling (bytes)*: the same publishing precomputed serialised bytes, for reference.

    Per party and rate: messages sent and answered, loss, answers per second, latency p50/p99
    (send → receipt of the answer, both in this process's clock) and the party's CPU time
    (``/proc/<pid>/stat``) per 1,000 answers.  Repetitions interleave the parties; the table
    gives the median over repetitions.  This process uses raw (serialised) subscriptions and
    publications so that it is not the bottleneck: deserialising one TFMessage in Python costs
    more than producing it.
(b) start-up: the time from the node's process start to its first ``robot_description``
    publication, which the node measures itself and logs (``/proc/self/stat``; discovery is not
    included).

Prints a Markdown report and rewrites the ``bench_description`` section of
``docs/benchmarks.md`` (``--no-docs`` leaves it alone).  Numbers are measurements, never
assertions.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402  (puts the repository root on sys.path)
import _node_profile  # noqa: E402

SECTION = "bench_description"
HERE = Path(__file__).resolve().parent
CEILING = HERE / "tf_ceiling_node.py"
FALLBACK_ARM = "moveit_resources/panda_description/urdf/panda.urdf"
STARTUP_RUNS = 5
# (label, rate in Hz or None for flat out, seconds per run)
RATES_FULL: list[tuple[str, float | None, float]] = [
    ("100 Hz", 100.0, 10.0),
    ("1 kHz", 1000.0, 5.0),
    ("flat out", None, 3.0),
]
RATES_QUICK: list[tuple[str, float | None, float]] = [
    ("100 Hz", 100.0, 2.0),
    ("1 kHz", 1000.0, 2.0),
    ("flat out", None, 1.5),
]
NODE, CEILING_MSG, CEILING_BYTES = "description node", "ceiling", "ceiling (bytes)"
PARTIES = (CEILING_MSG, CEILING_BYTES, NODE)
THROUGHPUT_TARGET = 0.8
P99_TARGET = 1.2
STARTUP_TARGET = 1.0


# ------------------------------------------------------------------------------ the arm
def choose_arm() -> Path:
    for path in _common.example_robot_data_urdfs():
        if path.name == "xarm7.urdf":
            return path
    return _common.CORPUS_DIR / FALLBACK_ARM


def arm_frames(path: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The arm's independent joints, and the (parent, child) frames of its /tf answer."""
    from bb_robot.description.tf_plan import TfPlan
    from bb_robot.urdf.builder import load_urdf

    plan = TfPlan(load_urdf(path))
    return list(plan.coordinates), list(zip(plan.movable_parents, plan.movable_children, strict=True))


# ------------------------------------------------------------------------------ processes
def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_common.REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    return env


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Party:
    name: str
    namespace: str
    tf_topic: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            if self.process.poll() is not None:
                return
            self.process.send_signal(sig)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                continue


def start_party(
    name: str, arm: Path, frames: list[tuple[str, str]], workdir: Path, profile: Path | None = None
) -> Party:
    """Start a party; the description node under ``cProfile`` writing to ``profile`` when it is given."""
    slug = {NODE: "node", CEILING_MSG: "ceiling", CEILING_BYTES: "ceiling_bytes"}[name]
    slug += "_profiled" if profile is not None else ""
    namespace, tf_topic = f"/bench_{slug}", f"/bench_{slug}/tf"
    ros_args = ["--ros-args", "-r", f"__ns:={namespace}", "-r", f"/tf:={tf_topic}"]
    if name == NODE:
        params = workdir / "node_params.yaml"
        params.write_text(
            json.dumps({"/**": {"ros__parameters": {"model": str(arm), "model_dirs": [str(arm.parent)]}}})
        )
        profiler = [] if profile is None else ["-m", "cProfile", "-o", str(profile)]
        command = [sys.executable, *profiler, "-m", "bb_robot.nodes.description", *ros_args]
        command += ["--params-file", str(params)]
    else:
        pairs = [f"{p}:{c}" for p, c in frames]
        command = [sys.executable, str(CEILING), "--frames", *pairs, *(["--bytes"] if name == CEILING_BYTES else [])]
        command += ros_args
    log = workdir / f"{slug}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=_environment())
    return Party(name, namespace, tf_topic, process, log)


# ------------------------------------------------------------------------------ the driver
@dataclass
class RunResult:
    sent: int
    answered: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    cpu: float = 0.0

    @property
    def loss(self) -> int:
        return self.sent - self.answered

    @property
    def rate(self) -> float:
        return self.answered / self.seconds if self.seconds > 0 else 0.0

    def percentile(self, q: float) -> float | None:
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


class Driver:
    """Publishes JointState bytes to each party and collects its /tf answers, in this process."""

    def __init__(self, joints: list[str]) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from rclpy.serialization import serialize_message
        from sensor_msgs.msg import JointState

        self.rclpy = rclpy
        rclpy.init()
        self.node = rclpy.create_node("bench_description_driver")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.qos = QoSProfile(
            depth=100,
            history=HistoryPolicy.KEEP_LAST,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        msg = JointState(name=joints, position=[0.1 * (i + 1) for i in range(len(joints))])
        msg.header.stamp.sec, msg.header.stamp.nanosec = 0x5EC01234, 0x3B005678
        self.template = bytearray(serialize_message(msg))
        self.stamp_offset = self.template.find(struct.pack("<iI", 0x5EC01234, 0x3B005678))
        assert self.stamp_offset >= 0, "JointState stamp not found in its serialisation"
        self.publishers: dict[str, Any] = {}
        self.answers: dict[str, list[tuple[int, int]]] = {}
        self.tf_offset: int | None = None

    def attach(self, party: Party) -> None:
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        self.publishers[party.name] = self.node.create_publisher(
            JointState, f"{party.namespace}/joint_states", self.qos
        )
        answers: list[tuple[int, int]] = []
        self.answers[party.name] = answers

        def receive(data: bytes) -> None:
            now = time.time_ns()
            if self.tf_offset is None:
                self.tf_offset = self._locate_tf_stamp(data)
            sec, nanosec = struct.unpack_from("<iI", data, self.tf_offset)
            answers.append((sec * 1_000_000_000 + nanosec, now))

        self.node.create_subscription(TFMessage, party.tf_topic, receive, self.qos, raw=True)

    @staticmethod
    def _locate_tf_stamp(data: bytes) -> int:
        """Offset of the first transform's stamp, checked against rclpy's deserialisation."""
        from rclpy.serialization import deserialize_message
        from tf2_msgs.msg import TFMessage

        stamp = deserialize_message(data, TFMessage).transforms[0].header.stamp
        offset = data.find(struct.pack("<iI", stamp.sec, stamp.nanosec))
        assert offset >= 0
        return offset

    def _message(self, stamp_ns: int) -> bytes:
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        struct.pack_into("<iI", self.template, self.stamp_offset, sec, nanosec)
        return bytes(self.template)

    def spin_until(self, condition: Any, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return bool(condition())

    def warm_up(self, party: Party, timeout: float = 60.0) -> None:
        """Wait for matching, then until answers flow (the first answers build the node's caches)."""
        publisher, answers = self.publishers[party.name], self.answers[party.name]
        if not self.spin_until(lambda: publisher.get_subscription_count() > 0, timeout):
            raise RuntimeError(f"{party.name} never subscribed; its log:\n{party.log.read_text()}")
        deadline = time.monotonic() + timeout
        while len(answers) < 20 and time.monotonic() < deadline:
            publisher.publish(self._message(time.time_ns()))
            self.spin_until(lambda: False, 0.05)
        if len(answers) < 20:
            raise RuntimeError(f"{party.name} does not answer; its log:\n{party.log.read_text()}")

    def run(self, party: Party, rate: float | None, seconds: float) -> RunResult:
        publisher, answers = self.publishers[party.name], self.answers[party.name]
        answers.clear()
        sent: list[int] = []
        done = threading.Event()

        failures = [0]

        def send() -> None:
            try:
                start = time.monotonic()
                i = 0
                while True:
                    now = time.monotonic()
                    if now - start >= seconds:
                        break
                    if rate is not None:
                        due = start + i / rate
                        if due > now:
                            time.sleep(due - now)
                    stamp = time.time_ns()
                    i += 1
                    try:
                        publisher.publish(self._message(stamp))
                    except Exception:  # noqa: BLE001 - flooding can make a publish fail: not sent
                        failures[0] += 1
                        continue
                    sent.append(stamp)
            finally:
                done.set()

        gc.collect()
        cpu_before = cpu_seconds(party.process.pid)
        thread = threading.Thread(target=send)
        began = time.monotonic()
        thread.start()
        self.spin_until(done.is_set, seconds + 30)
        elapsed = time.monotonic() - began
        # let the answers in flight arrive: until none came for 0.5 s (at most 5 s)
        last, quiet_since = len(answers), time.monotonic()
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and time.monotonic() - quiet_since < 0.5:
            self.executor.spin_once(timeout_sec=0.01)
            if len(answers) != last:
                last, quiet_since = len(answers), time.monotonic()
        thread.join()
        cpu = cpu_seconds(party.process.pid) - cpu_before
        sent_set = set(sent)
        matched = [(stamp, received) for stamp, received in answers if stamp in sent_set]
        unique = {stamp: received for stamp, received in matched}
        latencies = [(received - stamp) / 1e9 for stamp, received in unique.items()]
        if failures[0]:
            print(f"  ({failures[0]} publications failed in this run and are not counted as sent)", flush=True)
        return RunResult(len(sent), len(unique), elapsed, latencies, cpu)

    def close(self) -> None:
        self.node.destroy_node()
        self.executor.shutdown()
        self.rclpy.try_shutdown()


# ------------------------------------------------------------------------------ start-up
def startup_times(arm: Path, workdir: Path, runs: int) -> list[float]:
    """Seconds from process start to the first robot_description publication, as the node logs it."""
    times = []
    pattern = re.compile(r"published robot_description .* ([0-9.]+) s after process start")
    for i in range(runs):
        party = start_party(NODE, arm, [], workdir / f"startup{i}")
        try:
            deadline = time.monotonic() + 60
            match = None
            while match is None and time.monotonic() < deadline and party.process.poll() is None:
                time.sleep(0.02)
                match = pattern.search(party.log.read_text())
            if match is None:
                raise RuntimeError(f"no start-up line in the node's log:\n{party.log.read_text()}")
            times.append(float(match.group(1)))
        finally:
            party.stop()
    return times


# ------------------------------------------------------------------------------ report
def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e3:.2f} ms"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def report(
    arm: Path,
    transforms: int,
    results: dict[str, dict[str, list[RunResult]]],
    startup: list[float],
    rates: list[tuple[str, float | None, float]],
    repeat: int,
    quick: bool,
    machine: str,
    profile: list[tuple[str, float]],
    profile_seconds: float,
) -> str:
    lines = [
        "## Description node: joint_states → /tf and start-up (`benchmarks/bench_description.py`)",
        "",
        f"Run {_common.timestamp()} ({'quick' if quick else 'full'} run: {repeat} repetitions per party and rate, "
        "parties interleaved, each repetition starting with another party; medians over repetitions, p99 also "
        "as min–max over repetitions).",
        "",
        f"Machine: {machine}; load average {_common.load_average()} at the end.",
        "",
        f"Robot: `{_common.robot_label(arm)}`, {transforms} transforms per /tf answer.  Three processes: this driver "
        "(publishes JointState bytes from one thread, receives the answers as bytes), and the party under test.  "
        "*ceiling* answers every JointState with a precomputed TFMessage object (stamps copied in), "
        "*ceiling (bytes)* with precomputed serialised bytes; both do nothing else.  Latency is from the "
        "send to the receipt of the answer; *CPU / 1k* is the party's own CPU time per 1,000 answers (all its "
        "threads: at 100 Hz, the middleware's background work between messages weighs most).  Flat out, this "
        "process publishes far faster than any party answers: the loss there is the overflow of the depth-100 "
        "queues, and *answers* is the throughput.",
        "",
    ]
    targets: list[str] = []
    for label, rate, seconds in rates:
        rows = []
        summary: dict[str, dict[str, float | None]] = {}
        for party in PARTIES:
            runs = results[party][label]
            sent = _median([r.sent for r in runs])
            answered = _median([r.answered for r in runs])
            loss = _median([r.loss for r in runs])
            throughput = _median([r.rate for r in runs])
            p50 = _median([p for r in runs if (p := r.percentile(50)) is not None])
            p99s = [p for r in runs if (p := r.percentile(99)) is not None]
            p99 = _median(p99s)
            cpu = _median([r.cpu / r.answered * 1000 for r in runs if r.answered])
            summary[party] = {
                "loss": loss,
                "rate": throughput,
                "p99": p99,
                "p99_min": min(p99s, default=None),
                "p99_max": max(p99s, default=None),
                "max_loss": max(r.loss for r in runs),
            }
            rows.append(
                [
                    party,
                    f"{sent:.0f}" if sent is not None else "—",
                    f"{answered:.0f}" if answered is not None else "—",
                    f"{loss:.0f} ({(loss or 0) / max(sent or 1, 1):.1%})",
                    f"{throughput:,.0f}/s" if throughput is not None else "—",
                    _ms(p50),
                    _ms(p99),
                    f"{_ms(summary[party]['p99_min'])} – {_ms(summary[party]['p99_max'])}",
                    _ms(cpu),
                ]
            )
        node = summary[NODE]
        # The rule: compare with the ceiling whose median p99 is lower.
        best = min((CEILING_MSG, CEILING_BYTES), key=lambda name: summary[name]["p99"] or float("inf"))
        ceiling = summary[best]
        if rate is None:
            ratio = (node["rate"] or 0.0) / (ceiling["rate"] or 1.0)
            met = ratio >= THROUGHPUT_TARGET
            bytes_ratio = (node["rate"] or 0.0) / (summary[CEILING_BYTES]["rate"] or 1.0)
            targets.append(
                f"- **{'met' if met else 'MISSED'}**: flat-out throughput {node['rate']:,.0f}/s = {ratio:.0%} of the "
                f"ceiling's {ceiling['rate']:,.0f}/s (target ≥ {THROUGHPUT_TARGET:.0%}; {bytes_ratio:.0%} of the "
                f"bytes ceiling's {summary[CEILING_BYTES]['rate']:,.0f}/s)"
            )
        else:
            no_loss = node["max_loss"] == 0
            ours, theirs = node["p99"], ceiling["p99"]
            low, high = ceiling["p99_min"], ceiling["p99_max"]
            noise = None not in (ours, low, high) and low <= ours <= high  # type: ignore[operator]
            p99_ok = ours is not None and theirs is not None and (noise or ours <= P99_TARGET * theirs)
            judged = (
                "within noise (inside the ceiling's min–max over repetitions)"
                if noise
                else f"{(ours or 0.0) / (theirs or 1.0):.2f}× (outside the ceiling's spread)"
            )
            targets.append(
                f"- **{'met' if no_loss and p99_ok else 'MISSED'}**: {label}: loss {node['max_loss']} (worst "
                f"repetition; target 0), p99 {_ms(ours)} (min–max {_ms(node['p99_min'])} – {_ms(node['p99_max'])}) "
                f"vs *{best}*, the ceiling with the lower median p99, {_ms(theirs)} ({_ms(low)} – {_ms(high)}): "
                f"{judged} (target ≤ {P99_TARGET}× or within noise)"
            )
        pace = "as fast as possible" if rate is None else f"{rate:.0f} messages/s"
        lines += [
            f"### {label} ({pace}, {seconds:g} s per run)",
            "",
            _common.markdown_table(
                [
                    "party",
                    "sent",
                    "answered",
                    "lost",
                    "answers",
                    "latency p50",
                    "latency p99",
                    "p99 min – max",
                    "CPU / 1k",
                ],
                rows,
            ),
            "",
        ]
    start_median = statistics.median(startup)
    targets.append(
        f"- **{'met' if max(startup) < STARTUP_TARGET else 'MISSED'}**: process start → first robot_description "
        f"publication: median {start_median:.3f} s, worst {max(startup):.3f} s of {len(startup)} starts "
        f"(target < {STARTUP_TARGET:g} s; measured by the node, discovery excluded)"
    )
    lines[8:8] = ["### Targets", "", *targets, ""]
    if profile:
        total = profile[-1][1]
        lines += [
            "### Per message: where the node's time goes",
            "",
            f"One more description node, run under `python -m cProfile`, answered joint states at 1 kHz for "
            f"{profile_seconds:g} s; its profile divided by the answers (`benchmarks/_node_profile.py` says how "
            "each part is taken from the call tree).  The profiler slows Python more than C calls: read the "
            "shares.",
            "",
            _common.markdown_table(
                ["part", "per message (profiled)", "share"],
                [
                    [label, _common.format_seconds(t), f"{100 * t / total:.0f} %" if total else "—"]
                    for label, t in profile
                ],
            ),
            "",
        ]
    lines += [
        "### Start-up",
        "",
        f"Each start: {', '.join(f'{t:.3f} s' for t in startup)}.  The node logs the time from its process's start "
        "(`/proc/self/stat`, which includes the interpreter's start-up, the ROS wheels' re-exec and every import) to "
        "its first robot_description publication.",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer repetitions")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions per party and rate (default 5)")
    parser.add_argument("--no-profile", action="store_true", help="skip the per-message profile")
    options = parser.parse_args()
    rates = RATES_QUICK if options.quick else RATES_FULL
    repeat = options.repeat or (2 if options.quick else 5)
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(0, 101)))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    machine = _common.machine_summary(("numpy",))
    arm = choose_arm()
    joints, frames = arm_frames(arm)
    workdir = Path(tempfile.mkdtemp(prefix="bench_description_"))
    os.environ.setdefault("ROS_LOG_DIR", str(workdir / "ros_log"))
    for i in range(STARTUP_RUNS):
        (workdir / f"startup{i}").mkdir()
    print(
        f"robot {_common.robot_label(arm)}: {len(joints)} joints, {len(frames)} transforms; ROS_DOMAIN_ID "
        f"{os.environ['ROS_DOMAIN_ID']}",
        flush=True,
    )
    startup = startup_times(arm, workdir, STARTUP_RUNS)
    print(f"start-up: {startup}", flush=True)

    parties = {name: start_party(name, arm, frames, workdir) for name in PARTIES}
    driver = Driver(joints)
    results: dict[str, dict[str, list[RunResult]]] = {name: {label: [] for label, _, _ in rates} for name in PARTIES}
    try:
        for party in parties.values():
            driver.attach(party)
        for party in parties.values():
            driver.warm_up(party)
        _common.freeze_heap()
        for repetition in range(repeat):
            # each repetition starts with another party, so that none always runs first or last
            order = PARTIES[repetition % len(PARTIES) :] + PARTIES[: repetition % len(PARTIES)]
            for label, rate, seconds in rates:
                for name in order:
                    result = driver.run(parties[name], rate, seconds)
                    results[name][label].append(result)
                    print(
                        f"[{repetition + 1}/{repeat}] {label:8} {name:16} sent {result.sent:6} answered "
                        f"{result.answered:6} ({result.rate:7.0f}/s) p50 {_ms(result.percentile(50))} p99 "
                        f"{_ms(result.percentile(99))} cpu {result.cpu:.2f} s",
                        flush=True,
                    )
        profile: list[tuple[str, float]] = []
        profile_seconds = 2.0 if options.quick else 5.0
        if not options.no_profile:
            for party in parties.values():  # the profiled node runs alone
                party.stop()
            stats = workdir / "node.prof"
            profiled = start_party(NODE, arm, frames, workdir, profile=stats)
            parties["profiled"] = profiled
            driver.attach(profiled)
            driver.warm_up(profiled)
            driver.run(profiled, 1000.0, profile_seconds)
            profiled.stop()
            profile, handled = _node_profile.per_message(stats)
            print(f"profiled node: {handled} messages handled", flush=True)
    finally:
        driver.close()
        for party in parties.values():
            party.stop()
    text = report(arm, len(frames), results, startup, rates, repeat, options.quick, machine, profile, profile_seconds)
    print()
    print(text)
    if not options.no_docs:
        print(f"\nwrote {_common.rewrite_doc_section(SECTION, text)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
