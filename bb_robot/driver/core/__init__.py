"""The driver's core: :class:`DriverCore`, which owns the backend and the control loop.

The class is split along its seams, each part a class the next one derives from:

- :mod:`~bb_robot.driver.core.core`: :class:`DriverCore` itself: construction, the loop thread's
  start and stop, the entry points other threads call;
- :mod:`~bb_robot.driver.core.step`: one cycle (read, the inbox, arming, the command, write,
  the snapshot);
- :mod:`~bb_robot.driver.core.reactions`: arming, the watchdog and stale joints, as the loop
  acts on them;
- :mod:`~bb_robot.driver.core.goals`: trajectories and goals: preparing, starting, ending and
  checking them;
- :mod:`~bb_robot.driver.core.parts`: what the parts share (the core's attributes).

This ``__init__`` is the core's public face: the node (:mod:`bb_robot.nodes.driver`), the tests and
the benchmarks import :class:`DriverCore` and the types they use from here.

May import: every other room of the driver; none imports it.
"""

from bb_robot.driver.core.core import WATCHDOG_ACTIONS, DriverCore
from bb_robot.driver.core.reactions import HEALTH_PERIOD
from bb_robot.driver.cycle.execution import Execution, Feedback
from bb_robot.driver.cycle.setpoints import TRAJECTORY
from bb_robot.driver.state.samples import SampleListener
from bb_robot.driver.state.snapshot import LATENCY_WINDOW, CoreSettings, Snapshot, replace_settings

__all__ = [
    "HEALTH_PERIOD",
    "LATENCY_WINDOW",
    "TRAJECTORY",
    "WATCHDOG_ACTIONS",
    "CoreSettings",
    "DriverCore",
    "Execution",
    "Feedback",
    "SampleListener",
    "Snapshot",
    "replace_settings",
]
