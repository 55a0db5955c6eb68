"""MoveIt PlanningScene YAML: both pose forms, object and primitive poses, the matrix, errors, MBM's files."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from helpers.mbm_problems import SETS, mbm_robot, mbm_scenes

from bb_robot.collision.errors import WorldError
from bb_robot.collision.planning_scene import planning_scene_obstacles
from bb_robot.collision.world import load_world
from bb_robot.loading import load_file

pytest.importorskip("coal")
LINKS = ("base", "arm", "hand")
Q90 = [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]  # 90° about z


def message_scene() -> dict[str, Any]:
    """A scene in message form: an object at a pose, its box and cylinder at their own."""
    return {
        "name": "test",
        "world": {
            "collision_objects": [
                {
                    "id": "shelf",
                    "header": {"frame_id": "base"},
                    "pose": {
                        "position": {"x": 1.0, "y": 0.0, "z": 0.0},
                        "orientation": dict(zip("xyzw", Q90, strict=True)),
                    },
                    "primitives": [
                        {"type": 1, "dimensions": [0.4, 0.2, 0.02]},
                        {"type": "CYLINDER", "dimensions": [0.3, 0.05]},
                    ],
                    "primitive_poses": [
                        {"position": {"x": 0.1, "y": 0.0, "z": 0.5}, "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
                        {"position": {"x": 0.0, "y": 0.0, "z": 0.0}, "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
                    ],
                    "meshes": [
                        {
                            "vertices": [[0, 0, 0], {"x": 0.1, "y": 0, "z": 0}, [0, 0.1, 0], [0, 0, 0.1]],
                            "triangles": [{"vertex_indices": [0, 2, 1]}, [0, 1, 3], [0, 3, 2], [1, 2, 3]],
                        }
                    ],
                    "mesh_poses": [{"position": [0, 0, 1], "orientation": [0, 0, 0, 1]}],
                }
            ]
        },
        "allowed_collision_matrix": {
            "entry_names": ["arm", "hand", "shelf", "gripper_x"],
            "entry_values": [
                {"enabled": [False, True, False, True]},
                {"enabled": [True, False, True, False]},
                {"enabled": [False, True, False, False]},
                {"enabled": [True, False, False, False]},
            ],
        },
    }


def read(data: dict[str, Any], to_root: np.ndarray | None = None) -> Any:
    return planning_scene_obstacles("scene.yaml", data, "base", LINKS, np.eye(4) if to_root is None else to_root)


def test_object_pose_times_primitive_pose() -> None:
    contents = read(message_scene())
    parts = {p.label: p for p in contents.parts}
    assert sorted(parts) == ["world/shelf/0", "world/shelf/1", "world/shelf/2"]
    np.testing.assert_allclose(parts["world/shelf/0"].local[:3, 3], [1.0, 0.1, 0.5], atol=1e-12)
    np.testing.assert_allclose(parts["world/shelf/0"].local[:3, 0], [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(parts["world/shelf/2"].local[:3, 3], [1.0, 0.0, 1.0], atol=1e-12)
    assert parts["world/shelf/1"].exact.radius == pytest.approx(0.05)  # CYLINDER: height, radius
    assert parts["world/shelf/1"].exact.halfLength == pytest.approx(0.15)


def test_list_poses_as_motionbenchmaker_writes_them_give_the_same_parts() -> None:
    listed = message_scene()
    thing = listed["world"]["collision_objects"][0]
    thing["pose"] = {"position": [1.0, 0.0, 0.0], "orientation": Q90}
    thing["primitive_poses"] = [
        {"position": [0.1, 0.0, 0.5], "orientation": [0, 0, 0, 1]},
        {"position": [0.0, 0.0, 0.0], "orientation": [0, 0, 0, 1]},
    ]
    for mine, theirs in zip(read(listed).parts, read(message_scene()).parts, strict=True):
        np.testing.assert_allclose(mine.local, theirs.local)


def test_the_matrix_names_objects_and_warns_of_unknown_names() -> None:
    contents = read(message_scene())
    assert contents.allowed == (("arm", "hand"), ("hand", "world/shelf"))
    assert contents.warnings == (
        "scene.yaml: allowed_collision_matrix.entry_names[3] names 'gripper_x', neither a link of the robot nor "
        "an object of the scene: ignored",
    )


def test_default_entries_allow_a_name_with_everything() -> None:
    data = message_scene()
    data["allowed_collision_matrix"] = {"default_entry_names": ["shelf"], "default_entry_values": [True]}
    assert read(data).allowed == tuple(sorted((link, "world/shelf") for link in LINKS))


def test_world_frame_objects_are_moved_into_the_root_frame() -> None:
    data = message_scene()
    data["world"]["collision_objects"][0]["header"]["frame_id"] = "world"
    to_root = np.eye(4)
    to_root[:3, 3] = (0.0, 0.0, -0.5)
    np.testing.assert_allclose(read(data, to_root).parts[0].local[:3, 3], [1.0, 0.1, 0.0], atol=1e-12)


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


OBJECT = ("world", "collision_objects", 0)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            (*OBJECT, "primitive_poses", 0, "position", "x"),
            float("nan"),
            r"collision_objects\[0\] 'shelf'.primitive_poses\[0\].position: needs finite numbers",
        ),
        ((*OBJECT, "pose", "orientation"), [0, 0, 0, 0], r"'shelf'.pose: orientation .* \(zero length\)"),
        ((*OBJECT, "primitives", 1, "type"), "torus", r"'shelf'.primitives\[1\]: unknown primitive type 'torus'"),
        ((*OBJECT, "primitives", 0, "type"), 9, r"'shelf'.primitives\[0\]: unknown primitive type '9'"),
        ((*OBJECT, "header", "frame_id"), "elsewhere", r"'shelf'.header.frame_id: unknown frame 'elsewhere'"),
        ((*OBJECT, "meshes", 0, "triangles", 0), [0, 1], r"'shelf'.meshes\[0\].triangles\[0\]: needs 3 vertex"),
        ((*OBJECT, "primitive_poses"), [], r"'shelf': 2 primitives but 0 primitive_poses"),
        ((*OBJECT, "operation"), 1, r"'shelf'.operation: only ADD"),
        (("robot_state",), {"attached_collision_objects": [{"link_name": "hand"}]}, "attach objects at run time"),
    ],
)
def test_malformed_entries_name_the_file_object_and_field(path: tuple[Any, ...], value: Any, message: str) -> None:
    with pytest.raises(WorldError, match=message) as caught:
        read(_set(message_scene(), path, value))
    assert str(caught.value).startswith("scene.yaml: ")


def test_load_world_tells_a_planning_scene_from_a_world_yaml(tmp_path: Path) -> None:
    robot = load_file(str(Path(__file__).resolve().parents[2] / "models" / "bb_arm.urdf")).robot
    data = message_scene()
    data["world"]["collision_objects"][0]["header"]["frame_id"] = robot.root_link
    data["allowed_collision_matrix"] = {}
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    world = load_world(str(path), robot)
    assert [p.label for p in world.parts] == ["world/shelf/0", "world/shelf/1", "world/shelf/2"]
    path.write_text("world: {collision_objects: [{id: x, primitives: [{type: box, dimensions: [1, 1]}], ")
    with pytest.raises(WorldError, match="scene.yaml: cannot read"):
        load_world(str(path), robot)


@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_motionbenchmaker_scenes_load(robot: str, tmp_path: Path) -> None:
    """Two scenes of each of the seven sets: every object a box or cylinder, the matrix within the robot's links."""
    urdf, _ = mbm_robot(robot)
    loaded = load_file(str(urdf))
    scenes = mbm_scenes(robot, range(1, 3), tmp_path)
    assert len(scenes) == 2 * len(SETS)
    for path in scenes:
        data = yaml.safe_load(path.read_text())
        objects = data["world"]["collision_objects"]
        world = load_world(str(path), loaded.robot)
        assert len(world.parts) == sum(len(o.get("primitives", [])) for o in objects) > 0
        assert all(a in loaded.robot.links and b in loaded.robot.links for a, b in world.allowed)
        assert len(world.allowed) > 10
        # the UR5's scenes name a 'box_link' its URDF does not have: ignored, with a warning
        assert [w.split(": ", 1)[1] for w in world.warnings] == (
            [
                "allowed_collision_matrix.entry_names[1] names 'box_link', neither a link of the robot nor an "
                "object of the scene: ignored"
            ]
            if robot == "ur5"
            else []
        )
