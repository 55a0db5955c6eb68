"""What other threads hand the driver's core: one typed message per kind.

Callbacks (any thread) put messages in the core's inbox; the loop thread (or an immediate
command's thread) takes them all at the start of a cycle and handles each in one place,
:meth:`bb_robot.driver.core.DriverCore._apply`, a ``match`` over :data:`InboxMessage` that
covers every kind in every state (with a sample of the joints and without one), so adding a
kind without handling it fails the type check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bb_robot.driver.commands.commands import JointCommand
from bb_robot.driver.commands.limits import JointLimitTable
from bb_robot.driver.cycle.execution import Execution
from bb_robot.model.robot import Robot


@dataclass(frozen=True, eq=False)
class SubmitCommand:
    """A checked streaming command: its joints take its mode and values."""

    command: JointCommand


@dataclass(frozen=True, eq=False)
class ExecuteTrajectory:
    """A prepared trajectory: it preempts the active one."""

    execution: Execution


@dataclass(frozen=True, eq=False)
class CancelExecution:
    """Stop ``execution`` (its joints hold) and end it as canceled, saying ``reason``."""

    execution: Execution
    reason: str


@dataclass(frozen=True, eq=False)
class HoldAll:
    """Every joint holds (deactivation); the active trajectory is aborted with ``reason``."""

    reason: str


@dataclass(frozen=True, eq=False)
class KeepCommand:
    """Joints ``indices``, while still in position mode at ``positions`` (a command nobody has replaced
    since), hold there: the command outlives its stream, so the watchdog leaves it alone (a gripper goal
    that ended on an object keeps squeezing it, as ``control_msgs``' gripper controllers do)."""

    indices: npt.NDArray[np.intp]
    positions: npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class SetLimits:
    """New effective joint limits (also given to the backend)."""

    limits: JointLimitTable


@dataclass(frozen=True, eq=False)
class SetRobot:
    """The model's bound parameters changed (given to the backend)."""

    robot: Robot


@dataclass(frozen=True, eq=False)
class ServoInput:
    """A checked input of the servo (:mod:`bb_robot.driver.servo.servo`).

    ``kind`` is ``"twist"`` (``values``: linear then angular velocity in ``frame``'s axes, of
    the tip point), ``"pose"`` (``values``: the 4x4 target in ``frame``) or ``"stop"`` (decelerate
    to a stop; ``frame`` holds the reason).  ``frame`` is a link name of the robot.  ``stamp_ns``
    is the message's header stamp (0: none), whose differences time a stream of poses;
    ``clock_ns`` the driver's ROS clock when it arrived (0: unknown), against which the servo
    judges whether the stamp is plausible (:func:`bb_robot.driver.servo.servo_inputs.stamp_origin`).
    """

    kind: str
    frame: str
    values: npt.NDArray[np.float64]
    received_ns: int
    source: str
    stamp_ns: int = 0
    clock_ns: int = 0


InboxMessage = (
    SubmitCommand | ExecuteTrajectory | CancelExecution | HoldAll | KeepCommand | SetLimits | SetRobot | ServoInput
)
