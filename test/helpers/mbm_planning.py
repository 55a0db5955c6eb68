"""MotionBenchMaker problems as planning requests, and an independent re-check of a trajectory.

:func:`load_problem` reads one problem of the shared corpus (``../shared/corpus/mbm``, read in
place): our scene (the robot's collision model with its SRDF, the scene file's obstacles and
allowed pairs) and the request's start and joint goal.  :class:`IndependentCheck` re-checks a path
with nothing of bb_robot's collision code: Pinocchio parses the URDF, loads the meshes (triangle
meshes, not hulls), places them with its own kinematics; the obstacles are placed straight from the
scene YAML; coal decides contact; the pairs are Pinocchio's own minus the SRDF's and the scene's
allowed pairs.  Densely: no joint moves more than ``step`` between two checks.
"""

from __future__ import annotations

import functools
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bb_robot.collision.model import CollisionModel
from bb_robot.collision.scene import Scene
from bb_robot.collision.shapes import robot_parts
from bb_robot.collision.srdf import read_srdf
from bb_robot.collision.world import load_world
from bb_robot.loading import load_file
from helpers.mbm_problems import MBM_DIR, SETS, mbm_robot

__all__ = ["SETS", "IndependentCheck", "Problem", "extract", "load_problem", "robot_model"]


@functools.cache
def robot_model(robot: str) -> CollisionModel:
    """Our collision model of an MBM robot with its SRDF's matrix (built once per process)."""
    urdf, srdf = mbm_robot(robot)
    loaded = load_file(str(urdf))
    parts = robot_parts(loaded.robot, loaded.source, [str(MBM_DIR / robot)])
    return CollisionModel(loaded.robot, parts, read_srdf(srdf, loaded.robot.links).disabled)


def extract(robot: str, numbers: Sequence[int], target: Path, sets: tuple[str, ...] = SETS) -> Path:
    """Extract scenes and requests ``numbers`` of ``sets`` from the robot's archive into ``target`` (returned)."""
    mbm_robot(robot)
    wanted = {
        f"problems/{name}_{robot}/{kind}{n:04d}.yaml" for name in sets for n in numbers for kind in ("scene", "request")
    }
    with tarfile.open(MBM_DIR / robot / "problems.tar.bz2") as archive:
        members = [m for m in archive.getmembers() if m.name in wanted]
        archive.extractall(target, members=members, filter="data")
    return target


@dataclass
class Problem:
    """One MBM problem as our planner takes it."""

    robot: str
    name: str
    scene: Scene
    scene_file: Path
    start: np.ndarray  # every coordinate, ForwardKinematics.joint_names order
    goal: dict[str, float]


def load_problem(robot: str, problem_set: str, number: int, root: Path) -> Problem:
    """Problem ``number`` of ``problem_set`` from an :func:`extract`-ed ``root``."""
    model = robot_model(robot)
    folder = root / "problems" / f"{problem_set}_{robot}"
    scene_file = folder / f"scene{number:04d}.yaml"
    scene = Scene(model, load_world(str(scene_file), model.robot))
    request = yaml.safe_load((folder / f"request{number:04d}.yaml").read_text())
    state = request["start_state"]["joint_state"]
    values = dict(zip(state["name"], state["position"], strict=True))
    start = np.array([float(values[name]) for name in model.fk.joint_names])
    goal = {c["joint_name"]: float(c["position"]) for c in request["goal_constraints"][0]["joint_constraints"]}
    return Problem(robot, f"{problem_set}/{number}", scene, scene_file, start, goal)


