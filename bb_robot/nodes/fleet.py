"""Several arms in one process: a driver and a description node per arm, on one executor.

    ros2 run bb_robot fleet --arms 4 --ros-args -p model:=/path/to/arm.urdf -p autostart:=true
    python -m bb_robot.nodes.fleet --arms 2 --ros-args --params-file config/bb_arm.yaml

One process per arm is how a robot is deployed (``ros2 launch bb_robot bringup.launch.py``):
each arm is a driver process and a description-node process.  This program runs the same nodes
for ``--arms`` arms in one Python process instead, arm ``i`` in the namespace ``/<name>i``
(``--name``, default ``arm``; ``i`` counts from ``--first``, default 0) with the frame prefix
``<name>i/`` and the node names ``driver_<name>i`` and ``description_<name>i``.  That saves one interpreter and one DDS
participant per node (memory and discovery traffic), not CPU: every driver keeps its own
control-loop thread, and all of them and the executor share one interpreter lock.
``benchmarks/bench_fleet.py --per-process K`` measures it against one process per node.

Parameters given with ``--ros-args`` (``-p``, ``--params-file``) apply to every node, as they
would to each of the separate processes.  Exit status: 0, 1 when an arm cannot start (the error
names the arm), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter

from bb_robot.nodes.description import DescriptionNode, StartupError
from bb_robot.nodes.driver import DriverNode
from bb_robot.nodes.executor import AddNode, serve

#: The most arms one process takes (a guard against a typo, not a measured limit).
MAX_ARMS = 64


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The fleet's own options; ``--ros-args`` and what follows are left for rclpy."""
    parser = argparse.ArgumentParser(prog="fleet", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", type=int, required=True, help=f"how many arms (1 to {MAX_ARMS})")
    parser.add_argument("--name", default="arm", help="arm i is /<name>i, frames <name>i/... (default: arm)")
    parser.add_argument(
        "--first", type=int, default=0, help="the number of the first arm (default 0): several fleets, distinct arms"
    )
    ours = list(argv)
    if "--ros-args" in ours:
        ours = ours[: ours.index("--ros-args")]
    args = parser.parse_args(ours)
    if not 1 <= args.arms <= MAX_ARMS:
        parser.error(f"--arms {args.arms}: expected 1 to {MAX_ARMS}")
    if args.first < 0:
        parser.error(f"--first {args.first}: expected 0 or more")
    if not args.name.isidentifier():
        parser.error(f"--name {args.name!r}: expected letters, digits and underscores, not starting with a digit")
    return args


def arm_nodes(name: str, index: int) -> tuple[Callable[[], DriverNode], Callable[[], Node]]:
    """The constructors of arm ``index``'s driver and description node."""
    arm = f"{name}{index}"
    namespace = f"/{arm}"

    def driver() -> DriverNode:
        return DriverNode(namespace=namespace, cli_args=["--ros-args", "-r", f"__node:=driver_{arm}"])

    def description() -> Node:
        return DescriptionNode(
            namespace=namespace,
            cli_args=["--ros-args", "-r", f"__node:=description_{arm}"],
            parameter_overrides=[Parameter("frame_prefix", value=f"{arm}/")],
        )

    return driver, description


def main(argv: Sequence[str] | None = None) -> int:
    """Run the arms until SIGINT or SIGTERM; every driver's backend is released on the way out."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    options = parse(arguments)
    rclpy.init(args=["fleet", *arguments])  # rcl skips the first argument, the program's name

    def start(add: AddNode) -> None:
        for index in range(options.first, options.first + options.arms):
            make_driver, make_description = arm_nodes(options.name, index)
            driver = make_driver()
            add(driver, driver.shutdown)
            try:
                add(make_description(), None)
            except StartupError as error:
                raise StartupError(f"{options.name}{index} cannot start: {error}") from None

    try:
        return serve(start)
    except StartupError as error:
        rclpy.logging.get_logger("fleet").fatal(str(error))
        return 1


if __name__ == "__main__":
    sys.exit(main())
