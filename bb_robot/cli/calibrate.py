"""``bb-robot calibrate``: calibrate an arm's servos by hand, and write LeRobot's calibration JSON.

With every servo's torque off: (1) the user puts the arm at mid-range and presses Enter; (2) moves
each joint through its whole range while a live table shows each position and the range so far,
and presses Enter; (3) the homing offsets and position limits are chosen (each joint's travel kept
off the encoder's wrap point, the offsets within ±2047), written to the servos' EEPROM and to
``--output`` as LeRobot's JSON, which the bridge (``bb-robot bus``) and LeRobot both read.
``--script FILE`` plays the hand moves and the Enter presses from a file against the bus
emulator's control socket (``--control``), for tests and demonstrations. The logic is
:mod:`bb_robot.buses.calibration_session` and :mod:`bb_robot.buses.calibration_script`;
docs/buses.md ("Calibration") describes it.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bb_robot.buses.bridge_setup import BridgeSetupError, calibration_path, servo_sections, servo_specs
from bb_robot.buses.calibration import CalibrationError, MotorCalibration, load_calibration, save_calibration
from bb_robot.buses.calibration_script import HandScript, read_calibration_script
from bb_robot.buses.calibration_session import CalibrationSession, Motor
from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator_control import ControlClient
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.tables import Model, model, model_by_number
from bb_robot.buses.transport import Bus, BusError
from bb_robot.cli.common import EXIT_INPUT, EXIT_OK, UsageError

#: Seconds between two readings of the servos (50 a second: a hand cannot outrun it).
PERIOD = 0.02
#: Seconds between two redraws of the live table.
REDRAW = 0.1
#: Seconds allowed per transaction on top of the wire time: calibration is not time-critical, and a
#: loaded host or a slow adapter must not make a servo look missing.
LATENCY = 0.05
STEPS = (
    "Step 1 of 2: put the arm at mid-range (every joint in the middle of its travel), then press Enter.",
    "Step 2 of 2: move each joint through its whole range, one after the other, then press Enter.",
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "calibrate",
        help="calibrate a Feetech or Dynamixel arm by hand and write LeRobot's calibration JSON",
        description="With torque off: put the arm at mid-range and press Enter; move each joint through its "
        "range and press Enter; the homing offsets and limits go to the servos' EEPROM and to --output "
        "(LeRobot's JSON). The arm falls when its torque goes off: support it. See docs/buses.md, Calibration.",
    )
    parser.add_argument("--config", metavar="YAML",
                        help="parameter file with a /**/bus or /**/leader section (port, baud, protocol, joints, "
                        "servos): a path or a name in bb_robot's config/ (so101.yaml, so101_leader.yaml, "
                        "koch_follower.yaml)")  # fmt: skip
    parser.add_argument("--port", metavar="PATH", help="the serial port or the emulator's pty (default: the file's)")
    parser.add_argument("--protocol", choices=["feetech", "dynamixel"], help="without --config (default feetech)")
    parser.add_argument("--ids", type=int, nargs="+", metavar="ID", help="without --config: the servos' IDs")
    parser.add_argument("--names", nargs="+", metavar="NAME", help="with --ids: their motor names (default servo<ID>)")
    parser.add_argument("--baud", type=int, help="the bus's baud (default: the file's, or 1000000)")
    parser.add_argument("--output", "-o", required=True, metavar="FILE", help="the calibration JSON to write")
    parser.add_argument("--full-turn", nargs="+", default=[], metavar="JOINT",
                        help="joints that turn freely: the whole turn, 0..4095, step 1 at its middle")  # fmt: skip
    parser.add_argument("--script", metavar="FILE",
                        help="hand moves and Enter presses from a file ('time joint position', 'time enter' lines; "
                        "docs/buses.md) played through the emulator's --control socket")  # fmt: skip
    parser.add_argument("--control", metavar="PATH", help="the bus emulator's control socket, for --script's moves")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Calibrate; returns the exit status.

    Raises:
        UsageError: options that do not fit together.
        BbRobotError: a parameter file, script, servo or bus that cannot be used (named); nothing is
            written then.
    """
    port, baud, protocol, planned = _bus_setup(args)
    output = Path(args.output)
    if not output.parent.is_dir():
        raise UsageError(f"--output {output}: no directory {output.parent}")
    names = [p[0] for p in planned] + [str(p[1]) for p in planned]
    unknown = sorted(set(args.full_turn) - set(names))
    if unknown:
        raise UsageError(
            f"--full-turn {', '.join(unknown)}: not on this bus (its joints: {', '.join(p[0] for p in planned)})"
        )
    lines = read_calibration_script(args.script, names) if args.script else None
    if lines is not None and any(line.joint for line in lines) and not args.control:
        raise UsageError("--script moves joints: give the emulator's control socket, --control PATH")
    codec = FEETECH if protocol == "feetech" else DYNAMIXEL
    try:
        bus = Bus.open(port, codec, baud=baud, latency=LATENCY, retries=3)
    except BusError as error:
        raise CalibrationError(f"{error}; nothing was written") from None
    try:
        motors = [Motor(name, servo_id, table or _model_of(bus, protocol, servo_id, name), drive_mode,
                        name in args.full_turn or str(servo_id) in args.full_turn)
                  for name, servo_id, table, drive_mode in planned]  # fmt: skip
        session = CalibrationSession(bus, motors, protocol)
        session.start()
        _say(f"{port}: servos {', '.join(m.who for m in motors)} found; torque is OFF: support the arm, it falls")
        with contextlib.ExitStack() as stack:
            if lines is not None:
                client = stack.enter_context(contextlib.closing(ControlClient(args.control))) if args.control else None
                start = time.monotonic()
                ids = {m.name: str(m.id) for m in motors}
                script = HandScript(args.script, lines, client.ask if client else _no_control,
                                    lambda: time.monotonic() - start, lambda joint: ids.get(joint, joint))  # fmt: skip
                _session(session, lambda read_at: script.step(read_at - start))
            else:
                _session(session, stack.enter_context(_keyboard()))
        calibrations = session.choose()
        session.write(calibrations)
        _save(output, calibrations)
    except KeyboardInterrupt:
        print("bb-robot: calibrate interrupted: nothing was written to the file", file=sys.stderr)
        return EXIT_INPUT
    finally:
        bus.close()
    _report(output, motors, calibrations)
    return EXIT_OK


