"""The ports a backend reaches the world outside the driver through: ROS-free.

A backend never imports rclpy or a ROS message.  What it needs of ROS (topics of its own,
parameters of its own, /clock, the graph) it asks of its **host**, a :class:`BackendHost`
given in :attr:`BackendContext.host <bb_robot.driver.backends.base.BackendContext.host>`.
The driver node implements the host (:class:`bb_robot.ros.backend_host.RosBackendHost`);
outside a node (the core's tests, a script) there is none (``context.host is None``) and a
backend that needs one says so from ``connect``.

The ports speak plain Python: topic names, floats, strings, nanoseconds, callbacks.  Every
port is opened in ``connect`` (the host's thread, with the control loop stopped) and closed
by :meth:`Port.close` in ``disconnect``; closing twice, or after the host went away, does
nothing.  Callbacks (:meth:`BackendHost.subscribe_joint_states`, :meth:`BackendHost.every`,
:meth:`BackendHost.guard_parameters`) run in the host's thread (the driver's executor),
never in the control loop's.  ``publish`` / ``send`` may be called from any thread, including
the control loop's (they do not block) and a backend thread of its own.

- **Joint-level topics** (servo bridges: ``backend: actuators``):
  :meth:`~BackendHost.open_joint_commands` (one ``sensor_msgs/JointState`` command topic per
  actuator, a single entry each) and :meth:`~BackendHost.subscribe_joint_states` (feedback;
  the callback gets the message as a :class:`JointStateLike`, read-only, no copy).
- **Text** (a latched JSON index): :meth:`~BackendHost.open_latched_text`.
- **Simulated time**: :meth:`~BackendHost.open_clock` gives a :class:`ClockOutput`; the
  backend publishes its simulator's time on ROS ``/clock`` as it advances (Gazebo on each
  ``gz.msgs.Clock``; a physics backend stepping in lockstep with the loop, after each step).
- **Parameters** of the backend's own beyond :meth:`Backend.parameters` (e.g. one set per
  driven joint, known only at configure): :meth:`~BackendHost.declare_parameters` (with the
  same :class:`~bb_robot.common.parameters.ParameterSpec` as every other parameter),
  :meth:`~BackendHost.parameter_overrides`, :meth:`~BackendHost.undeclare_parameters`, and
  :meth:`~BackendHost.guard_parameters` to refuse changes.
- **Graph and time**: :meth:`~BackendHost.other_publishers` (another node commanding the same
  topic), :meth:`~BackendHost.every` (a periodic callback on the steady clock),
  :meth:`~BackendHost.wait_for` (``connect`` runs on the host's thread, so messages arrive only
  while it waits through the host), :meth:`~BackendHost.now_ns` (the node's clock, for stamps:
  the simulated time under ``use_sim_time``).

A new kind of port is added here (a protocol method) and in the node layer's host, never as a
ROS import in a backend.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from bb_robot.common.parameters import ParameterSpec, ParameterValue


class Port(Protocol):
    """Something the host opened for a backend."""

    def close(self) -> None:
        """Release it (idempotent, never raises)."""


class JointStateLike(Protocol):
    """A ``sensor_msgs/JointState`` as a backend reads it (the ROS message itself satisfies it)."""

    @property
    def name(self) -> Sequence[str]: ...
    @property
    def position(self) -> Sequence[float]: ...
    @property
    def velocity(self) -> Sequence[float]: ...
    @property
    def effort(self) -> Sequence[float]: ...


#: One actuator command: (actuator index, command mode as ``int(CommandMode)``, value, feed-forward
#: velocity).  POSITION / HOLD: ``value`` is the position, sent with the velocity; VELOCITY and
#: EFFORT: ``value`` alone.
ActuatorCommand = tuple[int, int, float, float]


class JointCommandOutput(Port, Protocol):
    """Command topics, one per actuator, each a ``sensor_msgs/JointState`` with one entry."""

    def send(self, commands: Sequence[ActuatorCommand]) -> None:
        """Publish these commands, stamped with the host's clock now (one stamp for all).

        Args:
            commands: The commands of this cycle; actuators not listed get nothing.

        Nothing is sent (and nothing raised) while the host shuts down.
        """

    def subscriber_count(self, index: int) -> int:
        """How many subscribers the command topic of actuator ``index`` has now."""


class TextOutput(Port, Protocol):
    """A ``std_msgs/String`` topic."""

    def publish(self, text: str) -> None:
        """Publish ``text`` (latched topics keep the last one for late subscribers)."""


class ClockOutput(Port, Protocol):
    """ROS ``/clock`` (``rosgraph_msgs/Clock``, best effort, depth 1)."""

    def publish(self, time_ns: int) -> None:
        """Publish the simulated time ``time_ns`` (nanoseconds since the simulation's epoch)."""


class BackendHost(Protocol):
    """What the node layer offers a backend (see the module docstring)."""

    @property
    def namespace(self) -> str:
        """The driver node's namespace (``/`` at the root)."""

    @property
    def node_name(self) -> str:
        """The driver node's fully qualified name (``/ns/driver``)."""

    def now_ns(self) -> int:
        """The node's clock now, in nanoseconds (simulated time under ``use_sim_time``)."""

    def open_joint_commands(self, topics: Sequence[str], names: Sequence[str]) -> JointCommandOutput:
        """Command topics ``topics[i]``, each message naming ``names[i]`` (reliable, volatile, depth 1).

        Args:
            topics: Fully qualified topic names, one per actuator.
            names: The name each actuator's messages carry.

        Returns:
            The output; close it in ``disconnect``.
        """

    def subscribe_joint_states(self, topic: str, callback: Callable[[JointStateLike], None]) -> Port:
        """Call ``callback`` with each ``sensor_msgs/JointState`` on ``topic`` (best effort, depth 1).

        Args:
            topic: Fully qualified topic name.
            callback: Runs in the host's thread; must not raise (the host logs what it raises).

        Returns:
            The subscription; close it in ``disconnect``.
        """

    def open_latched_text(self, topic: str) -> TextOutput:
        """A reliable, transient-local (latched) ``std_msgs/String`` publisher on ``topic``."""

    def open_clock(self) -> ClockOutput:
        """A publisher on ROS ``/clock`` for the backend's simulated time."""

    def other_publishers(self, topic: str) -> list[str]:
        """The fully qualified names of the nodes other than the driver publishing on ``topic``.

        Raises:
            BackendError: The graph cannot be read now (e.g. while shutting down).
        """

    def every(self, period: float, callback: Callable[[], None]) -> Port:
        """Call ``callback`` every ``period`` seconds of the steady clock, in the host's thread."""

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Deliver messages to the subscriptions opened so far until ``condition()`` or ``timeout``.

        For ``connect``, which runs on the host's thread (no message arrives otherwise meanwhile).

        Args:
            condition: Checked after each message and at least every 50 ms.
            timeout: Seconds.

        Returns:
            Whether ``condition()`` became true.
        """

    def declare_parameters(self, specs: Sequence[ParameterSpec]) -> Mapping[str, ParameterValue]:
        """Declare these parameters (full names; ones already declared are kept) and return their values.

        Args:
            specs: Parameters with full names; ``type="dynamic"`` takes any type.

        Returns:
            The current value of each, by name (a value given at start-up wins over the default).
        """

    def parameter_overrides(self, prefix: str) -> list[str]:
        """Names of the parameters given at start-up (file, command line) that start with ``prefix``."""

    def undeclare_parameters(self, names: Sequence[str]) -> None:
        """Remove parameters :meth:`declare_parameters` declared (never raises)."""

    def guard_parameters(self, guard: Callable[[str], str | None]) -> Port:
        """Ask ``guard(name)`` before any parameter changes; a returned reason refuses the change.

        Returns:
            The guard; close it to remove it.
        """
