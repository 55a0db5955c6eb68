"""A backend whose time is simulated: what the node layer needs to publish ``/clock``.

A backend that simulates physics in its own time (``backend: mujoco`` in lockstep) offers
:meth:`SimulationClock.sim_time_ns`; the node publishes it on ``/clock``
(:mod:`bb_robot.nodes.sim_clock`) so that nodes with ``use_sim_time`` follow the simulation,
whether it runs faster or slower than real time.  No ROS here: the backend only says the time.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class SimulationClock(Protocol):
    """A source of simulated time."""

    def sim_time_ns(self) -> int:
        """The simulation's time in nanoseconds since it started (0 before the first step)."""
        ...

    def publishes_clock(self) -> bool:
        """Whether the node should publish :meth:`sim_time_ns` on ``/clock`` (e.g. in lockstep only)."""
        ...


def clock_source(backend: object) -> SimulationClock | None:
    """``backend`` as a clock to publish, or ``None`` when it has none or does not want it published."""
    if isinstance(backend, SimulationClock) and backend.publishes_clock():
        return backend
    return None
