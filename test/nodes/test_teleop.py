"""``bb-robot teleop`` through a pseudo-terminal: the test types keys and reads the screen, while a real
driver (sim backend, bb_arm, servo to tcp) and description node run in the same namespace; the
twists are checked on the driver's topic and the motion on the tool pose the screen shows."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from geometry_msgs.msg import PoseStamped, TwistStamped
from helpers.bringup_helpers import environment
from helpers.nodes import TIMEOUT, Probe, StartNode
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from bb_robot.cli.teleop import FIRST_HOLD, REPEAT_HOLD, Jog

REPO = Path(__file__).resolve().parents[2]
BB_ARM = REPO / "models" / "bb_arm.urdf"
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
POSE = re.compile(r"x ([+-][0-9.]+)  y ([+-][0-9.]+)  z ([+-][0-9.]+) m")
SUBSCRIBERS = re.compile(r"\((\d+) subscriber\(s\)\)")


class Terminal:
    """A child process on a pseudo-terminal: type into it, read what it shows."""

    def __init__(self, command: list[str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=environment(), cwd=REPO)
        os.close(slave)
        self.output = ""

    def read(self, seconds: float) -> str:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    self.output += os.read(self.master, 65536).decode(errors="ignore")
                except OSError:
                    break
        return self.output

    def screen(self) -> str:
        return self.output.rsplit("\x1b[2J", 1)[-1]

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def close(self) -> int | None:
        if self.process.poll() is None:
            self.type("q")
            try:
                self.process.wait(30.0)  # a loaded machine may take a while to shut rclpy down
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5.0)
        os.close(self.master)
        return self.process.returncode


def tool_position(screen: str) -> tuple[float, float, float] | None:
    found = POSE.findall(screen)
    return tuple(float(v) for v in found[-1]) if found else None  # type: ignore[return-value]


def subscribers(screen: str) -> int:
    found = SUBSCRIBERS.findall(screen)
    return int(found[-1]) if found else 0


def test_held_means_first_hold_then_repeat_hold_and_space_stops_at_once() -> None:
    jog = Jog(0.05, 0.25)
    jog.key("w", 0.0)
    assert jog.twist(FIRST_HOLD - 0.01)[0] == (0.05, 0.0, 0.0)  # a single press survives the repeat delay
    assert jog.twist(FIRST_HOLD + 0.01)[0] == (0.0, 0.0, 0.0)
    jog.key("w", 1.0)
    jog.key("w", 1.5)  # auto-repeat began
    jog.key("w", 1.53)
    assert jog.twist(1.53 + REPEAT_HOLD - 0.01)[0][0] > 0
    assert jog.twist(1.53 + REPEAT_HOLD + 0.01)[0][0] == 0.0  # released: stops REPEAT_HOLD after the last event
    jog.key("j", 2.0)
    jog.key("+", 2.0)
    assert jog.twist(2.1)[1] == (0.0, 0.0, 0.25 * 1.25)
    assert jog.key(" ", 2.1) == "stop" and jog.twist(2.1) == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def test_teleop_jogs_the_tool_and_shows_its_pose(probe: Probe, start_node: StartNode) -> None:
    namespace = f"/t{os.urandom(5).hex()}"
    description = start_node(
        {"model": str(BB_ARM), "model_dirs": [str(BB_ARM.parent)], "tip_link": "tcp", "publish_frequency": 0.0},
        namespace=namespace,
        module="bb_robot.nodes.description",
        node="description",
    )
    driver = start_node(
        {
            "model": str(BB_ARM),
            "autostart": True,
            "auto_arm": True,
            "collision.check": False,
            "servo.enable": True,
            "servo.tip": "tcp",
            "sim": {"initial_positions": [0.0, -1.2, 1.5, -1.9, -1.5708, 0.0, 0.0]},
        },
        namespace=namespace,
        module="bb_robot.nodes.driver",
        node="driver",
    )
    twists, twist_subscription = probe.subscription(TwistStamped, f"{namespace}/driver/twist_commands", VOLATILE)
    joint_states = probe.subscribe(JointState, f"{namespace}/joint_states", VOLATILE)
    tips = probe.subscribe(PoseStamped, f"{namespace}/description/tip_pose", VOLATILE)
    assert probe.spin_until(lambda: "active: control loop" in driver.log(), 60.0), driver.log()
    terminal = Terminal([sys.executable, "-m", "bb_robot.cli", "teleop", "--namespace", namespace])

    def wait_screen(condition: Callable[[str], bool], what: str) -> str:
        """Read the terminal (and spin the probe) until its screen meets ``condition``."""

        def met() -> bool:
            terminal.read(0.02)
            return condition(terminal.screen())

        assert probe.spin_until(met, TIMEOUT), f"not within {TIMEOUT} s: {what}\n{terminal.screen()}"
        return terminal.screen()

    try:
        # Ready: the tool pose shown, teleop's publisher matched by both its subscribers (the driver and
        # the probe), so that the twists of the keys below reach them (teleop publishes only while jogging).
        wait_screen(lambda screen: tool_position(screen) is not None and subscribers(screen) >= 2, "ready")
        assert probe.spin_until(lambda: twist_subscription.get_publisher_count() >= 1, TIMEOUT), terminal.screen()
        screen = terminal.screen()
        assert "w/s +x/-x" in screen and "frame: base" in screen, screen
        start = tool_position(screen)
        assert start is not None, screen + description.log()
        for _ in range(30):  # holding w: auto-repeat at 30 Hz for 1 s
            terminal.type("w")
            probe.spin_for(1 / 30)
            terminal.read(0.0)
        terminal.type(" ")
        # Waited for on states, not on time: teleop shows STOPPED (its stop twist is out) and its twists
        # have all come (the stream falls quiet for 2 s: after the stop nothing is sent), then a joint
        # state shows the arm at rest, and the screen shows the tool pose the description node published
        # for a state from then on.
        wait_screen(lambda screen: "STOPPED" in screen, "STOPPED")
        assert probe.spin_until_quiet(lambda: len(twists), quiet=2.0), "twists go on after the stop"
        forward = [m for m in twists if m.twist.linear.x > 0]
        assert forward and all(m.header.frame_id == "" for m in forward)
        assert twists[-1].twist.linear.x == 0.0  # the stop was sent, nothing after it moves
        stopped = len(joint_states)

        def at_rest() -> JointState | None:
            return next((state for state in joint_states[stopped:] if not any(state.velocity)), None)

        assert probe.spin_until(lambda: at_rest() is not None, TIMEOUT), f"not at rest: {joint_states[-1:]}"
        rest = at_rest()
        assert rest is not None
        since = (rest.header.stamp.sec, rest.header.stamp.nanosec)

        def tip_at_rest() -> PoseStamped | None:
            return next((m for m in tips if (m.header.stamp.sec, m.header.stamp.nanosec) >= since), None)

        assert probe.spin_until(lambda: tip_at_rest() is not None, TIMEOUT), "no tip pose of the arm at rest"
        pose = tip_at_rest()
        assert pose is not None
        final = (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z)

        def shows_final(screen: str) -> bool:
            shown = tool_position(screen)
            return shown is not None and max(abs(a - b) for a, b in zip(shown, final, strict=True)) < 6e-5

        moved = tool_position(wait_screen(shows_final, f"the tool at rest at {final}"))
        assert moved is not None and moved[0] - start[0] > 0.02, (start, moved)
        assert abs(moved[1] - start[1]) < 2e-3 and abs(moved[2] - start[2]) < 2e-3
        assert "STOPPED" in terminal.screen()
        terminal.type("t")
        wait_screen(lambda screen: "frame: tool ('tcp')" in screen, "the tool frame")
    finally:
        assert terminal.close() == 0, terminal.output[-2000:]
