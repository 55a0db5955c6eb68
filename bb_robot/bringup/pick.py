"""The pick and place of ``bb-robot up --demo-pick``: its steps, its spots, its poses and its judge.

The scene is ``models/bb_arm_pick.yaml``: the bundled arm on a table, a 4 cm cube at the pick
spot and a wall along the x axis of the arm's base (y = 0) between the pick spot and the place
spot, which is the pick spot mirrored across the wall.  The demo runs :data:`STEPS` in order; the
tool points down throughout, turned about the vertical to the cube's yaw, so that the fingers
close on two of its faces.

``--seed S`` puts the cube at random in :data:`AREA` (:func:`seeded_spot`): x in [0.30, 0.50] m
and y in [0.08, 0.38] m of the arm's base, 20 x 30 cm on the pick side of the wall (the issue's
y in [-0.2, 0.2] would put the cube into the wall; x is 5 cm nearer the base than the
issue's: the arm followed only 94 % of the straight lift at x = 0.54 m, y = 0.36 m), with a yaw
in [-45°, 45°]; the place spot is its mirror image (:func:`mirrored`).

What is judged comes from measured poses (``object/cube`` and ``tcp`` on /tf): the cube's last
pose within :data:`PLACE_TOLERANCE` of the place spot with one face normal within
:data:`TILT_TOLERANCE` of vertical (:func:`judge_place`), and the cube's pose relative to the tool
never more than :data:`SLIP_DISTANCE` or :data:`SLIP_ANGLE` from where it was at the close, until
the open (:class:`SlipWatch`).  Nothing here imports ROS.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix, rpy_to_matrix

#: The ten steps, in order, as the demo prints them.
STEPS = (
    "pre-grasp above the cube",
    "straight approach",
    "close",
    "attach",
    "straight lift",
    "plan over the wall",
    "straight descent",
    "open",
    "detach",
    "straight retreat",
)
#: The object the demo picks (a movable object of the world: one with a mass).
CUBE = "cube"
#: The obstacle between the pick and place spots.
WALL = "wall"
#: How far above its grasp the tool starts the approach and ends the retreat (m).
APPROACH = 0.10
#: How far above the wall's top the tool's grasp point passes the wall (m): the cube hangs below it.
OVER_WALL = 0.05
#: Where the tool grasps the cube: this far below the cube's top (m; the cube's side is 4 cm): the
#: fingertips (the tool point) 1 cm above the table, the fingers over three quarters of the faces (held
#: at the centre only, the cube pivoted about the fingers' contact in MuJoCo by 5 mm and 5°).
GRASP_DEPTH = 0.03
#: Judged: the cube's last position from the place spot (m), the tilt of its nearest face normal
#: from vertical (rad), and its slip relative to the tool between close and open (m, rad).
PLACE_TOLERANCE = 0.01
TILT_TOLERANCE = math.radians(5.0)
SLIP_DISTANCE = 0.005
SLIP_ANGLE = math.radians(5.0)


class PickError(BbRobotError):
    """The pick world lacks what the demo needs (the message names the object)."""


@dataclass(frozen=True)
class Area:
    """Where ``--seed`` may put the cube: x and y ranges in the arm's base frame (m), yaw range (rad)."""

    x: tuple[float, float] = (0.30, 0.50)
    y: tuple[float, float] = (0.08, 0.38)
    yaw: tuple[float, float] = (-math.pi / 4, math.pi / 4)


#: The area of ``--seed`` (module docstring).
AREA = Area()


@dataclass(frozen=True)
class Spot:
    """A place on the table: the cube's centre (m, arm's base frame) and its yaw (rad)."""

    x: float
    y: float
    z: float
    yaw: float = 0.0

    def pose(self) -> Matrix:
        """The cube's pose at the spot (4 x 4)."""
        pose = np.eye(4)
        pose[:3, :3] = rpy_to_matrix((0.0, 0.0, self.yaw))
        pose[:3, 3] = (self.x, self.y, self.z)
        return pose


