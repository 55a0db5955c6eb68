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


#: Parametrized node tests whose cases vary the robot or the config file, not the calls into
#: rclpy, launch or Fast DDS: the Jazzy profile runs the cases named here (pytest's ids), the
#: Kilted suite all of them (docs/distributions.md, "The Jazzy profile in CI").  Each of these
#: runs a whole system per case (a bringup with the real ``ros2`` command line: 10 to 19 s each).
JAZZY_PROFILE_CASES: dict[str, frozenset[str]] = {
    # the README's bringup (the message for absent RViz and Gazebo included); the mujoco, Gazebo,
    # actuators and two-arm bringups have tests of their own in the profile
    "nodes/test_bringup_launch.py::test_bringup_with_each_simulator_config": frozenset({"bb_arm.yaml"}),
    # one config per backend
    "nodes/test_shipped_configs.py::test_a_command_beyond_the_margin_is_refused_and_the_arm_does_not_move": frozenset(
        {
            "bb_arm.yaml-sim",
            "bb_arm_mujoco.yaml-mujoco",
            "bb_arm_actuators.yaml-actuators",
            "worlds_ur3e_world_gazebo.yaml-gazebo",
        }
    ),
    # the pick and place on MuJoCo, the physics that proves it (each case a bringup and a 20 s pick;
    # the Kilted suite runs a second MuJoCo seed and the simulator's with the view,
    # benchmarks/bench_pick.py twenty)
    "nodes/test_up_pick.py::test_up_demo_pick_places_the_cube_across_the_wall": frozenset({"mujoco-seed3"}),
    # the planning demo on the simulator (move_group's and the driver's calls are the same on mujoco,
    # whose arm trajectories the pick above runs)
    "nodes/test_up_plan.py::test_up_demo_plan_reaches_the_pose_behind_the_post": frozenset({"sim"}),
    # one bad reply (a dropped one): the other faults differ in the bytes the emulator sends, which
    # the bus code judges the same way on either distribution
    "nodes/test_bus_node.py::test_bad_replies_are_survived_and_named_and_nothing_moves": frozenset({"drop"}),
}

#: Node tests the Jazzy profile leaves to the Kilted suite (``file::function``): what they vary is
#: bb_robot's own logic over calls into rclpy, launch and Fast DDS that other tests of the profile
#: make (docs/distributions.md, "The Jazzy profile in CI"); each brings a whole system up (13 to 33 s
#: on the slow host, scripts/slow-host --cpu 80).
JAZZY_PROFILE_KILTED_ONLY: frozenset[str] = frozenset(
    {
        # the Cartesian demo's tracking on MuJoCo with the view, and the paused turn (SIGSTOP of the
        # driver or of bb-robot up): test_up_demo_cartesian_draws_the_circle runs the demo on Jazzy,
        # test_up_foxglove.py the view
        "nodes/test_up_cartesian.py::test_up_demo_cartesian_on_mujoco_with_the_view",
        "nodes/test_up_cartesian.py::test_a_turn_the_machine_paused_is_drawn_again_and_judged",
        # the Koch arm's shipped file on the emulated bus: the SO-101's runs on Jazzy in test_bus_node.py
        "nodes/test_bus_koch.py::test_up_demo_moves_the_emulated_koch_arm_through_its_shipped_config",
        # the leader's faults and a follower still lacking a joint: the leader-follower pair itself
        # (ramp, then tracking) runs on Jazzy
        "nodes/test_teleop_leader.py::test_leader_faults_are_named_and_the_follower_does_not_move",
        "nodes/test_teleop_leader.py::test_a_follower_whose_joint_states_still_lack_a_joint_is_waited_for",
    }
)


def _relative(path: Path, test_dir: Path) -> Path | None:
    try:
        return path.resolve().relative_to(test_dir.resolve())
    except ValueError:
        return None


def in_jazzy_profile(path: Path, test_dir: Path, function: str = "", case: str | None = None) -> bool:
    """Whether a test belongs to the Jazzy profile.

    Args:
        path: The test file.
        test_dir: The suite's directory (``test/``).
        function: The test function's name (``""``: the question is about the file).
        case: The parametrized case's id (pytest's ``callspec.id``), ``None`` for a test without cases.

    Returns:
        Whether the file is in the profile and, for a case of a function in
        :data:`JAZZY_PROFILE_CASES`, whether that case is one named there; never for a function of
        :data:`JAZZY_PROFILE_KILTED_ONLY`.
    """
    relative = _relative(path, test_dir)
    if relative is None or relative.as_posix() in JAZZY_PROFILE_EXCLUDED:
        return False
    if not any(
        relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts) for pattern in JAZZY_PROFILE_GLOBS
    ):
        return False
    key = f"{relative.as_posix()}::{function}"
    if key in JAZZY_PROFILE_KILTED_ONLY:
        return False
    cases = JAZZY_PROFILE_CASES.get(key)
    return cases is None or case is None or case in cases


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
