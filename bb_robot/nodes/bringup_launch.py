"""Run ``launch/bringup.launch.py`` with ROS 2's ``launch.LaunchService`` (what ``bb-robot up`` starts).

    python -m bb_robot.nodes.bringup_launch [name:=value ...]

The arguments are the launch file's (``docs/bringup.md``).  This process is the launch system:
SIGINT shuts every node down cleanly (launch signals them and waits, escalating to SIGTERM and
SIGKILL only if they do not end).  SIGTERM is launch's own: it exits at once and can leave nodes
behind, so ``bb-robot up`` sends SIGINT (and checks afterwards that every process it saw ended).
Exit status: launch's (0 after a clean shutdown).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

from bb_robot.errors import BbRobotError

LAUNCH_FILE = "bringup.launch.py"


class LaunchMissingError(BbRobotError, RuntimeError):
    """ROS 2's launch system is not installed (the message says how to get it)."""


def launch_file() -> str:
    """The installed ``bringup.launch.py`` (share/bb_robot/launch/)."""
    from ament_index_python.packages import get_package_share_directory

    return os.path.join(get_package_share_directory("bb_robot"), "launch", LAUNCH_FILE)


def parse_arguments(argv: Sequence[str]) -> list[tuple[str, str]]:
    """``name:=value`` items as pairs; raises ``ValueError`` naming a malformed one."""
    pairs = []
    for item in argv:
        name, separator, value = item.partition(":=")
        if not separator or not name:
            raise ValueError(f"launch argument '{item}' is not name:=value")
        pairs.append((name, value))
    return pairs


def run(argv: Sequence[str]) -> int:
    """Run the bringup launch file with ``name:=value`` arguments until shut down; returns launch's status."""
    try:
        from launch.actions import IncludeLaunchDescription
        from launch.launch_description import LaunchDescription
        from launch.launch_description_sources import PythonLaunchDescriptionSource
        from launch.launch_service import LaunchService
    except ImportError as error:
        raise LaunchMissingError(
            f"ROS 2's launch system is not installed ({error}): run scripts/setup with the archives of "
            "../shared/third_party/ros2/ beside the repository, or source a ROS 2 install"
        ) from None
    # noninteractive: on SIGINT launch signals the nodes itself (interactive, it expects the
    # terminal to have sent SIGINT to the whole process group, which is not so for a child of
    # bb-robot up in a session of its own).
    service = LaunchService(argv=list(argv), noninteractive=True)
    include = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(launch_file()), launch_arguments=parse_arguments(argv)
    )
    service.include_launch_description(LaunchDescription([include]))
    return int(service.run(shutdown_when_idle=True))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run until SIGINT (or until every node has ended); returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Started as a background job of a shell, SIGINT arrives ignored (SIG_IGN), and the nodes would
    # inherit that and never stop on it: listen to it again.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return run(arguments)
    except (LaunchMissingError, ValueError) as error:
        print(f"bringup_launch: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
