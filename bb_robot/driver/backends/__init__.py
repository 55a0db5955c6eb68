"""The driver's backends: the interface (:mod:`~bb_robot.driver.backends.base`) and the ones shipped.

- ``sim`` (:mod:`~bb_robot.driver.backends.sim`): the embedded kinematic simulator, the default.
- ``actuators`` (:mod:`~bb_robot.driver.backends.actuators`): servos behind ROS topics named by
  actuator paths, through simple transmissions (``docs/nodes/actuators.md``).
- ``gazebo`` (:mod:`~bb_robot.driver.backends.gazebo`): Gazebo Harmonic over gz-transport
  (``docs/nodes/gazebo.md``).
- ``mujoco`` (:mod:`~bb_robot.driver.backends.mujoco`): the robot in MuJoCo physics inside the
  driver, with effort control (``docs/nodes/mujoco.md``; needs ``pip install mujoco``).

None imports ROS: what a backend needs of ROS it asks of its host
(:mod:`~bb_robot.driver.backends.host`), which the driver node implements.

A module here that defines ``BACKEND`` is selectable by its file name (``backend: <name>``)
without any other change; see :func:`~bb_robot.driver.backends.base.backend_class`.
"""

from bb_robot.driver.backends.base import (
    Backend,
    BackendCommand,
    BackendContext,
    Capabilities,
    Health,
    HealthLevel,
    JointSample,
    ObjectPoses,
    ParameterSpec,
    backend_class,
    builtin_backends,
    register_backend,
)

__all__ = [
    "Backend",
    "BackendCommand",
    "BackendContext",
    "Capabilities",
    "Health",
    "HealthLevel",
    "JointSample",
    "ObjectPoses",
    "ParameterSpec",
    "backend_class",
    "builtin_backends",
    "register_backend",
]
