"""The pairs the matrix calls Never against an independent Pinocchio + coal sampler, and its witnesses replayed.

Baxter (17 joints; MoveIt's 10,000-sample rule alone called pairs Never that touch) and the Panda:
no pair our matrix calls ``Never`` is in contact in 100,000 configurations of Pinocchio's own model
and meshes, uniform within its limits, from a seed other than ours (every joint is drawn, so each
pair is sampled over its own joints: its contact depends on those alone); and each pair the
closest-approach search found in contact is in contact in Pinocchio at the witness the JSON gives.
``benchmarks/bench_collision.py`` (d) runs the same with 1,000,000 samples, and Talos and the UR5.
"""

from __future__ import annotations

import json

import pytest
from helpers.collision_robots import example_robot_files
from helpers.independent_contacts import PinocchioRobot, contacts

from bb_robot.cli.main import main

pytest.importorskip("pinocchio")
pytestmark = pytest.mark.filterwarnings("ignore:You passed package dir")

ROBOTS = {
    "baxter": ("baxter_description/urdf/baxter.urdf", "baxter_manipulation.srdf"),
    "panda": ("panda_description/urdf/panda.urdf", "panda.srdf"),
}
SAMPLES = 100_000
SEED = 31_337  # the matrix's is 0


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_never_pairs_never_touch_in_pinocchio_and_witnesses_do(robot: str, capsys: pytest.CaptureFixture[str]) -> None:
    urdf, _, share = example_robot_files(*ROBOTS[robot])
    assert main(["collisions", str(urdf), "--resource-path", str(share), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    never = [(d["link1"], d["link2"]) for d in report["disabled"] if d["reason"] == "Never"]
    assert len(never) > 10
    assert all(d["margin"] > 0.0 for d in report["disabled"] if d["reason"] == "Never")
    pinocchio = PinocchioRobot.load(urdf, share)
    for item in report["reached"]:
        pair = (item["link1"], item["link2"])
        chosen = pinocchio.select([pair])
        assert pair in pinocchio.in_contact(pinocchio.q_of(item["witness"]), chosen), f"{pair}: {item}"
        assert item["depth"] > 0.0
    if robot == "baxter":
        assert len(report["reached"]) > 10  # what MoveIt's rule alone would have disabled
    assert contacts(pinocchio, never, SAMPLES, SEED) == {}
