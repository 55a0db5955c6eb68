"""What happened to each fuzz case: accepted, or which documented error stopped it, and where.

Each target calls :meth:`Outcomes.run`, which lets only the documented error types through (an
undocumented exception fails the test, with the case in the message) and counts the outcome, so
that ``scripts/fuzz`` can say how many cases got past the XML reader to the model builder.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Outcomes:
    """Counts per target of ``accepted`` and of each error type, and the slowest case."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    slowest: dict[str, float] = field(default_factory=dict)

    def run(
        self,
        target: str,
        call: Callable[[], T],
        documented: tuple[type[BaseException], ...],
        case: str,
    ) -> T | BaseException:
        """Run one case; return its result or the documented error it raised.

        Args:
            target: the fuzz target's name (the key of the counts).
            call: the code under test, called once.
            documented: the error types its documentation allows.
            case: a short description of the input, for the failure message.

        Returns:
            What ``call`` returned, or the documented exception it raised (its message checked
            to be non-empty).

        Raises:
            AssertionError: ``call`` raised an undocumented exception or an error without a message.
        """
        start = time.perf_counter()
        try:
            result: T | BaseException = call()
            outcome = "accepted"
        except documented as error:
            assert str(error).strip(), f"{type(error).__name__} without a message for {case}"
            result, outcome = error, type(error).__name__
        except Exception as error:  # the point of fuzzing: report what nobody documented
            raise AssertionError(f"{target}: undocumented {type(error).__name__}: {error} for {case}") from error
        finally:
            elapsed = time.perf_counter() - start
            self.slowest[target] = max(self.slowest.get(target, 0.0), elapsed)
        self.counts.setdefault(target, Counter())[outcome] += 1
        return result

    def report(self) -> dict[str, dict[str, object]]:
        """The counts per target, with their total and the slowest case in seconds."""
        return {
            target: {
                "total": sum(counts.values()),
                "outcomes": dict(counts),
                "slowest_s": round(self.slowest[target], 4),
            }
            for target, counts in self.counts.items()
        }


OUTCOMES = Outcomes()
