"""``bb-robot bus-emulator``: emulated servos on a pseudo-terminal, to use without hardware.

``--arm so101`` serves the SO-101's six STS3215 servos (Feetech, 1 Mbaud) with the EEPROM of a
LeRobot calibration (``config/so101_calibration.json`` unless ``--calibration``);
``--protocol dynamixel --ids 1 2 3`` serves Dynamixel X servos (``--model``: one model, or one per
ID); ``--arm koch`` the Koch v1.1 follower's six (``config/koch_follower.yaml``'s IDs and models,
:data:`~bb_robot.buses.emulator.KOCH_FOLLOWER_MODELS`). The first line printed is the
pty's path; ``--link PATH`` also makes a symbolic link to it. Runs until Ctrl-C or SIGTERM.
docs/buses.md ("The emulator") describes what the servos do, the timing model and the faults.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from bb_robot.buses.calibration import shipped_calibration
from bb_robot.buses.emulator import KOCH_FOLLOWER_MODELS, BusEmulator
from bb_robot.buses.emulator_control import ControlServer, ScriptPlayer, read_script
from bb_robot.buses.emulator_faults import Fault, Faults
from bb_robot.cli.common import EXIT_OK, UsageError


def _overheat(text: str) -> tuple[int, float]:
    try:
        servo, _, when = text.partition("@")
        return int(servo), float(when or 0.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not ID@SECONDS (e.g. 3@10)") from None


def build(args: argparse.Namespace) -> BusEmulator:
    """The emulator the options describe (not started).

    Raises:
        UsageError: options that do not fit together.
        BbRobotError: a calibration file, model or baud that cannot be used.
    """
    rates = {kind: getattr(args, kind.value) for kind in Fault if getattr(args, kind.value)}
    faults = Faults(rates=rates, late_by=args.late_by, missing=set(args.missing), seed=args.seed,
                    overheat_at=dict(args.overheat), close_at=args.close_after)  # fmt: skip
    options = {"latency": args.latency / 1000.0, "timing": not args.no_timing, "faults": faults}
    if args.arm == "koch":
        if args.ids or args.model or args.calibration or args.protocol == "feetech":
            raise UsageError("--arm koch has its six Dynamixel servos (IDs 1-6, koch_follower.yaml's models): "
                             "no --ids, --model, --calibration or --protocol feetech")  # fmt: skip
        ids = sorted(KOCH_FOLLOWER_MODELS)
        models = [KOCH_FOLLOWER_MODELS[i] for i in ids]
        return BusEmulator.dynamixel(ids, models, baud=args.baud or 1_000_000, **options)
    if args.protocol == "dynamixel":
        if not args.ids:
            raise UsageError("--protocol dynamixel needs the servo IDs: --ids 1 2 3")
        models = args.model or ["xl430-w250"]
        if len(models) not in (1, len(args.ids)):
            raise UsageError(f"--model gives {len(models)} models for {len(args.ids)} --ids: give one, or one per ID")
        return BusEmulator.dynamixel(args.ids, models if len(models) > 1 else models[0],
                                     baud=args.baud or 1_000_000, **options)  # fmt: skip
    if args.ids or args.model:
        raise UsageError(f"--ids and --model are for --protocol dynamixel; --arm {args.arm} has its six STS3215 servos")
    if args.baud not in (None, 1_000_000):
        raise UsageError("the SO-101's calibration puts its servos at 1000000 baud; --baud must be that")
    calibration = args.calibration or (shipped_calibration("so101_leader") if args.arm == "so101_leader" else None)
    return BusEmulator.so101(calibration, **options)


def run(args: argparse.Namespace) -> int:
    emulator = build(args)
    player = ScriptPlayer(emulator, read_script(args.motion)) if args.motion else None
    # The handlers before the path is printed: whoever reads the path may signal at once.
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    path = emulator.start(args.link)
    control = ControlServer(emulator, args.control) if args.control else None
    print(path, flush=True)
    servos = ", ".join(f"{i} ({s.model.name})" for i, s in sorted(emulator.servos.items()))
    print(f"bus-emulator: {emulator.codec.name} at {emulator.baud} baud, servos {servos}"
          + (f", link {args.link}" if args.link else "")
          + (f", control socket {args.control}" if args.control else ""), file=sys.stderr, flush=True)  # fmt: skip
    try:
        if player:
            player.start()
        if control:
            control.start()
        while not stop.wait(0.2):
            if emulator.port_closed:
                print("bus-emulator: the port was closed (fault injection); stopping", file=sys.stderr)
                break
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if player:
            player.stop()
        if control:
            control.stop()
        emulator.stop()
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bus-emulator",
        help="serve emulated Feetech or Dynamixel servos on a pseudo-terminal",
        description="Emulated servos on a pseudo-terminal: the SO-101's (--arm so101) or Dynamixel X servos "
        "(--protocol dynamixel --ids ...). Prints the pty's path; runs until Ctrl-C. See docs/buses.md.",
    )
    parser.add_argument(
        "--arm",
        choices=["so101", "so101_leader", "koch"],
        default="so101",
        help="the arm whose servos to serve (default so101; so101_leader: the leader arm's calibration, for "
        "bb-robot teleop --leader; koch: the Koch v1.1 follower's Dynamixel servos, for koch_follower.yaml)",
    )
    parser.add_argument("--calibration", metavar="FILE", help="LeRobot calibration for the SO-101's EEPROM")
    parser.add_argument("--protocol", choices=["feetech", "dynamixel"], help="default feetech (--arm koch: dynamixel)")
    parser.add_argument("--ids", type=int, nargs="+", default=[], metavar="ID", help="Dynamixel servo IDs")
    parser.add_argument("--model", nargs="+", metavar="MODEL",
                        help="Dynamixel model(s): one for every ID, or one per ID (xl330-m288, xl430-w250, "
                        "xm430-w350, ...; default xl430-w250)")  # fmt: skip
    parser.add_argument("--baud", type=int, help="baud rate (default 1000000)")
    parser.add_argument(
        "--latency", type=float, default=1.0, metavar="MS", help="per-transaction latency (default 1 ms)"
    )
    parser.add_argument("--no-timing", action="store_true", help="answer at once: no wire time, no latency")
    parser.add_argument("--link", metavar="PATH", help="make a symbolic link to the pty at PATH")
    parser.add_argument("--motion", metavar="FILE", help="motion script: 'time joint position' lines")
    parser.add_argument("--control", metavar="PATH", help="control socket (Unix, JSON lines)")
    faults = parser.add_argument_group("fault injection (rates are per reply, 0..1)")
    for kind in Fault:
        faults.add_argument(f"--{kind.value}", type=float, default=0.0, metavar="RATE", help=f"{kind.value} replies")
    faults.add_argument("--late-by", type=float, default=0.05, metavar="S", help="how late a late reply is")
    faults.add_argument("--missing", type=int, nargs="+", default=[], metavar="ID", help="servos that never answer")
    faults.add_argument("--overheat", type=_overheat, action="append", default=[], metavar="ID@S",
                        help="servo ID overheats S seconds after the start")  # fmt: skip
    faults.add_argument("--close-after", type=float, metavar="S", help="close the port S seconds after the start")
    faults.add_argument("--seed", type=int, default=0, help="seed of the random faults")
    parser.set_defaults(handler=run)
