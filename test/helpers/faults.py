"""Helpers of the fault tests (test/nodes/test_faults.py, test/nodes/test_network_cut.py).

- :func:`fault_environment`: the environment of a process a test will kill with SIGKILL or
  freeze: UDP only (``FASTDDS_BUILTIN_TRANSPORTS=UDPv4``: a killed process leaves no shared memory
  segment behind, and a frozen one holds none the others wait on) and a Fast DDS profile with a
  short participant lease, so that the others notice within a couple of seconds that it is gone
  (Fast DDS's default lease is 20 s).
- :class:`StateLog`: joint states as received, with the checks every fault test makes: no joint
  moved faster than its velocity limit between two consecutive stamps.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: The participant lease of the processes a test kills (seconds), and how often they assert it.
LEASE = 2
ANNOUNCE_NS = 400_000_000

PROFILE = f"""<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <participant profile_name="bb_robot_fault_tests" is_default_profile="true">
    <rtps><builtin><discovery_config>
      <leaseDuration><sec>{LEASE}</sec></leaseDuration>
      <leaseAnnouncement><sec>0</sec><nanosec>{ANNOUNCE_NS}</nanosec></leaseAnnouncement>
      <initialAnnouncements><count>20</count><period><nanosec>100000000</nanosec></period></initialAnnouncements>
    </discovery_config></builtin></rtps>
  </participant>
</profiles>
"""


def fault_environment(directory: Path, **extra: str) -> dict[str, str]:
    """The environment of a node a test kills or freezes (see the module docstring)."""
    profile = directory / "fault_profile.xml"
    profile.write_text(PROFILE)
    env = dict(os.environ)
    env.update(FASTDDS_BUILTIN_TRANSPORTS="UDPv4", FASTDDS_DEFAULT_PROFILES_FILE=str(profile), **extra)
    return env


@dataclass
class StateLog:
    """Joint states (``sensor_msgs/JointState``) in the order received, from one or more drivers."""

    velocity_limits: dict[str, float]
    states: list[Any] = field(default_factory=list)
    #: Seconds of motion allowed on top of the stamps' difference.  The actuators backend stamps
    #: each feedback message with its arrival (the contract), so two values measured a feedback
    #: period apart can arrive close together: allow two periods of the bridge (100 Hz: 0.02 s).
    jitter: float = 0.0

    def add(self, message: Any) -> None:
        self.states.append(message)

    def positions(self, joint: str, since: int = 0) -> list[float]:
        out = []
        for state in self.states[since:]:
            if joint in state.name:
                out.append(float(state.position[list(state.name).index(joint)]))
        return out

    def last(self, joint: str) -> float:
        return self.positions(joint)[-1]

    def assert_within_velocity_limits(self) -> None:
        """Between two consecutive joint states, no joint moved more than its velocity limit times the
        time between their stamps (plus :attr:`jitter`, and two encoder counts of the example bridge)."""
        count = 2 * np.pi / 4096
        for before, after in zip(self.states, self.states[1:], strict=False):
            dt = (after.header.stamp.sec - before.header.stamp.sec) + (
                after.header.stamp.nanosec - before.header.stamp.nanosec
            ) * 1e-9
            old = dict(zip(before.name, before.position, strict=False))
            for name, position in zip(after.name, after.position, strict=False):
                limit = self.velocity_limits.get(name)
                if limit is None or name not in old:
                    continue
                allowed = limit * (max(dt, 0.0) + self.jitter) * 1.05 + 2 * count
                assert abs(position - old[name]) <= allowed, (
                    f"{name} moved {abs(position - old[name]):.4f} in {dt:.4f} s between two joint states: faster "
                    f"than its velocity limit {limit:g}"
                )
