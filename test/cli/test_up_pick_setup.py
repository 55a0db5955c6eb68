"""``bb-robot up --demo-pick``'s parts that need no ROS, in process: the shipped parameter file and world,
``--seed``'s copies of them, the tool's yaw, and what is refused before anything starts."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
import yaml

from bb_robot.bringup.config import read_config
from bb_robot.bringup.pick import AREA, Spot, mirrored, seeded_spot, tool_down
from bb_robot.cli.main import main
from bb_robot.cli.up_demo_setup import PICK_CONFIG, PLAN_CONFIG, demo_inputs
from bb_robot.cli.up_inputs import UpError, plan_bringup
from bb_robot.cli.up_pick import DEMO_CONFIG, across, pick_setup, seeded_config


def test_the_shipped_parameter_file_sets_up_the_pick_on_mujoco() -> None:
    plan = plan_bringup(None, config=DEMO_CONFIG)
    assert plan.config.backend == "mujoco"
    setup = pick_setup(plan)
    assert (setup.pick.x, setup.pick.y, setup.pick.z) == (0.45, 0.15, 0.02)
    assert setup.place == mirrored(setup.pick, 0.0)
    assert setup.side == pytest.approx(0.04) and setup.wall_top == pytest.approx(0.19)
    assert setup.gripper_joints == ("left_finger_joint",) and setup.root == "base_link" and setup.mujoco
    assert not pick_setup(plan_bringup(None, config=DEMO_CONFIG, backend="sim")).mujoco


def test_a_seed_writes_the_world_with_the_cube_moved_and_a_parameter_file_naming_it(tmp_path: Path) -> None:
    written = seeded_config(DEMO_CONFIG, 5, tmp_path)
    assert written.name == DEMO_CONFIG and written.parent == tmp_path
    settings = read_config(str(written))
    world = yaml.safe_load(Path(settings.collision_world).read_text())
    cube = next(entry for entry in world["obstacles"] if entry["name"] == "cube")
    spot = seeded_spot(5, 0.02)
    assert cube["xyz"] == pytest.approx([spot.x, spot.y, 0.02]) and cube["rpy"][2] == pytest.approx(spot.yaw)
    assert AREA.x[0] <= spot.x <= AREA.x[1] and AREA.y[0] <= spot.y <= AREA.y[1]
    assert cube["mass"] == 0.1 and {e["name"] for e in world["obstacles"]} == {"table", "wall", "cube"}
    # the rest of the parameter file is the shipped one
    assert written.read_text().replace(settings.collision_world, "package://bb_robot/models/bb_arm_pick.yaml") == (
        read_config(DEMO_CONFIG).path.read_text()
    )


def test_the_fingers_close_along_the_wall() -> None:
    for yaw in (-math.pi / 4, 0.0, 0.3, math.pi / 4):
        turned = across(Spot(0.4, 0.1, 0.02, yaw))
        assert math.pi / 4 <= turned.yaw <= 3 * math.pi / 4
        closing = tool_down(turned, 0.1)[:3, 1]  # the fingers close along the tool's y axis
        assert abs(closing[1]) <= math.sin(math.pi / 4) + 1e-9  # more along the wall (x) than across it


def test_without_a_cube_or_planning_nothing_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UpError, match="no collision.world"):
        pick_setup(plan_bringup(None, config="bb_arm.yaml"))
    assert main(["up", "--demo-pick", "--no-planning"]) == 1
    assert "--demo-pick needs the move_group node: --no-planning" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["up", "--seed", "3"])
    assert usage.value.code == 2
    assert "--seed goes with --demo-pick" in capsys.readouterr().err


def test_each_planning_demo_brings_its_own_parameter_file_unless_told(tmp_path: Path) -> None:
    def inputs(*argv: str) -> tuple[str | None, list[str]]:
        options = {"file": None, "config": None, "resource_path": [], "demo_plan": False, "demo_pick": False,
                   "seed": None}  # fmt: skip
        for flag in argv:
            key, _, value = flag.partition("=")
            options[key] = value if value else True
        options["seed"] = int(options["seed"]) if options["seed"] is not None else None
        return demo_inputs(argparse.Namespace(**options), tmp_path)

    assert inputs("demo_plan") == (PLAN_CONFIG, [])
    assert inputs("demo_pick") == (PICK_CONFIG, [])
    assert inputs("demo_pick", "config=mine.yaml") == ("mine.yaml", [])
    assert inputs("demo_pick", "file=arm.urdf") == (None, [])  # a robot file of the user's: its own file or none
    config, paths = inputs("demo_pick", "seed=4")
    assert config == str(tmp_path / PICK_CONFIG) and paths == [str(tmp_path)]
    assert inputs() == (None, [])
