"""The servo's inputs: checked twists and pose targets, the frames they name, its settings.

A twist or a pose arrives from any thread (a ROS callback); :func:`check_twist` and
:func:`check_pose` turn it into a :class:`~bb_robot.driver.cycle.inbox.ServoInput` for the control
loop, or raise :class:`ServoInputError` naming the topic and the field.  Frames are link names
of the robot, with or without the frame prefix (:meth:`FrameNames.resolve`); an empty frame is
the base link of the servo's chain.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.common.parameters import ParameterSpec
from bb_robot.driver.cycle.inbox import ServoInput
from bb_robot.driver.errors import DriverError

FloatArray = npt.NDArray[np.float64]

#: A twist faster than this many times the maximum speed is rejected (a slower one is scaled down).
REJECT_FACTOR = 10.0
#: A pose's ``header.stamp`` is plausible when at most this old (s) on the driver's ROS clock, and
#: not in the future (:func:`stamp_origin`).
MAX_STAMP_AGE = 0.5


class ServoError(DriverError):
    """The servo cannot be set up (its tip, its chain) or an input is not one it can follow."""


class ServoInputError(ServoError):
    """A twist or pose command is rejected: the message names the topic and the field."""


@dataclass(frozen=True)
class ServoSettings:
    """What the servo does (the ``servo.*`` parameters; all live except ``tip``).

    Attributes:
        tip: the link the servo moves (empty: the single tool frame of the driven chain).
        max_linear_speed: the tool point's top speed (m/s).
        max_angular_speed: the tool's top angular speed (rad/s).
        max_linear_acceleration: how fast the tool point's velocity changes (m/s²).
        max_angular_acceleration: how fast the tool's angular velocity changes (rad/s²).
        max_joint_acceleration: a joint's acceleration where its limits give none (rad/s² or m/s²).
        command_timeout: a twist older than this (s) is stale, and a stream of poses silent for longer
            has fallen silent: the tool decelerates to a stop where it is.
        singularity_slowdown: below this measure (the Jacobian's inverse condition number) motion slows.
        singularity_stop: at or below this measure motion towards the singularity stops.
        joint_limit_margin: inside this distance of a joint's command range, motion towards it slows.
        gain: the closed-loop gain (1/s) pulling the measured tool pose to where it should be.
        frame_prefix: the description's frame prefix (frames may carry it or not).
    """

    tip: str = ""
    max_linear_speed: float = 0.25
    max_angular_speed: float = 1.0
    max_linear_acceleration: float = 1.0
    max_angular_acceleration: float = 4.0
    max_joint_acceleration: float = 5.0
    command_timeout: float = 0.1
    singularity_slowdown: float = 0.06
    singularity_stop: float = 0.03
    joint_limit_margin: float = 0.1
    gain: float = 10.0
    frame_prefix: str = ""


def _spec(name: str, default: float, text: str, low: float, high: float) -> ParameterSpec:
    return ParameterSpec(f"servo.{name}", default, text, type="double", range=(low, high))


#: The ``servo.*`` parameters of the driver node (part of :data:`bb_robot.driver.parameters.PARAMETERS`).
SERVO_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "servo.enable",
        False,
        "Follow twists on ~/twist_commands and poses on ~/pose_commands (docs/nodes/servo.md): an input that "
        "moves the arm, so it is opted into (the shipped bb_arm configs do). Read at configure.",
        type="bool",
        when="configure",
    ),
    ParameterSpec(
        "servo.tip",
        "",
        "The link the servo moves, on the chain from the root link. Empty: the single tool frame of the driven "
        "chain; where the tree branches, configure fails naming the candidates. Read at configure.",
        when="configure",
    ),
    ParameterSpec(
        "servo.frame_prefix",
        "",
        "The description's frame prefix: frame ids may name links with it or without it. Empty: the "
        "driver's namespace (as bb-robot up and bb_arm_pair set the description's frame_prefix).",
    ),
    _spec("max_linear_speed", 0.25, "The tool point's top speed (m/s); a faster twist is scaled down.", 0.001, 10.0),
    _spec("max_angular_speed", 1.0, "The tool's top angular speed (rad/s).", 0.001, 50.0),
    _spec("max_linear_acceleration", 1.0, "The tool point's top acceleration (m/s^2).", 0.001, 100.0),
    _spec("max_angular_acceleration", 4.0, "The tool's top angular acceleration (rad/s^2).", 0.001, 500.0),
    _spec(
        "max_joint_acceleration", 5.0, "A joint's acceleration where its limits give none (rad/s^2, m/s^2).", 0.001, 1e4
    ),
    _spec(
        "command_timeout",
        0.1,
        "A twist older than this (s), or a stream of poses silent for longer: the tool decelerates to a stop "
        "where it is.",
        0.001,
        10.0,
    ),
    _spec(
        "singularity_slowdown",
        0.06,
        "Motion towards a singularity slows below this inverse condition number of the scaled Jacobian.",
        0.0,
        1.0,
    ),
    _spec("singularity_stop", 0.03, "Motion towards a singularity stops at this inverse condition number.", 0.0, 1.0),
    _spec(
        "joint_limit_margin", 0.1, "Motion towards a joint's range end slows inside this distance (rad, m).", 0.0, 1.0
    ),
    _spec("gain", 10.0, "Closed-loop gain (1/s) pulling the measured tool pose onto the commanded one.", 0.0, 100.0),
)


def servo_settings(values: Mapping[str, Any]) -> ServoSettings:
    """The settings from parameter values by name (``servo.<field>``).

    Args:
        values: every ``servo.*`` parameter's value.

    Returns:
        The settings (the stop threshold no higher than the slowdown one).
    """
    fields = {name: values[f"servo.{name}"] for name in ServoSettings.__dataclass_fields__}
    numbers = {k: float(v) for k, v in fields.items() if k not in ("tip", "frame_prefix")}
    numbers["singularity_stop"] = min(numbers["singularity_stop"], numbers["singularity_slowdown"])
    return ServoSettings(tip=str(fields["tip"]), frame_prefix=str(fields["frame_prefix"]), **numbers)


class FrameNames:
    """Which names denote which links: a link's name, or the frame prefix and the name.

    Args:
        links: the robot's link names.
        base: the link an empty frame names.
        prefix: the description's frame prefix (``""``: none).
    """

    def __init__(self, links: Iterable[str], base: str, prefix: str = "") -> None:
        self.links = frozenset(links)
        self.base = base
        self.prefix = prefix.strip("/")

    def resolve(self, frame: str) -> str | None:
        """The link ``frame`` names, or ``None`` when it names none.

        Args:
            frame: a frame id as a header carries it (a leading ``/`` is ignored).

        Returns:
            The link's name.
        """
        name = frame.lstrip("/")
        if not name:
            return self.base
        if name in self.links:
            return name
        if self.prefix and name.startswith(self.prefix + "/") and name[len(self.prefix) + 1 :] in self.links:
            return name[len(self.prefix) + 1 :]
        return None


def _finite(topic: str, field: str, values: npt.ArrayLike) -> FloatArray:
    array = np.asarray(values, dtype=float)
    bad = ~np.isfinite(array)
    if bad.any():
        raise ServoInputError(f"{topic}: {field} is not finite ({float(array[bad][0])!r})")
    return array


def _frame(topic: str, frames: FrameNames, frame: str) -> str:
    link = frames.resolve(frame)
    if link is None:
        raise ServoInputError(f"{topic}: header.frame_id '{frame}' names no link of the robot")
    return link


def check_twist(
    topic: str,
    frames: FrameNames,
    settings: ServoSettings,
    frame: str,
    linear: Sequence[float],
    angular: Sequence[float],
    received_ns: int,
) -> ServoInput:
    """A checked twist for the loop.

    Args:
        topic: where it came from (named in errors).
        frames: the robot's frame names.
        settings: the servo's settings (the maximum speeds).
        frame: ``header.frame_id``.
        linear: ``twist.linear`` (m/s, in ``frame``'s axes).
        angular: ``twist.angular`` (rad/s, in ``frame``'s axes).
        received_ns: when it arrived (monotonic ns).

    Returns:
        The input.

    Raises:
        ServoInputError: a value is not finite, the frame names no link, or a speed is beyond
            :data:`REJECT_FACTOR` times its maximum.
    """
    values = np.array([*linear, *angular], dtype=float)
    if not np.isfinite(values).all():
        _finite(topic, "twist.linear", values[:3])
        _finite(topic, "twist.angular", values[3:])
    link = _frame(topic, frames, frame)
    for field, part, top in (
        ("twist.linear", values[:3], settings.max_linear_speed),
        ("twist.angular", values[3:], settings.max_angular_speed),
    ):
        speed = math.sqrt(float(part @ part))
        if speed > REJECT_FACTOR * top:
            raise ServoInputError(
                f"{topic}: {field} speed {speed:g} is beyond {REJECT_FACTOR:g}x the maximum ({top:g})"
            )
    return ServoInput("twist", link, values, received_ns, topic)


def check_pose(
    topic: str,
    frames: FrameNames,
    frame: str,
    position: Sequence[float],
    orientation: Sequence[float],
    received_ns: int,
    stamp_ns: int = 0,
    clock_ns: int = 0,
) -> ServoInput:
    """A checked pose target for the loop.

    Args:
        topic: where it came from (named in errors).
        frames: the robot's frame names.
        frame: ``header.frame_id``.
        position: ``pose.position`` (m, in ``frame``).
        orientation: ``pose.orientation`` as x, y, z, w (normalised here).
        received_ns: when it arrived (monotonic ns).
        stamp_ns: ``header.stamp`` (ns; 0: not stamped): a stream's velocity is timed by it, and
            the pose carried forward from it where it is plausible (:func:`stamp_origin`).
        clock_ns: the driver's ROS clock when it arrived (ns; ``/clock`` under ``use_sim_time``;
            0: unknown, and a stamp is then not plausible).

    Returns:
        The input (its values: the 4x4 target pose in ``frame``).

    Raises:
        ServoInputError: a value is not finite, the quaternion has no length, or the frame names no link.
    """
    p = _finite(topic, "pose.position", position)
    q = _finite(topic, "pose.orientation", orientation)
    norm = float(np.linalg.norm(q))
    if not norm > 1e-6:
        raise ServoInputError(f"{topic}: pose.orientation has no length (not a rotation)")
    link = _frame(topic, frames, frame)
    x, y, z, w = q / norm
    pose = np.eye(4)
    pose[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    pose[:3, 3] = p
    return ServoInput("pose", link, pose, received_ns, topic, stamp_ns, clock_ns)


def stamp_origin(message: ServoInput) -> tuple[int, str]:
    """When a pose held, on the driver's monotonic clock: its stamp where plausible, else its arrival.

    A stamp is plausible when it is at most :data:`MAX_STAMP_AGE` before the driver's ROS clock
    at the pose's arrival and not after it; its age then dates the pose back from its arrival.

    Args:
        message: a checked pose (:func:`check_pose`).

    Returns:
        ``(origin_ns, rejected)``: the time on the monotonic clock the pose is carried forward
        from, and why its stamp was not used (``""``: it was, or the pose has none).
    """
    if not message.stamp_ns:
        return message.received_ns, ""
    age = message.clock_ns - message.stamp_ns
    if not message.clock_ns:
        return message.received_ns, "the driver's clock is not known yet"
    if age < 0:
        return message.received_ns, f"header.stamp is {-age * 1e-9:.3f} s ahead of the driver's clock"
    if age > MAX_STAMP_AGE * 1e9:
        return message.received_ns, f"header.stamp is {age * 1e-9:.3f} s old (at most {MAX_STAMP_AGE:g} s)"
    return message.received_ns - age, ""


def stop_input(topic: str, reason: str, received_ns: int) -> ServoInput:
    """The input that makes the tool decelerate to a stop (after a rejected message).

    Args:
        topic: the topic whose message was rejected.
        reason: why (shown in /diagnostics).
        received_ns: when (monotonic ns).

    Returns:
        The input.
    """
    return ServoInput("stop", reason, np.zeros(0), received_ns, topic)
