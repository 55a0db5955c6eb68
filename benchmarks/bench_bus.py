#!/usr/bin/env python3
"""Servo buses: one 6-servo sync-read + sync-write cycle, bb_robot's Bus against the vendors' SDKs.

Run ``python benchmarks/bench_bus.py [--quick] [--no-docs]``.  ``bb-robot bus-emulator`` runs in a
process of its own with its timing model (1 Mbaud, 10 bits a byte, 1 ms latency per transaction
that gets a reply): the SO-101's six STS3215 servos (Feetech) and six XL430-W250 servos
(Dynamixel, return delay 0).  One cycle is what a bridge does each period: a SYNC_READ of the six
present positions, decoded, then a SYNC_WRITE of six goal positions (the positions read).  The
parties, interleaved in blocks of 50 cycles on the same pty: ``ours`` (:class:`bb_robot.buses.transport.Bus`)
and the vendor's SDK (feetech-servo-sdk's ``GroupSyncRead`` / ``GroupSyncWrite``, dynamixel-sdk's).

The *ceiling* is the rate the timing model allows: the latency plus the sync read's request and
replies on the wire, per cycle (the sync write gets no reply, so the emulator holds nothing back
for it).  Reported per protocol and party: median and p99 cycle time, the achieved rate (cycles
over the time they took), its ratio to the ceiling, and the client's CPU per cycle (its thread's
CPU time).  Target (issue 39): ours at ≥ 0.8 of the ceiling for both protocols.

**The bridge** (``bb-robot bus``, :mod:`bb_robot.nodes.bus`) as a process of its own on the same
emulators, this process standing in for the driver (the actuator index, and a position command per
servo at 200 Hz, as ``actuators.command_rate`` sends them): its CPU (user + system, from
``/proc/<pid>/stat``) at its configured 200 Hz, and, with ``rate: 0``, its achieved rate
unthrottled (from its own ``/diagnostics``) as a ratio to the same ceiling, with its p99 cycle time.
Targets: under 15 % of a core at 200 Hz; the ratio as for the Bus (≥ 0.8).

**Leader-follower teleop** (``bb-robot teleop --leader``, :mod:`_teleop_bench`): the leader's reads
per second and the p99 latency from a leader read to the follower's goal write of its value, on
two emulators with the timing model.  Targets: ≥ 200 Hz, p99 ≤ 10 ms.  Prints a
Markdown report and rewrites the ``bench_bus`` section of ``docs/benchmarks.md``.  Numbers are
measurements, never assertions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402
import _teleop_bench  # noqa: E402

from bb_robot.buses.dynamixel import DYNAMIXEL  # noqa: E402
from bb_robot.buses.feetech import FEETECH  # noqa: E402
from bb_robot.buses.packets import Codec, Instruction  # noqa: E402
from bb_robot.buses.tables import Model, model  # noqa: E402
from bb_robot.buses.transport import BITS_PER_BYTE, Bus  # noqa: E402

SECTION = "bench_bus"
IDS = [1, 2, 3, 4, 5, 6]
BAUD = 1_000_000
LATENCY = 0.001
BLOCK = 50
#: protocol -> (codec, model, the emulator's options)
PROTOCOLS: dict[str, tuple[Codec, Model, list[str]]] = {
    "feetech": (FEETECH, model("sts3215"), ["--arm", "so101"]),
    "dynamixel": (DYNAMIXEL, model("xl430-w250"), ["--protocol", "dynamixel", "--ids", *map(str, IDS)]),
}


def start_emulator(options: list[str]) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(_common.REPO_ROOT))
    command = [sys.executable, "-m", "bb_robot.cli", "bus-emulator", *options, "--latency", str(LATENCY * 1e3)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def ceiling(codec: Codec, size: int) -> float:
    """Seconds per cycle the timing model implies: latency + the sync read on the wire."""
    request = len(codec.instruction(codec.broadcast_id, Instruction.SYNC_READ, codec.sync_read_params(0, size, IDS)))
    replies = len(IDS) * codec.status_size(size)
    return LATENCY + (request + replies) * BITS_PER_BYTE / BAUD


#: A party: one cycle, the number of its failed or retried transactions so far, and closing.
Party = tuple[Callable[[], None], Callable[[], int], Callable[[], None]]


def ours(path: str, codec: Codec, table: Model) -> Party:
    bus = Bus.open(path, codec, baud=BAUD, latency=0.05)
    present, goal = table.block(["present_position"]), table.block(["goal_position"])

    def cycle() -> None:
        values = bus.sync_read(IDS, present).values
        bus.sync_write(goal, {i: {"goal_position": values[i]["present_position"]} for i in IDS})

    return cycle, lambda: bus.stats.retries + bus.stats.failures, bus.close


def vendor(path: str, protocol: str, table: Model) -> Party:
    sdk: Any
    if protocol == "feetech":
        import scservo_sdk as sdk

        handler = sdk.PacketHandler(0)
    else:
        import dynamixel_sdk as sdk

        handler = sdk.PacketHandler(2.0)
    port = sdk.PortHandler(path)
    assert port.openPort() and port.setBaudRate(BAUD)
    present, goal = table.register("present_position"), table.register("goal_position")
    reader = sdk.GroupSyncRead(port, handler, present.address, present.size)
    writer = sdk.GroupSyncWrite(port, handler, goal.address, goal.size)
    for i in IDS:
        reader.addParam(i)
        writer.addParam(i, [0] * goal.size)

    failures = [0]

    def cycle() -> None:
        if reader.txRxPacket() != sdk.COMM_SUCCESS:  # the SDKs do not retry: counted, and the cycle ends
            failures[0] += 1
            port.clearPort()
            return
        for i in IDS:
            value = reader.getData(i, present.address, present.size)
            writer.changeParam(i, list(value.to_bytes(goal.size, "little")))
        writer.txPacket()

    return cycle, lambda: failures[0], port.closePort


def measure(parties: dict[str, Callable[[], None]], cycles: int) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {name: [] for name in parties}
    cpu = dict.fromkeys(parties, 0.0)
    wall = dict.fromkeys(parties, 0.0)
    for party in parties.values():  # warm up
        for _ in range(20):
            party()
    while min(len(t) for t in times.values()) < cycles:
        for name, party in parties.items():
            cpu_start, wall_start = time.thread_time(), time.perf_counter()
            for _ in range(BLOCK):
                start = time.perf_counter()
                party()
                times[name].append(time.perf_counter() - start)
            cpu[name] += time.thread_time() - cpu_start
            wall[name] += time.perf_counter() - wall_start
    out = {}
    for name, samples in times.items():
        ordered = sorted(samples)
        out[name] = {
            "median": _common.median(samples),
            "p99": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
            "rate": len(samples) / wall[name],
            "cpu": cpu[name] / len(samples),
        }
    return out


def _bridge_parameters(protocol: str, path: str, rate: float) -> dict[str, Any]:
    joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    table = PROTOCOLS[protocol][1].name
    return {
        "port": path, "baud": BAUD, "protocol": protocol, "rate": rate, "latency": 0.004, "joints": joints,
        "calibration": "so101_calibration.json" if protocol == "feetech" else "",
        **{f"servos.{j}.id": i for j, i in zip(joints, IDS, strict=True)},
        **{f"servos.{j}.model": table for j in joints},
    }  # fmt: skip


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bridge_run(protocol: str, rate: float, seconds: float) -> dict[str, float]:
    """The bridge process on an emulator of ``protocol`` at ``rate`` (0: unthrottled), commanded at 200 Hz
    from here: its CPU share of a core, and its achieved rate and p99 from its /diagnostics."""
    import json
    import tempfile
    import uuid

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    process, path = start_emulator(PROTOCOLS[protocol][2])
    namespace = f"/bench{uuid.uuid4().hex[:8]}"
    directory = tempfile.mkdtemp(prefix="bench_bus_")
    params = Path(directory) / "bus.yaml"
    params.write_text(json.dumps({"/**": {"ros__parameters": _bridge_parameters(protocol, path, rate)}}))
    env = dict(os.environ, PYTHONPATH=str(_common.REPO_ROOT), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    bridge = subprocess.Popen([sys.executable, "-m", "bb_robot.nodes.bus", "--ros-args", "-r", f"__ns:={namespace}",
                               "--params-file", str(params)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=env)  # fmt: skip
    rclpy.init()
    node = rclpy.create_node("bench_bus_driver", namespace=namespace)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    best_effort = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
    joints = _bridge_parameters(protocol, path, rate)["joints"]
    entries = [{"name": f"motor{i}", "joint": j, "command_topic": f"{namespace}/actuator/{j}/motor{i}",
                "state_topic": f"{namespace}/actuator/{j}/motor{i}/state",
                "limits": {"position_min": -1.5, "position_max": 1.5}}
               for j, i in zip(joints, IDS, strict=True)]  # fmt: skip
    index = node.create_publisher(String, f"{namespace}/actuators", latched)
    index.publish(String(data=json.dumps({"robot": "bench", "actuators": entries})))
    latest: dict[str, float] = {}
    for entry in entries:
        node.create_subscription(JointState, entry["state_topic"],
                                 lambda m, j=entry["joint"]: latest.__setitem__(j, m.position[0]),
                                 best_effort)  # fmt: skip
    commands = {e["joint"]: node.create_publisher(JointState, e["command_topic"], best_effort) for e in entries}
    diagnostics: list[Any] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: diagnostics.extend(
        s for s in m.status if s.hardware_id == path and s.name == f"bus: {path}"), 10)  # fmt: skip

    def command() -> None:
        for joint, publisher in commands.items():
            if joint in latest:
                publisher.publish(JointState(name=[joint], position=[latest[joint]]))

    node.create_timer(1 / 200, command)
    try:
        deadline = time.monotonic() + 60
        while len(latest) < len(entries) and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        end = time.monotonic() + 2.0  # settle: torque on, the loop at its pace
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        cpu0, wall0 = _cpu_seconds(bridge.pid), time.monotonic()
        del diagnostics[:]
        while time.monotonic() < wall0 + seconds:
            executor.spin_once(timeout_sec=0.05)
        cpu = (_cpu_seconds(bridge.pid) - cpu0) / (time.monotonic() - wall0)
        values = {kv.key: kv.value for kv in diagnostics[-1].values} if diagnostics else {}
        return {"cpu": cpu, "rate": float(values.get("rate_hz", "nan")),
                "p99": float(values.get("p99_cycle_ms", "nan")) / 1000}  # fmt: skip
    finally:
        node.destroy_node()
        executor.shutdown()
        rclpy.shutdown()
        bridge.send_signal(2)
        bridge.wait(timeout=30)
        process.terminate()
        process.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer cycles (smoke test)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    cycles = 300 if args.quick else 3000
    machine = _common.machine_summary(("numpy", "pyserial", "feetech-servo-sdk", "dynamixel-sdk"))
    load_start = _common.load_average()
    rows = []
    verdicts = []
    for protocol, (codec, table, options) in PROTOCOLS.items():
        process, path = start_emulator(options)
        try:
            parties = {"ours": ours(path, codec, table), "vendor SDK": vendor(path, protocol, table)}
            results = measure({name: party[0] for name, party in parties.items()}, cycles)
            for name, party in parties.items():
                results[name]["failed"] = party[1]()
                party[2]()
        finally:
            process.terminate()
            process.wait(timeout=30)
        limit = ceiling(codec, table.register("present_position").size)
        for name, r in results.items():
            rows.append([
                protocol, name, _common.format_seconds(r["median"]), _common.format_seconds(r["p99"]),
                f"{r['rate']:.0f} Hz", f"{1 / limit:.0f} Hz", f"{r['rate'] * limit:.3f}",
                _common.format_seconds(r["cpu"]), f"{r['failed']:.0f}",
            ])  # fmt: skip
        ratio = results["ours"]["rate"] * limit
        verdicts.append(("met" if ratio >= 0.8 else "missed",
                         f"{protocol}: ours at {ratio:.3f} of the ceiling ({1 / limit:.0f} Hz), target ≥ 0.8; "
                         f"the vendor SDK at {results['vendor SDK']['rate'] * limit:.3f}"))  # fmt: skip
    bridge_rows = []
    for protocol, (codec, table, _options) in PROTOCOLS.items():
        limit = ceiling(codec, table.register("present_position").size)
        paced = bridge_run(protocol, 200.0, 5.0 if args.quick else 20.0)
        free = bridge_run(protocol, 0.0, 5.0 if args.quick else 20.0)
        bridge_rows.append([
            protocol, f"{paced['cpu'] * 100:.1f} %", f"{paced['rate']:.0f} Hz", _common.format_seconds(paced["p99"]),
            f"{free['rate']:.0f} Hz", f"{1 / limit:.0f} Hz", f"{free['rate'] * limit:.3f}",
            _common.format_seconds(free["p99"]), f"{free['cpu'] * 100:.0f} %",
        ])  # fmt: skip
        verdicts.append(
            (
                "met" if paced["cpu"] < 0.15 else "missed",
                f"{protocol}: the bridge at 200 Hz uses {paced['cpu'] * 100:.1f} % of a core, target < 15 %",
            )
        )
        verdicts.append(("met" if free["rate"] * limit >= 0.8 else "missed",
                         f"{protocol}: the bridge unthrottled at {free['rate'] * limit:.3f} of the ceiling, "
                         "target ≥ 0.8"))  # fmt: skip
    teleop = _teleop_bench.teleop_run(10.0 if args.quick else 30.0, _common.REPO_ROOT / "log")
    verdicts.append(("met" if teleop["read_rate"] >= 200 else "missed",
                     f"teleop: the leader read at {teleop['read_rate']:.0f} Hz, target ≥ 200 Hz"))  # fmt: skip
    verdicts.append(("met" if teleop["p99"] <= 0.010 else "missed",
                     f"teleop: p99 {teleop['p99'] * 1e3:.1f} ms from a leader read to the follower's goal write, "
                     "target ≤ 10 ms"))  # fmt: skip
    lines = _common.report_head(
        "Servo buses: a 6-servo sync-read + sync-write cycle against the vendors' SDKs (`benchmarks/bench_bus.py`)",
        f"({'quick' if args.quick else 'full'} run: {cycles} cycles per party and protocol, interleaved in blocks "
        f"of {BLOCK}; `bb-robot bus-emulator` in its own process at {BAUD} baud with {LATENCY * 1e3:g} ms latency "
        "per transaction).",
        machine,
        verdicts,
    )
    lines += [
        "### One cycle: SYNC_READ of six present positions, SYNC_WRITE of six goals",
        "",
        _common.markdown_table(
            [
                "protocol",
                "party",
                "median",
                "p99",
                "achieved rate",
                "ceiling",
                "of ceiling",
                "client CPU / cycle",
                "retried / failed",
            ],
            rows,
            "llrrrrrrr",
        ),
        "",
        "The ceiling is the timing model's: the latency plus the sync read's request and six replies at 10 µs a "
        "byte. What the achieved rate misses of it is the client's and the emulator's time in Python and the "
        "scheduler's wake-ups (the emulator sleeps until each reply is due). The vendor SDKs poll the port in a "
        "busy loop while they wait; bb_robot's Bus blocks in select(), hence the CPU column. On a machine whose "
        "load average is near or above its CPU count, the emulator's and the client's wake-ups wait for a CPU: "
        "the ratio then measures the machine as much as the code. *Retried / failed*: our Bus's retried and "
        "failed transactions (a reply later than its 50 ms allowance); the SDKs' failed sync reads (they do not "
        "retry; the cycle is then cut short and still counted).",
        "",
        "### The bridge (`bb-robot bus`): CPU at 200 Hz, and its rate unthrottled",
        "",
        _common.markdown_table(
            [
                "protocol",
                "CPU at 200 Hz",
                "achieved",
                "p99 cycle",
                "unthrottled",
                "ceiling",
                "of ceiling",
                "p99 cycle",
                "CPU unthrottled",
            ],
            bridge_rows,
            "lrrrrrrrr",
        ),  # fmt: skip
        "",
        "The bridge process with this one as its driver: the actuator index, and a position command per servo "
        "at 200 Hz (what `actuators.command_rate: 200` sends), holding where each servo reports. CPU: the "
        "bridge process's user + system time over the run, per second of wall time (its loop thread, its "
        "executor thread, the middleware's threads). Achieved rate and p99 cycle time: the bridge's own "
        "/diagnostics (cycles over the last 2000). Its cycle: the latest command of each servo taken by the loop "
        "itself, as bytes (not one executor round per message: that was two thirds of its CPU), the Bus's cycle "
        "above, the feedback of each servo written as bytes and published, and every 0.5 s a read of "
        "temperature, voltage and error bits per servo. The CPU grows with the loop's rate (compare the CPU "
        "unthrottled). On a machine loaded beyond its CPU count the loop also misses its 200 Hz (the achieved "
        "column): its cycles wait for a CPU, and each costs more CPU (caches shared with the other work).",
        "",
        "### Leader-follower teleop (`bb-robot teleop --leader`): leader to follower",
        "",
        _common.markdown_table(
            [
                "leader reads",
                "follower goal writes",
                "new follower goals",
                "read → goal write: median",
                "p99",
                "matched",
                "seconds",
            ],
            [
                [
                    f"{teleop['read_rate']:.0f} Hz",
                    f"{teleop['write_rate']:.0f} Hz",
                    f"{teleop['goal_rate']:.0f} Hz",
                    _common.format_seconds(teleop["median"]),
                    _common.format_seconds(teleop["p99"]),
                    f"{teleop['matched']:.0f}",
                    f"{teleop['seconds']:.0f}",
                ]
            ],
            "rrrrrrr",
        ),  # fmt: skip
        "",
        "Two emulators in this process with the timing model (so one clock stamps both): the leader "
        "(`--arm so101_leader`) and the follower; the so101.yaml bringup without move_group, in a namespace of its "
        "own, with the tests' allowances for a loaded machine (stale_timeout 1 s, the bridge's latency 50 ms: "
        "what counts as a failure, not how fast anything is), and `bb-robot teleop --leader --leader-port "
        "<leader> --arm` as processes of their own. "
        "Once teleop tracks, the leader's shoulder_pan is moved by hand along a sine, ±0.3 rad at 0.3 Hz (within "
        "so101.yaml's 1.5 rad/s and 3 rad/s², which the driver would otherwise impose). *Leader "
        "reads*: teleop's sync reads per second. *Read → goal write*: for each new shoulder_pan goal the "
        "follower's bridge writes, the time since the leader read at which the leader reached it (its present "
        "position through the leader's calibration to an angle, through the follower's to ticks); its path: "
        "teleop's read, the command on the driver's `~/joint_commands`, its check there (limits, the collision "
        "guard) and its write to the actuator topic as it arrives (so101.yaml: `immediate_commands: true`), the "
        "bridge's next write (200 Hz; it takes the newest commands between its read and its write). What held the "
        "follower back before, cause by cause: docs/buses.md (Latency). *Matched*: the goals so timed.",
        "",
        f"Load average {load_start} at start, {_common.load_average()} at the end.",
    ]
    report = "\n".join(lines)
    print(report)
    if not args.no_docs:
        _common.rewrite_doc_section(SECTION, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
