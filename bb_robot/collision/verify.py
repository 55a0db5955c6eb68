"""An SRDF checked before it is trusted: can a pair it disables touch?

:func:`verify_pairs` checks each pair a matrix disables:

- pairs our own rules leave unchecked without sampling, ``Adjacent`` and ``Default``
  (:func:`~bb_robot.collision.matrix.fixed_pairs`), and pairs naming a link without collision
  geometry, are *justified*;
- every other pair is sampled over its own joints and, never in contact, searched for its closest
  approach (:mod:`bb_robot.collision.approach`, 10,000 samples, seed 0): in contact in more than
  95 % of samples it is ``Always``, *justified*; in contact in some, or where the search ends, it
  *touches*, with a witness configuration and the penetration depth; otherwise it is *apart*, with
  its margin.

:func:`verify_srdf` does it for an SRDF file and a description, once per pair of texts: the
result is cached under the SHA-256 of the SRDF and of the description (and the algorithm's
version), in ``verified/`` of the matrix cache's directory.  A file this code computed for that
description carries a stamp (:func:`bb_robot.collision.srdf.stamp_matches`) and is its own
verification: nothing is sampled.  The bundled models' SRDFs are stamped.

:func:`trusted_matrix` is what the driver applies: the SRDF's matrix minus the pairs that touch,
unless the user trusts the file (``collision.trust_srdf``); either way each such pair is named
in a warning with the file and the witness (:func:`warning_lines`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bb_robot.collision.cache import cache_directory
from bb_robot.collision.errors import SrdfError
from bb_robot.collision.matrix import (
    ADJACENT,
    ALGORITHM_VERSION,
    ALWAYS,
    ALWAYS_FRACTION,
    DEFAULT,
    DEFAULT_SAMPLES,
    CollisionMatrix,
    fixed_pairs,
    survey_pairs,
)
from bb_robot.collision.model import CollisionModel, LinkPair
from bb_robot.collision.reach import PairReach
from bb_robot.collision.srdf import parse_srdf, stamp_matches

JUSTIFIED = "justified"
TOUCHES = "touches"
APART = "apart"
#: The category of a disabled pair naming a link without collision geometry: nothing to check.
NO_GEOMETRY = "no geometry"


@dataclass(frozen=True)
class PairCheck:
    """The verdict on one pair an SRDF disables.

    Attributes:
        pair: the two links, sorted.
        reason: the SRDF's reason.
        status: ``justified``, ``touches`` or ``apart``.
        category: for a justified pair, ours: ``Adjacent``, ``Default``, ``Always`` or ``no geometry``.
        witness: for a pair that touches, a configuration in contact: every coordinate by name.
        depth: for a pair that touches, the penetration depth there (m).
        margin: for a pair apart, the smallest distance the search found (m; ``None``: none measured).
        moving: the joints that move the pair (the witness's values that matter).
    """

    pair: LinkPair
    reason: str
    status: str
    category: str | None = None
    witness: Mapping[str, float] | None = None
    depth: float | None = None
    margin: float | None = None
    moving: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The check as JSON-ready values."""
        return {
            "link1": self.pair[0],
            "link2": self.pair[1],
            "reason": self.reason,
            "status": self.status,
            "category": self.category,
            "witness": dict(self.witness) if self.witness is not None else None,
            "depth": self.depth,
            "margin": self.margin,
            "moving": list(self.moving),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairCheck:
        """The check :meth:`as_json` gave."""
        return cls(
            (data["link1"], data["link2"]),
            data["reason"],
            data["status"],
            data["category"],
            data["witness"],
            data["depth"],
            data["margin"],
            tuple(data["moving"]),
        )

    def witness_text(self) -> str:
        """The witness's joints that move the pair, and the depth: ``left_s0=0.412, left_s1=-1.020; depth 3.1 mm``."""
        if self.witness is None:
            return ""
        values = ", ".join(f"{name}={self.witness[name]:.3f}" for name in self.moving)
        return f"{values or 'any configuration'}; depth {(self.depth or 0.0) * 1000:.1f} mm"


@dataclass(frozen=True)
class SrdfVerdict:
    """The checks of one SRDF file against one description.

    Attributes:
        srdf: the file.
        checks: one per disabled pair, sorted.
        origin: ``searched`` (computed now), ``cache`` (computed before) or ``stamp`` (the file's own stamp).
    """

    srdf: str
    checks: tuple[PairCheck, ...]
    origin: str

    @property
    def touching(self) -> tuple[PairCheck, ...]:
        """The disabled pairs that can touch."""
        return tuple(c for c in self.checks if c.status == TOUCHES)


def verify_pairs(
    model: CollisionModel,
    disabled: Mapping[LinkPair, str],
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[PairCheck, ...]:
    """Check each disabled pair (the module docstring).

    Args:
        model: the robot's collision model (its own matrix ignored).
        disabled: the disabled pairs (sorted names) and the SRDF's reasons.
        samples: random configurations per pair.
        seed: the random generator's seed.
        progress: called with ``(done, total)`` samples while sampling.

    Returns:
        One check per pair, sorted.
    """
    fixed = fixed_pairs(model)
    solid = set(model.links_with_geometry)
    checks: dict[LinkPair, PairCheck] = {}
    searched = []
    for pair, reason in disabled.items():
        if pair in fixed:
            checks[pair] = PairCheck(pair, reason, JUSTIFIED, fixed[pair])
        elif not (pair[0] in solid and pair[1] in solid):
            checks[pair] = PairCheck(pair, reason, JUSTIFIED, NO_GEOMETRY)
        else:
            searched.append(pair)
    names = model.fk.joint_names
    findings = survey_pairs(model, searched, samples, seed, progress=progress) if searched else {}
    for pair, finding in findings.items():
        reason = disabled[pair]
        moving = tuple(names[i] for i in PairReach.of(model.fk, *pair).coordinates)
        if finding.witness is None:
            checks[pair] = PairCheck(pair, reason, APART, margin=finding.margin, moving=moving)
        elif finding.fraction > ALWAYS_FRACTION:
            checks[pair] = PairCheck(pair, reason, JUSTIFIED, ALWAYS, moving=moving)
        else:
            witness = dict(zip(names, (float(v) for v in finding.witness), strict=True))
            checks[pair] = PairCheck(pair, reason, TOUCHES, witness=witness, depth=finding.depth, moving=moving)
    return tuple(checks[pair] for pair in sorted(checks))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verification_path(srdf: bytes, description: str | bytes) -> Path:
    """The cache file of the checks of one SRDF text against one description text (it may not exist)."""
    text = description.encode("utf-8") if isinstance(description, str) else description
    return cache_directory() / "verified" / f"{_sha256(srdf)}-{_sha256(text)}-{ALGORITHM_VERSION}.json"


def verify_srdf(
    model: CollisionModel,
    description: str | bytes,
    srdf: str | os.PathLike[str],
    progress: Callable[[int, int], None] | None = None,
) -> SrdfVerdict:
    """Check the pairs an SRDF file disables, once per pair of texts (the module docstring).

    Args:
        model: the robot's collision model.
        description: the description's text (what the model was built from).
        srdf: the SRDF file.
        progress: called with ``(done, total)`` samples while sampling.

    Returns:
        The verdict.

    Raises:
        SrdfError: the SRDF cannot be read, names a link the robot does not have, or the cache
            cannot be written.
    """
    name = str(srdf)
    try:
        data = Path(srdf).read_bytes()
    except OSError as error:
        raise SrdfError(name, f"cannot read: {error.strerror or error}") from None
    disabled = parse_srdf(data, name, model.robot.links).disabled
    if stamp_matches(data, description):
        return SrdfVerdict(name, _stamped(disabled), "stamp")
    path = verification_path(data, description)
    if path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            return SrdfVerdict(name, tuple(PairCheck.from_json(c) for c in stored["checks"]), "cache")
        except (OSError, ValueError, KeyError, TypeError):
            pass  # unreadable: computed again, and written over
    checks = verify_pairs(model, disabled, progress=progress)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"srdf": name, "checks": [c.as_json() for c in checks]}), encoding="utf-8")
    except OSError as error:
        raise SrdfError(str(path), f"cannot write the verification cache: {error.strerror or error}") from None
    return SrdfVerdict(name, checks, "searched")


