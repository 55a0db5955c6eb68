"""``bb-robot teleop --leader [CONFIG] [--leader-port PATH] [--arm]``: a leader arm moves the follower.

Reads the leader arm (torque off, moved by hand; its ``/**/leader`` section: ``config/so101_leader.yaml``)
on its own bus at its ``rate`` (200 Hz), and streams its pose to the follower's driver as position
commands; on engaging, the follower first ramps from where it is to the leader's pose at no more than
0.5 rad/s, then tracks.  The logic is :mod:`bb_robot.buses.leader`, the ROS side
:mod:`bb_robot.nodes.teleop_leader`.  Runs until Ctrl-C or SIGTERM (exit 0: the stream stops, the
driver's ``command_timeout`` holds the follower); exit 1 when the leader cannot start or its port
vanishes, naming why.  docs/buses.md ("Leader-follower teleop") describes it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from bb_robot.cli.common import EXIT_OK, UsageError

if TYPE_CHECKING:  # the rest is imported when used: every bb-robot command imports this module
    from bb_robot.buses.leader import LeaderConfig, TeleopLoop
    from bb_robot.buses.transport import Bus
    from bb_robot.nodes.teleop_leader import FollowerClient

#: The leader's parameter file when only ``--leader-port`` is given.
DEFAULT_LEADER = "so101_leader.yaml"
#: Seconds between two status lines.
STATUS_PERIOD = 5.0
EXIT_LEADER = 1


def say(level: str, text: str, out: TextIO = sys.stdout) -> None:
    """One line for the user: ``teleop: [warn] ...``."""
    print(f"teleop: {'' if level == 'info' else f'[{level}] '}{text}", file=out, flush=True)


def leader_config(args: argparse.Namespace) -> LeaderConfig:
    """The leader's configuration from ``--leader`` and ``--leader-port``.

    Raises:
        UsageError: a parameter file without a ``/**/leader`` section.
        LeaderError: a leader section that cannot be used.
        BringupConfigError: a parameter file that cannot be read.
    """
    from bb_robot.bringup.config import read_config
    from bb_robot.buses.leader import LeaderConfig

    config = read_config(args.leader or DEFAULT_LEADER)
    if not config.leader:
        raise UsageError(f"{config.path} has no /**/leader section (port, protocol, servos): see docs/buses.md")
    return LeaderConfig.from_parameters(config.leader, str(config.path), args.leader_port or "")


def run(args: argparse.Namespace) -> int:
    """Stream the leader to the follower until a signal; returns the exit status.

    Raises:
        UsageError, LeaderError, BringupConfigError: as :func:`leader_config`.
    """
    from bb_robot.buses.dynamixel import DYNAMIXEL
    from bb_robot.buses.feetech import FEETECH
    from bb_robot.buses.leader import JointMap, LeaderArm, LeaderError, TeleopLoop
    from bb_robot.buses.transport import Bus, BusError

    config = leader_config(args)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    from bb_robot.nodes.teleop_leader import FollowerClient  # the node layer (rclpy)

    follower = FollowerClient(args.namespace)
    bus: Bus | None = None
    try:
        limits, joints = _wait_for_follower(follower, stop)
        if stop.is_set():
            return EXIT_OK
        joint_map = JointMap.build(config, joints, limits)
        codec = FEETECH if config.protocol == "feetech" else DYNAMIXEL
        try:
            bus = Bus.open(config.port, codec, baud=config.baud, latency=config.latency, retries=config.retries)
        except BusError as error:
            raise LeaderError(f"the leader ({config.source}): {error}", "start") from None
        arm = LeaderArm(bus, config, limits)
        for text in arm.start():
            say("warn", f"the leader: {text}")
        servos = ", ".join(f"{s.id} {s.joint}" for s in config.specs)
        say("info", f"leader on {config.port} at {config.baud} baud (servos {servos}), torque off; reading at "
            f"{config.rate:g} Hz, streaming to {follower.command_topic}")  # fmt: skip
        if args.arm:
            ok, message = follower.arm()
            if not ok:
                say("error", f"arming the follower's driver failed: {message}")
                return EXIT_LEADER
        elif not follower.armed():
            say("info", f"waiting for the follower's driver to be armed (ros2 service call {follower.arm_service} "
                "std_srvs/srv/Trigger, or bb-robot teleop --leader ... --arm)")  # fmt: skip
        loop = TeleopLoop(arm, joint_map, follower, say)
        status = threading.Thread(target=_report, args=(loop, stop), name="teleop-status", daemon=True)
        status.start()
        try:
            loop.run(config.rate, stop)
        except LeaderError as error:
            say("error", str(error))
            return EXIT_LEADER
        say("info", f"stopped: {loop.sent} commands sent; the follower holds (the driver's command_timeout)")
        return EXIT_OK
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.set()
        if bus is not None:
            try:
                bus.close()
            except OSError:
                pass
        follower.close()


def _wait_for_follower(
    follower: FollowerClient, stop: threading.Event
) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """The follower's joint limits and joints, from its robot_description once it came.

    Its joint_states are not waited for here: the loop engages once they name every joint it moves
    (the driver leaves a joint whose bridge has not answered yet out of them).

    Raises:
        LeaderError: the follower's robot_description cannot be read.
    """
    told = 0.0
    while not stop.is_set():
        joints, limits = follower.joints, follower.limits
        if joints is not None and limits is not None:
            return limits, joints
        if follower.description_error:
            from bb_robot.buses.leader import LeaderError

            raise LeaderError(follower.description_error, "config")
        now = time.monotonic()
        if now - told >= STATUS_PERIOD:
            told = now
            say("info", f"waiting for the follower: {follower.description_topic} "
                "(is bb-robot up --config so101.yaml running?)")  # fmt: skip
        stop.wait(0.05)
    return {}, []


def _report(loop: TeleopLoop, stop: threading.Event) -> None:
    while not stop.wait(STATUS_PERIOD):
        say("info", f"{loop.state}: {loop.stats.rate():.0f} Hz, p99 read to command {loop.stats.p99() * 1e3:.2f} ms, "
            f"{loop.sent} commands sent, {loop.arm.failures} failed leader reads")  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--leader``, ``--leader-port`` and ``--arm`` on ``bb-robot teleop``."""
    parser.add_argument("--leader", metavar="YAML", nargs="?", const=DEFAULT_LEADER,
                        help=f"leader-follower: read the leader arm of this parameter file's /**/leader section "
                        f"(default {DEFAULT_LEADER}) and stream it to the follower's driver")  # fmt: skip
    parser.add_argument("--leader-port", metavar="PATH", help="the leader's serial port (implies --leader; "
                        "default: the file's)")  # fmt: skip
    parser.add_argument("--arm", action="store_true", help="with --leader: arm the follower's driver first")


def wanted(args: argparse.Namespace) -> bool:
    """Whether ``args`` ask for leader-follower teleop."""
    return bool(args.leader or args.leader_port)


__all__ = ["DEFAULT_LEADER", "add_arguments", "leader_config", "run", "wanted"]
