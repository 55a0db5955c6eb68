"""The suite's two parts: tests that run one at a time, and tests that may run side by side.

``scripts/test`` runs the suite in two pytest sessions (``--part``, added by test/conftest.py):

- ``parallel``: the tests that run inside the test process (parsers against their peers, the
  model, IK, collision, the driver's core on its backends, the command line on files), spread
  over the machine's cores by pytest-xdist;
- ``serial``: the tests that start ROS 2 nodes, launches or Gazebo transport peers as real
  processes and judge them over DDS or gz-transport, one at a time as before.  Two of them side by
  side would share the machine's cores, and what they check (a node's rates, its start-up, its
  answer within a bound) is what a busy machine changes; node tests also share one ROS domain
  per session.

A test file belongs to the serial part when it is under one of :data:`SERIAL_DIRS`, or when it
imports one of :data:`PROCESS_MODULES` (checked on the imported module, so a new test file that
starts nodes cannot land in the parallel part by being put elsewhere).  ``--part all`` (the
default of a plain ``python -m pytest``) runs both in one session.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

#: Directories (relative to test/) whose every test runs real ROS or Gazebo transport processes.
SERIAL_DIRS = ("nodes", "gz")
#: Modules whose use marks a test file as one that runs real processes over DDS or gz-transport:
#: the node tests' helpers, rclpy itself and the launch system.
PROCESS_MODULES = ("rclpy", "launch", "launch_ros", "helpers.nodes", "helpers.gz_helpers", "helpers.faulty_nodes")
#: The values of ``--part``.
PARTS = ("all", "parallel", "serial")


def _uses_process_modules(module: ModuleType | None) -> bool:
    if module is None:
        return False
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and any(name == m or name.startswith(m + ".") for m in PROCESS_MODULES):
            return True
    return False


def is_serial(path: Path, test_dir: Path, module: ModuleType | None = None) -> bool:
    """Whether the test file ``path`` (under ``test_dir``) belongs to the serial part.

    Args:
        path: The test file.
        test_dir: The suite's root (test/).
        module: The imported test file, to look at what it imports.

    Returns:
        True for a file under :data:`SERIAL_DIRS` or one that imports :data:`PROCESS_MODULES`.
    """
    try:
        relative = path.resolve().relative_to(test_dir.resolve())
    except ValueError:
        return False
    if relative.parts and relative.parts[0] in SERIAL_DIRS:
        return True
    return _uses_process_modules(module)
