"""The network between the controller PC and the arm's PC cut and restored, on one machine.

Two network namespaces joined by a veth pair (:mod:`helpers.netns`) play the two hosts: the
driver (actuators backend) on host a, the example servo bridge on host b; an observer program
(``graph_observer.py``) on each host watches the other side's node in the ROS graph, and the one
on host a starts a slow motion and records the joint states.  Every ROS process runs with
``FASTDDS_BUILTIN_TRANSPORTS=UDPv4`` (the namespaces share /dev/shm: shared memory would carry
data past the cut), ``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`` and a Fast DDS profile with a 2 s
participant lease.  Mid-motion the link goes down until each side has lost the other's
participant (longer than the lease), then comes up.

Asserted, in order, without restarting anything: each side saw the other, lost it, and found it
again; the driver's joints went stale and it held (``stale_action: hold``), the bridge stopped the
motion on command silence, the joints reported again; no joint moved faster than its velocity
limit between two joint states, and the arm did not jump after the link came back.  Once with
multicast discovery and once with the Fast DDS discovery server (``fast-discovery-server`` from
the venv) on host a.  Root only (CI runs as root); elsewhere skipped, under ``CI=true`` failed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.faults import StateLog
from helpers.netns import TwoHosts, can_make_namespaces

from bb_robot.driver.commands.limits import from_robot
from bb_robot.driver.model import driven_joints
from bb_robot.urdf.builder import load_urdf

REPO_ROOT = Path(__file__).resolve().parents[2]
BB_ARM = REPO_ROOT / "models" / "bb_arm.urdf"
OBSERVER = Path(__file__).resolve().parent / "graph_observer.py"
#: Bounds of each wait (seconds): discovery over the pair, a lease, start-up on a busy machine.
WAIT = 60.0
LEASE_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <participant profile_name="bb_robot_two_hosts" is_default_profile="true">
    <rtps><builtin><discovery_config>
      <leaseDuration><sec>2</sec></leaseDuration>
      <leaseAnnouncement><sec>0</sec><nanosec>400000000</nanosec></leaseAnnouncement>
      <initialAnnouncements><count>20</count><period><nanosec>100000000</nanosec></period></initialAnnouncements>
    </discovery_config></builtin></rtps>
  </participant>
</profiles>
"""


@pytest.fixture
def hosts() -> Iterator[TwoHosts]:
    why = can_make_namespaces()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the network-cut test runs as root in CI: {why}")
        pytest.skip(why)
    pair = TwoHosts(subnet=uuid.uuid4().int % 200 + 20)
    try:
        yield pair
    finally:
        pair.delete()


def _library_path() -> str:
    """Where the venv's Fast DDS libraries are, for its ``fast-discovery-server`` binary."""
    venv = Path(sys.prefix)
    wheel_libs = sorted(str(p) for p in (venv / "lib").glob("python3*/site-packages/ros_fastdds.libs"))
    return os.pathsep.join([str(venv / "lib"), *wheel_libs, os.environ.get("LD_LIBRARY_PATH", "")])


