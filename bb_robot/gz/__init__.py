"""Gazebo Harmonic from Python without Gazebo: gz.msgs10 messages (:mod:`bb_robot.gz.messages`)."""
