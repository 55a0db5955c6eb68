"""``bb-robot fk``: every link's pose against Pinocchio (URDF) and libsdformat (SDF), and its options.

URDF: Pinocchio (``buildModelFromUrdf``, no root joint, so its ``universe`` is the root link's frame)
at a random configuration within the limits; mimic joints are independent coordinates in Pinocchio
(``mimic=False``), given the value the URDF's ``<mimic>`` says, computed here from the file's text;
continuous joints have two coordinates ``(cos θ, sin θ)``.  Each link is Pinocchio's ``BODY`` frame
of that name.

SDF: libsdformat 12 (the ``libsdformat`` fixture) resolves every link, frame and joint of the file at
zero; each link and ``<frame>`` of the selected model must be where libsdformat puts it, relative
to the robot's root link.  Files declaring SDF 1.10+ are loaded by libsdformat from a copy
relabelled 1.9 (as ``test/sdf``'s ``libsdformat_19`` fixture does).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.cli_helpers import CliResult, RunCli, resource_args
from helpers.libsdformat_reference import (
    SPEC_VERSION,
    Libsdformat,
    declared_version,
    entities,
    included_files,
    newer_features,
    pose_matrix,
    relabelled_copy,
)
from helpers.robot_files import corpus_urdfs, robot_label

TOLERANCE = 1e-9
MOVABLE = ("revolute", "continuous", "prismatic")


# ------------------------------------------------------------------------------ helpers
def quat_matrix(quat: list[float]) -> np.ndarray:
    x, y, z, w = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def frame_matrix(frame: dict[str, list[float]]) -> np.ndarray:
    """The 4x4 pose of one ``frames`` entry, after checking its documented form."""
    assert set(frame) == {"xyz", "quat_xyzw"}
    assert len(frame["xyz"]) == 3 and len(frame["quat_xyzw"]) == 4
    quat = frame["quat_xyzw"]
    assert math.isclose(sum(c * c for c in quat), 1.0, abs_tol=1e-12), quat
    assert quat[3] >= 0.0, quat
    matrix = np.eye(4)
    matrix[:3, :3] = quat_matrix(quat)
    matrix[:3, 3] = frame["xyz"]
    return matrix


def fk_json(result: CliResult) -> dict[str, Any]:
    assert result.returncode == 0, result
    data = result.json()
    assert set(data) == {"root", "frames"}
    return data  # type: ignore[no-any-return]


def urdf_joints(path: Path) -> list[dict[str, Any]]:
    """Each joint of a URDF file from its text: name, type, mimic ``(joint, multiplier, offset)``, limits."""
    joints = []
    for node in ET.parse(path).getroot().findall("joint"):
        mimic = node.find("mimic")
        limit = node.find("limit")
        joints.append(
            {
                "name": node.get("name"),
                "type": node.get("type"),
                "mimic": None
                if mimic is None or node.get("type") == "fixed"
                else (mimic.get("joint"), float(mimic.get("multiplier", 1)), float(mimic.get("offset", 0))),
                "lower": float(limit.get("lower", 0)) if limit is not None and "lower" in limit.attrib else None,
                "upper": float(limit.get("upper", 0)) if limit is not None and "upper" in limit.attrib else None,
            }
        )
    return joints


def random_configuration(joints: list[dict[str, Any]], rng: np.random.Generator) -> dict[str, float]:
    """A value for every independent movable joint, within its limits (±π or ±0.5 m where unbounded)."""
    values = {}
    for joint in joints:
        if joint["type"] not in MOVABLE or joint["mimic"] is not None:
            continue
        low, high = joint["lower"], joint["upper"]
        if joint["type"] == "continuous" or low is None or high is None or low >= high:
            low, high = (-0.5, 0.5) if joint["type"] == "prismatic" else (-math.pi, math.pi)
        values[joint["name"]] = float(rng.uniform(low, high))
    return values


def with_mimics(joints: list[dict[str, Any]], values: dict[str, float]) -> dict[str, float]:
    """``values`` plus each mimic joint's value: multiplier · source + offset, transitively."""
    by_name = {j["name"]: j for j in joints}

    def value(name: str) -> float:
        mimic = by_name[name]["mimic"]
        if mimic is None:
            return values.get(name, 0.0)
        source, multiplier, offset = mimic
        return multiplier * value(source) + offset

    return {j["name"]: value(j["name"]) for j in joints if j["type"] in MOVABLE}


def joint_args(values: dict[str, float]) -> list[str]:
    return [arg for name, value in values.items() for arg in ("--joint", f"{name}={value!r}")]


