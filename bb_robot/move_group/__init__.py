"""MoveIt's move_group interface without ROS: what the ``move_group`` node (``bb_robot.nodes.move_group``)
serves, as plain data.

- :mod:`~bb_robot.move_group.groups`: planning groups from an SRDF's ``<group>`` elements, or the
  driven chain as one group;
- :mod:`~bb_robot.move_group.moveit_goals`: MotionPlanRequest constraints as the planner's joint and
  pose goals, and the ``MoveItErrorCodes`` of every refusal;
- :mod:`~bb_robot.move_group.scene_updates`: CollisionObject, AttachedCollisionObject and
  PlanningScene updates applied to a :class:`~bb_robot.collision.scene.Scene` under its run-time
  rules, bounded against floods;
- :mod:`~bb_robot.move_group.requests`: the requests of each service and action, answered with
  :mod:`bb_robot.planning`;
- :mod:`~bb_robot.move_group.setup` and :mod:`~bb_robot.move_group.parameters`: the node's model,
  scene and groups, and its parameters.

A layer of its own above :mod:`bb_robot.planning` and below the nodes (docs/architecture.md).
"""
