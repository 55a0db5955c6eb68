"""The ``bb-robot`` command line.

Commands (each a module of :mod:`bb_robot.cli`): ``up`` (the whole system, with ROS 2 launch),
``show``, ``check``, ``tree``, ``convert``, ``chain``, ``fk``, ``ik``, ``collisions``, ``plan``, ``kernels``, ``bus``,
``bus-emulator`` and ``calibrate``;
``docs/cli.md`` describes them, their options and their ``--json`` output.

Exit codes: 0 success; 1 the description could not be loaded or used (the message names the
file, line, element, link or joint); 2 wrong usage.  Bad input never gives a traceback: an
unexpected failure is reported in one line too (set ``BB_ROBOT_TRACEBACK=1`` to see the
traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from bb_robot.cli import (
    bus,
    bus_emulator,
    calibrate,
    chain,
    check,
    collisions,
    convert,
    fk,
    gripper,
    ik,
    kernels,
    plan,
    show,
    teleop,
    tree,
    up,
)
from bb_robot.cli.common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, UsageError, explain
from bb_robot.cli.show import default_tip, format_tree
from bb_robot.errors import BbRobotError
from bb_robot.model import compiled

__all__ = ["EXIT_INPUT", "EXIT_OK", "EXIT_USAGE", "build_parser", "default_tip", "format_tree", "main"]

COMMANDS = (
    up,
    teleop,
    gripper,
    show,
    check,
    tree,
    convert,
    chain,
    fk,
    ik,
    collisions,
    plan,
    kernels,
    bus,
    bus_emulator,
    calibrate,
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``bb-robot`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="bb-robot",
        description="Inspect, check, draw and convert robot descriptions (URDF, xacro, SDF model or world).",
        epilog="Exit codes: 0 success, 1 bad input (the message says where), 2 wrong usage. "
        "Run `bb-robot COMMAND --help` for a command's options; docs/cli.md has the details.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands)
    for name, subparser in commands.choices.items():
        subparser.epilog = subparser.epilog or "Exit codes: 0 success, 1 bad input, 2 wrong usage."
        subparser.set_defaults(command_parser=subparser, command=name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bb-robot``; returns the exit code (argparse exits with 2 itself on usage errors)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    compiled.default_mode("batch")  # a short-lived process: loading numba would cost more than it saves
    try:
        return int(args.handler(args))
    except UsageError as error:
        args.command_parser.error(str(error))  # exits with EXIT_USAGE
    except BrokenPipeError:  # the reader went away (`bb-robot fk ... | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the final flush does not fail again
        return EXIT_OK
    except (BbRobotError, OSError) as error:
        message = _message(error)
        file = getattr(args, "file", None)
        if file and file not in message:  # a joint or link problem, or one in an included file
            message = f"{file}: {message}"
        print(f"bb-robot: error: {message}", file=sys.stderr)
        return EXIT_INPUT
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        # Not expected for any input; reported in one line rather than as a traceback.
        if os.environ.get("BB_ROBOT_TRACEBACK"):
            traceback.print_exc()
        print(
            f"bb-robot: error: {args.command} failed on this input ({type(error).__name__}: {error}); "
            "this is a bug in bb_robot, please report it (BB_ROBOT_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return EXIT_INPUT
    return EXIT_USAGE


def _message(error: BaseException) -> str:
    if isinstance(error, OSError) and not isinstance(error, BbRobotError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return explain(error)