# ------------------------------------------------------------------------------ URDF vs Pinocchio
#: Above this many coordinates, pin.Data (n×n matrices, many of them) is too big: joints one by one.
LARGEST_PINOCCHIO_DATA = 200


def pinocchio_frame_placements(pin: Any, model: Any, q: np.ndarray) -> list[np.ndarray]:
    """Every frame's 4x4 placement in Pinocchio's universe frame at ``q``."""
    if model.nv <= LARGEST_PINOCCHIO_DATA:
        data = model.createData()
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        return [placement.homogeneous for placement in data.oMf]
    joints = [pin.SE3.Identity()]
    for i in range(1, model.njoints):
        joint_data = model.joints[i].createData()
        model.joints[i].calc(joint_data, q)
        joints.append(joints[model.parents[i]] * model.jointPlacements[i] * joint_data.M)
    return [(joints[frame.parentJoint] * frame.placement).homogeneous for frame in model.frames]


URDFS = corpus_urdfs(("long_chain_1000.urdf", "x_axis_arm.urdf", "mimic_chain.urdf"))


@pytest.mark.parametrize("path", URDFS, ids=robot_label)
def test_every_link_matches_pinocchio_at_a_random_configuration(run_cli: RunCli, path: Path) -> None:
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed")
    joints = urdf_joints(path)
    rng = np.random.default_rng(sum(path.name.encode()))
    values = random_configuration(joints, rng)
    data = fk_json(run_cli("fk", "--json", path, *joint_args(values)))
    root = ET.parse(path).getroot()
    children = {j.find("child").get("link") for j in root.findall("joint")}  # type: ignore[union-attr]
    roots = [link.get("name") for link in root.findall("link") if link.get("name") not in children]
    assert data["root"] in roots or data["root"] == "world"

    model = pin.buildModelFromUrdf(str(path))
    all_values = with_mimics(joints, values)
    q = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        joint, name = model.joints[joint_id], model.names[joint_id]
        if joint.nq == 1:
            q[joint.idx_q] = all_values[name]
        elif joint.nq == 2:  # continuous: (cos, sin)
            q[joint.idx_q : joint.idx_q + 2] = (math.cos(all_values[name]), math.sin(all_values[name]))
    placements = pinocchio_frame_placements(pin, model, q)
    bodies = {frame.name: i for i, frame in enumerate(model.frames) if frame.type == pin.FrameType.BODY}
    assert set(data["frames"]) == set(bodies) - {"universe"} | ({"world"} if "world" in data["frames"] else set())
    for name, frame in data["frames"].items():
        ours = frame_matrix(frame)
        if name not in bodies:  # a bare root 'world': the root frame itself
            np.testing.assert_allclose(ours, np.eye(4), atol=TOLERANCE, err_msg=name)
            continue
        np.testing.assert_allclose(ours, placements[bodies[name]], atol=TOLERANCE, err_msg=name)


# ------------------------------------------------------------------------------ SDF vs libsdformat
SDF_CASES = [
    # file, the model's scope, whether it is passed with --scope (else bb_robot selects it), whether
    # the corpus resource paths are needed
    ("sas_robot_driver_gazebo/sdf/ur3e.sdf", "ur3e", False, False),
    ("sas_robot_driver_gazebo/sdf/iiwa14.sdf", "converted_robot", False, False),
    ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "ur3e::ur3e_position_controller::ur3e", False, True),
    ("sdformat/test/sdf/model_joint_axis_expressed_in.sdf", "model_joint_axis_expressed_in", False, False),
    ("sdformat/test/sdf/nested_model.sdf", "top_level_model", False, False),
    ("gz_sim/examples/worlds/world_joint.sdf", "pendulum", False, False),
    (
        "gz_sim/test/worlds/include_connected_nested_models.sdf",
        "include_connected_nested_new_name::nested_models_new_name::model_00",
        False,
        True,
    ),
    ("gz_sim/test/worlds/include_connected_nested_models.sdf", "include_connected_nested_new_name", True, True),
]


def _libsdformat_result(
    libsdformat: Libsdformat, path: Path, resource_paths: tuple[Path, ...], tmp_path: Path
) -> dict[str, Any]:
    features = newer_features(path, resource_paths)
    if features:
        pytest.skip(f"libsdformat 12 reads SDF up to 1.9; {path.name} uses: " + "; ".join(features))
    versions = [declared_version(file) for file in included_files(path, resource_paths)]
    if all(version is None or version <= SPEC_VERSION for version in versions):
        return libsdformat(path, resource_paths)
    copy = relabelled_copy(path, resource_paths, tmp_path / "relabelled")
    return libsdformat(copy.path, copy.resource_paths)


