"""bb_robot: robot descriptions (URDF, xacro, SDF) turned into running ROS 2 robots."""

__version__ = "0.1.0"
