"""``bb-robot teleop [--namespace NS]``: jog the tool from the keyboard, in a plain terminal (ssh, no X).

Publishes a ``geometry_msgs/TwistStamped`` at 50 Hz on ``<ns>/driver/twist_commands`` (the driver's
Cartesian servo, ``docs/nodes/servo.md``) and shows the tool pose live (``<ns>/description/tip_pose``).
The ROS side is :mod:`bb_robot.nodes.teleop`; this module owns the keys and the screen.

**What "held" means.** Terminals send no key-release events, and their auto-repeat starts 0.25 to
0.6 s after the press, then repeats at 10 to 50 Hz.  So a key counts as held for
:data:`FIRST_HOLD` (0.6 s) after its first event (the longest auto-repeat delay), and, once it
repeats, until :data:`REPEAT_HOLD` (0.12 s) after its latest event.  The worst-case stop latency
after the last key event is therefore 0.6 s for a single tap and 0.12 s after releasing a held
key (plus the servo's deceleration); **space stops at once** (a zero twist is sent the moment it
is read, and every key is released).
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass

from bb_robot.cli import teleop_leader
from bb_robot.cli.common import EXIT_OK, UsageError

#: A key's first event keeps it held this long (s): the longest auto-repeat delay of terminals.
FIRST_HOLD = 0.6
#: Once a key repeats, it stays held this long after its latest event (s).
REPEAT_HOLD = 0.12
#: Twists per second.
RATE = 50.0
#: Screen refreshes per second.
REDRAW = 10.0
#: Key -> (axis 0..5 = x, y, z, roll, pitch, yaw; sign).
KEYS: dict[str, tuple[int, int]] = {
    "w": (0, 1),
    "s": (0, -1),
    "a": (1, 1),
    "d": (1, -1),
    "r": (2, 1),
    "f": (2, -1),
    "u": (3, 1),
    "o": (3, -1),
    "i": (4, 1),
    "k": (4, -1),
    "j": (5, 1),
    "l": (5, -1),
}
AXES = ("x", "y", "z", "roll", "pitch", "yaw")
HELP = (
    "w/s +x/-x   a/d +y/-y   r/f +z/-z   u/o roll   i/k pitch   j/l yaw",
    "+/- speed   t base/tool frame   space STOP   q quit",
)


@dataclass
class Press:
    """One axis's latest key: its sign, when its first and latest events came, how many."""

    sign: int
    first: float
    last: float
    count: int


