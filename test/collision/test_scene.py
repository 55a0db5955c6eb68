"""The run-time scene: objects added, moved, removed, attached; what may not change; the file's matrix verified.

The robot is two bodies (:func:`helpers.collision_robots.two_bodies`): a 0.1 m box fixed at the
origin, and a 0.05 m sphere ('mover') that slides along x and turns about z, so every distance
is known by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.collision_robots import two_bodies

from bb_robot.collision.errors import SceneError
from bb_robot.collision.model import CollisionModel
from bb_robot.collision.objects import pose_matrix
from bb_robot.collision.path import check_path
from bb_robot.collision.scene import Scene
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.world import World, load_world
from bb_robot.loading import load_text
from bb_robot.model.geometry import Box, Sphere

pytest.importorskip("coal")


def at(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    return pose_matrix([x, y, z], [0, 0, 0, 1])


@pytest.fixture(scope="module")
def robot_model() -> CollisionModel:
    loaded = load_text(two_bodies('<box size="0.1 0.1 0.1"/>', '<sphere radius="0.05"/>'))
    return CollisionModel(loaded.robot, robot_parts(loaded.robot))


@pytest.fixture
def post_world(robot_model: CollisionModel, tmp_path: Path) -> World:
    """A configured world: a post (0.1 m box) at x = -1."""
    path = tmp_path / "world.yaml"
    path.write_text("obstacles:\n  - {name: post, xyz: [-1.0, 0.0, 0.0], box: [0.1, 0.1, 0.1]}\n")
    return load_world(str(path), robot_model.robot)


def distances(scene: Scene, q: list[float]) -> dict[tuple[str, str], float]:
    return {
        tuple(sorted((a.split("/")[1] if "/" in a else a, b.split("/")[1] if "/" in b else b))): d
        for (a, b), d in scene.model.pair_distances(q).items()
    }


def test_world_objects_are_added_moved_and_removed(robot_model: CollisionModel) -> None:
    scene = Scene(robot_model)
    scene.add_object("ball", [(Sphere(0.1), np.eye(4))], at(1.0))
    assert distances(scene, [0.5, 0.0])[("ball", "mover")] == pytest.approx(0.35)
    assert distances(scene, [0.5, 0.0])[("ball", "base")] == pytest.approx(0.85)
    scene.move_object("ball", at(0.6))
    assert {c.links for c in scene.colliding([0.5, 0.0])} == {("mover", "world/ball")}
    version = scene.version
    scene.remove_object("ball")
    assert scene.version > version
    assert scene.colliding([0.5, 0.0]) == []


def test_an_attached_object_moves_with_its_link_and_may_touch_its_touch_links(robot_model: CollisionModel) -> None:
    scene = Scene(robot_model)
    scene.add_object("cup", [(Box((0.05, 0.05, 0.05)), np.eye(4))], at(0.2), link="mover")
    cup = len(robot_model.parts)  # attached parts follow the robot's
    np.testing.assert_allclose(scene.model.placements([0.0, np.pi / 2])[cup][:3, 3], [0.0, 0.2, 0.0], atol=1e-12)
    assert scene.colliding([0.3, 0.0]) == []  # touching its own link is allowed
    assert {c.links for c in scene.colliding([-0.2, 0.0])} == {("attached/cup", "base")}
    scene.remove_object("cup")
    scene.add_object("cup", [(Box((0.05, 0.05, 0.05)), np.eye(4))], at(0.2), link="mover", touch_links=["base"])
    assert scene.colliding([-0.2, 0.0]) == []


def test_attach_and_detach_keep_the_object_where_it_is(robot_model: CollisionModel, post_world: World) -> None:
    scene = Scene(robot_model, post_world)
    scene.add_object("can", [(Sphere(0.02), np.eye(4))], at(0.5))
    scene.attach("can", "mover", [0.3, 0.0])
    np.testing.assert_allclose(scene.objects["can"].pose[:3, 3], [0.2, 0.0, 0.0])
    # carried to the post: in contact with the configured obstacle
    assert ("attached/can", "world/post") in {c.links for c in scene.colliding([-1.2, 0.0])}
    # swinging it round into the post is refused (the motion bound of a carried object is its link's)
    verdict = check_path(scene.model, np.array([[-0.78, 0.0], [-0.78, np.pi]]), clearance=0.001)
    assert not verdict.ok and verdict.contact is not None and verdict.contact.links == ("attached/can", "world/post")
    with pytest.raises(SceneError, match="object 'post' is part of the configured world .*: it cannot be attached"):
        scene.attach("post", "mover", [0.0, 0.0])
    scene.detach("can", [0.1, 0.0])
    np.testing.assert_allclose(scene.objects["can"].pose[:3, 3], [0.3, 0.0, 0.0])
    assert scene.colliding([-1.2, 0.0]) == []  # left behind at x = 0.3


def test_the_configured_world_and_the_robots_matrix_cannot_change(
    robot_model: CollisionModel, post_world: World
) -> None:
    scene = Scene(robot_model, post_world)
    for change, doing in (
        (lambda: scene.remove_object("post"), "removed"),
        (lambda: scene.move_object("post", at(0)), "moved"),
    ):
        with pytest.raises(
            SceneError, match=rf"object 'post' is part of the configured world \(.*world.yaml\): it cannot be {doing}"
        ):
            change()
    with pytest.raises(SceneError, match=r"pair \('base', 'mover'\): names no object added at run time"):
        scene.allow("base", "mover")
    with pytest.raises(SceneError, match=r"pair \('mover', 'world/post'\): names no object added at run time"):
        scene.allow("mover", "world/post")
    with pytest.raises(SceneError, match="the scene already has an object of that name"):
        scene.add_object("post", [(Sphere(0.1), np.eye(4))])


def test_allowed_entries_may_name_run_time_objects(robot_model: CollisionModel, post_world: World) -> None:
    scene = Scene(robot_model, post_world)
    scene.add_object("ball", [(Sphere(0.1), np.eye(4))], at(-0.9))
    assert ("world/ball", "world/post") not in scene.allowed  # obstacle-obstacle pairs are never checked anyway
    scene.move_object("ball", at(0.3))
    assert {c.links for c in scene.colliding([0.3, 0.0])} == {("mover", "world/ball")}
    scene.allow("ball", "mover")
    assert scene.colliding([0.3, 0.0]) == []
    scene.disallow("mover", "ball")
    assert len(scene.colliding([0.3, 0.0])) == 1
    scene.allow("ball", "mover")
    scene.remove_object("ball")  # its entries go with it
    assert all("ball" not in "".join(pair) for pair in scene.allowed)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.add_object("x", [(Sphere(0.1), np.eye(4))], link="nope"),
            "object 'x': link: the robot has no link 'nope'",
        ),
        (
            lambda s: s.add_object("x", [(Sphere(0.1), np.eye(4))], link="mover", touch_links=["gone"]),
            "object 'x': touch_links: the robot has no link 'gone'",
        ),
        (
            lambda s: s.add_object("x", [(Sphere(0.1), np.eye(4))], np.full((4, 4), np.nan)),
            "object 'x': pose: needs a finite",
        ),
        (
            lambda s: s.add_object("x", [(Sphere(0.1), np.diag([2.0, 1, 1, 1]))]),
            "object 'x': pose: not a rigid transform",
        ),
        (lambda s: s.add_object("x", []), "object 'x': shapes: needs at least one shape"),
        (lambda s: s.add_object("a/b", [(Sphere(0.1), np.eye(4))]), "object 'a/b': name"),
        (lambda s: s.remove_object("ghost"), "object 'ghost': no such object was added at run time"),
        (lambda s: s.allow("ghost", "mover"), "names no object added at run time"),
    ],
)
def test_bad_changes_are_typed_errors_naming_the_object(
    robot_model: CollisionModel, call: object, message: str
) -> None:
    scene = Scene(robot_model)
    with pytest.raises(SceneError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(scene)  # type: ignore[operator]


CHAIN = """<robot name="chain">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.5"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="tip"><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="far"><collision><origin xyz="0 0 5"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="a" type="prismatic"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="b" type="prismatic"><parent link="arm"/><child link="tip"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="c" type="fixed"><parent link="arm"/><child link="far"/></joint>
</robot>"""


def test_robot_pairs_a_scene_file_allows_are_verified() -> None:
    # 'base' and 'tip' can touch (the tip slides through the base): checked anyway, with a warning;
    # 'base' and 'far' never come near: allowed.
    loaded = load_text(CHAIN)
    model = CollisionModel(loaded.robot, robot_parts(loaded.robot))
    world = World("scene.yaml", (), None, (("base", "far"), ("base", "tip")))
    scene = Scene(model, world, samples=200)
    assert len(scene.warnings) == 1
    assert scene.warnings[0].startswith("scene.yaml: allows links 'base' and 'tip', which can touch (witness ")
    assert ("base", "tip") not in scene.allowed and ("base", "far") in scene.allowed
    assert ("base", "tip") in {c.links for c in scene.colliding([-0.5, 0.0])}
    with pytest.raises(SceneError, match="allowed pair .'base', 'nowhere'. names neither a link nor an obstacle"):
        Scene(model, World("scene.yaml", (), None, (("base", "nowhere"),)))
