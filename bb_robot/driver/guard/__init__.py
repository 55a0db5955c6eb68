"""The collision guard: trajectories checked before they are accepted, streamed commands slowed
before contact, and the checker process that measures for it off the loop's interpreter.

- :mod:`~bb_robot.driver.guard.collision_guard`: :class:`CollisionGuard` and
  the two hooks it gives the core;
- :mod:`~bb_robot.driver.guard.build`: :func:`~bb_robot.driver.guard.build.build_guard`, the guard
  of a loaded model at configure;
- :mod:`~bb_robot.driver.guard.collision_checker`: :class:`Measurer`, the checker process and
  its records over pipes (run as ``python -c``; imports nothing of the driver).

May import: :mod:`~bb_robot.driver.cycle`, :mod:`~bb_robot.driver.state`,
:mod:`~bb_robot.driver.timing`, :mod:`~bb_robot.driver.backends`,
:mod:`~bb_robot.driver.commands`, :mod:`~bb_robot.driver.errors` (and the collision layer); not
:mod:`~bb_robot.driver.servo` (a sibling), nor the core.  Others import from the named modules.
"""
