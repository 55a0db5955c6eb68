"""The backend interface: what the driver's core asks of whatever moves the joints.

A backend is the driver's only connection to a robot (the embedded simulator, servos behind
ROS topics, Gazebo, ...).  The core calls it from two threads, never at the same time:

- **lifecycle** (the ROS executor, while the loop is stopped): ``connect`` on configure,
  ``start`` on activate, ``stop`` on deactivate, ``disconnect`` on cleanup / shutdown;
- **control loop** (its own thread, at the driver's ``rate``): each cycle ``read(now)``, then
  ``write(command, now)``; ``health()`` at a lower rate; ``set_limits`` / ``set_robot`` /
  ``set_armed`` when the corresponding setting changes (applied between cycles, in the loop
  thread).  With immediate commands (the node's default) ``write`` is also called between
  cycles by the thread that received a command (the ROS executor), never while a cycle runs.

Contract for implementers:

- ``read`` and ``write`` must return quickly (well under one period: a 500 Hz loop has 2 ms
  for the whole cycle) and must not block on I/O; do I/O in threads of your own and hand
  over the latest values.  Raising :class:`~bb_robot.driver.errors.BackendError` from
  either puts the driver in ``error`` (joints held, commands refused until ``reset``).
- Times are the driver's monotonic clock in nanoseconds (``time.monotonic_ns()``).  A
  sample's ``stamps[j]`` says when the value of joint ``j`` was measured (0: never); the
  core uses it for "not reported until every joint is seen" and for staleness, so never
  re-stamp an old value as new.
- Units are SI, in joint space (rad, rad/s, N·m; m, m/s, N): transmissions are the
  backend's business.
- ``capabilities`` says which command modes the backend accepts; the core refuses others
  before they reach it.  HOLD always arrives as a position target (with zero velocity).
- A backend registers under a name (:func:`register_backend`), or is found by convention:
  ``backend: foo`` imports ``bb_robot.driver.backends.foo`` and uses its ``BACKEND`` class;
  ``backend: package.module:Class`` names any class.  A backend's own ROS parameters are
  declared from :meth:`Backend.parameters` under ``<backend name>.`` (e.g. ``sim.initial_positions``)
  and reach it in ``context.options``.
- A backend imports no ROS.  What it needs of ROS (topics of its own, more parameters, ``/clock``
  for a simulator's time, the graph) it asks of ``context.host``, a
  :class:`~bb_robot.driver.backends.host.BackendHost` the driver node implements (the ports:
  :mod:`bb_robot.driver.backends.host`); ``None`` outside a node.
"""

from __future__ import annotations

import importlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import ClassVar, Protocol

import numpy as np
import numpy.typing as npt

