"""serve(): a callback that raises does not end a process's other nodes (with several arms in one
process, every arm would go); the error is logged naming the node and the callback.

The nodes run as a child process (``helpers.faulty_nodes``) over real DDS, on the executor the
driver and the fleet use and on the single-threaded one the description and view nodes use.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from helpers.nodes import TIMEOUT, NodeProcess, Probe
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import UInt32

TEST_DIR = Path(__file__).resolve().parents[1]
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


@pytest.mark.parametrize("executor", ["default", "single"])
def test_a_raising_callback_does_not_stop_the_other_node(tmp_path: Path, probe: Probe, executor: str) -> None:
    namespace = f"/t{uuid.uuid4().hex[:10]}"
    process = NodeProcess(
        namespace,
        {},
        tmp_path,
        module="helpers.faulty_nodes",
        node="faulty_nodes",
        pythonpath=(str(TEST_DIR),),
        program_args=("--single",) if executor == "single" else (),
    )
    try:
        counts = probe.subscribe(UInt32, f"{namespace}/count", RELIABLE)
        # The faulty timer's error is reported, naming the node and the callback ...
        log = process.wait_for_log("Faulty.on_timer")
        assert f"of {namespace}/faulty raised ValueError: the faulty timer fails" in log, log
        # ... and the other node keeps publishing while it goes on failing.
        assert probe.spin_until(lambda: len(counts) >= 1, TIMEOUT), process.log()
        first = counts[-1].data
        assert probe.spin_until(lambda: counts[-1].data >= first + 20, TIMEOUT), process.log()
        # A subscription callback that raises is reported too, and nothing stops.
        poke = probe.node.create_publisher(UInt32, f"{namespace}/poke", RELIABLE)
        probe.wait_for_subscribers(poke)
        poke.publish(UInt32(data=7))
        log = process.wait_for_log("Faulty.on_poke")
        assert "raised RuntimeError: poked with 7" in log, log
        latest = counts[-1].data
        assert probe.spin_until(lambda: counts[-1].data >= latest + 10, TIMEOUT), process.log()
        assert process.alive(), process.log()
        # The timer fails at 20 Hz: reported at most once every 5 s, with a count of the others.
        assert process.log().count("Faulty.on_timer") < 20
    finally:
        status = process.stop()
    assert status == 0, process.log()


PENDING_TASK = """
import json, sys, time
import rclpy
from rclpy.task import Future
from bb_robot.nodes import executor as served

captured = {}
events = []  # per spin: "waited" or "busy"; "nap" for each nap


def verdict(wall, cpu):
    # serve()'s own verdict on each spin, recorded as it is made (a verdict timed again here could
    # differ from it on a busy host: a thread preempted during the spin counts as having waited).
    if len(events) >= 60:
        raise KeyboardInterrupt
    waited = measured(wall, cpu)
    events.append("waited" if waited else "busy")
    return waited


measured = served.spin_waited
served.spin_waited = verdict


def make():
    captured["executor"] = served.make_executor()
    return captured["executor"]


def nap(seconds):
    events.append("nap")
    time.sleep(seconds)


served.nap = nap
never = Future()


async def goal():  # what the driver's FollowJointTrajectory goal does: await the end of its execution
    await never


def start(add):
    node = rclpy.create_node("pending_task")
    add(node, None)
    captured["executor"].create_task(goal)


rclpy.init()
status = served.serve(start, make=make)
print(json.dumps({"status": status, "events": events, "executor": type(captured["executor"]).__name__}))
"""


def test_a_pending_task_does_not_spin_the_executor_thread() -> None:
    """While a coroutine task is pending (a goal awaiting its end), the driver's executor (rclpy's
    events executor on Kilted) runs it again on every spin without waiting: serve() naps after
    SPIN_BURST such spins, so no longer run of spins goes without waiting (the single-threaded
    executor waits by itself every other spin)."""
    import json
    import subprocess
    import sys

    from bb_robot.nodes.executor import SPIN_BURST

    done = subprocess.run([sys.executable, "-c", PENDING_TASK], capture_output=True, text=True, timeout=TIMEOUT * 4)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == 0
    runs, run = [], 0
    for event in result["events"]:
        run = run + 1 if event == "busy" else 0
        runs.append(run)
    assert max(runs) <= SPIN_BURST, result
    assert result["events"].count("busy") + result["events"].count("waited") >= 40, result
