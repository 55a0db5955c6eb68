"""Collision checking from a robot's own ``<collision>`` geometry, its allowed-collision matrix and its world.

ROS-free; built on coal (Pinocchio's collision library).  See docs/collision.md.
"""
