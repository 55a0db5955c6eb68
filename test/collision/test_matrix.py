"""The allowed-collision matrix: MoveIt's categories, against the Panda's shipped SRDF; SRDF in and out."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.collision_robots import panda_files, two_bodies

from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import ADJACENT, ALWAYS, DEFAULT, NEVER, CollisionMatrix, compute_matrix
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import parse_srdf, read_srdf, srdf_text, write_srdf
from bb_robot.loading import load_file, load_text

BUNDLED_ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


@pytest.fixture(scope="module")
def panda() -> tuple[CollisionModel, CollisionMatrix, CollisionMatrix]:
    urdf, srdf, share = panda_files()
    loaded = load_file(str(urdf))
    model = CollisionModel(loaded.robot, robot_parts(loaded.robot, loaded.source, [str(share)]))
    return model, compute_matrix(model, seed=7), read_srdf(srdf, loaded.robot.links)


def test_every_pair_the_panda_srdf_disables_is_disabled(
    panda: tuple[CollisionModel, CollisionMatrix, CollisionMatrix],
) -> None:
    _, computed, shipped = panda
    assert len(shipped.disabled) > 20
    missing = {pair: reason for pair, reason in shipped.disabled.items() if pair not in computed.disabled}
    assert missing == {}


def test_the_pairs_the_panda_srdf_checks_stay_checked(
    panda: tuple[CollisionModel, CollisionMatrix, CollisionMatrix],
) -> None:
    model, computed, shipped = panda
    links = model.links_with_geometry
    every = {(a, b) if a < b else (b, a) for i, a in enumerate(links) for b in links[i + 1 :]}
    enabled = every - set(shipped.disabled)
    exceptions = {
        pair: (computed.disabled[pair], computed.fractions.get(pair)) for pair in enabled if pair in computed.disabled
    }
    assert len(enabled) - len(exceptions) >= 0.9 * len(enabled), f"disabled by us, checked by the SRDF: {exceptions}"


def test_categories_follow_moveit(panda: tuple[CollisionModel, CollisionMatrix, CollisionMatrix]) -> None:
    model, computed, _ = panda
    reasons = dict(computed.disabled)
    assert reasons[("panda_link0", "panda_link1")] == ADJACENT
    assert reasons[("panda_hand", "panda_link7")] == ADJACENT
    assert computed.samples == 10_000
    for pair, fraction in computed.fractions.items():
        if fraction == 0:
            assert reasons[pair] == NEVER
        elif fraction > 0.95:
            assert reasons[pair] == ALWAYS
        else:
            assert pair not in reasons
    # Default: in contact with every joint at 0 (or mid-range); none of them is adjacent.
    default = [pair for pair, reason in reasons.items() if reason == DEFAULT]
    assert all(pair not in computed.fractions for pair in default)
    zero = model.with_allowed([p for p, r in reasons.items() if r == ADJACENT])
    from bb_robot.collision.matrix import default_configuration

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
