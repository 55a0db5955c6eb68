"""Which ROS 2 distribution the tests run on, and where ``scripts/setup`` puts each distribution's venv.

``scripts/setup`` makes ``.venv`` for ROS 2 Kilted (the default) and, with ``ROS_DISTRO=jazzy``,
``.venv-jazzy`` for Jazzy (``scripts/ros_distro.sh``).  A test that runs processes of the *other*
distribution (the mixed graph) starts that venv's python with :func:`venv_environment`.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Distribution → its venv under the repository (scripts/ros_distro.sh).
VENVS = {"kilted": REPO_ROOT / ".venv", "jazzy": REPO_ROOT / ".venv-jazzy"}
#: rclpy's major version on PyPI → the distribution its wheels belong to.
RCLPY_MAJOR = {7: "jazzy", 9: "kilted"}
#: The test files (relative to test/) of the Jazzy profile, which CI runs on .venv-jazzy after the
#: full Kilted suite (``ROS_DISTRO=jazzy scripts/test -m jazzy_profile``): every node test (the
#: description node, the driver with each backend — sim, actuators, Gazebo against the C++
#: gz-transport peer —, the launch files, ``bb-robot up``) and what proves the interface packages
#: and the package build on that distribution.  The mixed graph (test_mixed_distros.py) needs both
#: venvs and runs in the Kilted suite.
JAZZY_PROFILE_GLOBS = ("nodes/test_*.py", "driver/test_control_msgs.py", "test_package_build.py")
#: test_network_cut: Jazzy's fast-discovery-server binary does not start with the library path the
#: test gives it (libtinyxml2 is elsewhere in Jazzy's wheels); the test runs on Kilted.
JAZZY_PROFILE_EXCLUDED = frozenset({"nodes/test_mixed_distros.py", "nodes/test_network_cut.py"})


def in_jazzy_profile(path: Path, test_dir: Path) -> bool:
    """Whether the test file ``path`` (under ``test_dir``) belongs to the Jazzy profile."""
    try:
        relative = path.resolve().relative_to(test_dir.resolve())
    except ValueError:
        return False
    if relative.as_posix() in JAZZY_PROFILE_EXCLUDED:
        return False
    return any(
        relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts) for pattern in JAZZY_PROFILE_GLOBS
    )


def running_distro() -> str:
    """The distribution of the rclpy this process imports.

    ``ROS_DISTRO`` where it is set (a ROS install's setup.bash, ``scripts/env.sh``); otherwise the
    major version of the ``ros-rclpy`` wheel (7: Jazzy, 9: Kilted).

    Raises:
        LookupError: neither says which distribution this is.
    """
    named = os.environ.get("ROS_DISTRO", "").strip()
    if named:
        return named
    try:
        major = int(metadata.version("ros-rclpy").split(".")[0])
    except metadata.PackageNotFoundError as missing:
        raise LookupError("ROS_DISTRO is not set and no ros-rclpy wheel is installed") from missing
    if major not in RCLPY_MAJOR:
        raise LookupError(f"ros-rclpy {major}.x belongs to no distribution bb_robot sets up")
    return RCLPY_MAJOR[major]


def venv_python(distro: str) -> Path:
    """The python of ``distro``'s venv (it may not exist: check ``.is_file()``)."""
    return VENVS[distro] / "bin" / "python"


def venv_environment(distro: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a child process running ``distro``'s venv python.

    The wheels' bootstrapper re-executes a python once with ``LD_LIBRARY_PATH`` pointing into its
    venv and marks that with ``_ROS_WHEELS_BOOTSTRAP_COMPLETE``; a child inheriting both from a
    process of the other venv would skip its own bootstrap and load the other distribution's
    libraries.  So both are dropped, and ``AMENT_PREFIX_PATH``, ``VIRTUAL_ENV``, ``PATH`` and
    ``ROS_DISTRO`` name ``distro``'s venv.

    Args:
        distro: ``"kilted"`` or ``"jazzy"``.
        base: the environment to start from (default: this process's).

    Returns:
        The child's environment.
    """
    venv = VENVS[distro]
    env = dict(os.environ if base is None else base)
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("PYTHONHOME", None)
    others = {str(v / "bin") for v in VENVS.values()}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p not in others]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = env["AMENT_PREFIX_PATH"] = str(venv)
    env["ROS_DISTRO"] = distro
    return env
