"""The scene: the robot's collision model and matrix, its configured world, and objects added at run time.

A :class:`Scene` holds

- the robot's :class:`~bb_robot.collision.model.CollisionModel` with its verified allowed-collision
  matrix (``model.disabled``: the SRDF as :func:`bb_robot.collision.verify.review` left it);
- the configured world (:class:`~bb_robot.collision.world.World`, read from ``collision.world``):
  its obstacles, the contacts where the robot stands (allowed, as the driver allows them), and the
  pairs its file allows (a MoveIt scene's matrix).  Of those, the robot-robot pairs the robot's
  matrix does not already disable are verified as an SRDF's are (:func:`~bb_robot.collision.verify.verify_pairs`):
  a pair that can touch is checked anyway, with a warning naming the pair and the file;
- objects added at run time (:meth:`Scene.add_object`): in the world (named ``world/<name>``), or
  attached to a link (``attached/<name>``: it moves with the link, is checked against the world,
  the other links and other objects, and may touch its link and its touch links);
- allowed pairs added at run time (:meth:`Scene.allow`), each naming at least one run-time object.

Run-time changes never weaken what was configured: the configured obstacles cannot be removed or
moved, and no run-time entry may allow a pair of robot links or a robot link and a configured
obstacle.  Each refusal is a :class:`~bb_robot.collision.errors.SceneError` naming the object or pair.

:attr:`Scene.model` is the collision model of the whole scene as it is now (rebuilt after a
change, on first use); :attr:`Scene.version` counts the changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from bb_robot.collision.errors import SceneError
from bb_robot.collision.matrix import DEFAULT_SAMPLES
from bb_robot.collision.model import CollisionModel, Contact, LinkPair, link_pair
from bb_robot.collision.objects import WORLD_PREFIX, Shape, object_parts, placed
from bb_robot.collision.shapes import Part
from bb_robot.collision.verify import TOUCHES, verify_pairs
from bb_robot.collision.world import World, standing_contacts
from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix

#: Objects attached to a link are named with this prefix (world objects with ``world/``).
ATTACHED_PREFIX = "attached/"


@dataclass
class SceneObject:
    """An object added at run time.

    Attributes:
        name: its name (its parts' link is ``world/<name>``, or ``attached/<name>`` while attached).
        parts: its shapes, in its own frame.
        pose: its frame's pose: in the robot's root frame, or in ``link``'s frame while attached.
        link: the link it is attached to (``""``: in the world).
        touch_links: the links besides ``link`` it may touch while attached.
    """

    name: str
    parts: tuple[Part, ...]
    pose: Matrix
    link: str = ""
    touch_links: frozenset[str] = field(default_factory=frozenset)

    @property
    def link_name(self) -> str:
        """The name its parts and contacts carry."""
        return f"{ATTACHED_PREFIX if self.link else WORLD_PREFIX}{self.name}"


def _checked_pose(name: str, pose: npt.ArrayLike | None) -> Matrix:
    matrix = np.eye(4) if pose is None else np.asarray(pose, dtype=float)
    if matrix.shape != (4, 4) or not np.isfinite(matrix).all():
        raise SceneError(f"object '{name}': pose: needs a finite 4×4 matrix, got {matrix.tolist()}")
    rotation = matrix[:3, :3]
    if not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-6) or not np.allclose(matrix[3], [0, 0, 0, 1]):
        raise SceneError(f"object '{name}': pose: not a rigid transform (rotation not orthonormal)")
    return matrix


class Scene:
    """The robot, its configured world and the objects added at run time (see the module docstring).

    Args:
        model: the robot's collision model with its verified matrix applied, without obstacles.
        world: the configured world (``collision.world``); none when ``None``.
        samples: random configurations per robot-robot pair a scene file allows, in its verification.

    Attributes:
        warnings: the world file's ignored entries, and its allowed pairs that can touch (checked anyway).
        standing: the robot-obstacle pairs in contact where the robot stands (allowed).

    Raises:
        SceneError: a pair the world allows names a link the robot does not have.
    """

    def __init__(self, model: CollisionModel, world: World | None = None, samples: int = DEFAULT_SAMPLES) -> None:
        self.robot_model = model
        self.world = world or World("", ())
        self.warnings: list[str] = list(self.world.warnings)
        self._configured = {part.link for part in self.world.parts}
        links = set(model.robot.links)
        obstacles = model.with_obstacles(self.world.parts)
        self.standing: frozenset[LinkPair] = (
            frozenset(standing_contacts(obstacles)) if self.world.parts else frozenset()
        )
        allowed: set[LinkPair] = set(self.standing)
        to_verify: dict[LinkPair, str] = {}
        for pair in self.world.allowed:
            if not all(name in links or name in self._configured for name in pair):
                raise SceneError(f"{self.world.source}: allowed pair {pair} names neither a link nor an obstacle")
            if pair[0] in links and pair[1] in links:
                if pair not in model.disabled:
                    to_verify[pair] = "scene"
            else:
                allowed.add(pair)
        for check in verify_pairs(model, to_verify, samples) if to_verify else ():
            if check.status == TOUCHES:
                self.warnings.append(
                    f"{self.world.source}: allows links '{check.pair[0]}' and '{check.pair[1]}', which can touch "
                    f"(witness {check.witness_text()}): checked anyway"
                )
            else:
                allowed.add(check.pair)
        self._configured_allowed = frozenset(allowed)
        self._objects: dict[str, SceneObject] = {}
        self._runtime_allowed: set[tuple[str, str]] = set()
        self.version = 0
        self._model: CollisionModel | None = None

    # ------------------------------------------------------------------ what is there
    @property
    def objects(self) -> dict[str, SceneObject]:
        """The run-time objects by name (a copy)."""
        return dict(self._objects)

    @property
    def configured_obstacles(self) -> tuple[str, ...]:
        """The configured world's obstacle names (``world/...``), sorted."""
        return tuple(sorted(self._configured))

    def _is_configured(self, name: str) -> bool:
        full = name if name.startswith(WORLD_PREFIX) else f"{WORLD_PREFIX}{name}"
        return any(c == full or c.startswith(f"{full}/") for c in self._configured)

    def _changed(self) -> None:
        self.version += 1
        self._model = None

    def _runtime(self, name: str, doing: str) -> SceneObject:
        if name in self._objects:
            return self._objects[name]
        if self._is_configured(name):
            raise SceneError(
                f"object '{name}' is part of the configured world ({self.world.source}): "
                f"it cannot be {doing} at run time"
            )
        raise SceneError(f"object '{name}': no such object was added at run time (cannot be {doing})")

    def _robot_link(self, name: str, link: str, what: str) -> str:
        if link not in self.robot_model.robot.links:
            raise SceneError(f"object '{name}': {what}: the robot has no link '{link}'")
        return link

    # ------------------------------------------------------------------ run-time changes
    def add_object(
        self,
        name: str,
        shapes: Sequence[tuple[Shape, npt.ArrayLike]],
        pose: npt.ArrayLike | None = None,
        link: str = "",
        touch_links: Iterable[str] = (),
        source: str = "",
    ) -> None:
        """Add an object: in the world, or attached to ``link``.

        Args:
            name: a name not yet in the scene (no ``/``).
            shapes: its shapes (:mod:`bb_robot.collision.objects`), each with its pose in the object's frame.
            pose: the object's pose in the robot's root frame, or in ``link``'s frame (identity when ``None``).
            link: the link to attach it to (``""``: the world).
            touch_links: links besides ``link`` it may touch while attached.
            source: the file it comes from (mesh files are relative to it).

        Raises:
            SceneError: a taken or bad name, a bad pose, an unknown link, a shape that cannot be used.
        """
        if not name or "/" in name or not isinstance(name, str):
            raise SceneError(f"object '{name}': name: needs a non-empty name without '/'")
        if name in self._objects or self._is_configured(name):
            raise SceneError(f"object '{name}': name: the scene already has an object of that name")
        if not shapes:
            raise SceneError(f"object '{name}': shapes: needs at least one shape")
        poses = [_checked_pose(name, local) for _, local in shapes]
        frame = _checked_pose(name, pose)
        if link:
            self._robot_link(name, link, "link")
        touching = frozenset(self._robot_link(name, t, "touch_links") for t in touch_links)
        try:
            parts = object_parts(
                name, [(shape, local) for (shape, _), local in zip(shapes, poses, strict=True)], source
            )
        except (BbRobotError, ValueError) as error:
            raise SceneError(f"object '{name}': shapes: {error}") from None
        self._objects[name] = SceneObject(name, parts, frame, link, touching)
        self._changed()

    def remove_object(self, name: str) -> None:
        """Remove an object added at run time, and the pairs allowed for it.

        Args:
            name: the object.

        Raises:
            SceneError: a configured obstacle, or no such object.
        """
        self._runtime(name, "removed")
        del self._objects[name]
        self._runtime_allowed = {pair for pair in self._runtime_allowed if name not in pair}
        self._changed()

    def move_object(self, name: str, pose: npt.ArrayLike) -> None:
        """Move an object added at run time (``pose`` in the root frame, or its link's frame while attached).

        Args:
            name: the object.
            pose: its new 4×4 pose.

        Raises:
            SceneError: a configured obstacle, no such object, or a bad pose.
        """
        thing = self._runtime(name, "moved")
        thing.pose = _checked_pose(name, pose)
        self._changed()

    def _link_pose(self, name: str, link: str, q: npt.ArrayLike) -> Matrix:
        fk = self.robot_model.fk
        try:
            frames = fk.compute(q)
        except BbRobotError as error:
            raise SceneError(f"object '{name}': configuration: {error}") from None
        return np.asarray(frames[fk.link_names.index(link)])

    def attach(self, name: str, link: str, q: npt.ArrayLike, touch_links: Iterable[str] = ()) -> None:
        """Attach a run-time world object to ``link`` where it is at configuration ``q`` (it then moves with the link).

        Args:
            name: the object.
            link: the robot link that holds it.
            q: the configuration it is picked up at (:attr:`ForwardKinematics.joint_names` order).
            touch_links: links besides ``link`` it may touch.

        Raises:
            SceneError: a configured obstacle, no such object, already attached, an unknown link, a bad ``q``.
        """
        thing = self._runtime(name, "attached")
        if thing.link:
            raise SceneError(f"object '{name}': already attached to '{thing.link}'")
        self._robot_link(name, link, "link")
        touching = frozenset(self._robot_link(name, t, "touch_links") for t in touch_links)
        held = np.linalg.inv(self._link_pose(name, link, q)) @ thing.pose
        self._objects[name] = replace(thing, pose=held, link=link, touch_links=touching)
        self._changed()

    def detach(self, name: str, q: npt.ArrayLike) -> None:
        """Leave an attached object in the world where it is at configuration ``q``.

        Args:
            name: the object.
            q: the configuration it is put down at.

        Raises:
            SceneError: no such object, not attached, a bad ``q``.
        """
        thing = self._runtime(name, "detached")
        if not thing.link:
            raise SceneError(f"object '{name}': is not attached")
        pose = self._link_pose(name, thing.link, q) @ thing.pose
        self._objects[name] = replace(thing, pose=pose, link="", touch_links=frozenset())
        self._changed()

    def _entry(self, a: str, b: str) -> tuple[str, str]:
        if a not in self._objects and b not in self._objects:
            raise SceneError(
                f"pair ('{a}', '{b}'): names no object added at run time; the robot's verified matrix and the "
                "configured world cannot be changed at run time"
            )
        known = set(self._objects) | set(self.robot_model.robot.links) | self._configured
        for name in (a, b):
            if name not in known:
                raise SceneError(f"pair ('{a}', '{b}'): '{name}' is no object, link or obstacle of the scene")
        return (a, b) if a <= b else (b, a)

    def allow(self, a: str, b: str) -> None:
        """Allow contact between a run-time object and a link, an obstacle (``world/...``) or another object.

        Args:
            a: a run-time object's name, a link or an obstacle.
            b: the same; one of the two must be a run-time object.

        Raises:
            SceneError: neither name is a run-time object, or a name is unknown.
        """
        self._runtime_allowed.add(self._entry(a, b))
        self._changed()

    def disallow(self, a: str, b: str) -> None:
        """Check a pair :meth:`allow` allowed again (nothing else changes).

        Args:
            a: as :meth:`allow`.
            b: as :meth:`allow`.

        Raises:
            SceneError: as :meth:`allow`.
        """
        self._runtime_allowed.discard(self._entry(a, b))
        self._changed()

    @property
    def runtime_allowed(self) -> frozenset[tuple[str, str]]:
        """The pairs :meth:`allow` allowed and :meth:`disallow` did not take back, each ``(a, b)`` sorted."""
        return frozenset(self._runtime_allowed)

    # ------------------------------------------------------------------ the model
    def _link_name(self, name: str) -> str:
        return self._objects[name].link_name if name in self._objects else name

    @property
    def allowed(self) -> frozenset[LinkPair]:
        """Every pair left unchecked now: the robot's matrix, the configured world's, run-time entries, touch links."""
        pairs = set(self.robot_model.disabled) | self._configured_allowed
        pairs.update(link_pair(self._link_name(a), self._link_name(b)) for a, b in self._runtime_allowed)
        for thing in self._objects.values():
            if thing.link:
                pairs.update(link_pair(thing.link_name, t) for t in thing.touch_links | {thing.link})
        return frozenset(pairs)

    @property
    def model(self) -> CollisionModel:
        """The collision model of the scene as it is now."""
        if self._model is None:
            attached: list[Part] = []
            obstacles = list(self.world.parts)
            for thing in self._objects.values():
                moved = [placed(part, thing.pose, thing.link_name) for part in thing.parts]
                if thing.link:
                    attached.extend(replace(part, frame=thing.link) for part in moved)
                else:
                    obstacles.extend(moved)
            base = self.robot_model
            self._model = CollisionModel(base.robot, base.parts + tuple(attached), self.allowed, obstacles)
        return self._model

    def colliding(self, q: npt.ArrayLike, exact: bool = False) -> list[Contact]:
        """The checked pairs in contact at ``q`` (:meth:`CollisionModel.colliding`).

        Args:
            q: the configuration.
            exact: triangle meshes instead of their convex hulls.

        Returns:
            The contacts.
        """
        return self.model.colliding(q, exact)

    def nearest(self, q: npt.ArrayLike) -> Contact | None:
        """The nearest checked pair at ``q`` (:meth:`CollisionModel.nearest`).

        Args:
            q: the configuration.

        Returns:
            The nearest pair and its distance, or ``None`` when nothing is checked.
        """
        return self.model.nearest(q)
