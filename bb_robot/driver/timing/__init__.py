"""The control loop's timing: the fixed-rate loop, its skipped cycles, and joints gone stale.

- :mod:`~bb_robot.driver.timing.loop`: the loop on absolute deadlines, real-time scheduling, its
  statistics;
- :mod:`~bb_robot.driver.timing.skips`: skipped cycles as a count, a share and a recent share;
- :mod:`~bb_robot.driver.timing.staleness`: what the driver does when a joint goes stale
  (``stale_action``).

May import: nothing of the driver (it is independent of :mod:`~bb_robot.driver.backends`, its
sibling).  Others import from the named modules.
"""