def seeded_spot(seed: int, z: float, area: Area = AREA) -> Spot:
    """The cube's spot for ``--seed``: uniform in ``area``, reproducible.

    Args:
        seed: the seed.
        z: the cube centre's height (half its side on the table).
        area: where the cube may be.

    Returns:
        The spot.
    """
    rng = random.Random(seed)
    return Spot(rng.uniform(*area.x), rng.uniform(*area.y), z, rng.uniform(*area.yaw))


def mirrored(spot: Spot, wall_y: float = 0.0) -> Spot:
    """The spot mirrored across the wall (the plane y = ``wall_y``), its yaw mirrored too.

    Args:
        spot: the pick spot.
        wall_y: the wall's centre line.

    Returns:
        The place spot.
    """
    return Spot(spot.x, 2 * wall_y - spot.y, spot.z, -spot.yaw)


def spot_of(pose: Matrix) -> Spot:
    """The spot of a cube measured at ``pose``: its centre, and its yaw folded into [-45°, 45°]
    (a cube looks the same turned by 90°), so that the tool turns the least to grasp it.

    Args:
        pose: the cube's pose (4 x 4).

    Returns:
        The spot.
    """
    yaw = math.atan2(pose[1, 0], pose[0, 0])
    yaw = (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4
    return Spot(float(pose[0, 3]), float(pose[1, 3]), float(pose[2, 3]), yaw)


def world_spots(world: Mapping[str, Any]) -> tuple[Spot, float, float]:
    """The pick spot, the wall's y and the wall's top in a world as collision.world reads it.

    Args:
        world: the parsed YAML (``obstacles`` with ``name``, ``xyz``, ``box``).

    Returns:
        ``(pick spot, wall y, wall top)``.

    Raises:
        PickError: no cube or no wall (a box each) in the world.
    """
    boxes = {entry.get("name"): entry for entry in world.get("obstacles", []) if "box" in entry}
    for name in (CUBE, WALL):
        if name not in boxes:
            raise PickError(f"--demo-pick: the world has no box named '{name}' (models/bb_arm_pick.yaml has both)")
    cube, wall = boxes[CUBE], boxes[WALL]
    yaw = float(cube.get("rpy", [0.0, 0.0, 0.0])[2])
    spot = Spot(float(cube["xyz"][0]), float(cube["xyz"][1]), float(cube["xyz"][2]), yaw)
    return spot, float(wall["xyz"][1]), float(wall["xyz"][2]) + float(wall["box"][2]) / 2


def with_cube_at(world: Mapping[str, Any], spot: Spot) -> dict[str, Any]:
    """A copy of the world with the cube at ``spot``.

    Args:
        world: the parsed YAML.
        spot: where the cube goes.

    Returns:
        The new world (the other objects unchanged).
    """
    obstacles = []
    for entry in world.get("obstacles", []):
        if entry.get("name") == CUBE:
            entry = {**entry, "xyz": [spot.x, spot.y, spot.z], "rpy": [0.0, 0.0, spot.yaw]}
        obstacles.append(entry)
    return {**world, "obstacles": obstacles}


def tool_down(spot: Spot, height: float) -> Matrix:
    """The tool's pose over a spot: pointing down, turned to the spot's yaw, its point at ``height``.

    Args:
        spot: the spot (x, y, yaw are used).
        height: the tool point's height (m).

    Returns:
        The 4 x 4 pose in the arm's base frame.
    """
    pose = np.eye(4)
    pose[:3, :3] = rpy_to_matrix((0.0, 0.0, spot.yaw)) @ np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = (spot.x, spot.y, height)
    return pose


@dataclass(frozen=True)
class Waypoints:
    """The tool's poses of the pick and place (4 x 4, arm's base frame)."""

    pre_grasp: Matrix
    grasp: Matrix
    lifted: Matrix
    above_place: Matrix
    release: Matrix
    retreat: Matrix


def waypoints(pick: Spot, place: Spot, side: float, wall_top: float) -> Waypoints:
    """The tool's poses for the cube at ``pick`` and its place spot.

    The grasp holds the tool point :data:`GRASP_DEPTH` below the cube's top; the lift ends where
    the cube's bottom is :data:`OVER_WALL` above the wall's top, and the plan over the wall goes to
    the same height above the place spot.

    Args:
        pick: the cube's spot.
        place: the place spot.
        side: the cube's side (m).
        wall_top: the wall's top (m).

    Returns:
        The waypoints.
    """
    grasp_height = pick.z + side / 2 - GRASP_DEPTH
    release_height = place.z + side / 2 - GRASP_DEPTH
    carried = wall_top + OVER_WALL + (side / 2 - GRASP_DEPTH) + side / 2
    return Waypoints(
        pre_grasp=tool_down(pick, grasp_height + APPROACH),
        grasp=tool_down(pick, grasp_height),
        lifted=tool_down(pick, carried),
        above_place=tool_down(place, carried),
        release=tool_down(place, release_height),
        retreat=tool_down(place, release_height + APPROACH),
    )


def relative(tool: Matrix, cube: Matrix) -> Matrix:
    """The cube's pose in the tool's frame (``tool⁻¹ · cube``).

    Args:
        tool: the tool's pose (4 x 4).
        cube: the cube's pose (4 x 4), in the same frame.

    Returns:
        The 4 x 4 relative pose.
    """
    return np.linalg.inv(tool) @ cube


def pose_difference(a: Matrix, b: Matrix) -> tuple[float, float]:
    """How far apart two poses are: distance (m) and rotation angle (rad).

    Args:
        a: a 4 x 4 pose.
        b: another, in the same frame.

    Returns:
        ``(distance, angle)``.
    """
    rotation = a[:3, :3].T @ b[:3, :3]
    angle = math.acos(max(-1.0, min(1.0, (float(np.trace(rotation)) - 1.0) / 2.0)))
    return float(np.linalg.norm(a[:3, 3] - b[:3, 3])), angle


def face_tilt(pose: Matrix) -> float:
    """The angle between vertical and the cube's face normal nearest to it (rad).

    Args:
        pose: the cube's pose (4 x 4).

    Returns:
        The tilt, 0 for a cube standing on a face.
    """
    nearest = float(np.max(np.abs(pose[2, :3])))
    return math.acos(max(-1.0, min(1.0, nearest)))


@dataclass
class SlipWatch:
    """The cube's largest slip relative to the tool since the close.

    Feed it each measured pair (:meth:`add`); the first is the reference.
    """

    reference: Matrix | None = None
    distance: float = 0.0
    angle: float = 0.0
    samples: int = 0
    #: The cube's largest displacement in the tool's frame (m).
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def add(self, tool: Matrix, cube: Matrix) -> None:
        """Take one measured pair (same frame, same moment).

        Args:
            tool: the tool's pose.
            cube: the cube's pose.
        """
        held = relative(tool, cube)
        self.samples += 1
        if self.reference is None:
            self.reference = held
            return
        distance, angle = pose_difference(self.reference, held)
        if distance > self.distance:
            self.distance = distance
            self.offset = tuple(float(v) for v in held[:3, 3] - self.reference[:3, 3])  # type: ignore[assignment]
        self.angle = max(self.angle, angle)

    def problem(self) -> str:
        """What went wrong ("" when the cube held).

        Returns:
            The message, naming the limit exceeded.
        """
        if self.samples == 0:
            return "no poses of the cube and the tool were measured between close and open"
        if self.distance > SLIP_DISTANCE or self.angle > SLIP_ANGLE:
            x, y, z = (round(v * 1000, 1) for v in self.offset)
            return (
                f"the cube slipped {self.distance * 1000:.1f} mm ({x}, {y}, {z} mm in the tool's frame) and "
                f"{math.degrees(self.angle):.1f}° in the fingers "
                f"(at most {SLIP_DISTANCE * 1000:g} mm and {math.degrees(SLIP_ANGLE):g}°)"
            )
        return ""


@dataclass(frozen=True)
class Verdict:
    """The cube's last pose against the place spot."""

    distance: float
    tilt: float
    ok: bool
    text: str = field(default="")


def judge_place(cube: Matrix, place: Spot) -> Verdict:
    """Whether the cube ended at the place spot, standing on a face.

    Args:
        cube: the cube's measured last pose (4 x 4, arm's base frame).
        place: the place spot.

    Returns:
        The verdict, with a line naming the spot and the measured pose.
    """
    distance = float(np.linalg.norm(cube[:3, 3] - np.array([place.x, place.y, place.z])))
    tilt = face_tilt(cube)
    yaw = math.degrees(math.atan2(cube[1, 0], cube[0, 0]))
    text = (
        f"place spot ({place.x:.3f}, {place.y:.3f}, {place.z:.3f}) m; cube at "
        f"({cube[0, 3]:.3f}, {cube[1, 3]:.3f}, {cube[2, 3]:.3f}) m, yaw {yaw:.1f}°: "
        f"{distance * 1000:.1f} mm off (at most {PLACE_TOLERANCE * 1000:g}), tilted {math.degrees(tilt):.1f}° "
        f"(at most {math.degrees(TILT_TOLERANCE):g})"
    )
    return Verdict(distance, tilt, distance <= PLACE_TOLERANCE and tilt <= TILT_TOLERANCE, text)


#: Dynamic transforms kept per frame (at 100 Hz, 4 s).
KEPT = 400
#: Farthest apart the stamps of a cube pose and of the tool pose it is paired with may be (s).
PAIRED = 0.005


class Frames:
    """Transforms as ``/tf`` and ``/tf_static`` give them: the static ones, and the latest
    :data:`KEPT` of each dynamic frame by stamp, so that poses of one moment can be composed.

    Not thread-safe: the caller holds a lock.
    """

    def __init__(self) -> None:
        self.static: dict[str, tuple[str, Matrix]] = {}
        self.dynamic: dict[str, deque[tuple[float, str, Matrix]]] = {}

    def add(self, parent: str, child: str, stamp: float, transform: Matrix, static: bool = False) -> None:
        """Take one transform.

        Args:
            parent: ``header.frame_id``.
            child: ``child_frame_id``.
            stamp: its stamp (s).
            transform: the child's pose in the parent (4 x 4).
            static: from ``/tf_static``.
        """
        if static:
            self.static[child] = (parent, transform)
        else:
            self.dynamic.setdefault(child, deque(maxlen=KEPT)).append((stamp, parent, transform))

    def latest(self, child: str) -> float | None:
        """The stamp of the newest dynamic transform of ``child`` (``None``: none yet).

        Args:
            child: the frame.

        Returns:
            The stamp (s).
        """
        kept = self.dynamic.get(child)
        return kept[-1][0] if kept else None

    def pose(self, frame: str, root: str, stamp: float | None = None, within: float = math.inf) -> Matrix | None:
        """``frame``'s pose in ``root`` at ``stamp``: each dynamic link of the chain the nearest in time.

        Args:
            frame: the frame.
            root: the frame to express it in (an ancestor).
            stamp: the moment (s; ``None``: each link's latest).
            within: the largest gap between ``stamp`` and a dynamic link's stamp used (s).

        Returns:
            The 4 x 4 pose, or ``None`` when the chain to ``root`` is incomplete or too far in time.
        """
        pose = np.eye(4)
        seen: set[str] = set()
        while frame != root:
            if frame in seen:
                return None
            seen.add(frame)
            if frame in self.static:
                parent, transform = self.static[frame]
            elif self.dynamic.get(frame):
                kept = self.dynamic[frame]
                at, parent, transform = kept[-1] if stamp is None else min(kept, key=lambda k: abs(k[0] - stamp))
                if stamp is not None and abs(at - stamp) > within:
                    return None
            else:
                return None
            pose = transform @ pose
            frame = parent
        return pose
