"""``bb-robot bus --config FILE [--port PATH]``: the bridge of a servo bus, as ``ros2 run bb_robot bus``.

Runs the ``bus`` node (:mod:`bb_robot.nodes.bus`) with the parameter file's ``/**/bus`` section:
the servos behind the actuators backend's topics (docs/nodes/actuators.md), on a USB adapter or the
bus emulator's pty (``bb-robot bus-emulator``).  ``bb-robot up --config so101.yaml`` starts it by
itself; this command is for running it beside a driver started otherwise.  Runs until Ctrl-C or
SIGTERM, then turns every servo's torque off.  docs/buses.md ("The bridge") describes it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from bb_robot.bringup.config import read_config
from bb_robot.cli.common import UsageError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "bus",
        help="serve the actuators backend's topics for the servos of a Feetech or Dynamixel bus (the bridge)",
        description="Run the bus bridge node with a parameter file's /**/bus section (port, baud, protocol, "
        "servos). Ctrl-C or SIGTERM turns every servo's torque off and ends it.",
    )
    parser.add_argument(
        "--config",
        metavar="YAML",
        default="so101.yaml",
        help="parameter file with a /**/bus section: a path or a name in bb_robot's config/ (default: so101.yaml)",
    )
    parser.add_argument("--port", metavar="PATH", help="the serial port or emulator pty (default: the file's)")
    parser.add_argument("--namespace", metavar="NS", default="", help="the robot's namespace (the driver's)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the bridge until a signal; returns its exit status (1: it could not start).

    Raises:
        UsageError: a parameter file without a bus section.
        BringupConfigError: a parameter file that cannot be read.
    """
    config = read_config(args.config)
    if not config.bus:
        raise UsageError(f"{config.path} has no /**/bus section (port, baud, protocol, servos): see docs/buses.md")
    ros_args = ["--ros-args", "--params-file", str(config.path)]
    if args.namespace:
        ros_args += ["-r", f"__ns:=/{args.namespace.strip('/')}"]
    from bb_robot.nodes.bus import main  # the node layer (rclpy)

    with tempfile.TemporaryDirectory(prefix="bb_robot_bus_") as directory:
        if args.port:  # a second parameter file: a -p would not override the first file's section
            override = Path(directory) / "port.yaml"
            override.write_text(json.dumps({"/**/bus": {"ros__parameters": {"port": os.path.abspath(args.port)}}}))
            ros_args += ["--params-file", str(override)]
        return main(["bb-robot-bus", *ros_args])