class IndependentCheck:
    """Pinocchio + coal on the meshes, with the scene's obstacles placed from the YAML (module docstring)."""

    def __init__(self, robot: str, scene_file: Path) -> None:
        import coal
        import pinocchio as pin

        urdf, srdf = mbm_robot(robot)
        self.pin = pin
        self.model, robot_geometry = _pinocchio_robot(robot)
        # A copy per scene (its obstacles are added to it): the meshes are loaded once per robot, not
        # each time (about 55 MB a UR5 scene that Pinocchio's loading did not give back).
        self.geometry = robot_geometry.copy()
        links = [self.model.frames[g.parentFrame].name for g in self.geometry.geometryObjects]
        # Parts fixed to the universe never move: their contacts with obstacles are where the robot stands.
        fixed = {i for i, g in enumerate(self.geometry.geometryObjects) if g.parentJoint == 0}
        data = yaml.safe_load(scene_file.read_text())
        allowed = _allowed(data)
        robot_objects = len(links)
        for entry in data["world"]["collision_objects"]:
            # MoveIt's CollisionObject: each primitive's pose is relative to the object's own pose
            placed = _se3(pin, entry["pose"]) if entry.get("pose") else pin.SE3.Identity()
            for primitive, pose in zip(entry["primitives"], entry["primitive_poses"], strict=True):
                dims, kind = primitive["dimensions"], str(primitive["type"]).lower()
                shape: Any
                if kind == "box":
                    shape = coal.Box(*dims)
                elif kind == "cylinder":
                    shape = coal.Cylinder(dims[1], dims[0])
                else:
                    shape = coal.Sphere(dims[0])
                placement = placed * _se3(pin, pose)
                self.geometry.addGeometryObject(pin.GeometryObject(f"obstacle/{entry['id']}", 0, 0, placement, shape))
                links.append(entry["id"])
        disabled = {tuple(sorted(p)) for p in read_srdf(srdf, None).disabled}
        for i in range(len(links)):
            for j in range(i + 1, len(links)):
                if (i >= robot_objects and j >= robot_objects) or (i in fixed and j >= robot_objects):
                    continue
                a, b = links[i], links[j]
                if a == b or tuple(sorted((a, b))) in disabled or tuple(sorted((a, b))) in allowed:
                    continue
                self.geometry.addCollisionPair(pin.CollisionPair(i, j))
        self.links = links
        self.data = self.model.createData()
        self.geometry_data = pin.GeometryData(self.geometry)

    def contacts(self, names: tuple[str, ...], path: np.ndarray, step: float = 0.01) -> list[tuple[int, str, str]]:
        """The contacts along ``path`` (rows: ``names``' values), checked so no joint moves more than ``step``.

        Returns:
            ``(check number, link, link)`` for each configuration in contact (its first pair).
        """
        pin = self.pin
        found = []
        index = [self.model.joints[self.model.getJointId(n)].idx_q for n in names]
        q = pin.neutral(self.model)
        for number, row in enumerate(_dense(path, step)):
            q[index] = row
            if pin.computeCollisions(self.model, self.data, self.geometry, self.geometry_data, q, True):
                for k, result in enumerate(self.geometry_data.collisionResults):
                    if result.isCollision():
                        pair = self.geometry.collisionPairs[k]
                        found.append((number, self.links[pair.first], self.links[pair.second]))
                        break
        return found

    def tilt(
        self, names: tuple[str, ...], path: np.ndarray, frame: str, reference: np.ndarray, step: float = 0.01
    ) -> float:
        """The largest angle about x or y of ``referenceᵀ · R_frame`` along ``path`` (rad).

        Pinocchio places ``frame``; scipy gives the XYZ Euler angles (an orientation constraint's
        measure, docs/planning.md), checked so no joint moves more than ``step``.
        """
        from scipy.spatial.transform import Rotation

        pin = self.pin
        index = [self.model.joints[self.model.getJointId(n)].idx_q for n in names]
        frame_id = self.model.getFrameId(frame)
        q = pin.neutral(self.model)
        worst = 0.0
        for row in _dense(path, step):
            q[index] = row
            pin.framesForwardKinematics(self.model, self.data, q)
            angles = Rotation.from_matrix(reference.T @ self.data.oMf[frame_id].rotation).as_euler("XYZ")
            worst = max(worst, float(np.abs(angles[:2]).max()))
        return worst


@functools.cache
def _pinocchio_robot(robot: str) -> tuple[Any, Any]:
    """Pinocchio's model and collision geometry (triangle meshes) of an MBM robot, built once per process."""
    import pinocchio as pin

    urdf, _ = mbm_robot(robot)
    model = pin.buildModelFromUrdf(str(urdf))
    return model, pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION, [str(MBM_DIR / robot)])


def _se3(pin: Any, pose: dict[str, Any]) -> Any:
    """A scene YAML pose (MBM's lists ``[x, y, z]`` / ``[x, y, z, w]``, or message fields) as a Pinocchio SE3."""
    position, orientation = pose["position"], pose["orientation"]
    if isinstance(position, dict):
        position = [position.get(k, 0.0) for k in ("x", "y", "z")]
    if isinstance(orientation, dict):
        orientation = [orientation.get(k, 0.0) for k in ("x", "y", "z")] + [orientation.get("w", 1.0)]
    x, y, z, w = (float(v) for v in orientation)
    return pin.SE3(pin.Quaternion(w, x, y, z).normalized().matrix(), np.array(position, dtype=float))


def _dense(path: np.ndarray, step: float) -> np.ndarray:
    """The configurations of ``path`` to check: no joint moves more than ``step`` between two of them.

    Rows nearer than ``step`` to the last one kept are skipped (a timed trajectory's 2 ms samples),
    and segments longer than ``step`` are cut into equal steps.  A row where the path turns (a
    waypoint: the direction from the row before differs from the direction to the row after) is
    always kept: skipping it would check the chord across the corner, configurations the motion
    never passes (a Panda hand 19 µm into an obstacle, 0.34 mrad off the path, was reported so).
    """
    kept = [path[0]]
    for i in range(1, path.shape[0] - 1):
        row = path[i]
        before, after = row - path[i - 1], path[i + 1] - row
        nb, na = float(np.linalg.norm(before)), float(np.linalg.norm(after))
        turns = nb > 0.0 and na > 0.0 and float(np.abs(before / nb - after / na).max()) > 1e-6
        if turns or np.abs(row - kept[-1]).max() >= step:
            kept.append(row)
    if path.shape[0] > 1:
        kept.append(path[-1])
    path = np.array(kept)
    rows = [path[0]]
    for a, b in zip(path[:-1], path[1:], strict=True):
        count = max(1, int(np.ceil(np.abs(b - a).max() / step)))
        rows.extend(a + (b - a) * (k / count) for k in range(1, count + 1))
    return np.array(rows)


def _allowed(data: dict[str, Any]) -> set[tuple[str, str]]:
    matrix = data.get("allowed_collision_matrix") or {}
    names = matrix.get("entry_names") or []
    pairs = set()
    for i, row in enumerate(matrix.get("entry_values") or []):
        values = row.get("enabled", []) if isinstance(row, dict) else row
        for j, value in enumerate(values):
            if value and i != j:
                pairs.add(tuple(sorted((names[i], names[j]))))
    return pairs