def _stamped(disabled: Mapping[LinkPair, str]) -> tuple[PairCheck, ...]:
    """The checks of a stamped file: its pairs were decided by this code, so its reasons are ours
    (``Adjacent``, ``Default`` and ``Always`` justified; ``Never`` apart, its margin in the file's comments)."""
    checks = []
    for pair, reason in sorted(disabled.items()):
        justified = reason in (ADJACENT, DEFAULT, ALWAYS)
        checks.append(PairCheck(pair, reason, JUSTIFIED if justified else APART, reason if justified else None))
    return tuple(checks)


def warning_lines(verdict: SrdfVerdict, trusted: bool) -> list[str]:
    """One warning per disabled pair that can touch, naming the pair, the file and the witness.

    Args:
        verdict: the SRDF's checks.
        trusted: the pairs stay disabled (``collision.trust_srdf``); else they are checked anyway.

    Returns:
        The warnings.
    """
    then = (
        "kept disabled, as collision.trust_srdf is true"
        if trusted
        else "checked anyway (collision.trust_srdf: true keeps it disabled)"
    )
    return [
        f"{verdict.srdf}: disables links '{c.pair[0]}' and '{c.pair[1]}', which can touch (witness "
        f"{c.witness_text()}): {then}"
        for c in verdict.touching
    ]


def trusted_matrix(matrix: CollisionMatrix, verdict: SrdfVerdict, trusted: bool) -> CollisionMatrix:
    """The matrix to apply: without the pairs that touch, unless the file is trusted.

    Args:
        matrix: the SRDF's matrix.
        verdict: its checks.
        trusted: keep the file as written.

    Returns:
        The matrix (``matrix`` itself when nothing changes).
    """
    touching = {c.pair for c in verdict.touching}
    if trusted or not touching:
        return matrix
    kept = {pair: reason for pair, reason in matrix.disabled.items() if pair not in touching}
    return CollisionMatrix(matrix.robot, kept, matrix.samples, matrix.seed, dict(matrix.fractions))


def review(
    model: CollisionModel, description: str | bytes, matrix: CollisionMatrix, srdf: str | None, trusted: bool
) -> tuple[CollisionMatrix, list[str]]:
    """The matrix to apply and the warnings to log for a matrix read from ``srdf`` (``None``: not read from a file).

    Args:
        model: the robot's collision model.
        description: the description's text.
        matrix: the matrix read.
        srdf: the file it was read from, or ``None`` (computed or partial: nothing to verify).
        trusted: ``collision.trust_srdf``.

    Returns:
        The matrix (:func:`trusted_matrix`) and the warnings (:func:`warning_lines`).

    Raises:
        SrdfError: as :func:`verify_srdf`.
    """
    if srdf is None:
        return matrix, []
    verdict = verify_srdf(model, description, srdf)
    return trusted_matrix(matrix, verdict, trusted), warning_lines(verdict, trusted)


def summary(checks: Sequence[PairCheck]) -> dict[str, int]:
    """How many checks have each status."""
    counts = {JUSTIFIED: 0, APART: 0, TOUCHES: 0}
    for check in checks:
        counts[check.status] += 1
    return counts
