"""What may be commanded, checked before it reaches the loop: the driver's lowest room.

- :mod:`~bb_robot.driver.commands.commands`: joint commands (:class:`CommandMode`,
  :class:`JointCommand`) and :class:`CommandValidator`, which checks and limits them;
- :mod:`~bb_robot.driver.commands.limits`: the joint limits commands are checked against (the
  model's, tightened by MoveIt-style overrides), braking and approach paths;
- :mod:`~bb_robot.driver.commands.trajectory`: checking, interpolating and sampling trajectories;
- :mod:`~bb_robot.driver.commands.tolerances`: ``FollowJointTrajectory`` path and goal
  tolerances, and watching a goal execute.

May import: :mod:`bb_robot.driver.errors` (and the model and common layers); no other room of
the driver.  Others import from the named modules.
"""
