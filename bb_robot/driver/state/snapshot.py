"""The driver core's values: its settings, the snapshot it publishes each cycle, its command latency."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.driver.backends.base import JointSample
from bb_robot.driver.commands.trajectory import TrajectoryOptions
from bb_robot.driver.state.arming import ArmState

FloatArray = npt.NDArray[np.float64]
#: Samples kept for the command latency statistics.
LATENCY_WINDOW = 4096


@dataclass(frozen=True)
class CoreSettings:
    """Settings that may change while the loop runs (the node's parameters)."""

    command_timeout: float = 0.5
    watchdog_action: str = "hold"
    stale_timeout: float = 0.1
    #: What the loop does when a joint goes stale: ``hold`` or ``disarm`` (:mod:`bb_robot.driver.timing.staleness`).
    stale_action: str = "hold"
    trajectory: TrajectoryOptions = field(default_factory=TrajectoryOptions)
    #: Write a submitted command at once (in the submitting thread), not at the next cycle.
    immediate_commands: bool = False


@dataclass(frozen=True, eq=False)
class Snapshot:
    """What the loop last saw and did, for publishers (immutable; replaced every cycle).

    ``sample`` is ``None`` until the backend has been read; ``all_seen`` tells whether every
    joint has been reported at least once; ``stale`` names the joints whose latest value is
    older than ``stale_timeout``.  ``modes`` holds each joint's mode label.
    """

    cycle: int
    now_ns: int
    sample: JointSample | None
    all_seen: bool
    stale: tuple[str, ...]
    arm_state: ArmState
    arm_reason: str
    modes: tuple[str, ...]
    desired: FloatArray | None = None


@dataclass
class CommandLatency:
    """A window of the latest command latencies (ns): received → written to the backend."""

    values: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(LATENCY_WINDOW, dtype=np.int64))
    count: int = 0

    def add(self, value: int) -> None:
        self.values[self.count % LATENCY_WINDOW] = value
        self.count += 1

    def percentiles(self) -> tuple[float, float, float] | None:
        n = min(self.count, LATENCY_WINDOW)
        if n == 0:
            return None
        window = self.values[:n].astype(np.float64) * 1e-9
        p50, p99 = np.percentile(window, [50, 99])
        return float(p50), float(p99), float(window.max())


def replace_settings(settings: CoreSettings, **changes: Any) -> CoreSettings:  # noqa: ANN401 - any field's type
    """``settings`` with ``changes`` (``trajectory_<field>`` keys change the trajectory options)."""
    trajectory = {k[len("trajectory_") :]: v for k, v in changes.items() if k.startswith("trajectory_")}
    plain = {k: v for k, v in changes.items() if not k.startswith("trajectory_")}
    if trajectory:
        plain["trajectory"] = replace(settings.trajectory, **trajectory)
    return replace(settings, **plain)
