"""The allowed-collision matrix: which link pairs are never checked, and why.

:func:`compute_matrix` follows the categories of MoveIt's Setup Assistant
(``compute_default_collisions.cpp``), with its defaults:

- ``Adjacent``: links joined by a joint, or joined through links that have no collision geometry;
- ``Default``: pairs in contact at the default configuration (every joint at 0, or mid-range
  where 0 is outside its limits);
- ``Always``: pairs in contact in more than 95 % of random configurations;
- ``Never``: pairs never in contact in ``samples`` (10,000) random configurations, and not in
  contact where a search for their closest approach ends either.

Each pair is sampled over the joints that move it (:mod:`bb_robot.collision.approach`), uniform
within the joints' limits (continuous joints over one turn), drawn from
``numpy.random.default_rng(seed)``: the same seed gives the same matrix.  Contact is decided on the
exact triangle meshes, as the Setup Assistant does.  A pair sampling never found in contact but the
search did stays checked, with the search's witness configuration and penetration depth; a
``Never`` pair carries its margin, the smallest distance the search found.  Every other pair stays
checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from bb_robot.collision.approach import Finding, survey
from bb_robot.collision.model import CollisionModel, LinkPair, link_pair
from bb_robot.model.robot import Robot
from bb_robot.model.transforms import Matrix

ADJACENT = "Adjacent"
DEFAULT = "Default"
ALWAYS = "Always"
NEVER = "Never"
USER = "User"

#: MoveIt's thresholds.
DEFAULT_SAMPLES = 10_000
ALWAYS_FRACTION = 0.95
#: The version of how matrices are computed (part of the cache's key): 2 samples each pair over its
#: own joints and searches the closest approach of the pairs never in contact.
ALGORITHM_VERSION = 2


@dataclass(frozen=True)
class CollisionMatrix:
    """Disabled link pairs with their reason; every other pair of links with geometry is checked.

    Attributes:
        robot: the robot's name.
        disabled: each disabled pair (sorted names) and its reason (``Adjacent``, ``Default``,
            ``Always``, ``Never``, ``User`` or what an SRDF says).
        samples: how many random configurations decided ``Always`` / ``Never`` (0: read, not computed).
        seed: the random seed used (``None`` when read).
        fractions: for computed matrices, each sampled pair's fraction of configurations in contact.
        margins: for computed matrices, each ``Never`` pair's margin: the smallest distance the
            search found (m; absent where it measured none).
        reached: for computed matrices, the pairs sampling never saw in contact but the search did
            (left checked): each one's finding, with its witness configuration and depth.
    """

    robot: str
    disabled: Mapping[LinkPair, str]
    samples: int = 0
    seed: int | None = None
    fractions: Mapping[LinkPair, float] = field(default_factory=dict)
    margins: Mapping[LinkPair, float] = field(default_factory=dict)
    reached: Mapping[LinkPair, Finding] = field(default_factory=dict)

    def is_disabled(self, a: str, b: str) -> bool:
        """Whether the pair of links ``a``, ``b`` is left unchecked."""
        return link_pair(a, b) in self.disabled

    def merged(self, other: CollisionMatrix) -> CollisionMatrix:
        """This matrix with ``other``'s disabled pairs added (this one's reasons win)."""
        disabled = dict(other.disabled)
        disabled.update(self.disabled)
        return CollisionMatrix(
            self.robot, disabled, self.samples, self.seed, dict(self.fractions), dict(self.margins), dict(self.reached)
        )


def default_configuration(robot: Robot, joint_names: Iterable[str]) -> Matrix:
    """Each joint at 0, or mid-range where 0 is outside its limits (MoveIt's default state).

    Args:
        robot: the model.
        joint_names: the coordinates, in order.

    Returns:
        The configuration vector.
    """
    values = []
    for name in joint_names:
        limits = robot.joints[name].limits
        lower = limits.lower if limits and limits.lower is not None else None
        upper = limits.upper if limits and limits.upper is not None else None
        if lower is not None and upper is not None and not lower <= 0.0 <= upper:
            values.append((lower + upper) / 2)
        else:
            values.append(0.0)
    return np.array(values, dtype=float)


def joint_bounds(robot: Robot, joint_names: Iterable[str]) -> tuple[Matrix, Matrix]:
    """Lower and upper bounds to sample each coordinate within (continuous or unbounded joints: ±π).

    Args:
        robot: the model.
        joint_names: the coordinates, in order.

    Returns:
        ``(lower, upper)`` arrays.
    """
    lower, upper = [], []
    for name in joint_names:
        limits = robot.joints[name].limits
        has = (
            limits is not None and limits.lower is not None and limits.upper is not None and limits.lower < limits.upper
        )
        if has and robot.joints[name].type != "continuous":
            assert limits is not None and limits.lower is not None and limits.upper is not None
            lower.append(limits.lower)
            upper.append(limits.upper)
        else:
            lower.append(-math.pi)
            upper.append(math.pi)
    return np.array(lower, dtype=float), np.array(upper, dtype=float)


def adjacent_pairs(robot: Robot, with_geometry: Iterable[str]) -> set[LinkPair]:
    """Pairs of links with geometry joined by a joint, or through links without geometry.

    Args:
        robot: the model.
        with_geometry: the links that have collision geometry.

    Returns:
        The adjacent pairs (sorted names).
    """
    solid = set(with_geometry)
    neighbours: dict[str, set[str]] = {name: set() for name in robot.links}
    for joint in robot.joints.values():
        neighbours[joint.parent_link].add(joint.child_link)
        neighbours[joint.child_link].add(joint.parent_link)
    pairs: set[LinkPair] = set()
    for start in solid:
        seen, stack = {start}, list(neighbours[start])
        while stack:
            link = stack.pop()
            if link in seen:
                continue
            seen.add(link)
            if link in solid:
                pairs.add(link_pair(start, link))
            else:
                stack.extend(neighbours[link])
    return pairs


def default_pose_contacts(model: CollisionModel) -> list[LinkPair]:
    """Pairs in contact at the default configuration, leaving out adjacent pairs and the model's disabled ones.

    What ``bb-robot check`` warns about (MoveIt's ``Default`` category, as a warning).

    Args:
        model: the collision model (with the pairs its matrix disables).

    Returns:
        The pairs in contact (exact meshes), sorted.
    """
    adjacent = adjacent_pairs(model.robot, model.links_with_geometry)
    checked = model.with_allowed(set(model.disabled) | adjacent)
    configuration = default_configuration(model.robot, model.fk.joint_names)
    return sorted({c.links for c in checked.colliding(configuration, exact=True)})


def compute_matrix(
    model: CollisionModel,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    always_fraction: float = ALWAYS_FRACTION,
    chunk: int = 500,
    progress: Callable[[int, int], None] | None = None,
    search: bool = True,
) -> CollisionMatrix:
    """Compute the allowed-collision matrix of a robot (see the module docstring).

    Args:
        model: the robot's collision model (its own disabled pairs and obstacles are ignored).
        samples: random configurations per pair for ``Always`` / ``Never`` (0: only ``Adjacent`` and ``Default``).
        seed: the random generator's seed.
        always_fraction: a pair in contact in more than this fraction of samples is ``Always``.
        chunk: configurations per batch (memory against speed).
        progress: called with ``(done, total)`` samples after each batch.
        search: search the closest approach of pairs never in contact (off: MoveIt's rule alone).

    Returns:
        The matrix.

    Raises:
        ValueError: ``samples`` is negative or ``always_fraction`` not in (0, 1].
    """
    if samples < 0:
        raise ValueError(f"samples must be >= 0, got {samples}")
    if not 0.0 < always_fraction <= 1.0:
        raise ValueError(f"always_fraction must be in (0, 1], got {always_fraction}")
    disabled = fixed_pairs(model)
    fractions: dict[LinkPair, float] = {}
    margins: dict[LinkPair, float] = {}
    reached: dict[LinkPair, Finding] = {}
    if samples:
        sampled = CollisionModel(model.robot, model.parts, disabled).pairs
        findings = survey_pairs(model, sampled, samples, seed, chunk=chunk, search=search, progress=progress)
        for pair, finding in sorted(findings.items()):
            fractions[pair] = finding.fraction
            if finding.searched:
                reached[pair] = finding
            elif finding.count == 0:
                disabled[pair] = NEVER
                if finding.margin is not None:
                    margins[pair] = finding.margin
            elif finding.fraction > always_fraction:
                disabled[pair] = ALWAYS
    return CollisionMatrix(model.robot.name, dict(sorted(disabled.items())), samples, seed, fractions, margins, reached)


def fixed_pairs(model: CollisionModel) -> dict[LinkPair, str]:
    """The pairs disabled without sampling: ``Adjacent``, then ``Default`` (in contact at the default configuration).

    Args:
        model: the robot's collision model (its own disabled pairs and obstacles are ignored).

    Returns:
        Each such pair and its reason, sorted.
    """
    robot = model.robot
    disabled: dict[LinkPair, str] = dict.fromkeys(sorted(adjacent_pairs(robot, model.links_with_geometry)), ADJACENT)
    bare = CollisionModel(robot, model.parts, disabled)
    for pair in sorted(bare.colliding_batch(default_configuration(robot, model.fk.joint_names)[None, :])[0]):
        disabled.setdefault(pair, DEFAULT)
    return disabled


def survey_pairs(
    model: CollisionModel,
    pairs: Iterable[LinkPair],
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    *,
    chunk: int = 500,
    search: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> dict[LinkPair, Finding]:
    """:func:`~bb_robot.collision.approach.survey` within the joints' limits, other joints at the default configuration.

    Args:
        model: the robot's collision model.
        pairs: the link pairs to decide.
        samples: random configurations per pair (at least 1).
        seed: the random generator's seed.
        chunk: configurations per batch.
        search: search the closest approach of pairs never in contact.
        progress: called with ``(done, total)`` samples after each batch.

    Returns:
        Each pair's finding.
    """
    names = model.fk.joint_names
    bounds = joint_bounds(model.robot, names)
    default = default_configuration(model.robot, names)
    return survey(model, pairs, samples, seed, bounds, default, chunk=chunk, search=search, progress=progress)
