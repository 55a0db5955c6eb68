"""The ROS parts shared by the nodes: QoS profiles, parameter descriptors, the backends' host.

Together with :mod:`bb_robot.nodes` this is the node layer: the only place that imports rclpy
or ROS messages (``bb_robot.examples`` aside).

- :mod:`~bb_robot.ros.qos`: every QoS profile the package uses;
- :mod:`~bb_robot.ros.parameters`: ROS parameter descriptors from
  :class:`~bb_robot.common.parameters.ParameterSpec`;
- :mod:`~bb_robot.ros.backend_host`: the driver's backends' ports
  (:class:`~bb_robot.driver.backends.host.BackendHost`) on an rclpy node.
"""
