"""The ROS-free core of the driver node (``bb_robot.nodes.driver``).

- :mod:`~bb_robot.driver.backends`: the backend interface, the ports a backend reaches ROS through
  without importing it (:mod:`~bb_robot.driver.backends.host`), and the backends (``sim``, ...);
- :mod:`~bb_robot.driver.core`: the control loop and what it decides each cycle, with
  :mod:`~bb_robot.driver.inbox` (the typed messages other threads hand it),
  :mod:`~bb_robot.driver.setpoints` (modes, targets and the command),
  :mod:`~bb_robot.driver.execution` (trajectories being executed),
  :mod:`~bb_robot.driver.samples` (passing samples on) and :mod:`~bb_robot.driver.snapshot`
  (its settings and what it publishes);
- :mod:`~bb_robot.driver.commands`: checking and limiting commands;
- :mod:`~bb_robot.driver.trajectory`: checking, interpolating and sampling trajectories;
- :mod:`~bb_robot.driver.tolerances`: ``FollowJointTrajectory`` path and goal tolerances;
- :mod:`~bb_robot.driver.limits`: joint limits (model, MoveIt-style overrides);
- :mod:`~bb_robot.driver.arming`: the arming state machine;
- :mod:`~bb_robot.driver.loop`: the fixed-rate loop on absolute deadlines;
- :mod:`~bb_robot.driver.parameters`: the node's parameters (names, defaults, descriptions).

Nothing here imports ROS: the node layer (:mod:`bb_robot.nodes`, :mod:`bb_robot.ros`) does.
``docs/nodes/driver.md`` describes the node built on them.
"""
