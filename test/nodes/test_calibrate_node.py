"""``bb-robot calibrate --script`` over the emulator's pty, then the bus bridge node on the calibration it wrote.

Real processes, the installed package's: ``bb-robot bus-emulator`` (``helpers.bus_processes.Emulator``:
answering at once, its control socket open), ``bb-robot calibrate --config so101.yaml --script ...``
whose moves go to that socket, then the ``bus`` node with the written file as its calibration. The
node's start-up compares every servo's EEPROM with the file; it must start and serve. With the
shipped calibration, which the servos no longer hold, it must refuse, naming the servo and both
values. The ranges written are the scripted travel's to the tick (test/cli/test_cli_calibrate.py
says why no tolerance is needed).
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from helpers.bringup_helpers import environment
from helpers.bus_processes import CONFIG, Emulator
from helpers.calibrate_helpers import calibrate_command, scripted_ends, so101_script
from helpers.nodes import NodeProcess, StartNode, node_overrides

from bb_robot.buses.calibration import RESOLUTION, load_calibration, present_from_actual, shipped_calibration


def test_the_bridge_starts_on_what_calibrate_wrote_and_refuses_the_old_file(
    start_node: StartNode, tmp_path: Path
) -> None:
    emulator = Emulator(tmp_path)
    try:
        script, output = tmp_path / "calibrate.txt", tmp_path / "so101_mine.json"
        script.write_text(so101_script())
        result = subprocess.run(
            calibrate_command("--config", "so101.yaml", "--port", emulator.link, "--script", script, "--control",
                              emulator.socket, "--output", output),
            capture_output=True, text=True, env=environment(), timeout=300, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        written = load_calibration(output)
        shipped = load_calibration(shipped_calibration("so101"))
        assert written["shoulder_pan"].homing_offset != shipped["shoulder_pan"].homing_offset
        for joint, ends in scripted_ends(shipped).items():  # the scripted travel, to the tick
            calibration = written[joint]
            assert [present_from_actual(end % RESOLUTION, calibration.homing_offset, "feetech") for end in ends] == [
                calibration.range_min, calibration.range_max], joint  # fmt: skip

        def bus_node(calibration: str, name: str) -> NodeProcess:
            values = {"port": str(emulator.link), "calibration": calibration}
            override = node_overrides(tmp_path / f"{name}.yaml", "bus", values)
            return start_node({}, f"/t{uuid.uuid4().hex[:10]}", ("--params-file", str(CONFIG), "--params-file",
                              str(override)), module="bb_robot.nodes.bus", node="bus")  # fmt: skip

        old = bus_node("so101_calibration.json", "old")
        assert old.wait_for_exit() == 1
        expected = (f"servo 1 (shoulder_pan): EEPROM differs from calibration file so101_calibration.json: "
                    f"homing_offset {written['shoulder_pan'].homing_offset} (file: "
                    f"{shipped['shoulder_pan'].homing_offset})")  # fmt: skip
        assert expected in old.log(), old.log()
        mine = bus_node(str(output), "mine")
        mine.wait_for_log("torque on at each first command")
        assert "EEPROM differs" not in mine.log()
        assert not any(s["torque"] for s in emulator.servos().values())
    finally:
        emulator.stop()