@pytest.mark.parametrize(
    ("relative", "scope", "pass_scope", "needs_resources"),
    SDF_CASES,
    ids=[f"{c[0]}-{c[1].split('::')[-1]}" for c in SDF_CASES],
)
def test_every_link_and_frame_matches_libsdformat(
    run_cli: RunCli,
    libsdformat: Libsdformat,
    corpus_dir: Path,
    corpus_resource_paths: tuple[Path, ...],
    tmp_path: Path,
    relative: str,
    scope: str,
    pass_scope: bool,
    needs_resources: bool,
) -> None:
    path = corpus_dir / relative
    resources = corpus_resource_paths if needs_resources else ()
    scope_args = ["--scope", scope] if pass_scope else []
    data = fk_json(run_cli("fk", "--json", path, *scope_args, *resource_args(resources)))
    reference = entities(_libsdformat_result(libsdformat, path, resources, tmp_path))

    def world_pose(kind: str, name: str) -> np.ndarray:
        return pose_matrix(reference[kind, f"{scope}::{name}"]["world_pose"])

    root = data["root"]
    world_root = np.eye(4) if root == "world" else world_pose("link", root)
    compared = 0
    for (kind, scoped), _item in reference.items():
        if kind not in ("link", "frame", "joint") or not scoped.startswith(scope + "::"):
            continue
        name = scoped[len(scope) + 2 :]
        if kind == "joint" and name not in data["frames"]:
            continue  # only an off-axis joint has a link of its own: at its joint frame
        assert name in data["frames"], f"{kind} '{name}' of the SDF is missing from fk's frames"
        expected = np.linalg.inv(world_root) @ world_pose(kind, name)
        np.testing.assert_allclose(frame_matrix(data["frames"][name]), expected, atol=TOLERANCE, err_msg=name)
        compared += 1
    assert compared >= 2


# ------------------------------------------------------------------------------ options and errors
def test_unnamed_joints_are_zero_and_mimics_follow(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/mimic_chain.urdf"  # j2 = 2·j1 + 0.1, j3 = -j2; links 0.1 m apart on z
    zero = fk_json(run_cli("fk", "--json", path))
    explicit = fk_json(run_cli("fk", "--json", path, "--joint", "j1=0"))
    assert zero == explicit
    moved = fk_json(run_cli("fk", "--json", path, "--joint", "j1=0.3"))
    # About z: d turns by j1 + j2 + j3 = j1 + (2 j1 + 0.1) - (2 j1 + 0.1) = j1.
    angle = 2 * math.atan2(moved["frames"]["d"]["quat_xyzw"][2], moved["frames"]["d"]["quat_xyzw"][3])
    assert angle == pytest.approx(0.3, abs=1e-12)
    c = moved["frames"]["c"]["quat_xyzw"]
    assert 2 * math.atan2(c[2], c[3]) == pytest.approx(0.3 + 0.7, abs=1e-12)


@pytest.mark.parametrize(
    ("joint", "code", "words"),
    [
        ("j2=0.1", 1, "mimic"),
        ("nope=1", 1, "nope"),
        ("j1=abc", 2, "NAME=VALUE"),
        ("j1", 2, "NAME=VALUE"),
        ("j1=nan", 2, "finite"),
        ("j1=inf", 2, "finite"),
    ],
)
def test_bad_joint_values(run_cli: RunCli, corpus_dir: Path, joint: str, code: int, words: str) -> None:
    result = run_cli("fk", corpus_dir / "synthetic/mimic_chain.urdf", "--joint", joint)
    assert result.returncode == code, result
    assert words in result.stderr
    assert "Traceback" not in result.stderr


def test_a_joint_given_twice_is_a_usage_error(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("fk", corpus_dir / "synthetic/mimic_chain.urdf", "--joint", "j1=1", "--joint", "j1=2")
    assert result.returncode == 2
    assert "more than once" in result.stderr


def test_text_output_lists_every_frame(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("fk", corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e.sdf", "--joint", "elbow_joint=0.5")
    assert result.returncode == 0, result
    out = result.stdout
    assert "poses in 'base_link' (elbow_joint=0.5)" in out
    assert "tool0 (frame)" in out and "wrist_3_link" in out
    assert "quat (x y z w)" in out


def test_unit_quaternions_with_w_at_least_zero_on_a_deep_chain(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/long_chain_1000.urdf"
    data = fk_json(run_cli("fk", "--json", path, "--joint", "j500=3.1", "--joint", "j999=-3.1"))
    assert len(data["frames"]) == 1001
    for frame in data["frames"].values():
        frame_matrix(frame)