class Process:
    """A process on one host, its output in a file."""

    def __init__(self, hosts: TwoHosts, namespace: str, command: list[str], env: dict[str, str], log: Path) -> None:
        self.log_path = log
        self.process = hosts.popen(namespace, command, env, log)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def lines(self) -> list[str]:
        return [line.strip() for line in self.text().splitlines()]

    def wait_for(self, predicate: object, what: str, others: tuple[Process, ...] = ()) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if predicate() if callable(predicate) else str(predicate) in self.text():
                return
            assert self.process.poll() is None, f"ended while waiting for {what}:\n{self.text()}"
            time.sleep(0.05)
        tail = "".join(f"\n--- {p.log_path.name}:\n{p.text()[-2500:]}" for p in (self, *others))
        raise AssertionError(f"not within {WAIT} s: {what}{tail}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                self.process.wait(10)


def _events(process: Process, watched: str) -> list[str]:
    return [line for line in process.lines() if line in (f"seen {watched}", f"lost {watched}")]


@pytest.mark.parametrize("discovery", ["multicast", "server"])
def test_link_down_longer_than_the_lease_then_up(discovery: str, hosts: TwoHosts, tmp_path: Path) -> None:
    ns = f"/t{uuid.uuid4().hex[:10]}"
    profile = tmp_path / "lease.xml"
    profile.write_text(LEASE_PROFILE)
    env = dict(os.environ)
    env.update(
        FASTDDS_BUILTIN_TRANSPORTS="UDPv4",
        ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET",
        FASTDDS_DEFAULT_PROFILES_FILE=str(profile),
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
        RCUTILS_LOGGING_BUFFERED_STREAM="0",
        PYTHONUNBUFFERED="1",
    )
    env.pop("ROS_STATIC_PEERS", None)
    processes: list[Process] = []

    def start(namespace: str, name: str, command: list[str], environment: dict[str, str] = env) -> Process:
        process = Process(hosts, namespace, command, environment, tmp_path / f"{name}.log")
        processes.append(process)
        return process

    try:
        if discovery == "server":
            server_env = {**env, "LD_LIBRARY_PATH": _library_path()}
            server = start(
                hosts.a,
                "discovery_server",
                [
                    str(Path(sys.prefix) / "bin" / "fast-discovery-server"),
                    "42",
                    "-i",
                    "0",
                    "-l",
                    hosts.addr_a,
                    "-p",
                    "11811",
                ],
                server_env,
            )
            server.wait_for("Server started", "the discovery server")
            env["ROS_DISCOVERY_SERVER"] = f"{hosts.addr_a}:11811"
        bridge_params = tmp_path / "bridge.yaml"
        bridge_params.write_text(json.dumps({"/**": {"ros__parameters": {"rate": 100.0, "command_timeout": 1.0}}}))
        bridge = start(
            hosts.b,
            "bridge",
            [
                sys.executable,
                "-m",
                "bb_robot.examples.servo_bridge",
                "--ros-args",
                "-r",
                f"__ns:={ns}",
                "--params-file",
                str(bridge_params),
            ],
        )
        driver_params = tmp_path / "driver.yaml"
        parameters = {
            "model": str(BB_ARM),
            "backend": "actuators",
            "autostart": True,
            "auto_arm": True,
            "command_timeout": 0.0,
            "connect_timeout": 40.0,
            "stale_timeout": 1.0,  # feedback at 100 Hz; 1 s rides out a loaded CI machine (load 7 on 2 cores measured)
            "stale_action": "hold",
            "actuators": {"actuator_topic_style": "joint", "feedback_timeout": 30.0},
        }
        driver_params.write_text(json.dumps({"/**": {"ros__parameters": parameters}}))
        driver = start(
            hosts.a,
            "driver",
            [
                sys.executable,
                "-m",
                "bb_robot.nodes.driver",
                "--ros-args",
                "-r",
                f"__ns:={ns}",
                "--params-file",
                str(driver_params),
            ],
        )
        record = tmp_path / "joint_states.jsonl"
        # What each side watches: a topic only the other side publishes (the pan servo's feedback,
        # published by the bridge; its command, published by the driver).
        feedback, command = (
            f"{ns}/actuator/shoulder_pan_joint/shoulder_pan_motor/state",
            f"{ns}/actuator/shoulder_pan_joint/shoulder_pan_motor",
        )
        observer_a = start(
            hosts.a,
            "observer_a",
            [
                sys.executable,
                str(OBSERVER),
                "--name",
                "observer_a",
                "--watch",
                feedback,
                "--states",
                f"{ns}/bb_arm/get/joint_states",
                "--record",
                str(record),
                "--trajectory",
                f"{ns}/driver/joint_trajectory",
                "--target",
                "1.5",
                "--seconds",
                "30",
            ],
        )
        observer_b = start(
            hosts.b, "observer_b", [sys.executable, str(OBSERVER), "--name", "observer_b", "--watch", command]
        )
        everyone = (driver, bridge, observer_a, observer_b)

        # Before: each side sees the other; the arm moves.
        driver.wait_for("active: control loop", "the driver active", everyone)
        observer_a.wait_for(f"seen {feedback}", "host a sees the bridge", everyone)
        observer_b.wait_for(f"seen {command}", "host b sees the driver", everyone)
        observer_a.wait_for("moving", "the arm moving", everyone)
        pids = [p.process.pid for p in processes]

        # The driver's log from the cut on: over the two hosts its joints can also go stale at start,
        # before the bridge's first values arrive (the observer then sends its trajectory again).
        cut_at = len(driver.text())
        hosts.cut()
        # During: the driver's joints go stale and it holds; the bridge stops on silence; each side
        # loses the other's participant (its lease ends: the link is down longer than the lease).
        driver.wait_for(
            lambda: "stale: no value from the backend" in driver.text()[cut_at:], "the joints stale", everyone
        )
        bridge.wait_for("no command for 1 s (command_timeout): stopped", "the bridge stopping", everyone)
        observer_a.wait_for(lambda: f"lost {feedback}" in observer_a.lines(), "host a losing the bridge", everyone)
        if discovery == "multicast":
            observer_b.wait_for(lambda: f"lost {command}" in observer_b.lines(), "host b losing the driver", everyone)
        frozen = StateLog({}, [])
        frozen_at = _pan_positions(record)[-1]

        hosts.restore()
        # After: found again, without restarting anything; the joints report again.
        observer_a.wait_for(
            lambda: _events(observer_a, feedback).count(f"seen {feedback}") == 2,
            "host a finding the bridge again",
            everyone,
        )
        if discovery == "multicast":
            observer_b.wait_for(
                lambda: _events(observer_b, command).count(f"seen {command}") == 2,
                "host b finding the driver again",
                everyone,
            )
        driver.wait_for(
            lambda: "every joint reports again" in driver.text()[cut_at:], "the joints reporting again", everyone
        )
        count = len(_pan_positions(record))
        observer_a.wait_for(lambda: len(_pan_positions(record)) > count + 50, "joint states after the cut", everyone)

        assert _events(observer_a, feedback) == [f"seen {feedback}", f"lost {feedback}", f"seen {feedback}"]
        if discovery == "multicast":
            assert _events(observer_b, command) == [f"seen {command}", f"lost {command}", f"seen {command}"]
        else:
            # With a discovery server (on host a) a client learns of the others through the server only,
            # and only the server checks their leases: host b, cut off from it, keeps the driver in its
            # graph (measured on Fast DDS 3.2; docs/safety.md); the data resumes all the same.
            assert _events(observer_b, command) == [f"seen {command}"]
        assert all(p.process.poll() is None for p in processes), "a process ended"
        assert [p.process.pid for p in processes] == pids
        log = driver.text()[cut_at:]
        assert log.index("stale: no value from the backend") < log.index("every joint reports again")
        after = _pan_positions(record)[count:]
        assert max(abs(p - frozen_at) for p in after) < 0.05, "the arm moved on after the link came back"
        robot = load_urdf(BB_ARM)
        joints = driven_joints(robot)
        limits = dict(zip(joints, (float(v) for v in from_robot(robot, joints).velocity), strict=True))
        frozen.velocity_limits = limits
        frozen.jitter = 2 / 100.0  # arrival stamps; the bridge's rate: 100 Hz (helpers/faults.py)
        frozen.states = _messages(record)
        frozen.assert_within_velocity_limits()
    finally:
        for process in reversed(processes):
            process.stop()


class _Stamp:
    def __init__(self, seconds: float) -> None:
        self.sec = int(seconds)
        self.nanosec = int(round((seconds - int(seconds)) * 1e9))


class _Header:
    def __init__(self, seconds: float) -> None:
        self.stamp = _Stamp(seconds)


class _State:
    """A recorded joint state in the shape StateLog reads."""

    def __init__(self, line: dict[str, object]) -> None:
        self.header = _Header(float(line["stamp"]))  # type: ignore[arg-type]
        self.name = list(line["name"])  # type: ignore[call-overload]
        self.position = list(line["position"])  # type: ignore[call-overload]


def _messages(record: Path) -> list[_State]:
    """The joint states recorded so far: whole lines only.

    The observer is still appending while the test reads, so the file's last line can be half
    written (a read between the two halves of the write failed to decode on CI); it is read on the
    next call, once its newline is there.
    """
    if not record.exists():
        return []
    *whole, _unfinished = record.read_text().split("\n")
    return [_State(json.loads(line)) for line in whole if line.strip()]


def _pan_positions(record: Path) -> list[float]:
    return [s.position[s.name.index("shoulder_pan_joint")] for s in _messages(record) if "shoulder_pan_joint" in s.name]
