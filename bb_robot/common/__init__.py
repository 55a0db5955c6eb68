"""Pure-Python parts shared by the domain packages, the driver and the nodes (no ROS).

- :mod:`~bb_robot.common.parameters`: :class:`~bb_robot.common.parameters.ParameterSpec`, the one
  description of a node parameter (both nodes' tables and the backends' own parameters);
- :mod:`~bb_robot.common.throttle`: rate-limited warnings.

It sits right above :mod:`bb_robot.model` and imports nothing above it.
"""
