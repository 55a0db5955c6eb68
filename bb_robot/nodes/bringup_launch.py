"""Run ``launch/bringup.launch.py`` with ROS 2's ``launch.LaunchService`` (what ``bb-robot up`` starts).

    python -m bb_robot.nodes.bringup_launch [name:=value ...]

The arguments are the launch file's (``docs/bringup.md``).  This process is the launch system:
SIGINT shuts every node down cleanly (launch signals them and waits, escalating to SIGTERM and
SIGKILL only if they do not end).  SIGTERM is launch's own: it exits at once and can leave nodes
behind, so ``bb-robot up`` sends SIGINT (and checks afterwards that every process it saw ended).
Exit status: launch's (0 after a clean shutdown).

A SIGINT at any moment ends everything without a traceback (``docs/bringup.md``, "Shutting down"):

- ``bb-robot up`` starts this process with SIGINT blocked; :func:`main` unblocks it once its
  handler is installed, so a SIGINT during the interpreter's start is taken then.
- The handler only notes the signal: launch learns of it through its own wake-up file
  descriptor, and no ``KeyboardInterrupt`` is raised into whatever launch was doing (raised
  into the launch file's imports, it once ended the launch with a misleading "C extension isn't
  present" error).  A SIGINT before launch runs its loop starts no node (:func:`_include`).
- Launch waits :data:`SIGTERM_TIMEOUT` for a node to end before it sends SIGTERM: a slow host may
  need seconds to release a driver interrupted in its configure.
- A node that is still importing its modules would die of a ``KeyboardInterrupt`` traceback:
  ``bb-robot up`` sends its SIGINT only once every node has initialised ROS
  (:meth:`bb_robot.cli.up_process.BringupProcess.stop`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import Any

from bb_robot.errors import BbRobotError

LAUNCH_FILE = "bringup.launch.py"
#: Seconds launch waits after SIGINT before it sends a node SIGTERM (launch's default: 5).
SIGTERM_TIMEOUT = "15"
#: Set by SIGINT (the launch learns of it by itself once its loop runs).
_interrupted: list[int] = []


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


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _interrupted.append(signum)


def run(argv: Sequence[str]) -> int:
    """Run the bringup launch file with ``name:=value`` arguments until shut down; returns launch's status."""
    try:
        from launch.actions import IncludeLaunchDescription, OpaqueFunction, SetLaunchConfiguration
        from launch.launch_description import LaunchDescription
        from launch.launch_description_sources import PythonLaunchDescriptionSource
        from launch.launch_service import LaunchService
    except ImportError as error:
        raise LaunchMissingError(
            f"ROS 2's launch system is not installed ({error}): run scripts/setup with the archives of "
            "../shared/third_party/ros2/ beside the repository, or source a ROS 2 install"
        ) from None
    if _interrupted:
        return 0  # nothing started yet
    # noninteractive: on SIGINT launch signals the nodes itself (interactive, it expects the
    # terminal to have sent SIGINT to the whole process group, which is not so for a child of
    # bb-robot up in a session of its own).
    service = LaunchService(argv=list(argv), noninteractive=True)
    include = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(launch_file()), launch_arguments=parse_arguments(argv)
    )

    def _include(context: Any) -> list[Any]:
        # Launch's loop runs (and takes SIGINT itself) by now; one that came before starts nothing.
        if _interrupted:
            from launch.actions import EmitEvent
            from launch.events import Shutdown

            return [EmitEvent(event=Shutdown(reason="SIGINT before the launch started"))]
        return [include]

    settings = [SetLaunchConfiguration("sigterm_timeout", SIGTERM_TIMEOUT)]
    service.include_launch_description(LaunchDescription([*settings, OpaqueFunction(function=_include)]))
    return int(service.run(shutdown_when_idle=True))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run until SIGINT (or until every node has ended); returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    # SIGINT noted, never raised (see the module docstring); installed whatever it was before (started
    # as a background job of a shell, SIGINT arrives ignored, and the nodes would inherit that and
    # never stop on it), then unblocked: bb-robot up starts this process with it blocked.
    signal.signal(signal.SIGINT, _on_sigint)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        return run(arguments)
    except (LaunchMissingError, ValueError) as error:
        print(f"bringup_launch: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
