"""The ROS-free core of the driver node (``bb_robot.nodes.driver``), in rooms.

Each sub-package imports only from the rooms below it; rooms on one line are independent of each
other (``lint-imports`` checks both, from ``pyproject.toml``):

- :mod:`~bb_robot.driver.core` (and :mod:`~bb_robot.driver.parameters`,
  :mod:`~bb_robot.driver.model`): :class:`~bb_robot.driver.core.DriverCore`, the control loop's
  owner: its step, goal handling, and what it does on arming, the watchdog and stale joints;
  the node's parameters; the robot it drives;
- :mod:`~bb_robot.driver.servo` | :mod:`~bb_robot.driver.guard`: the Cartesian servo | the
  collision guard and its checker process;
- :mod:`~bb_robot.driver.cycle` | :mod:`~bb_robot.driver.state`: what one cycle works on (the
  inbox, setpoints, the running trajectory, the watchdog's decision) | the driver's state
  (arming, restarts) and what it passes on (samples, the snapshot);
- :mod:`~bb_robot.driver.backends` | :mod:`~bb_robot.driver.timing`: the backend interface, its
  host and the backends | the fixed-rate loop, skipped cycles and stale joints;
- :mod:`~bb_robot.driver.commands`: what may be commanded, checked (joint commands, trajectories,
  tolerances) against the joint limits;
- :mod:`~bb_robot.driver.errors`: the driver's errors.

Other rooms import what they use from a room's named modules
(``bb_robot.driver.commands.limits``), never a ``_`` name of another room.  Two ``__init__``
modules also re-export, for users outside the driver: :mod:`~bb_robot.driver.core` (the core and
the types the node uses) and :mod:`~bb_robot.driver.backends` (the backend interface, for backend
writers).

Nothing here imports ROS: the node layer (:mod:`bb_robot.nodes`, :mod:`bb_robot.ros`) does.
``docs/nodes/driver.md`` describes the node built on them; ``docs/architecture.md`` walks a command
through the rooms.
"""
