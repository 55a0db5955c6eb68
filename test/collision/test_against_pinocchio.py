"""Contacts and distances against Pinocchio's ``computeCollisions`` / ``computeDistances`` with the same geometry.

Pinocchio builds its own geometry model from the URDF (its own parser, its own FK placement)
with coal underneath; both sides are given the same pairs (Pinocchio's SRDF filter against our
reading of the same SRDF) and the same random configurations within the joint limits.  Compared:
which part pairs are in contact (triangle meshes, and convex hulls), and every pair's hull
distance.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM, build, panda_files, pin_labels, pin_q, to_hulls

from bb_robot.collision.matrix import joint_bounds
from bb_robot.collision.model import CollisionModel

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.filterwarnings("ignore:You passed package dir")

SAMPLES = 300


CASES = {
    "panda": lambda: build(*panda_files()),
    "bb_arm": lambda: build(BUNDLED_ARM, None, None),
}


def configurations(ours: CollisionModel, seed: int) -> np.ndarray:
    lower, upper = joint_bounds(ours.robot, ours.fk.joint_names)
    return np.random.default_rng(seed).uniform(lower, upper, size=(SAMPLES, len(lower)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_pairs_as_pinocchio(case: str) -> None:
    ours, model, geometry = CASES[case]()
    labels = pin_labels(model, geometry, ours)
    theirs = {tuple(sorted((labels[p.first], labels[p.second]))) for p in geometry.collisionPairs}
    mine = {tuple(sorted(k)) for k in ours.pair_distances(np.zeros(len(ours.fk.joint_names)))}
    assert mine == theirs
    assert len(mine) > 10


@pytest.mark.parametrize("hulls", [False, True], ids=["meshes", "hulls"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_contacts_match_pinocchio(case: str, hulls: bool) -> None:
    ours, model, geometry = CASES[case]()
    if hulls:
        to_hulls(geometry)
    labels = pin_labels(model, geometry, ours)
    data = model.createData()
    in_contact = 0
    for q in configurations(ours, seed=1):
        # A fresh GeometryData each time: reused, its cached GJK guesses missed a 5 cm deep
        # cylinder-cylinder contact of the bundled arm (Pinocchio 4.1, coal 3.0.3).
        geometry_data = pin.GeometryData(geometry)
        pin.computeCollisions(
            model, data, geometry, geometry_data, pin_q(model, ours.robot, ours.fk.joint_names, q), False
        )
        theirs = {
            tuple(sorted((labels[p.first], labels[p.second])))
            for p, result in zip(geometry.collisionPairs, geometry_data.collisionResults, strict=False)
            if result.isCollision()
        }
        mine = {tuple(sorted(c.parts)) for c in ours.colliding(q, exact=not hulls)}
        assert mine == theirs, f"q={q.tolist()}"
        in_contact += bool(mine)
    assert 0 < in_contact < SAMPLES, "the configurations should include some in contact and some free"


@pytest.mark.parametrize("case", sorted(CASES))
def test_hull_distances_match_pinocchio(case: str) -> None:
    ours, model, geometry = CASES[case]()
    to_hulls(geometry)
    labels = pin_labels(model, geometry, ours)
    data = model.createData()
    for q in configurations(ours, seed=2)[:100]:
        # Fresh, as above: with a reused GeometryData one Panda distance came out 2e-5 m off
        # (coal with gjk_tolerance 1e-10 agrees with ours there).
        geometry_data = pin.GeometryData(geometry)
        pin.computeDistances(model, data, geometry, geometry_data, pin_q(model, ours.robot, ours.fk.joint_names, q))
        theirs = {
            tuple(sorted((labels[p.first], labels[p.second]))): result.min_distance
            for p, result in zip(geometry.collisionPairs, geometry_data.distanceResults, strict=False)
        }
        mine = {tuple(sorted(k)): v for k, v in ours.pair_distances(q).items()}
        assert mine.keys() == theirs.keys()
        for pair, distance in theirs.items():
            if distance > 0:
                assert mine[pair] == pytest.approx(distance, abs=1e-5), pair  # GJK tolerance 1e-6, relative
            else:
                assert mine[pair] <= 1e-9, pair
        nearest = ours.nearest(q)
        assert nearest is not None
        assert nearest.distance == pytest.approx(min(theirs.values()), abs=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_compiled_placement_matches_numpy(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled placement step (bb_robot.collision._placement_numba) against the numpy path: the
    same poses and sphere distances, candidates among the numpy path's, and so the same contacts
    and nearest pairs."""
    from bb_robot.collision import model as collision_model
    from bb_robot.model import compiled

    ours, _, _ = CASES[case]()
    assert collision_model.placement_kernel() is not None, "numba (requirements/python.txt) did not load"
    qs = configurations(ours, 11)
    compiled_results = []
    for q in qs:
        rotations, translations, squared, candidates = ours._placed(q)  # the model's buffers: copied
        placed = (rotations.copy(), translations.copy(), squared.copy(), candidates)
        compiled_results.append((placed, ours.colliding(q), ours.nearest(q)))
    monkeypatch.setattr(compiled, "_mode", ["numpy"])
    assert collision_model.placement_kernel() is None
    for q, (placed, contacts, nearest) in zip(qs, compiled_results, strict=True):
        numpy_placed = ours._placed(q)
        for got, expected in zip(placed[:3], numpy_placed[:3], strict=True):
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        # the compiled step also culls by bounding boxes: its candidates are among the spheres'
        assert set(placed[3]) <= set(numpy_placed[3])
        assert ours.colliding(q) == contacts
        expected_nearest = ours.nearest(q)
        assert (nearest is None) == (expected_nearest is None)
        if nearest is not None and expected_nearest is not None:  # equally near pairs (the fingers) may swap
            assert nearest.distance == pytest.approx(expected_nearest.distance, abs=1e-9)
    with pytest.raises(Exception, match="finite"):  # the numpy path names the bad value
        monkeypatch.setattr(compiled, "_mode", ["auto"])
        ours.colliding(np.full(len(qs[0]), np.nan))