from bb_robot.common.parameters import ParameterSpec, ParameterValue
from bb_robot.driver.backends.host import BackendHost
from bb_robot.driver.commands.commands import CommandMode
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.commands.trajectory import Trajectory
from bb_robot.driver.errors import BackendError
from bb_robot.mjcf.bodies import SceneBody
from bb_robot.model.robot import Robot

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class Logger(Protocol):
    """What a backend may log through (the node's ROS logger, or any ``logging.Logger``)."""

    def debug(self, message: str) -> object: ...
    def info(self, message: str) -> object: ...
    def warning(self, message: str) -> object: ...
    def error(self, message: str) -> object: ...


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do.

    ``modes``: the command modes it accepts (POSITION, VELOCITY, EFFORT; HOLD is implied);
    ``effort_feedback``: whether its samples carry measured efforts; ``trajectories``: whether
    it can execute a whole :class:`~bb_robot.driver.commands.trajectory.Trajectory` itself
    (:meth:`Backend.send_trajectory`; the core still samples it and watches tolerances);
    ``bounds_velocity``: whether it stops a velocity command at the end of the command range by
    itself, however long the command stands (see :class:`BackendCommand`).  Where it does not,
    the core brakes velocities early enough that a late cycle of up to
    :data:`~bb_robot.driver.cycle.setpoints.STALL_ALLOWANCE` cannot carry a joint past the range.
    """

    modes: frozenset[CommandMode]
    effort_feedback: bool = False
    trajectories: bool = False
    bounds_velocity: bool = True


@dataclass(frozen=True, eq=False)
class BackendContext:
    """Everything a backend is constructed with.

    ``joint_names`` are the driven joints (independent movable joints, in order): every array
    exchanged with the core follows this order.  ``model_source`` is the file the model came
    from (``None`` when it came from the ``robot_description`` topic), for backends that read
    more of it (e.g. the plugins of an SDF world).  ``options`` holds the backend's own
    parameters by name (without the ``<backend>.`` prefix).  ``host`` is what the driver node
    offers a backend that needs ROS without importing it (topics, parameters, ``/clock``, the
    graph: :class:`~bb_robot.driver.backends.host.BackendHost`; open its ports in ``connect``,
    close them in ``disconnect``; their callbacks run in the executor thread, never the loop's);
    ``None`` outside a node (the core's tests).
    ``model_scope`` is the SDF model the robot was selected as (``a::b::c``; ``""`` otherwise)
    and ``model_dirs`` the directories the model's includes were searched in, for backends that
    read the file again.  ``world_objects`` reads the objects of the driver's ``collision.world``
    (static and movable, :class:`~bb_robot.mjcf.bodies.SceneBody`) for backends that simulate
    them; it raises :class:`~bb_robot.errors.BbRobotError` naming the file when it cannot.
    ``gripper_joints`` are the driver's ``gripper.joints`` (a simulator stops their fingers at objects).
    """

    robot: Robot
    joint_names: tuple[str, ...]
    limits: JointLimitTable
    rate: float
    logger: Logger
    options: Mapping[str, ParameterValue | None] = field(default_factory=dict)
    model_source: str | None = None
    clock: Callable[[], int] = time.monotonic_ns
    host: BackendHost | None = None
    model_scope: str = ""
    model_dirs: tuple[str, ...] = ()
    world_objects: Callable[[], tuple[SceneBody, ...]] = tuple
    gripper_joints: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class ObjectPoses:
    """The measured poses of the objects a backend simulates, in the robot's root-link frame.

    ``names`` (the objects of ``collision.world``), ``positions`` (n × 3, m), ``quaternions``
    (n × 4, x y z w), ``stamp_ns`` (the driver's monotonic clock, when they were measured).
    """

    names: tuple[str, ...]
    positions: FloatArray
    quaternions: FloatArray
    stamp_ns: int


@dataclass(frozen=True, eq=False)
class JointSample:
    """The latest known state of every driven joint.

    ``positions`` / ``velocities`` / ``efforts``: values (NaN where unknown; ``efforts`` may
    be ``None`` without effort feedback); ``stamps``: when each joint's value was measured
    (monotonic ns, 0 if never); ``stamp_ns``: the sample as a whole (the newest measurement).
    """

    positions: FloatArray
    velocities: FloatArray
    efforts: FloatArray | None
    stamps: IntArray
    stamp_ns: int


@dataclass(frozen=True, eq=False)
class BackendCommand:
    """This cycle's command for every driven joint.

    ``modes[j]`` is a :class:`~bb_robot.driver.commands.commands.CommandMode`.  POSITION and HOLD:
    ``position[j]`` is the target, ``velocity[j]`` / ``acceleration[j]`` the feed-forward
    (trajectories; 0 otherwise).  VELOCITY: ``velocity[j]``.  EFFORT: ``effort[j]``.
    Values of other modes are NaN.  Positions are within the joint limits and velocities
    within theirs (the core has clamped them).  A joint held before its position was ever
    reported has a NaN HOLD position: send nothing for it until it reports.

    A command stands until the next one, which can come late (a stalled loop).  So whatever a
    backend extrapolates from it (a velocity; a position target moving with its feed-forward)
    stops at the ends of the joint's command range (``limits.command_lower`` /
    ``command_upper``), however long it stands: the sim and mujoco backends brake there, the
    actuators backend's bridges stop there (the index's ``command_min`` / ``command_max``).

    ``trajectory`` is the running trajectory the positions of its joints (``trajectory.indices``)
    were sampled from at the command's time, as they were sent (``None``: none, or a command the
    core changed).  A backend that simulates the arm follows it through a late next command
    rather than extrapolating the sample: a real arm's controller goes on along the path, while
    a sample's velocity and acceleration carried on for tenths of a second leave it (a 0.3 s
    stall at a bend of the planning demo's path once took the arm 20 mm off it, onto the post).
    """

    modes: npt.NDArray[np.int8]
    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    effort: FloatArray
    trajectory: Trajectory | None = None


class HealthLevel(IntEnum):
    """As ``diagnostic_msgs/DiagnosticStatus`` levels."""

    OK = 0
    WARN = 1
    ERROR = 2


@dataclass(frozen=True)
class Health:
    """A backend's state for ``/diagnostics``: ``connected``, a level, a one-line message, and
    key/value details."""

    connected: bool
    level: HealthLevel = HealthLevel.OK
    message: str = "ok"
    values: Mapping[str, str] = field(default_factory=dict)


class Backend(ABC):
    """Base class of the driver's backends (see the module docstring for the contract)."""

    #: The name the backend is selected by (``backend: <name>``).
    name: ClassVar[str] = ""
    #: Said in ``/diagnostics`` and the docs.
    summary: ClassVar[str] = ""

    def __init__(self, context: BackendContext) -> None:
        self.context = context
        self.joint_names = context.joint_names
        self.limits = context.limits
        self.robot = context.robot
        self.logger = context.logger

    # -------------------------------------------------------------- description
    @classmethod
    def parameters(cls) -> Sequence[ParameterSpec]:
        """This backend's own ROS parameters, declared as ``<name>.<parameter>`` when the node starts
        and passed in ``context.options`` at configure (use ``when="configure"`` for those read only
        then, ``"start"`` for read-only ones)."""
        return ()

    def option(self, name: str) -> ParameterValue | None:
        """This backend's parameter ``name``: its value in ``context.options``, else its default.

        Args:
            name: As in :meth:`parameters` (without the ``<backend>.`` prefix).

        Returns:
            The value (``None`` for a parameter the backend does not declare and nobody gave).
        """
        value = self.context.options.get(name)
        if value is None:
            spec = next((s for s in type(self).parameters() if s.name == name), None)
            value = spec.default if spec is not None else None
        return value

    def text_option(self, name: str) -> str:
        """:meth:`option` as a string (``""`` when unset)."""
        value = self.option(name)
        return "" if value is None else str(value)

    def flag_option(self, name: str) -> bool:
        """:meth:`option` as a bool."""
        return bool(self.option(name))

    def number_option(self, name: str) -> float:
        """:meth:`option` as a float.

        Raises:
            BackendError: The value is not a number.
        """
        value = self.option(name)
        if isinstance(value, int | float | str):
            try:
                return float(value)
            except ValueError:
                pass
        raise BackendError(f"{self.name}.{name} must be a number, not {value!r}")

    def list_option(self, name: str) -> list[str]:
        """:meth:`option` as a list of strings (``[]`` when unset)."""
        value = self.option(name)
        return [str(v) for v in value] if isinstance(value, list | tuple) else []

    def numbers_option(self, name: str) -> list[float]:
        """:meth:`option` as a list of floats (``[]`` when unset).

        Raises:
            BackendError: An item is not a number.
        """
        value = self.option(name)
        try:
            return [float(v) for v in value] if isinstance(value, list | tuple) else []
        except ValueError:
            raise BackendError(f"{self.name}.{name} must be numbers, not {value!r}") from None

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    # ---------------------------------------------------------------- lifecycle
    @abstractmethod
    def connect(self, timeout: float) -> None:
        """Connect within ``timeout`` seconds or raise :class:`BackendError` saying why."""

    @abstractmethod
    def disconnect(self) -> None:
        """Release everything ``connect`` acquired; must not raise."""

    def start(self) -> None:
        """The control loop is about to run (the node was activated)."""
        return None

    def stop(self) -> None:
        """The control loop has stopped (deactivated); the joints were commanded to hold."""
        return None

    # --------------------------------------------------------------- loop thread
    @abstractmethod
    def read(self, now_ns: int) -> JointSample:
        """The latest state of the joints (called first in every cycle)."""

    @abstractmethod
    def write(self, command: BackendCommand, now_ns: int) -> None:
        """Send this cycle's command (called after :meth:`read` in every cycle)."""

    def watch_samples(self, listener: Callable[[JointSample], None] | None) -> bool:
        """Offer to call ``listener(sample)`` from the backend's own thread whenever a new sample
        arrives (``None``: stop calling it); returns whether this backend does.

        The default does not (its samples exist only when :meth:`read` makes them): the core then
        passes on each cycle's sample.  A backend that receives state in a thread of its own
        (messages from a simulator or a bus) may return ``True`` and call the listener right after
        storing each new message, with what :meth:`read` would return then; it must be quick.
        """
        return False

    def health(self) -> Health:
        """The connection and device state, for diagnostics and ``reset`` (a few times a second)."""
        return Health(connected=True)

    def set_limits(self, limits: JointLimitTable) -> None:
        """The effective joint limits changed (parameters); the default keeps them in ``self.limits``."""
        self.limits = limits

    def set_robot(self, robot: Robot) -> None:
        """The model's bound parameters changed (e.g. a transmission's reduction)."""
        self.robot = robot

    def set_armed(self, armed: bool) -> None:
        """The driver was armed or disarmed (a hardware backend may enable or disable drives)."""
        return None

    def send_trajectory(self, trajectory: Trajectory) -> None:
        """Execute a whole trajectory (only called when ``capabilities.trajectories``)."""
        raise BackendError(f"backend '{self.name}' does not execute trajectories itself")

    def object_poses(self) -> ObjectPoses | None:
        """The objects' latest measured poses (any thread: a value the loop thread set whole), or ``None``
        for a backend that simulates no objects (the default)."""
        return None


