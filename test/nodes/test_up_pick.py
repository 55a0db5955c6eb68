"""``bb-robot up --demo-pick`` end to end, on MuJoCo physics and on the simulator: the real launch, the
driver with the cube as a free body, the move_group node, and this process as an independent observer.

The demo's exit code and verdict are not trusted: this test keeps every ``object/cube`` transform on
/tf while the command runs and judges the cube's last measured pose itself against the place spot it
computes on its own (the seed's spot in the pick area, mirrored across the wall of
``models/bb_arm_pick.yaml``): within 1 cm, one face normal within 5° of vertical, and the cube really
moved across the wall.  It also checks that each step was printed with its time, in order.

The simulator's case also runs ``--view`` and watches it as a Foxglove user would, through the
independent client of ``helpers/foxglove_client.py``: the table and the wall, the cube free, then
held by the hand, then drawn where it was measured at the end, and the planned paths.

Seeds: three cases per run of the Kilted suite (two on MuJoCo, one on the simulator); the Jazzy
profile runs the first MuJoCo one (test/helpers/ros_distro.py, ``JAZZY_PROFILE_CASES``).  Each case is a
whole bringup and pick (about 40 s on a 2-core host); ``benchmarks/bench_pick.py`` runs 20 seeds.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import yaml
from helpers.bringup_helpers import Launched, require_launch, up_command
from helpers.foxglove_client import (
    FoxgloveTestClient,
    connect_when_listening,
    free_port,
    newest_entities,
    scene_updates,
)

from bb_robot.bringup.pick import STEPS, mirrored, seeded_spot, world_spots
from bb_robot.model.transforms import quaternion_to_matrix
from bb_robot.resources import share_directories

if TYPE_CHECKING:
    from helpers.nodes import Probe

pytest.importorskip("moveit_msgs")

#: (backend, seed): the cases of this file.
CASES = [("mujoco", 3), ("mujoco", 12), ("sim", 7)]
#: The backend whose case also runs ``--view`` and watches it through an independent Foxglove client.
VIEWED = "sim"


def _world() -> dict[str, Any]:
    for share in share_directories():
        path = share / "models" / "bb_arm_pick.yaml"
        if path.is_file():
            return yaml.safe_load(path.read_text(encoding="utf-8"))
    return yaml.safe_load((Path(__file__).parents[2] / "models" / "bb_arm_pick.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("backend", "seed"), CASES, ids=[f"{b}-seed{s}" for b, s in CASES])
def test_up_demo_pick_places_the_cube_across_the_wall(backend: str, seed: int, probe: Probe, tmp_path: Path) -> None:
    require_launch()
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    cubes: list[Any] = []

    def on_tf(message: Any) -> None:
        cubes.extend(t for t in message.transforms if t.child_frame_id == "object/cube")

    probe.node.create_subscription(
        TFMessage, "/tf", on_tf, QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
    )
    port = free_port()
    view = ["--view", "--port", str(port)] if backend == VIEWED else []
    run = Launched(
        up_command("--demo-pick", "--seed", str(seed), "--backend", backend, *view, "--timeout", "90"),
        tmp_path / "up.log",
    )
    client = connect_when_listening(f"ws://127.0.0.1:{port}", run.running) if view else None
    if client is not None:
        client.wait_for_topics(*VIEW_TOPICS, timeout=120)
        client.subscribe(*VIEW_TOPICS)
    try:
        assert probe.spin_until(lambda: not run.running(), timeout=300), run.log()
    finally:
        if client is not None:
            client.close()
    probe.spin_until_quiet(lambda: len(cubes))
    run.wait()
    output = run.log()
    assert run.alive() == [], f"processes left running: {run.alive()}\n{output}"

    # The place spot, computed here: the seed's spot mirrored across the wall.
    pick, wall_y, _ = world_spots(_world())
    place = mirrored(seeded_spot(seed, pick.z), wall_y)
    start = seeded_spot(seed, pick.z)

    # Each step printed with its time, in order.
    times = []
    for number, step in enumerate(STEPS, start=1):
        found = re.search(rf"\[\s*([0-9.]+) s\] step {number}/{len(STEPS)} {re.escape(step)}: ([0-9.]+) s", output)
        assert found, f"no step {number} ({step})\n{output}"
        times.append(float(found.group(1)))
    assert times == sorted(times), times

    # Judged here, from the measured transforms: the first where the seed put the cube, the last at the place spot.
    assert cubes, f"no object/cube on /tf\n{output}"
    first, last = cubes[0].transform, cubes[-1].transform
    assert math.dist((first.translation.x, first.translation.y), (start.x, start.y)) < 2e-3, (first, start)
    position = np.array([last.translation.x, last.translation.y, last.translation.z])
    off = float(np.linalg.norm(position - [place.x, place.y, place.z]))
    assert off <= 0.01, f"the cube ended {off * 1000:.1f} mm from the place spot {place}\n{output}"
    q = last.rotation
    rotation = quaternion_to_matrix((q.x, q.y, q.z, q.w))
    tilt = math.degrees(math.acos(min(1.0, float(np.max(np.abs(rotation[2, :]))))))
    assert tilt <= 5.0, f"the cube ended tilted {tilt:.1f}°\n{output}"
    assert np.sign(position[1] - wall_y) != np.sign(start.y - wall_y), "the cube did not cross the wall"

    # The command agrees, and on MuJoCo counted no contact with the wall.
    assert run.process.returncode == 0, output
    last_line = output.strip().splitlines()[-1]
    assert last_line.startswith("pick demo succeeded: place spot"), last_line
    if backend == "mujoco":
        assert "wall contacts: 0 physics steps with the arm, 0 with the cube" in last_line, last_line
    if client is not None:
        _check_view(client, position, output)


#: What the view serves of a pick: the configured obstacles, the planning scene's objects, each plan.
VIEW_TOPICS = ("/collision_world", "/scene_objects", "/planned_path")


def _check_view(client: FoxgloveTestClient, cube: np.ndarray, output: str) -> None:
    """What a Foxglove user saw: the table and the wall, the cube free then held then placed, the plans."""
    assert not client.errors, client.errors
    world = newest_entities(client, "/collision_world")
    assert {"world/table", "world/wall"} <= set(world), sorted(world)
    assert "world/cube" not in world, "the movable cube is drawn as a fixed obstacle"
    scenes = [{e.id: e for e in update.entities} for update in scene_updates(client, "/scene_objects")]
    held = [i for i, entities in enumerate(scenes) if "attached/cube" in entities]
    assert held, f"the cube was never drawn held ({[sorted(e) for e in scenes]})\n{output}"
    assert any("object/cube" in entities for entities in scenes[: held[0]]), "the cube was not drawn before the grasp"
    placed = scenes[-1].get("object/cube")
    assert placed is not None, f"the cube is not drawn where it was placed: {sorted(scenes[-1])}"
    drawn = placed.cubes[0].pose.position
    assert placed.frame_id == "base_link" and placed.frame_locked, (placed.frame_id, placed.frame_locked)
    assert np.linalg.norm(np.array([drawn.x, drawn.y, drawn.z]) - cube) < 0.01, (drawn, cube)
    paths = [e for update in scene_updates(client, "/planned_path") for e in update.entities if e.id == "planned_path"]
    assert len(paths) >= 2 and all(len(p.lines[0].points) > 2 for p in paths), f"{len(paths)} planned paths drawn"
