"""bb_robot: robot descriptions (URDF, xacro, SDF) turned into running ROS 2 robots.

This module belongs to no layer: it names the modules that provide the hooks lower layers
call (:mod:`bb_robot.hooks`); nothing is imported until a hook is first used.
"""

from bb_robot import hooks as _hooks

__version__ = "0.1.0"

# SerialManipulator.from_urdf (model/) and SdfLoadResult.to_urdf (sdf/) call these.
_hooks.provide("load_urdf_robot", "bb_robot.loading")
_hooks.provide("sdf_to_urdf", "bb_robot.loading")
