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
