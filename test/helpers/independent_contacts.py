"""An independent contact check of link pairs: Pinocchio's own model, geometry and sampling, coal underneath.

Nothing of bb_robot's collision code is used: Pinocchio parses the URDF, loads the meshes, places
them with its own kinematics, and checks the triangle meshes with coal.  Configurations are
uniform within Pinocchio's own joint limits (continuous joints: an angle in [-π, π)), from
``numpy.random.default_rng(seed)``, every joint drawn in each configuration: so each pair is
sampled uniformly over its own joints (its contact depends on those alone), and one draw serves
every pair.  Batches go through ``computeCollisionsInParallel`` with one thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LinkPair = tuple[str, str]


@dataclass
class PinocchioRobot:
    """Pinocchio's model and collision geometry of one URDF, with each geometry object's link."""

    model: Any
    geometry: Any
    links: list[str]

    @classmethod
    def load(cls, urdf: Path, share: Path | None) -> PinocchioRobot:
        import pinocchio as pin

        model = pin.buildModelFromUrdf(str(urdf), mimic=True)
        dirs = [str(share)] if share else []
        geometry = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION, dirs)
        links = [model.frames[item.parentFrame].name for item in geometry.geometryObjects]
        return cls(model, geometry, links)

    def select(self, pairs: Iterable[LinkPair]) -> dict[int, LinkPair]:
        """Make the geometry check exactly the part pairs of ``pairs``; each collision pair's link pair."""
        import pinocchio as pin

        wanted = {tuple(sorted(p)) for p in pairs}
        self.geometry.removeAllCollisionPairs()
        chosen: dict[int, LinkPair] = {}
        for i, first in enumerate(self.links):
            for j in range(i + 1, len(self.links)):
                pair = tuple(sorted((first, self.links[j])))
                if pair in wanted:
                    self.geometry.addCollisionPair(pin.CollisionPair(i, j))
                    chosen[len(chosen)] = (pair[0], pair[1])
        return chosen

    def random_configurations(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``(nq, count)`` configurations uniform within the model's limits (Fortran order, as Pinocchio takes)."""
        model = self.model
        q = np.zeros((model.nq, count), order="F")
        for joint in model.joints[1:]:
            if joint.nq == 2:  # continuous: cos, sin of an angle
                angle = rng.uniform(-np.pi, np.pi, count)
                q[joint.idx_q], q[joint.idx_q + 1] = np.cos(angle), np.sin(angle)
            else:
                low = model.lowerPositionLimit[joint.idx_q : joint.idx_q + joint.nq]
                high = model.upperPositionLimit[joint.idx_q : joint.idx_q + joint.nq]
                q[joint.idx_q : joint.idx_q + joint.nq] = rng.uniform(low[:, None], high[:, None], (joint.nq, count))
        return q

    def in_contact(self, q: np.ndarray, chosen: Mapping[int, LinkPair]) -> set[LinkPair]:
        """The link pairs (of the selected ones) in contact at one configuration."""
        import pinocchio as pin

        data, geometry_data = self.model.createData(), pin.GeometryData(self.geometry)
        pin.computeCollisions(self.model, data, self.geometry, geometry_data, q, False)
        return {chosen[k] for k, result in enumerate(geometry_data.collisionResults) if result.isCollision()}

    def q_of(self, values: Mapping[str, float]) -> np.ndarray:
        """Pinocchio's configuration of joint values by name (mimic joints given their source's value)."""
        import pinocchio as pin

        model = self.model
        q = pin.neutral(model)
        for joint_id in range(1, model.njoints):
            name, joint = model.names[joint_id], model.joints[joint_id]
            value = values.get(name)
            if value is None:
                continue
            if joint.nq == 2:
                q[joint.idx_q : joint.idx_q + 2] = (np.cos(value), np.sin(value))
            else:
                q[joint.idx_q] = value
        return q


def contacts(robot: PinocchioRobot, pairs: Iterable[LinkPair], samples: int, seed: int, batch: int = 20_000) -> dict:
    """How many of ``samples`` random configurations put each of ``pairs`` in contact (only pairs found)."""
    import pinocchio as pin

    chosen = robot.select(pairs)
    if not chosen:
        return {}
    pool = pin.GeometryPool(robot.model, robot.geometry, 1)
    rng = np.random.default_rng(seed)
    counts: dict[LinkPair, int] = {}
    done = 0
    while done < samples:
        size = min(batch, samples - done)
        q = robot.random_configurations(size, rng)
        hits = np.flatnonzero(np.asarray(pin.computeCollisionsInParallel(1, pool, q, False, False)))
        for index in hits:
            for pair in robot.in_contact(q[:, index], chosen):
                counts[pair] = counts.get(pair, 0) + 1
        done += size
    return counts
