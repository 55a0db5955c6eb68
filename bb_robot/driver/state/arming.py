"""The arming state machine: ``disarmed`` → ``armed`` → ``disarmed``; any state → ``error``.

- Commands are executed only while armed; while disarmed or in error they are refused, and
  the joints hold where they are.
- ``arm`` from ``error`` is refused: ``reset`` first, which succeeds once the cause is gone
  (the backend is connected and healthy) and leads to ``disarmed``.
- ``error`` is entered on a backend failure (it reports an error, or raises in the loop);
  ``disarm`` keeps ``error`` (only ``reset`` leaves it).
"""

from __future__ import annotations

from enum import StrEnum


class ArmState(StrEnum):
    DISARMED = "disarmed"
    ARMED = "armed"
    ERROR = "error"


class Arming:
    """The state and why it was entered (``reason``)."""

    def __init__(self, armed: bool = False) -> None:
        self.state = ArmState.ARMED if armed else ArmState.DISARMED
        self.reason = "armed at start-up" if armed else "not armed yet"

    @property
    def armed(self) -> bool:
        return self.state is ArmState.ARMED

    def arm(self, reason: str = "arm requested") -> tuple[bool, str]:
        if self.state is ArmState.ERROR:
            return False, f"cannot arm: in error ({self.reason}); call reset once the cause is fixed"
        if self.state is ArmState.ARMED:
            return True, "already armed"
        self.state, self.reason = ArmState.ARMED, reason
        return True, "armed"

    def disarm(self, reason: str = "disarm requested") -> tuple[bool, str]:
        if self.state is ArmState.ERROR:
            return True, f"in error ({self.reason}); stays in error until reset"
        if self.state is ArmState.DISARMED:
            return True, "already disarmed"
        self.state, self.reason = ArmState.DISARMED, reason
        return True, "disarmed"

    def fault(self, reason: str) -> bool:
        """Enter ``error``; ``True`` if the state changed."""
        changed = self.state is not ArmState.ERROR
        self.state, self.reason = ArmState.ERROR, reason
        return changed

    def reset(self, healthy: bool, problem: str = "") -> tuple[bool, str]:
        if self.state is not ArmState.ERROR:
            return True, f"not in error ({self.state.value})"
        if not healthy:
            return False, f"cannot reset: {problem or 'the backend is not healthy'}"
        self.state, self.reason = ArmState.DISARMED, "reset after an error"
        return True, "reset: disarmed"