# ------------------------------------------------------------------------------ registry
BackendFactory = Callable[[BackendContext], Backend]
_REGISTRY: dict[str, type[Backend]] = {}


def register_backend(cls: type[Backend], name: str | None = None) -> type[Backend]:
    """Make ``cls`` selectable as ``backend: <name>`` (default ``cls.name``); usable as a decorator."""
    key = name or cls.name
    if not key:
        raise ValueError(f"{cls.__qualname__} has no name")
    _REGISTRY[key] = cls
    return cls


def backend_class(name: str) -> type[Backend]:
    """The backend class selected by ``name`` (see the module docstring); raises
    :class:`BackendError` naming the known backends when there is none."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    module_name, _, attribute = name.partition(":")
    candidates = [module_name] if attribute else [f"bb_robot.driver.backends.{name}"]
    for candidate in candidates:
        if not candidate or not all(part.isidentifier() for part in candidate.split(".")):
            continue
        try:
            module = importlib.import_module(candidate)
        except ModuleNotFoundError as error:
            if error.name is not None and candidate.startswith(error.name):
                continue
            raise BackendError(f"backend '{name}': importing {candidate} failed: {error}") from None
        found = getattr(module, attribute or "BACKEND", None)
        if isinstance(found, type) and issubclass(found, Backend):
            _REGISTRY[name] = found
            return found
        raise BackendError(f"backend '{name}': {candidate} has no Backend class '{attribute or 'BACKEND'}'")
    known = ", ".join(sorted(set(_REGISTRY) | set(builtin_backends()))) or "none"
    raise BackendError(
        f"unknown backend '{name}' (known: {known}; or give 'package.module:Class' of a Backend subclass)"
    )


def builtin_backends() -> tuple[str, ...]:
    """The backends shipped in :mod:`bb_robot.driver.backends` (each module with a ``BACKEND``)."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    names = []
    for path in sorted(here.glob("*.py")):
        if path.stem in ("__init__", "base") or path.stem.startswith("_"):
            continue
        if "\nBACKEND" in path.read_text(encoding="utf-8"):
            names.append(path.stem)
    return tuple(names)
