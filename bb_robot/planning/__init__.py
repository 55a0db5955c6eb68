"""Collision-free motion planning (no ROS): goals, the planner, simplification and timing.

A peer of :mod:`bb_robot.driver` in the layers: it uses :mod:`bb_robot.collision` (the scene, the
exact check) and :mod:`bb_robot.model` (kinematics, inverse kinematics).  The entry point is
:func:`bb_robot.planning.plan.plan`; docs/planning.md describes the algorithm and its guarantees.
"""
