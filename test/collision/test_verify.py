"""SRDFs checked before they are trusted: ur3_gripper's hand-written pairs, a synthetic SRDF disabling every
pair, the stamp the bundled SRDFs ship their verification in, and the cache per pair of files."""

from __future__ import annotations

from pathlib import Path

from helpers.collision_robots import example_robot_files

from bb_robot.collision.matrix import ADJACENT, ALWAYS, DEFAULT, NEVER, CollisionMatrix, compute_matrix
from bb_robot.collision.model import link_pair
from bb_robot.collision.sources import collision_model
from bb_robot.collision.srdf import STAMP, srdf_text
from bb_robot.collision.verify import APART, JUSTIFIED, TOUCHES, trusted_matrix, verify_pairs, verify_srdf
from bb_robot.loading import load_file, load_text

MODELS = Path(__file__).resolve().parents[2] / "models"

#: A robot with a pair of each kind (primitives only): ``ring`` is two spheres on a slider, apart from the
#: base only near the slider's middle (``Always``); ``arm`` overlaps the base at its zero (``Default``);
#: ``lamp`` is fixed far above (``Never``, with no joint between); ``tip``, at the end of ``arm``, meets ``ring``
#: at times.
SYNTHETIC = """<robot name="kinds">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="mast"><collision><origin xyz="0 0 2"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="mast_fixed" type="fixed"><parent link="base"/><child link="mast"/></joint>
  <link name="ring">
    <collision><origin xyz="0.35 0 0"/><geometry><sphere radius="0.29"/></geometry></collision>
    <collision><origin xyz="-0.35 0 0"/><geometry><sphere radius="0.29"/></geometry></collision>
  </link>
  <joint name="slide" type="prismatic"><parent link="mast"/><child link="ring"/><axis xyz="1 0 0"/>
    <limit lower="-0.68" upper="0.68" effort="1" velocity="1"/></joint>
  <link name="arm"><collision><origin xyz="0.3 0 0"/><geometry><box size="0.6 0.04 0.04"/></geometry></collision></link>
  <joint name="swing" type="revolute"><parent link="mast"/><child link="arm"/><origin xyz="0 0 0.02"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="tip"><collision><geometry><sphere radius="0.03"/></geometry></collision></link>
  <joint name="tip_fixed" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.9 0 0"/></joint>
  <link name="lamp"><collision><origin xyz="0 0 1"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="lamp_fixed" type="fixed"><parent link="mast"/><child link="lamp"/><origin xyz="0 0 2"/></joint>
</robot>
"""


def test_the_ur3_gripper_srdf_disables_exactly_two_pairs_that_touch() -> None:
    urdf, srdf, share = example_robot_files("ur_description/urdf/ur3_gripper.urdf", "ur3_gripper.srdf")
    loaded = load_file(str(urdf))
    model = collision_model(loaded, [str(share)])
    verdict = verify_srdf(model, loaded.description, srdf)
    assert verdict.origin == "searched"
    touching = {c.pair: c for c in verdict.touching}
    assert set(touching) == {("base_link", "upper_arm_link"), ("forearm_link", "wrist_3_link")}
    for check in touching.values():
        assert check.witness is not None and check.depth is not None and check.depth > 0
        assert set(check.witness) == set(model.fk.joint_names)
        # the witness is in contact on the meshes (our side; test_matrix_independent replays witnesses in Pinocchio)
        alone = model.with_allowed(p for p in model.pairs if p != check.pair)
        q = [check.witness[name] for name in model.fk.joint_names]
        assert {c.links for c in alone.colliding(q, exact=True)} == {check.pair}
    separated = {c.pair: c for c in verdict.checks}[("ee_link", "wrist_1_link")]
    assert separated.status == APART and separated.margin is not None and separated.margin > 0.02
    assert {c.pair: c.category for c in verdict.checks}[("base_link", "shoulder_link")] == ADJACENT
    again = verify_srdf(model, loaded.description, srdf)
    assert again.origin == "cache" and again.checks == verdict.checks


def test_an_srdf_disabling_every_pair_reports_each_pair_that_can_touch() -> None:
    loaded = load_text(SYNTHETIC)
    model = collision_model(loaded)
    ours = compute_matrix(model, samples=2_000, seed=0)
    links = model.links_with_geometry
    every = {link_pair(a, b): "User" for i, a in enumerate(links) for b in links[i + 1 :]}
    checks = {c.pair: c for c in verify_pairs(model, every, samples=2_000, seed=0)}
    assert set(checks) == set(every)
    checked_by_us = set(every) - set(ours.disabled)
    assert checked_by_us, "the synthetic robot should have a pair that can touch"
    assert {p for p, c in checks.items() if c.status == TOUCHES} == checked_by_us
    justified = {p: c.category for p, c in checks.items() if c.status == JUSTIFIED}
    assert justified == {p: r for p, r in ours.disabled.items() if r in (ADJACENT, DEFAULT, ALWAYS)}
    assert {ADJACENT, DEFAULT, ALWAYS} <= set(justified.values())
    assert {p for p, c in checks.items() if c.status == APART} == {p for p, r in ours.disabled.items() if r == NEVER}
    assert ours.disabled[("base", "lamp")] == NEVER and checks[("base", "lamp")].moving == ()


def test_the_bundled_srdfs_ship_their_verification_and_an_edit_undoes_it(tmp_path: Path) -> None:
    loaded = load_file(str(MODELS / "bb_arm.urdf"))
    model = collision_model(loaded)
    shipped = verify_srdf(model, loaded.description, MODELS / "bb_arm.srdf")
    assert shipped.origin == "stamp" and not shipped.touching
    assert {c.status for c in shipped.checks} == {JUSTIFIED, APART}
    # The same file with a touching pair added: the stamp no longer matches, the file is searched.
    text = STAMP.sub("", (MODELS / "bb_arm.srdf").read_text(encoding="utf-8"))
    doctored = tmp_path / "bb_arm.srdf"
    doctored.write_text(
        text.replace(
            "</robot>", '  <disable_collisions link1="base_link" link2="wrist_3_link" reason="Never"/>\n</robot>'
        ),
        encoding="utf-8",
    )
    searched = verify_srdf(model, loaded.description, doctored)
    assert searched.origin == "searched"
    assert [c.pair for c in searched.touching] == [("base_link", "wrist_3_link")]
    matrix = CollisionMatrix("bb_arm", {c.pair: c.reason for c in searched.checks})
    assert ("base_link", "wrist_3_link") not in trusted_matrix(matrix, searched, trusted=False).disabled
    assert trusted_matrix(matrix, searched, trusted=True) is matrix


def test_the_stamp_names_the_description() -> None:
    loaded = load_file(str(MODELS / "bb_arm.urdf"))
    matrix = compute_matrix(collision_model(loaded), samples=10_000, seed=0)
    text = srdf_text(matrix, loaded.description)
    assert text == (MODELS / "bb_arm.srdf").read_text(encoding="utf-8")
    assert STAMP.search(text) is not None
    assert STAMP.search(srdf_text(matrix)) is None  # no description, no stamp
