"""The ROS-free core of the description node (``bb_robot.nodes.description``).

Everything the node decides without talking to ROS lives here, in small modules that the
tests exercise without a ROS graph:

- :mod:`~bb_robot.description.parameters`: the node's parameters (names, types, defaults,
  descriptions), shared by the node, the launch-file test and the docs;
- :mod:`~bb_robot.description.sources`: where a model may come from (``model_dirs``,
  ``package://`` and ``model://`` URIs); the file is loaded by :mod:`bb_robot.loading` into a
  :class:`~bb_robot.loading.LoadedModel`;
- :mod:`~bb_robot.description.joint_states`: validating and merging ``JointState`` messages;
- :mod:`~bb_robot.description.tf_plan`: which joints get which TF, and their transforms;
- :mod:`~bb_robot.description.tf_wire`: writing ``tf2_msgs/TFMessage`` bytes without building
  message objects (the /tf hot path);
- :mod:`~bb_robot.description.manipulator`: the serial manipulator as JSON and the tip pose;
- :mod:`~bb_robot.description.timing`: the process's age, for the start-up report.

What it shares with the driver (the parameter-spec type, ``default_model_dirs``, rate-limited
warnings) lives in :mod:`bb_robot.common`; ``description.throttle`` re-exports
:class:`~bb_robot.common.throttle.WarningThrottle`.
"""