# ------------------------------------------------------------------ the servos
#: A servo to calibrate before the bus is open: motor name, ID, model (``None``: ask the servo), drive mode.
Planned = tuple[str, int, Model | None, int]


def _bus_setup(args: argparse.Namespace) -> tuple[str, int, str, list[Planned]]:
    """The port, baud, protocol and servos from ``--config``, or ``--port`` and ``--ids`` (their models asked later)."""
    if args.config and args.ids:
        raise UsageError("give either --config or --ids, not both")
    if args.config:
        from bb_robot.bringup.config import read_config

        config = read_config(args.config)
        # A follower's bus section, or a leader arm's section (so101_leader.yaml): the same servos' keys.
        kind, values = ("bus", config.bus) if config.bus else ("leader", config.leader)
        if not values:
            raise UsageError(
                f"{config.path} has no /**/bus or /**/leader section (port, baud, protocol, servos): see docs/buses.md"
            )
        protocol = args.protocol or str(values.get("protocol", "feetech"))
        sections = servo_sections(values)
        for section in sections.values():
            section.pop("calibration", None)  # the file is what is being made: it may not exist yet
        joints = [str(j) for j in values.get("joints") or ()]
        try:
            specs = servo_specs(protocol, joints, sections)
        except BridgeSetupError as error:
            raise UsageError(f"{config.path}: the {kind} section: {error}") from None
        modes = _drive_modes(str(values.get("calibration") or ""), protocol)
        planned: list[Planned] = []
        for spec in specs:
            name = str(sections.get(spec.joint, {}).get("motor") or spec.joint)
            planned.append((name, spec.id, spec.model, modes.get(name, 0)))
        port = args.port or str(values.get("port") or "")
        baud = args.baud or int(values.get("baud", 1_000_000))
        if not port:
            raise UsageError(f"{config.path}: the {kind} section has no port: set it, or give --port PATH")
        return port, baud, protocol, planned
    if not args.ids or not args.port:
        raise UsageError("give --config YAML (a parameter file with a bus section), or --port PATH and --ids ID ...")
    if args.names and len(args.names) != len(args.ids):
        raise UsageError(f"--names gives {len(args.names)} names for {len(args.ids)} --ids")
    names = args.names or [f"servo{i}" for i in args.ids]
    return (
        args.port,
        args.baud or 1_000_000,
        args.protocol or "feetech",
        [(n, i, None, 0) for n, i in zip(names, args.ids, strict=True)],
    )


def _drive_modes(name: str, protocol: str) -> dict[str, int]:
    """The drive modes of the bus section's current calibration file, when it has one that reads (else none)."""
    if not name:
        return {}
    try:
        return {motor: c.drive_mode for motor, c in load_calibration(calibration_path(name), protocol).items()}
    except (BridgeSetupError, CalibrationError):
        return {}


