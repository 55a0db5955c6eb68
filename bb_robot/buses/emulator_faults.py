"""The emulator's fault injection: what goes wrong with a reply, a servo or the port.

Reply faults (each applies to one servo's status packet):

- ``drop``: the reply is not sent;
- ``corrupt``: one byte in the middle of the reply is flipped (its checksum or CRC then fails);
- ``partial``: only the first half of the reply is sent;
- ``late``: the reply is sent ``late_by`` seconds later than it should be (after the client's
  timeout; it then arrives during the client's next request, or is found waiting before it).

They come from a queue (:meth:`Faults.inject`: the next ``count`` replies, of one servo or any),
which is exact and is what the tests use, or at random with the configured rates (seeded).
Servo and port faults are events: a servo missing from the start (it never answers until it is
revived), a servo that overheats at a given time, and the port closing at a given time.
"""

from __future__ import annotations

import enum
import random
import threading
from collections import deque
from dataclasses import dataclass, field

from bb_robot.errors import BbRobotError


class FaultError(BbRobotError):
    """A fault that cannot be injected (an unknown kind, a rate outside 0..1)."""


class Fault(enum.Enum):
    """What happens to one reply."""

    DROP = "drop"
    CORRUPT = "corrupt"
    PARTIAL = "partial"
    LATE = "late"


def fault(name: str) -> Fault:
    """The :class:`Fault` called ``name``.

    Raises:
        FaultError: naming the kinds there are.
    """
    try:
        return Fault(name)
    except ValueError:
        raise FaultError(f"unknown reply fault '{name}'; choose one of {', '.join(f.value for f in Fault)}") from None


@dataclass
class Faults:
    """Fault settings and the queue of injected faults (thread-safe).

    Attributes:
        rates: the probability of each reply fault, per reply.
        late_by: how late a ``late`` reply is (seconds).
        missing: servo IDs that do not answer (until :meth:`revive`).
        overheat_at: servo ID → emulator time (s) at which it overheats.
        close_at: emulator time (s) at which the port closes, if any.
        seed: the random generator's seed.
    """

    rates: dict[Fault, float] = field(default_factory=dict)
    late_by: float = 0.05
    missing: set[int] = field(default_factory=set)
    overheat_at: dict[int, float] = field(default_factory=dict)
    close_at: float | None = None
    seed: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for kind, rate in self.rates.items():
            if not 0.0 <= rate <= 1.0:
                raise FaultError(f"the rate of '{kind.value}' faults is {rate}; a rate is within 0..1")
        self._queue: deque[tuple[Fault, int | None]] = deque()
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()

    def inject(self, kind: Fault, count: int = 1, servo_id: int | None = None) -> None:
        """Apply ``kind`` to the next ``count`` replies (of ``servo_id``, or of any servo)."""
        with self._lock:
            self._queue.extend([(kind, servo_id)] * count)

    def pending(self) -> int:
        """Injected faults not yet applied."""
        with self._lock:
            return len(self._queue)

    def revive(self, servo_id: int) -> None:
        """Let a missing servo answer from now on."""
        with self._lock:
            self.missing.discard(servo_id)

    def answers(self, servo_id: int) -> bool:
        """Whether ``servo_id`` answers at all."""
        with self._lock:
            return servo_id not in self.missing

    def next_fault(self, servo_id: int) -> Fault | None:
        """The fault for the next reply of ``servo_id``: the first queued one for it, else at random."""
        with self._lock:
            for index, (kind, target) in enumerate(self._queue):
                if target is None or target == servo_id:
                    del self._queue[index]
                    return self._count(kind)
            for kind, rate in self.rates.items():
                if rate and self._random.random() < rate:
                    return self._count(kind)
        return None

    def _count(self, kind: Fault) -> Fault:
        self.counts[kind.value] = self.counts.get(kind.value, 0) + 1
        return kind


def damage(reply: bytes, kind: Fault) -> bytes:
    """The bytes sent for ``reply`` under a ``corrupt`` or ``partial`` fault (others: unchanged)."""
    if kind is Fault.CORRUPT:
        at = len(reply) // 2 + 1
        return reply[:at] + bytes([reply[at] ^ 0x5A]) + reply[at + 1 :]
    if kind is Fault.PARTIAL:
        return reply[: len(reply) // 2]
    return reply
