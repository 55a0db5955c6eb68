"""The ROS-free core of the driver node (``bb_robot.nodes.driver``).

- :mod:`~bb_robot.driver.backends`: the backend interface and the backends (``sim``, ...);
- :mod:`~bb_robot.driver.core`: the control loop and what it decides each cycle;
- :mod:`~bb_robot.driver.commands`: checking and limiting commands;
- :mod:`~bb_robot.driver.trajectory`: checking, interpolating and sampling trajectories;
- :mod:`~bb_robot.driver.tolerances`: ``FollowJointTrajectory`` path and goal tolerances;
- :mod:`~bb_robot.driver.limits`: joint limits (model, MoveIt-style overrides);
- :mod:`~bb_robot.driver.arming`: the arming state machine;
- :mod:`~bb_robot.driver.loop`: the fixed-rate loop on absolute deadlines;
- :mod:`~bb_robot.driver.parameters`: the node's parameters (names, defaults, descriptions).

``docs/nodes/driver.md`` describes the node built on them.
"""
