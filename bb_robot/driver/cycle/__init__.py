"""What one control cycle works on, between the core's inbox and the backend's command.

- :mod:`~bb_robot.driver.cycle.inbox`: the typed messages other threads hand the core;
- :mod:`~bb_robot.driver.cycle.setpoints`: each joint's mode and target, and the
  :class:`~bb_robot.driver.backends.base.BackendCommand` they make;
- :mod:`~bb_robot.driver.cycle.execution`: a trajectory being executed, its feedback and end;
- :mod:`~bb_robot.driver.cycle.watchdog`: the command watchdog's decision over the mode masks.

May import: :mod:`~bb_robot.driver.backends`, :mod:`~bb_robot.driver.commands`,
:mod:`~bb_robot.driver.errors`; not :mod:`~bb_robot.driver.state` (a sibling), nor the rooms above
(servo, guard, core).  Others import from the named modules.
"""
