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
from pathlib import Path

from geometry_msgs.msg import TwistStamped
from helpers.bringup_helpers import environment
from helpers.nodes import Probe, StartNode
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from bb_robot.cli.teleop import FIRST_HOLD, REPEAT_HOLD, Jog

REPO = Path(__file__).resolve().parents[2]
BB_ARM = REPO / "models" / "bb_arm.urdf"
VOLATILE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
POSE = re.compile(r"x ([+-][0-9.]+)  y ([+-][0-9.]+)  z ([+-][0-9.]+) m")


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
    twists = probe.subscribe(TwistStamped, f"{namespace}/driver/twist_commands", VOLATILE)
    assert probe.spin_until(lambda: "active: control loop" in driver.log(), 60.0), driver.log()
    terminal = Terminal([sys.executable, "-m", "bb_robot.cli", "teleop", "--namespace", namespace])
    try:
        for _ in range(100):
            terminal.read(0.1)
            probe.spin_for(0.05)
            if tool_position(terminal.screen()) is not None and "1 subscriber" in terminal.screen():
                break
        # The probe has discovered teleop's publisher before a key is typed, so that the twists of
        # the keys below reach it (teleop publishes only while jogging).
        topic = f"{namespace}/driver/twist_commands"
        assert probe.spin_until(lambda: probe.node.count_publishers(topic) >= 1, 30.0), terminal.screen()
        probe.spin_for(0.2)
        screen = terminal.screen()
        assert "w/s +x/-x" in screen and "frame: base" in screen, screen
        start = tool_position(screen)
        assert start is not None, screen + description.log()
        for _ in range(30):  # holding w: auto-repeat at 30 Hz for 1 s
            terminal.type("w")
            probe.spin_for(1 / 30)
            terminal.read(0.0)
        terminal.type(" ")
        terminal.read(0.3)
        probe.spin_for(1.0)
        terminal.read(0.5)
        moved = tool_position(terminal.screen())
        assert moved is not None and moved[0] - start[0] > 0.02, (start, moved)
        assert abs(moved[1] - start[1]) < 2e-3 and abs(moved[2] - start[2]) < 2e-3
        assert "STOPPED" in terminal.screen()
        assert probe.spin_until(lambda: any(m.twist.linear.x > 0 for m in twists), 20.0)
        probe.spin_for(2.0)  # the backlog drained: after the stop nothing is sent
        forward = [m for m in twists if m.twist.linear.x > 0]
        assert forward and all(m.header.frame_id == "" for m in forward)
        assert twists[-1].twist.linear.x == 0.0  # the stop was sent, nothing after it moves
        terminal.type("t")
        terminal.read(0.5)
        assert "frame: tool ('tcp')" in terminal.screen()
    finally:
        assert terminal.close() == 0, terminal.output[-2000:]
