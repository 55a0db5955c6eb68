"""``bb-robot chain``: the serial manipulator's JSON (values from the file's text) and table, strict
and normalising modes, and the errors that say which option to pass."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_helpers import CliResult, RunCli, resource_args

CHAIN_KEYS = {"base", "tip", "joints", "source_scope"}
JOINT_KEYS = {"name", "type", "lower", "upper", "velocity", "effort"}


def chain_json(result: CliResult) -> dict[str, Any]:
    assert result.returncode == 0, result
    data = result.json()
    assert set(data) == CHAIN_KEYS
    for joint in data["joints"]:
        assert set(joint) == JOINT_KEYS
        assert joint["type"] in ("RZ", "TZ")
    return data  # type: ignore[no-any-return]


def urdf_limits(path: Path) -> dict[str, dict[str, Any]]:
    """Each joint's type and <limit> attributes (floats, or None when absent) from the file's text."""
    limits = {}
    for joint in ET.parse(path).getroot().findall("joint"):
        limit = joint.find("limit")
        attrib = limit.attrib if limit is not None else {}
        limits[joint.get("name") or ""] = {
            "type": joint.get("type"),
            **{key: float(attrib[key]) if key in attrib else None for key in ("lower", "upper", "velocity", "effort")},
        }
    return limits


@pytest.mark.parametrize(
    ("relative", "tip", "base", "joints"),
    [
        ("ur_description_ros2/ur5e.urdf", "tool0", "world", 6),
        ("ur_description_ros2/ur3e.urdf", "tool0", "world", 6),  # wrist_3 is continuous: no position limits
        ("moveit_resources/panda_description/urdf/panda.urdf", "panda_hand", "panda_link0", 7),
        ("franka_description/fr3_hand.urdf", "fr3_leftfinger", "base", 8),  # 7 revolute + a prismatic finger
    ],
)
def test_json_limits_and_types_are_the_files(
    run_cli: RunCli, corpus_dir: Path, relative: str, tip: str, base: str, joints: int
) -> None:
    path = corpus_dir / relative
    data = chain_json(run_cli("chain", "--json", path, "--tip", tip, "--normalise"))
    assert (data["base"], data["tip"], data["source_scope"]) == (base, tip, None)
    assert len(data["joints"]) == joints
    written = urdf_limits(path)
    for joint in data["joints"]:
        source = written[joint["name"]]
        assert joint["type"] == ("TZ" if source["type"] == "prismatic" else "RZ")
        bounded = source["type"] != "continuous"
        assert joint["lower"] == (source["lower"] if bounded else None)
        assert joint["upper"] == (source["upper"] if bounded else None)
        assert joint["velocity"] == source["velocity"]
        assert joint["effort"] == source["effort"]


def test_strict_mode_refuses_axes_that_are_not_z_and_says_to_normalise(run_cli: RunCli, corpus_dir: Path) -> None:
    for path, default_args in (
        (corpus_dir / "synthetic/x_axis_arm.urdf", ("--strict",)),  # URDF normalises unless told
        (corpus_dir / "synthetic/sdf_x_axis_arm.sdf", ()),  # SDF is strict by default
    ):
        strict = run_cli("chain", path, *default_args)
        assert strict.returncode == 1, strict
        assert "not about +z" in strict.stderr and "--normalise" in strict.stderr
        assert "Traceback" not in strict.stderr
        normalised = chain_json(run_cli("chain", "--json", path, "--normalise"))
        assert [j["type"] for j in normalised["joints"]] == ["RZ", "RZ"]


def test_urdf_input_normalises_by_default(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/x_axis_arm.urdf"
    by_default = run_cli("chain", "--json", path)
    assert by_default.returncode == 0, by_default
    assert chain_json(by_default) == chain_json(run_cli("chain", "--json", path, "--normalise"))
    assert "(normalised" in run_cli("chain", path).stdout


def test_strict_and_normalise_exclude_each_other(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("chain", corpus_dir / "synthetic/x_axis_arm.urdf", "--strict", "--normalise")
    assert result.returncode == 2


def test_z_axis_reached_through_a_rotated_frame_passes_strict_mode(run_cli: RunCli, corpus_dir: Path) -> None:
    data = chain_json(run_cli("chain", "--json", corpus_dir / "synthetic/sdf_z_axis_via_rotation.sdf"))
    assert [j["name"] for j in data["joints"]] == ["j1", "j2"]
    assert data["source_scope"] == "z_axis_rotated"


def test_a_branching_robot_asks_for_a_tip(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("chain", corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf", "--normalise")
    assert result.returncode == 1
    assert "panda_finger_joint1" in result.stderr and "--tip LINK" in result.stderr


def test_sdf_world_chain_starts_at_the_canonical_link(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    world = corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf"
    data = chain_json(run_cli("chain", "--json", world, *resource_args(corpus_resource_paths)))
    assert data["source_scope"] == "ur3e::ur3e_position_controller::ur3e"
    assert data["base"] == "base_link"
    names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint"]
    assert [j["name"] for j in data["joints"]] == [*names, "wrist_3_joint"]
    assert all(j["type"] == "RZ" for j in data["joints"])
    # The SDF file's own numbers (ur3e.sdf): pan limits ±2π, effort 54, velocity π.
    pan = data["joints"][0]
    assert [pan["lower"], pan["upper"], pan["velocity"], pan["effort"]] == [-2 * math.pi, 2 * math.pi, math.pi, 54.0]


def test_unlimited_sdf_values_are_null(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "sdformat/test/sdf/joint_axis_infinite_limits.sdf"
    text = run_cli("chain", "--json", path, "--normalise", "--base", "link6", "--tip", "link3")
    data = chain_json(text)
    assert "Infinity" not in text.stdout and "NaN" not in text.stdout
    limits = {j["name"]: [j["lower"], j["upper"], j["velocity"], j["effort"]] for j in data["joints"]}
    assert limits == {
        "infinite_joint_limits_neg": [None, None, None, None],  # ±inf bounds, -1 ("unlimited") rates
        "infinite_joint_limits_inf": [None, None, None, None],
        "finite_joint_limits": [-1.5, 1.5, 2.5, 5.5],
    }


def test_table_shows_actuation_offsets_and_limits(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("chain", corpus_dir / "ur_description_ros2/ur5e.urdf", "--tip", "tool0", "--strict")
    assert result.returncode == 0, result
    out = result.stdout
    assert "serial chain of robot 'ur5e'" in out and "'world' → 'tool0', 6 joints (strict" in out
    header = next(line for line in out.splitlines() if line.startswith("#"))
    for column in ("joint", "type", "offset xyz (m)", "offset rpy (rad)", "lower", "upper", "velocity", "effort"):
        assert column in header
    pan = next(line for line in out.splitlines() if "shoulder_pan_joint" in line)
    assert "RZ" in pan and "0 0 0.1625" in pan and "base_joint" in pan
    assert "tip offset (wrist_3_link → tool0)" in out


def test_base_and_tip_choose_a_sub_chain(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "ur_description_ros2/ur5e.urdf"
    data = chain_json(run_cli("chain", "--json", path, "--base", "shoulder_link", "--tip", "forearm_link"))
    assert [j["name"] for j in data["joints"]] == ["shoulder_lift_joint", "elbow_joint"]
    unknown = run_cli("chain", path, "--tip", "no_such_link")
    assert unknown.returncode == 1 and "no_such_link" in unknown.stderr
