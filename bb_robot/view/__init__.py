"""The live view and the recordings, without ROS: what the ``view`` node serves to Foxglove.

- :mod:`~bb_robot.view.schemas`: the ``ros2msg`` schema of a ROS 2 message type (its
  definition and those it uses, concatenated as rosbag2 writes them), from the ``.msg`` files.
- :mod:`~bb_robot.view.topics`: which ROS topics are shown and recorded, and the plan of
  channels for the topics that exist on the graph.
- :mod:`~bb_robot.view.assets`: mesh files (``package://``, ``model://``, ``file://``) for the
  Foxglove asset service, only from the model's resource directories.
- :mod:`~bb_robot.view.bridge`: the Foxglove SDK side: the WebSocket server, the MCAP
  recording, one channel per topic, latched messages for late clients.

The rclpy side (subscriptions, parameters) is :mod:`bb_robot.nodes.view`; docs/view.md
describes the whole.
"""