def _model_of(bus: Bus, protocol: str, servo_id: int, name: str) -> Model:
    """The model servo ``servo_id`` says it is (``--ids``); one that does not answer gets its protocol's
    first model, and the session names it missing.

    Raises:
        CalibrationError: a model number bb_robot has no control table for, or a failed read.
    """
    fallback = model("sts3215" if protocol == "feetech" else "xl430-w250")
    try:
        reply = bus.ping(servo_id)
        if reply is None:
            return fallback
        number = reply.model_number
        if number is None:  # Feetech: the model number is a register
            number = bus.read(servo_id, fallback.register("model_number"))
    except BusError as error:
        raise CalibrationError(f"servo {servo_id} ({name}): {error}; nothing was written") from None
    found = model_by_number(protocol, number)
    if found is None:
        raise CalibrationError(f"{bus.name}: servo {servo_id} ({name}) is model number {number}, not a {protocol} "
                               "model bb_robot knows (docs/buses.md, Control tables); nothing was written")  # fmt: skip
    return found


# ------------------------------------------------------------------ the steps
def _session(session: CalibrationSession, presses: Callable[[float], int]) -> None:
    """Steps 1 and 2: read the servos until each Enter, with the live table when stderr is a terminal."""
    from rich.console import Console
    from rich.live import Live

    console = Console(stderr=True)
    live = Live(console=console, auto_refresh=False) if console.is_terminal else None
    pending, drawn = 0, -math.inf
    with live or contextlib.nullcontext():
        for step, text in enumerate(STEPS):
            if live is None:
                _say(text)
            while True:
                read_at = time.monotonic()
                session.sample()
                pending += presses(read_at)
                if live is not None and (pending or read_at - drawn >= REDRAW):
                    live.update(_table(session, text), refresh=True)
                    drawn = read_at
                if pending:
                    pending -= 1
                    break
                time.sleep(PERIOD)
            if step == 0:
                session.mark_middle()


def _no_control(request: dict[str, Any]) -> dict[str, Any]:
    """The control socket of a script without moves: never asked (a script with moves needs --control)."""
    raise UsageError(f"no --control socket for {request}")


@contextlib.contextmanager
def _keyboard() -> Iterator[Callable[[float], int]]:
    """Enter presses from standard input (in a terminal: not echoed, so the live table stays whole)."""
    stdin = sys.stdin
    saved = None
    if stdin.isatty():
        saved = termios.tcgetattr(stdin)
        quiet = list(saved)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(stdin, termios.TCSANOW, quiet)

    def presses(_: float) -> int:
        if not select.select([stdin], [], [], 0)[0]:
            return 0
        if not stdin.readline():
            raise CalibrationError("standard input ended before Enter was pressed; nothing was written")
        return 1

    try:
        yield presses
    finally:
        if saved is not None:
            termios.tcsetattr(stdin, termios.TCSANOW, saved)


def _table(session: CalibrationSession, text: str) -> Any:
    from rich.table import Table

    table = Table(title=text, title_justify="left")
    for header in ("motor", "ID", "position", "min", "max", "travel"):
        table.add_column(header, justify="left" if header == "motor" else "right")
    for row in session.rows():
        ends = ("", "", "") if row.low is None else (str(row.low), str(row.high), f"{row.span_degrees:.1f}°")
        table.add_row(row.motor.name, str(row.motor.id), str(row.position), *ends)
    return table


# ------------------------------------------------------------------ the result
def _save(output: Path, calibrations: dict[str, MotorCalibration]) -> None:
    """Write the file whole or not at all (a temporary file beside it, then renamed)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
    os.close(handle)
    try:
        save_calibration(temporary, calibrations)
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _report(output: Path, motors: list[Motor], calibrations: dict[str, MotorCalibration]) -> None:
    from rich.console import Console
    from rich.table import Table

    print(f"wrote {output} and each servo's EEPROM (torque stays off)", flush=True)
    table = Table()
    for header in ("motor", "ID", "homing_offset", "range_min", "range_max", "travel"):
        table.add_column(header, justify="left" if header == "motor" else "right")
    for motor in motors:
        c = calibrations[motor.name]
        travel = math.degrees((c.range_max - c.range_min) * 2 * math.pi / 4096)
        table.add_row(motor.name, str(c.id), str(c.homing_offset), str(c.range_min), str(c.range_max),
                      f"{travel:.1f}°" + (" (full turn)" if motor.full_turn else ""))  # fmt: skip
    Console(width=100).print(table)


def _say(text: str) -> None:
    print(f"calibrate: {text}", file=sys.stderr, flush=True)
