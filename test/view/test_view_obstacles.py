"""The obstacles of collision.world as a Foxglove scene (bb_robot.view.obstacles), decoded with the
protobuf runtime from the schema alone."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("foxglove", reason="foxglove-sdk is not installed")

from foxglove.messages import SceneUpdate  # noqa: E402
from helpers.collision_robots import panda_files, table_world  # noqa: E402
from helpers.foxglove_client import decode_protobuf  # noqa: E402

from bb_robot.collision.shapes import coal_module  # noqa: E402
from bb_robot.collision.world import model_world  # noqa: E402
from bb_robot.driver.model import load_model_file  # noqa: E402
from bb_robot.view.obstacles import FLOOR_THICKNESS, obstacle_scene  # noqa: E402

ARM = Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf"


def decoded(update: SceneUpdate) -> dict[str, object]:
    schema = SceneUpdate.get_schema()
    message = decode_protobuf(schema.name, schema.data, update.encode())
    return {entity.id: entity for entity in message.entities}


def panda_mesh() -> Path:
    urdf, _, _ = panda_files()
    mesh = urdf.parents[1] / "meshes" / "collision" / "link4.stl"
    assert mesh.is_file(), f"example-robot-data's Panda has no {mesh}"
    return mesh


def test_every_obstacle_is_drawn_at_its_size_and_place_in_the_root_frame(tmp_path: Path) -> None:
    mesh = panda_mesh()
    world = tmp_path / "cell.yaml"
    world.write_text(
        "floor: -0.05\n"
        "obstacles:\n"
        "  - {name: post, xyz: [0.5, 0.0, 0.3], box: [0.1, 0.2, 0.6]}\n"
        "  - {name: drum, xyz: [0.0, 0.6, 0.2], rpy: [1.5707963, 0.0, 0.0], cylinder: {radius: 0.1, length: 0.4}}\n"
        "  - {name: ball, frame: base_link, xyz: [-0.4, 0.0, 0.5], sphere: {radius: 0.05}}\n"
        f"  - {{name: part, xyz: [0.0, -0.6, 0.0], mesh: {{filename: '{mesh}'}}}}\n"
    )
    loaded = load_model_file(str(ARM), (), "")
    entities = decoded(obstacle_scene(model_world(loaded, str(world)), "arm/base_link"))
    assert sorted(entities) == ["world/ball", "world/drum", "world/floor", "world/part", "world/post"]
    assert all(e.frame_id == "arm/base_link" and e.frame_locked for e in entities.values())

    post = entities["world/post"].cubes[0]
    assert (post.size.x, post.size.y, post.size.z) == pytest.approx((0.1, 0.2, 0.6))
    assert (post.pose.position.x, post.pose.position.y, post.pose.position.z) == pytest.approx((0.5, 0.0, 0.3))
    drum = entities["world/drum"].cylinders[0]
    assert (drum.size.x, drum.size.y, drum.size.z) == pytest.approx((0.2, 0.2, 0.4))
    assert (drum.bottom_scale, drum.top_scale) == (1.0, 1.0)
    q = drum.pose.orientation  # rolled a quarter turn about x
    assert (q.x, q.w) == pytest.approx((math.sin(math.pi / 4), math.cos(math.pi / 4)), abs=1e-6)
    ball = entities["world/ball"].spheres[0]
    assert ball.size.x == pytest.approx(0.1) and ball.pose.position.z == pytest.approx(0.5)
    floor = entities["world/floor"].cubes[0]
    assert floor.pose.position.z + floor.size.z / 2 == pytest.approx(-0.05)  # the top face is the plane
    assert floor.size.z == pytest.approx(FLOOR_THICKNESS)

    triangles = entities["world/part"].triangles[0]
    reference = coal_module().MeshLoader().load(str(mesh), np.ones(3))
    assert len(triangles.points) == 3 * reference.num_tris  # the exact mesh coal checks
    points = np.array([[p.x, p.y, p.z] for p in triangles.points])
    vertices = np.asarray(reference.vertices(), dtype=float).reshape(-1, 3)
    assert np.abs(points.min(axis=0) - vertices.min(axis=0)).max() < 1e-9
    assert triangles.pose.position.y == pytest.approx(-0.6)


def test_an_sdf_world_places_its_models_as_the_driver_does(tmp_path: Path) -> None:
    path = tmp_path / "cell.sdf"
    path.write_text(table_world(), encoding="utf-8")
    loaded = load_model_file(str(ARM), (), "")
    world = model_world(loaded, str(path))
    assert [part.link for part in world.parts] == ["world/table/top"]
    entities = decoded(obstacle_scene(world, loaded.robot.root_link))
    assert set(entities) == {part.link for part in world.parts}
    for part in world.parts:  # each drawn at the pose the checker uses
        primitive = [*entities[part.link].cubes, *entities[part.link].cylinders, *entities[part.link].spheres][0]
        position = primitive.pose.position
        assert (position.x, position.y, position.z) == pytest.approx(tuple(part.local[:3, 3]))


def test_a_cone_of_a_moveit_scene_is_drawn_as_a_cylinder_narrowing_to_its_tip() -> None:
    """A ``.scene`` file's cone (radius 0.1, length 0.3, its tip up the object's z): a cylinder
    primitive of that size whose top is scaled to a point, where the scene puts it."""
    scene = Path(__file__).resolve().parents[1] / "collision" / "data" / "cell.scene"
    loaded = load_model_file(str(ARM), (), "")
    world = model_world(loaded, str(scene))
    entities = decoded(obstacle_scene(world, "base_link"))
    cones = [c for entity in entities.values() for c in entity.cylinders if c.top_scale == 0.0]
    assert len(cones) == 1, sorted(entities)
    cone = cones[0]
    assert (cone.size.x, cone.size.y, cone.size.z) == pytest.approx((0.2, 0.2, 0.3))
    assert cone.bottom_scale == 1.0
    # the funnel at (0, 0.5, 0.4), turned a quarter about z; the cone 0.15 up its own z
    position = (cone.pose.position.x, cone.pose.position.y, cone.pose.position.z)
    assert position == pytest.approx((0.0, 0.5, 0.55), abs=1e-6)
    part = next(p for p in world.parts if type(p.exact).__name__ == "Cone")
    tip = part.local @ np.array([0.0, 0.0, 0.15, 1.0])  # coal's cone: its tip at +halfLength
    assert tip[:3] == pytest.approx((0.0, 0.5, 0.7), abs=1e-6)
