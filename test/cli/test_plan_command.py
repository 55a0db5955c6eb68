"""``bb-robot plan`` run as a user runs it: the bundled arm and a MotionBenchMaker problem, exit codes, bad input.

The bundled arm's trajectory is re-checked independently: Pinocchio places the arm's meshes (its
own URDF parser and kinematics, coal underneath) at the trajectory's samples, interpolated so that
no joint moves more than 0.01 rad between two checks, on the pairs the SRDF leaves checked.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.cli_helpers import RunCli
from helpers.collision_robots import build, pin_q
from helpers.mbm_problems import mbm_robot, mbm_scenes
from helpers.robots import UR3E_JOINTS

from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.trajectory import TrajectoryPoint, build_trajectory

REPO_ROOT = Path(__file__).resolve().parents[2]
ARM = REPO_ROOT / "models" / "bb_arm.urdf"
CONFIG = REPO_ROOT / "config" / "bb_arm.yaml"
ARM_JOINTS = list(UR3E_JOINTS)  # bb_arm's arm
ARM_VELOCITY = np.array([2.0, 2.0, 2.5, 3.0, 3.0, 3.0])  # models/bb_arm.urdf
ARM_ACCELERATION = np.array([4.0, 4.0, 5.0, 8.0, 8.0, 8.0])  # config/bb_arm.yaml
pytestmark = pytest.mark.filterwarnings("ignore:You passed package dir")


def limit_table(names: list[str], velocity: np.ndarray, acceleration: np.ndarray) -> JointLimitTable:
    n = len(names)
    infinite = np.full(n, np.inf)
    return JointLimitTable(tuple(names), -infinite, infinite, -infinite, infinite, velocity, acceleration, infinite)


def seconds(stamp: dict[str, int]) -> float:
    return stamp["sec"] + stamp["nanosec"] * 1e-9


def dense(positions: np.ndarray, step: float = 0.01) -> np.ndarray:
    rows = [positions[0]]
    for a, b in zip(positions[:-1], positions[1:], strict=True):
        count = max(1, math.ceil(np.abs(b - a).max() / step))
        rows += [a + (b - a) * k / count for k in range(1, count + 1)]
    return np.asarray(rows)


def pinocchio_contacts(joint_names: list[str], positions: np.ndarray) -> int:
    """How many of ``positions`` (the named joints; the others at 0) Pinocchio finds in contact."""
    pin = pytest.importorskip("pinocchio")
    ours, model, geometry = build(ARM, ARM.with_suffix(".srdf"), None)
    data, geometry_data = model.createData(), geometry.createData()
    names = ours.fk.joint_names
    hits = 0
    for row in positions:
        q = np.zeros(len(names))
        q[[names.index(n) for n in joint_names]] = row
        hits += bool(
            pin.computeCollisions(model, data, geometry, geometry_data, pin_q(model, ours.robot, names, q), True)
        )
    return hits


def test_the_bundled_arm_planned_timed_written_and_rechecked(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "plan.yaml"
    result = run_cli(
        "plan", ARM, "--from", "shoulder_lift_joint=-0.5", "elbow_joint=1.0", "--to", "shoulder_pan_joint=2.0",
        "--to", "elbow_joint=-1.2", "wrist_2_joint=1.0", "--config", CONFIG, "--json", "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result
    report = result.json()
    assert report["success"] and report["error"] is None and report["tip"] == "tcp"
    assert report["joints"] == ARM_JOINTS and report["output"] == str(out)
    assert report["clearance"] == pytest.approx(0.003)
    assert report["start"]["shoulder_lift_joint"] == -0.5 and report["start"]["left_finger_joint"] == 0.0
    assert report["lengths"]["simplified"] <= report["lengths"]["raw"] + 1e-12
    trajectory = report["trajectory"]
    points = trajectory["points"]
    positions = np.array([p["positions"] for p in points])
    velocities = np.array([p["velocities"] for p in points])
    accelerations = np.array([p["accelerations"] for p in points])
    assert positions[0].tolist() == [0.0, -0.5, 1.0, 0.0, 0.0, 0.0]
    assert positions[-1].tolist() == [2.0, -0.5, -1.2, 0.0, 1.0, 0.0]  # the joints not named keep their start
    assert np.allclose(np.diff([p["time"] for p in points]), 0.002)
    assert (np.abs(velocities) <= ARM_VELOCITY + 1e-9).all()
    assert (np.abs(accelerations) <= ARM_ACCELERATION + 1e-9).all()  # the config's, not the default 1 rad/s²
    assert report["limits"]["elbow_joint"] == {"velocity": 2.5, "acceleration": 5.0, "jerk": None, "defaulted": []}
    assert trajectory["peak_acceleration_ratio"] <= 1.0 + 1e-9
    # The -o file: a JointTrajectory, and as a FollowJointTrajectory goal's text.
    message = yaml.safe_load(out.read_text())
    assert message["joint_names"] == ARM_JOINTS and 2 < len(message["points"]) < len(points) / 20  # the knots
    last = message["points"][-1]
    assert last["positions"] == positions[-1].tolist() and last["velocities"] == [0.0] * 6
    assert last["time_from_start"]["sec"] + last["time_from_start"]["nanosec"] * 1e-9 == pytest.approx(
        trajectory["duration"]
    )
    assert message["points"][1]["accelerations"] == []  # the trapezoid's: positions and velocities only
    # The driver, given the file's points, follows the very samples of --json.
    table = limit_table(ARM_JOINTS, ARM_VELOCITY, ARM_ACCELERATION)
    driven = build_trajectory(
        ARM_JOINTS,
        [
            TrajectoryPoint(seconds(p["time_from_start"]), p["positions"], p["velocities"], p["accelerations"])
            for p in message["points"]
        ],
        table, positions[0], np.zeros(6), start_ns=0, now_ns=0,
    )  # fmt: skip
    assert np.abs(driven.positions_at(np.array([p["time"] for p in points])) - positions).max() < 1e-8
    goal = yaml.safe_load("{trajectory: " + out.read_text() + "}")
    assert goal["trajectory"]["joint_names"] == ARM_JOINTS
    assert pinocchio_contacts(ARM_JOINTS, dense(positions)) == 0


def test_a_pose_goal_on_the_bundled_arm(run_cli: RunCli) -> None:
    result = run_cli("plan", ARM, "--xyz", "0.3", "0.2", "0.4", "--rpy", "3.14159", "0", "0", "--json")
    assert result.returncode == 0, result
    report = result.json()
    last = np.array(report["trajectory"]["points"][-1]["positions"])
    assert report["success"] and len(last) == 6
    positions = np.array([p["positions"] for p in report["trajectory"]["points"]])
    assert pinocchio_contacts(ARM_JOINTS, dense(positions)) == 0


def test_a_motionbenchmaker_problem(run_cli: RunCli, tmp_path: Path) -> None:
    urdf, _ = mbm_robot("panda")
    (scene,) = [p for p in mbm_scenes("panda", range(1, 2), tmp_path) if "/box_panda/" in p.as_posix()]
    # request0001.yaml of box_panda: its start state and joint goal
    start = ["panda_joint1=0", "panda_joint2=-0.785", "panda_joint3=0", "panda_joint4=-2.356", "panda_joint5=0",
             "panda_joint6=1.571", "panda_joint7=0.785"]  # fmt: skip
    goal = ["panda_joint1=0.4534448383669427", "panda_joint2=1.7628", "panda_joint3=0.1941262264518609",
            "panda_joint4=-0.8667848896139277", "panda_joint5=-0.3798524112731043", "panda_joint6=2.606927984171601",
            "panda_joint7=-0.1898611792470702"]  # fmt: skip
    result = run_cli(
        "plan", urdf, "--tip", "panda_hand", "--world", scene, "--from", *start, "--to", *goal,
        "--clearance", "0", "--timeout", "60", "--json", timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result
    report = result.json()
    assert report["success"] and report["joints"] == [f"panda_joint{i}" for i in range(1, 8)]
    final = report["trajectory"]["points"][-1]["positions"]
    assert np.allclose(final, [float(g.split("=")[1]) for g in goal])


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--to", "elbow_joint=nan"], 2, "--to elbow_joint: the value must be a finite number, got 'nan'"),
        (["--to", "ghost_joint=1"], 1, "goal joint 'ghost_joint' is not a joint of the robot"),
        (["--from", "ghost_joint=1", "--to", "elbow_joint=1"], 1, "start joint 'ghost_joint'"),
        (["--to", "elbow_joint=1", "--tip", "ghost_link"], 1, "has no link 'ghost_link' (--tip)"),
        ([], 2, "give a goal: --to NAME=VALUE ... or --xyz X Y Z"),
        (["--to", "elbow=1", "--xyz", "0", "0", "0"], 2, "not allowed with argument"),
        (["--to", "elbow_joint=1", "--world", "/nonexistent/world.yaml"], 1, "/nonexistent/world.yaml"),
        (["--to", "elbow_joint=9"], 1, "goal joint 'elbow_joint' = 9 is outside its limits"),
        (["--to", "elbow_joint=1", "--clearance", "-1"], 2, "--clearance must be a distance >= 0 m"),
        (["--to", "elbow_joint=1", "--timeout", "0"], 2, "--timeout must be a positive number"),
        (["--to", "elbow_joint=1", "--config", "/nonexistent/limits.yaml"], 1, "/nonexistent/limits.yaml: cannot read"),
        (["--xyz", "5", "5", "5"], 1, "NoIkSolution"),
    ],
)
def test_exit_codes_and_bad_input_named_without_a_traceback(
    run_cli: RunCli, args: list[str], code: int, message: str
) -> None:
    json_args = ["--json"] if message == "NoIkSolution" else []
    result = run_cli("plan", ARM, *args, *json_args)
    assert result.returncode == code, result
    assert message in (result.stdout + result.stderr), result
    assert "Traceback" not in result.stderr


def test_an_unreadable_world_file_is_named(run_cli: RunCli, tmp_path: Path) -> None:
    world = tmp_path / "broken.yaml"
    world.write_text("obstacles: [{name: post, shape: {box: [1, 2]}}]\n")
    result = run_cli("plan", ARM, "--to", "elbow_joint=1", "--world", world)
    assert result.returncode == 1 and "broken.yaml" in result.stderr and "Traceback" not in result.stderr, result


def test_plans_meant_for_the_driver_keep_its_default_clearance_plus_a_millimetre() -> None:
    # The default of bb-robot plan, of Cartesian paths and of the move_group node: the driver's
    # guard refuses a trajectory nearer than its collision.clearance, so a plan keeps 1 mm more.
    from bb_robot.driver.parameters import spec
    from bb_robot.planning.validity import DRIVER_CLEARANCE

    assert DRIVER_CLEARANCE == pytest.approx(float(spec("collision.clearance").default) + 0.001)
