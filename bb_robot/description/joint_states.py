"""Validating ``sensor_msgs/JointState`` messages and merging them into one joint state.

:class:`JointStateMerger` keeps the last value of every independent joint of the robot and
whether it has been seen at all.  A message updates the joints it names; names the robot
does not have (another robot's joints, mimic, fixed, floating or planar joints) are ignored:
a mimic joint follows its source, whatever a message says about it.

A message is rejected whole (:class:`RejectedMessage`, nothing is updated) when:

- ``name`` and ``position`` differ in length;
- ``velocity`` or ``effort`` is neither empty nor as long as ``name`` (the message
  definition allows only these two; their values are not used);
- a name appears twice;
- a position is NaN or infinite (any of them: a source that produces NaN is broken).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bb_robot.errors import BbRobotError

IntArray = npt.NDArray[np.intp]
_NO_INDEX: IntArray = np.zeros(0, dtype=np.intp)


class RejectedMessage(BbRobotError):
    """A joint-state message that cannot be used; ``str(error)`` says why.

    ``kind`` names the problem for rate-limiting warnings: ``"length"``, ``"velocity"``,
    ``"effort"``, ``"duplicate"`` or ``"non_finite"``.
    """

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        super().__init__(reason)


class JointStateMerger:
    """The merged state of the joints named ``coordinates``.

    ``values[i]`` is the last position received for ``coordinates[i]`` and ``seen[i]`` whether
    one was received at all (an unseen joint is never given an invented value).
    """

    #: How many distinct name lists are remembered (sources rarely change their name lists).
    CACHE_SIZE = 64

    def __init__(self, coordinates: Sequence[str]) -> None:
        self.coordinates = tuple(coordinates)
        self.index = {name: i for i, name in enumerate(self.coordinates)}
        self.values = np.zeros(len(self.coordinates))
        self.seen = np.zeros(len(self.coordinates), dtype=bool)
        self.seen_count = 0
        self._cache: dict[tuple[str, ...], tuple[IntArray, IntArray] | str] = {}

    @property
    def all_seen(self) -> bool:
        return self.seen_count == len(self.coordinates)

    def _lookup(self, names: tuple[str, ...]) -> tuple[IntArray, IntArray]:
        entry = self._cache.get(names)
        if entry is None:
            entry = self._plan(names)
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.clear()
            self._cache[names] = entry
        if isinstance(entry, str):
            raise RejectedMessage("duplicate", entry)
        return entry

    def _plan(self, names: tuple[str, ...]) -> tuple[IntArray, IntArray] | str:
        if len(set(names)) != len(names):
            twice = sorted(name for name, count in Counter(names).items() if count > 1)
            return f"joint name(s) {', '.join(repr(n) for n in twice)} appear more than once"
        pairs = [(m, self.index[n]) for m, n in enumerate(names) if n in self.index]
        message = np.array([m for m, _ in pairs], dtype=np.intp)
        coordinate = np.array([c for _, c in pairs], dtype=np.intp)
        return message, coordinate

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float] | array[float] | npt.NDArray[np.float64],
        velocity_count: int = 0,
        effort_count: int = 0,
    ) -> IntArray:
        """Merge one message; return the indices (into ``coordinates``) it set.

        Raises :class:`RejectedMessage` (and changes nothing) for a malformed message.
        """
        count = len(names)
        if len(positions) != count:
            raise RejectedMessage("length", f"{count} names but {len(positions)} positions")
        for field, length in (("velocity", velocity_count), ("effort", effort_count)):
            if length not in (0, count):
                raise RejectedMessage(field, f"{field} has {length} entries; expected none or {count} (one per name)")
        if count == 0:
            return _NO_INDEX
        key = names if isinstance(names, tuple) else tuple(names)
        message, coordinate = self._lookup(key)
        if isinstance(positions, array) and positions.typecode == "d":
            values = np.frombuffer(positions, dtype=np.float64)
        else:
            values = np.asarray(positions, dtype=np.float64)
        if not np.isfinite(values).all():
            bad = [f"{key[i]!r}={values[i]}" for i in np.flatnonzero(~np.isfinite(values))[:5]]
            raise RejectedMessage("non_finite", f"non-finite position(s): {', '.join(bad)}")
        if len(coordinate) == 0:
            return _NO_INDEX
        self.values[coordinate] = values[message]
        if self.seen_count < len(self.coordinates):
            self.seen[coordinate] = True
            self.seen_count = int(self.seen.sum())
        return coordinate