class Jog:
    """The keyboard's state: held keys, the speed and the frame.

    Args:
        linear: the linear speed at scale 1 (m/s).
        angular: the angular speed at scale 1 (rad/s).
    """

    def __init__(self, linear: float = 0.05, angular: float = 0.25) -> None:
        self.linear, self.angular = linear, angular
        self.scale = 1.0
        self.tool = False
        self.presses: dict[int, Press] = {}
        self.stopped = False

    def key(self, char: str, now: float) -> str:
        """Take one key event.

        Args:
            char: the character read.
            now: when (monotonic s).

        Returns:
            ``"quit"``, ``"stop"`` (publish a zero twist now), or ``""``.
        """
        if char in ("q", "\x03", "\x04"):
            self.presses.clear()
            return "quit"
        if char == " ":
            self.presses.clear()
            self.stopped = True
            return "stop"
        if char in ("+", "="):
            self.scale = min(self.scale * 1.25, 4.0)
        elif char in ("-", "_"):
            self.scale = max(self.scale / 1.25, 0.1)
        elif char == "t":
            self.tool = not self.tool
            self.presses.clear()
        elif char in KEYS:
            axis, sign = KEYS[char]
            press = self.presses.get(axis)
            if press is not None and press.sign == sign and self.held(press, now):
                press.last, press.count = now, press.count + 1
            else:
                self.presses[axis] = Press(sign, now, now, 1)
            self.stopped = False
        return ""

    @staticmethod
    def held(press: Press, now: float) -> bool:
        """Whether ``press`` still counts as held at ``now`` (see the module docstring)."""
        return now - press.last < (REPEAT_HOLD if press.count > 1 else FIRST_HOLD)

    def twist(self, now: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The twist of the keys held at ``now`` (released ones are forgotten).

        Args:
            now: monotonic s.

        Returns:
            ``(linear, angular)``.
        """
        values = [0.0] * 6
        for axis, press in list(self.presses.items()):
            if not self.held(press, now):
                del self.presses[axis]
                continue
            values[axis] = press.sign * self.scale * (self.linear if axis < 3 else self.angular)
        return (values[0], values[1], values[2]), (values[3], values[4], values[5])


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "teleop",
        help="jog the tool from the keyboard (the driver's Cartesian servo)",
        description="Keyboard jogging in the terminal: publishes geometry_msgs/TwistStamped at 50 Hz on "
        "<ns>/driver/twist_commands and shows the tool pose. " + " ".join(HELP) + " With --leader: a leader arm "
        "(torque off, moved by hand) on its own bus moves the follower through its driver's ~/joint_commands, "
        "ramping to the leader's pose at <= 0.5 rad/s first (docs/buses.md).",
    )
    parser.add_argument("--namespace", default="", help="the robot's namespace (default: none)")
    parser.add_argument("--linear", type=float, default=0.05, help="linear speed at scale 1 (m/s, default 0.05)")
    parser.add_argument("--angular", type=float, default=0.25, help="angular speed at scale 1 (rad/s, default 0.25)")
    teleop_leader.add_arguments(parser)
    parser.set_defaults(handler=run)


def screen(jog: Jog, now: float, pose: object, topic: str, frame: str, listeners: int) -> str:
    """The screen's text (lines joined with CR LF, for a raw terminal).

    Args:
        jog: the keyboard's state.
        now: monotonic s.
        pose: the latest ``(frame, position, quaternion)`` or ``None``.
        topic: the twist topic.
        frame: the frame twists are sent in.
        listeners: the twist topic's subscribers.

    Returns:
        The text, starting with the clear-screen sequence.
    """
    linear, angular = jog.twist(now)
    lines = [
        f"bb-robot teleop -> {topic} ({listeners} subscriber(s))",
        *HELP,
        "",
        f"frame: {'tool' if jog.tool else 'base'} ('{frame}')   speed x{jog.scale:.2f}   "
        + ("STOPPED" if jog.stopped else "held: " + (" ".join(AXES[a] for a in sorted(jog.presses)) or "none")),
        "twist: linear ["
        + ", ".join(f"{v:+.3f}" for v in linear)
        + "] m/s  angular ["
        + ", ".join(f"{v:+.3f}" for v in angular)
        + "] rad/s",
    ]
    if isinstance(pose, tuple):
        base, position, quaternion = pose
        lines.append(f"tool in '{base}': x {position[0]:+.4f}  y {position[1]:+.4f}  z {position[2]:+.4f} m")
        lines.append("  quaternion x y z w: " + " ".join(f"{v:+.4f}" for v in quaternion))
    else:
        lines.append("tool pose: waiting for the description node's tip_pose")
    return "\x1b[H\x1b[2J" + "\r\n".join(lines) + "\r\n"


def run(args: argparse.Namespace) -> int:
    """Jog until ``q`` or Ctrl-C (or, with ``--leader``, follow the leader arm); returns the exit code."""
    if teleop_leader.wanted(args):
        return teleop_leader.run(args)
    if not os.isatty(sys.stdin.fileno()):
        raise UsageError("bb-robot teleop reads keys from a terminal: run it in one (ssh works)")
    from bb_robot.nodes.teleop import TeleopClient

    client = TeleopClient(args.namespace)
    jog = Jog(args.linear, args.angular)
    out: Callable[[str], object] = sys.stdout.write
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        next_twist = next_draw = time.monotonic()
        while True:
            now = time.monotonic()
            frame = (client.tool_frame or "tcp") if jog.tool else ""
            ready, _, _ = select.select([fd], [], [], max(0.0, min(next_twist, next_draw) - now))
            if ready:
                for char in os.read(fd, 64).decode(errors="ignore"):
                    action = jog.key(char, time.monotonic())
                    if action == "stop":
                        client.publish(frame, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
                    if action == "quit":
                        client.publish(frame, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
                        return EXIT_OK
            now = time.monotonic()
            if now >= next_twist:
                linear, angular = jog.twist(now)
                if any(linear) or any(angular) or not jog.stopped:
                    client.publish(frame, linear, angular)
                next_twist += 1.0 / RATE
                if next_twist < now:
                    next_twist = now + 1.0 / RATE
            if now >= next_draw:
                out(screen(jog, now, client.pose, client.twist_topic, frame, client.subscribers()))
                sys.stdout.flush()
                next_draw = now + 1.0 / REDRAW
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out("\r\n")
        client.close()
