"""``bb-robot gripper open|close|POSITION [--effort N]``: one GripperCommand goal to the driver.

``open`` and ``close`` are the ends of the gripper joint's stroke (``--open`` and ``--close``;
the bundled arm's defaults); a number is the position itself.  The ROS side is
:mod:`bb_robot.nodes.gripper_client`; it prints how the goal ended and exits 0 when it succeeded
(reached, or stalled on an object), 1 otherwise.
"""

from __future__ import annotations

import argparse
import math

from bb_robot.cli.common import EXIT_INPUT, EXIT_OK, UsageError

#: The bundled gripper's stroke (left_finger_joint, m): open and closed.
OPEN, CLOSED = 0.04, 0.0


def goal_position(what: str, open_at: float, closed_at: float) -> float:
    """The goal position of ``open``, ``close`` or a number.

    Args:
        what: The command-line word.
        open_at: The position of ``open``.
        closed_at: The position of ``close``.

    Returns:
        The position.

    Raises:
        UsageError: Neither a word nor a finite number.
    """
    if what == "open":
        return open_at
    if what == "close":
        return closed_at
    try:
        value = float(what)
    except ValueError:
        raise UsageError(f"gripper: '{what}' is neither open, close nor a position") from None
    if not math.isfinite(value):
        raise UsageError(f"gripper: position {what} is not a finite number")
    return value


def run(args: argparse.Namespace) -> int:
    """Send the goal and print how it ended (see the module docstring)."""
    position = goal_position(args.what, args.open, args.close)
    if not math.isfinite(args.effort) or args.effort < 0.0:
        raise UsageError(f"gripper: --effort {args.effort} must be a finite number ≥ 0")
    from bb_robot.nodes.gripper_client import send_gripper_goal

    outcome = send_gripper_goal(args.action, position, args.effort, args.timeout)
    how = "stalled" if outcome.stalled else "reached" if outcome.reached_goal else "neither reached nor stalled"
    print(f"gripper {args.what}: {outcome.status}, {how}, position {outcome.position:.4f}, effort {outcome.effort:.2f}")
    return EXIT_OK if outcome.status == "succeeded" else EXIT_INPUT


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gripper`` to ``bb-robot``."""
    parser = commands.add_parser(
        "gripper",
        help="open or close the gripper (control_msgs/GripperCommand on the driver's ~/gripper_cmd)",
        description="Send one GripperCommand goal to the driver and wait for its end (reached, or stalled on "
        "an object). Exit 0 when it succeeded.",
    )
    parser.add_argument("what", help="open, close, or the position (joint units: m for the bundled fingers)")
    parser.add_argument("--effort", type=float, default=0.0, help="max_effort (0: no effort threshold)")
    parser.add_argument("--action", default="/driver/gripper_cmd", help="the action (default: %(default)s)")
    parser.add_argument("--open", type=float, default=OPEN, help="position of 'open' (default: %(default)s)")
    parser.add_argument("--close", type=float, default=CLOSED, help="position of 'close' (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait (default: %(default)s)")
    parser.set_defaults(handler=run)
