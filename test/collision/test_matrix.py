"""The allowed-collision matrix: MoveIt's categories, against the Panda's shipped SRDF; SRDF in and out."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from helpers.collision_robots import example_robot_files, two_bodies

from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import (
    ADJACENT,
    ALWAYS,
    DEFAULT,
    NEVER,
    CollisionMatrix,
    compute_matrix,
    default_configuration,
)
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import parse_srdf, read_srdf, srdf_text, write_srdf
from bb_robot.collision.verify import TOUCHES, verify_pairs
from bb_robot.loading import load_file, load_text

BUNDLED_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


#: Robots with a shipped SRDF, and the pairs it disables that can touch: each with the joints of a
#: configuration in contact (the others at the default configuration) that our verification reports.
SHIPPED = {
    "panda": ("panda_description/urdf/panda.urdf", "panda.srdf", {}),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", "xarm7.srdf", {}),
    "ur5": (
        "ur_description/urdf/ur5_robot.urdf",
        "ur5.srdf",
        {
            ("base_link", "upper_arm_link"): {"shoulder_pan_joint": 2.886, "shoulder_lift_joint": -4.076},
            ("forearm_link", "wrist_2_link"): {"wrist_1_joint": -4.342, "wrist_2_joint": 5.383},
            ("forearm_link", "wrist_3_link"): {
                "wrist_1_joint": -5.613,
                "wrist_2_joint": -2.439,
                "wrist_3_joint": -1.541,
            },
        },
    ),
}


@functools.cache
def shipped(robot: str) -> tuple[CollisionModel, CollisionMatrix, CollisionMatrix]:
    """The robot's collision model, our matrix (seed 7) and its shipped SRDF's."""
    urdf_suffix, srdf_name, _ = SHIPPED[robot]
    urdf, srdf, share = example_robot_files(urdf_suffix, srdf_name)
    loaded = load_file(str(urdf))
    model = CollisionModel(loaded.robot, robot_parts(loaded.robot, loaded.source, [str(share)]))
    return model, compute_matrix(model, seed=7), read_srdf(srdf, loaded.robot.links)


@pytest.fixture(scope="module")
def panda() -> tuple[CollisionModel, CollisionMatrix, CollisionMatrix]:
    return shipped("panda")


@pytest.mark.parametrize("robot", sorted(SHIPPED))
def test_the_matrix_agrees_with_the_shipped_srdf_but_for_pairs_with_a_witness(robot: str) -> None:
    model, computed, srdf = shipped(robot)
    listed = SHIPPED[robot][2]
    solid = set(model.links_with_geometry)
    disabled_by_file = {p for p in srdf.disabled if p[0] in solid and p[1] in solid}
    assert len(disabled_by_file) >= 8
    # Every pair the file disables is disabled by us, but the listed ones, which can touch:
    assert {p for p in disabled_by_file if p not in computed.disabled} == set(listed)
    checks = {c.pair: c for c in verify_pairs(model, srdf.disabled)}
    assert {c.pair for c in checks.values() if c.status == TOUCHES} == set(listed)
    default = default_configuration(model.robot, model.fk.joint_names)
    for pair, joints in listed.items():
        assert set(joints) == set(checks[pair].moving)
        q = default.copy()
        for name, value in joints.items():
            q[model.fk.joint_names.index(name)] = value
        alone = model.with_allowed(p for p in model.pairs if p != pair)
        assert {c.links for c in alone.colliding(q, exact=True)} == {pair}, f"{robot} {pair}: listed witness apart"
    # A pair the file checks and we do not is one of ours, a Never pair with its margin:
    checked_by_file = {(a, b) for i, a in enumerate(sorted(solid)) for b in sorted(solid)[i + 1 :]} - set(srdf.disabled)
    for pair in checked_by_file & set(computed.disabled):
        reason = computed.disabled[pair]
        assert reason in (ADJACENT, DEFAULT, ALWAYS) or computed.margins[pair] > 0.0, (pair, reason)


def test_categories_follow_moveit(panda: tuple[CollisionModel, CollisionMatrix, CollisionMatrix]) -> None:
    model, computed, _ = panda
    reasons = dict(computed.disabled)
    assert reasons[("panda_link0", "panda_link1")] == ADJACENT
    assert reasons[("panda_hand", "panda_link7")] == ADJACENT
    assert computed.samples == 10_000
    for pair, fraction in computed.fractions.items():
        if fraction == 0:
            assert reasons[pair] == NEVER or pair in computed.reached
        elif fraction > 0.95:
            assert reasons[pair] == ALWAYS
        else:
            assert pair not in reasons
    never = [pair for pair, reason in reasons.items() if reason == NEVER]
    assert never and all(computed.margins[pair] > 0.0 for pair in never)
    # The margins are comments beside the pairs in the SRDF:
    assert any(
        f'link2="{never[0][1]}" reason="Never"/> <!-- margin ' in line for line in srdf_text(computed).splitlines()
    )
    # Default: in contact with every joint at 0 (or mid-range); none of them is adjacent.
    default = [pair for pair, reason in reasons.items() if reason == DEFAULT]
    assert all(pair not in computed.fractions for pair in default)
    zero = model.with_allowed([p for p, r in reasons.items() if r == ADJACENT])
    in_contact = {c.links for c in zero.colliding(default_configuration(model.robot, model.fk.joint_names), exact=True)}
    assert set(default) == in_contact


def test_same_seed_same_matrix() -> None:
    loaded = load_file(str(BUNDLED_ARM))
    model = CollisionModel(loaded.robot, robot_parts(loaded.robot, loaded.source))
    first = compute_matrix(model, samples=2000, seed=3)
    again = compute_matrix(model, samples=2000, seed=3)
    assert first.disabled == again.disabled
    assert first.fractions == again.fractions
    # Adjacent through tool0, which has no geometry:
    assert first.disabled[("gripper_base", "wrist_3_link")] == ADJACENT


def test_srdf_round_trip(tmp_path: Path) -> None:
    loaded = load_file(str(BUNDLED_ARM))
    model = CollisionModel(loaded.robot, robot_parts(loaded.robot, loaded.source))
    matrix = compute_matrix(model, samples=500, seed=1)
    path = tmp_path / "arm.srdf"
    write_srdf(matrix, path)
    back = read_srdf(path, loaded.robot.links)
    assert back.disabled == matrix.disabled
    assert back.robot == loaded.robot.name


def test_srdf_errors_name_the_line_and_link() -> None:
    robot = load_text(two_bodies('<sphere radius="0.1"/>', '<sphere radius="0.1"/>')).robot
    with pytest.raises(SrdfError, match=r"line 2: <disable_collisions> names link 'elbow'"):
        parse_srdf(
            '<robot name="two">\n<disable_collisions link1="base" link2="elbow"/></robot>', "x.srdf", robot.links
        )
    with pytest.raises(SrdfError, match="needs link1 and link2"):
        parse_srdf('<robot name="two"><disable_collisions link1="base"/></robot>', "x.srdf")
    with pytest.raises(SrdfError, match="root element is <sdf>"):
        parse_srdf("<sdf/>", "x.srdf")
    with pytest.raises(SrdfError, match="x.srdf"):
        parse_srdf("<robot", "x.srdf")
    reasons = parse_srdf('<robot name="two"><disable_collisions link1="mover" link2="base"/></robot>').disabled
    assert reasons == {("base", "mover"): "User"}
    assert 'reason="User"' in srdf_text(CollisionMatrix("two", reasons))
