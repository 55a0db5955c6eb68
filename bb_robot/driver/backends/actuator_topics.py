"""The actuators of the ``actuators`` backend, without ROS: who they are, their topic names and
their transmissions (the contract is ``docs/nodes/actuators.md``).

- **Actuators** (:func:`resolve_actuators`): one per driven joint, from the model's
  ``<transmission>`` (its actuator name, ``mechanicalReduction`` and offset) or from
  configuration (name, reduction, offset, reversed), else named by a default template
  (``{joint}_actuator``).  Mimic joints are not driven, so they get no actuator.
- **Names** (:func:`encode_token` / :func:`decode_token`): each element of a name becomes one
  ROS name token.  An element that is already a valid token and contains no ``__`` stays as it
  is; otherwise each byte (UTF-8) that is not an ASCII letter or digit, a leading digit, and an
  ``_`` followed by anything but a letter or digit is written ``__XX`` (two upper-case hex
  digits).  ``decode_token(encode_token(name)) == name`` for every name, so the mapping is
  reversible: ``base_link-base_link_inertia`` → ``base_link__2Dbase_link_inertia``,
  ``1st`` → ``__31st``.
- **Topics** (:func:`actuator_topics`): ``<ns>/actuator/<path elements…>`` (``path`` style, the
  default: the actuator's path, i.e. its joint's path from the root link plus its own name) or
  ``<ns>/actuator/<joint>/<actuator>`` (``joint`` style); feedback on the same name plus
  ``/state``.  Every name is checked against ROS's limit on the length of a fully qualified
  topic name (:data:`TOPIC_NAME_MAX_LENGTH`); one that does not fit fails naming the actuator
  and suggesting the ``joint`` style.
- **Transmissions** (:class:`SimpleTransmissions`): ros2_control's simple transmission, per
  actuator: actuator position = (joint position − offset) × reduction, actuator velocity =
  joint velocity × reduction, actuator effort = joint effort ÷ reduction, and the inverses; a
  ``reversed`` actuator has the reduction's sign flipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bb_robot.driver.errors import BackendError
from bb_robot.model.robot import Robot

FloatArray = npt.NDArray[np.float64]

#: ROS's limit on a fully qualified topic name: ``RMW_TOPIC_MAX_NAME_LENGTH`` in
#: ``rmw/validate_full_topic_name.h`` is ``255 - 8`` (255, the DDS implementations' limit, less
#: 8 characters reserved for the prefixes the rmw layer adds, e.g. ``rt/``).
TOPIC_NAME_MAX_LENGTH = 255 - 8
#: The values of ``actuator_topic_style``.
TOPIC_STYLES = ("path", "joint")
#: The first token of every actuator topic (after the namespace).
ACTUATOR_PREFIX = "actuator"
#: The latched index of the actuators (in the node's namespace).
INDEX_TOPIC = "actuators"
#: Appended to an actuator's command topic for its feedback.
STATE_SUFFIX = "state"
#: The name of an actuator the model and the configuration do not name; ``{joint}`` is replaced
#: by the joint's name (the URDF builder names a nameless transmission's actuator the same way).
DEFAULT_ACTUATOR_NAME = "{joint}_actuator"
#: Version of the index document (``<ns>/actuators``).
INDEX_VERSION = 1

_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset("0123456789ABCDEF")
_UNDERSCORE = ord("_")


class ActuatorConfigError(BackendError):
    """The actuators cannot be set up as configured (the message says which and why)."""


# ------------------------------------------------------------------------------ names
def encode_token(name: str) -> str:
    """``name`` as one ROS name token, by the reversible rule of the module docstring."""
    if not name:
        raise ValueError("an empty name has no token")
    data = name.encode("utf-8")
    out: list[str] = []
    last = len(data) - 1
    for i, byte in enumerate(data):
        if byte in _PLAIN and not (i == 0 and byte in _DIGITS):
            out.append(chr(byte))
        elif byte == _UNDERSCORE and i < last and data[i + 1] in _PLAIN:
            out.append("_")
        elif byte == _UNDERSCORE and i == last:
            out.append("_")
        else:
            out.append(f"__{byte:02X}")
    return "".join(out)


def decode_token(token: str) -> str:
    """The name :func:`encode_token` made ``token`` from (``ValueError`` if it holds a character
    that no token has, or bytes that are not UTF-8)."""
    out = bytearray()
    i, n = 0, len(token)
    while i < n:
        if token.startswith("__", i) and i + 4 <= n and token[i + 2] in _HEX and token[i + 3] in _HEX:
            out.append(int(token[i + 2 : i + 4], 16))
            i += 4
            continue
        char = token[i]
        if not (char == "_" or (char.isascii() and char.isalnum())):
            raise ValueError(f"{token!r} is not a ROS name token (character {char!r})")
        out.append(ord(char))
        i += 1
    return out.decode("utf-8")


def is_name_token(text: str) -> bool:
    """Whether ``text`` is a valid ROS name token (letters, digits, ``_``; not starting with a digit)."""
    return bool(text) and not text[0].isdigit() and all(c == "_" or (c.isascii() and c.isalnum()) for c in text)


def full_name(namespace: str, *tokens: str) -> str:
    """The fully qualified name of ``tokens`` in ``namespace`` (``/`` or ``/a/b``)."""
    prefix = namespace.rstrip("/")
    return "/".join((prefix, *tokens))


# ------------------------------------------------------------------------------ actuators
@dataclass(frozen=True)
class TransmissionOverride:
    """What configuration says about a joint's actuator; ``None`` keeps the model's (or the default)."""

    actuator: str | None = None
    reduction: float | None = None
    offset: float | None = None
    reversed: bool | None = None


@dataclass(frozen=True)
class Actuator:
    """One actuator: its name, the joint it drives, its path and its simple transmission.

    ``reduction`` is as declared (a URDF ``mechanicalReduction``, negative for a reversed drive);
    ``reversed`` flips it again (configuration); :attr:`signed_reduction` is the one applied.
    ``source`` says where it came from: ``urdf`` (the model's transmission), ``config`` (a
    parameter changed or added it) or ``default`` (a joint without any: reduction 1, offset 0).
    """

    name: str
    joint: str
    joint_type: str
    path: tuple[str, ...]
    reduction: float = 1.0
    offset: float = 0.0
    reversed: bool = False
    source: str = "default"

    @property
    def signed_reduction(self) -> float:
        return -self.reduction if self.reversed else self.reduction


def model_transmission(robot: Robot, joint: str, default_name: str = DEFAULT_ACTUATOR_NAME) -> Actuator:
    """The actuator of driven ``joint`` as the model declares it (without configuration).

    Raises :class:`ActuatorConfigError` for a joint with more than one actuator.
    """
    info = robot.joints[joint]
    names = info.actuators
    if len(names) > 1:
        raise ActuatorConfigError(
            f"joint '{joint}' has {len(names)} actuators ({', '.join(names)}); the actuators backend drives "
            "exactly one actuator per joint"
        )
    joint_path = robot.topology.joint_paths[joint]
    if not names:
        name = default_name.replace("{joint}", joint)
        return Actuator(name, joint, info.type, joint_path + (name,))
    actuator = robot.actuators[names[0]]
    transmission = actuator.transmission
    reduction = transmission.reduction if transmission is not None and transmission.reduction is not None else 1.0
    offset = transmission.offset if transmission is not None and transmission.offset is not None else 0.0
    reversed_ = bool(transmission.reversed) if transmission is not None and transmission.reversed else False
    return Actuator(
        actuator.name,
        joint,
        info.type,
        joint_path + (actuator.name,),
        float(reduction),
        float(offset),
        reversed_,
        "urdf",
    )


def resolve_actuators(
    robot: Robot,
    joints: Sequence[str],
    overrides: Mapping[str, TransmissionOverride] | None = None,
    default_name: str = DEFAULT_ACTUATOR_NAME,
) -> tuple[Actuator, ...]:
    """One actuator per joint of ``joints`` (the driven joints, in order), with ``overrides`` (by joint).

    Raises :class:`ActuatorConfigError` naming the problem: an override for a joint that is not
    driven (a mimic joint gets no actuator), a joint with several actuators, a reduction that
    is 0 or not finite, an offset that is not finite, an empty or repeated actuator name.
    """
    overrides = dict(overrides or {})
    driven = set(joints)
    for joint in overrides:
        if joint in driven:
            continue
        info = robot.joints.get(joint)
        if info is None:
            why = f"robot '{robot.name}' has no joint '{joint}'"
        elif info.mimic is not None:
            why = f"joint '{joint}' mimics '{info.mimic.joint}', and mimic joints get no actuator"
        else:
            why = f"joint '{joint}' is not driven ({info.type})"
        raise ActuatorConfigError(f"actuator configuration for '{joint}': {why} (driven: {', '.join(joints)})")
    result: list[Actuator] = []
    by_name: dict[str, str] = {}
    for joint in joints:
        base = model_transmission(robot, joint, default_name)
        override = overrides.get(joint, TransmissionOverride())
        name = override.actuator if override.actuator else base.name
        reduction = base.reduction if override.reduction is None else float(override.reduction)
        offset = base.offset if override.offset is None else float(override.offset)
        reversed_ = base.reversed if override.reversed is None else bool(override.reversed)
        changed = (name, reduction, offset, reversed_) != (base.name, base.reduction, base.offset, base.reversed)
        source = "config" if changed else base.source
        if not math.isfinite(reduction) or reduction == 0.0:
            raise ActuatorConfigError(
                f"actuator '{name}' of joint '{joint}': reduction {reduction!r} must be a finite number other than 0"
            )
        if not math.isfinite(offset):
            raise ActuatorConfigError(f"actuator '{name}' of joint '{joint}': offset {offset!r} must be finite")
        if name in by_name:
            raise ActuatorConfigError(
                f"actuator name '{name}' is used by joints '{by_name[name]}' and '{joint}' (actuator names must be "
                "unique; a default name template needs '{joint}')"
            )
        by_name[name] = joint
        path = robot.topology.joint_paths[joint] + (name,)
        result.append(Actuator(name, joint, base.joint_type, path, reduction, offset, reversed_, source))
    return tuple(result)


# ------------------------------------------------------------------------------ topics
@dataclass(frozen=True)
class ActuatorTopics:
    """An actuator's topics: ``tokens`` after ``<ns>/actuator``; ``command`` and ``state`` fully qualified."""

    tokens: tuple[str, ...]
    command: str
    state: str


def topic_tokens(actuator: Actuator, style: str) -> tuple[str, ...]:
    """The tokens of ``actuator``'s topic after ``<ns>/actuator/`` in ``style`` (``path`` or ``joint``)."""
    if style == "path":
        elements: Sequence[str] = actuator.path
    elif style == "joint":
        elements = (actuator.joint, actuator.name)
    else:
        raise ActuatorConfigError(f"actuator_topic_style must be one of {', '.join(TOPIC_STYLES)}, not {style!r}")
    return tuple(encode_token(element) for element in elements)


def actuator_topics(
    namespace: str, actuators: Sequence[Actuator], style: str = "path", limit: int = TOPIC_NAME_MAX_LENGTH
) -> tuple[ActuatorTopics, ...]:
    """The topics of ``actuators`` in ``namespace``, each checked against ``limit``.

    Raises :class:`ActuatorConfigError` naming every actuator whose state topic is longer than
    ``limit`` (with its length, and the suggestion of ``actuator_topic_style: joint`` in the
    ``path`` style), or two actuators whose topics clash.
    """
    result = []
    too_long: list[str] = []
    for actuator in actuators:
        tokens = topic_tokens(actuator, style)
        command = full_name(namespace, ACTUATOR_PREFIX, *tokens)
        state = f"{command}/{STATE_SUFFIX}"
        if len(state) > limit:
            too_long.append(f"'{actuator.name}' (joint '{actuator.joint}'): '{state}' has {len(state)} characters")
        result.append(ActuatorTopics(tokens, command, state))
    if too_long:
        if style == "path":
            compact = [
                full_name(namespace, ACTUATOR_PREFIX, *topic_tokens(a, "joint"), STATE_SUFFIX) for a in actuators
            ]
            longest = max(compact, key=len)
            hint = (
                "; set actuator_topic_style: joint for the compact names <ns>/actuator/<joint>/<actuator> "
                f"(the longest would be '{longest}', {len(longest)} characters)"
            )
        else:
            hint = "; shorten the namespace, joint or actuator names"
        raise ActuatorConfigError(
            f"{len(too_long)} actuator topic name(s) are longer than ROS's limit of {limit} characters for a topic "
            f"name (RMW_TOPIC_MAX_NAME_LENGTH): " + "; ".join(too_long) + hint
        )
    seen: dict[str, str] = {}
    for actuator, topics in zip(actuators, result, strict=True):
        for name in (topics.command, topics.state):
            if name in seen:
                raise ActuatorConfigError(
                    f"the topics of actuators '{seen[name]}' and '{actuator.name}' clash on '{name}'"
                    + ("; set actuator_topic_style: joint" if style == "path" else "")
                )
            seen[name] = actuator.name
    return tuple(result)


# ------------------------------------------------------------------------------ transmissions
class SimpleTransmissions:
    """ros2_control's simple transmission for a row of actuators (arrays in actuator order)."""

    def __init__(self, reductions: Sequence[float], offsets: Sequence[float]) -> None:
        self.reduction = np.asarray(reductions, dtype=np.float64)
        self.offset = np.asarray(offsets, dtype=np.float64)
        if self.reduction.shape != self.offset.shape:
            raise ValueError("reductions and offsets differ in length")
        if not np.all(np.isfinite(self.reduction)) or np.any(self.reduction == 0.0):
            raise ValueError("every reduction must be finite and not 0")

    @classmethod
    def of(cls, actuators: Sequence[Actuator]) -> SimpleTransmissions:
        return cls([a.signed_reduction for a in actuators], [a.offset for a in actuators])

    # joint space -> actuator space (commands)
    def actuator_position(self, joint_position: FloatArray) -> FloatArray:
        return (joint_position - self.offset) * self.reduction

    def actuator_velocity(self, joint_velocity: FloatArray) -> FloatArray:
        return joint_velocity * self.reduction

    def actuator_effort(self, joint_effort: FloatArray) -> FloatArray:
        return joint_effort / self.reduction

    # actuator space -> joint space (feedback)
    def joint_position(self, actuator_position: FloatArray) -> FloatArray:
        return actuator_position / self.reduction + self.offset

    def joint_velocity(self, actuator_velocity: FloatArray) -> FloatArray:
        return actuator_velocity / self.reduction

    def joint_effort(self, actuator_effort: FloatArray) -> FloatArray:
        return actuator_effort * self.reduction


# ------------------------------------------------------------------------------ the index
def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def actuator_limits(
    actuator: Actuator,
    lower: float,
    upper: float,
    velocity: float,
    effort: float,
    command_range: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The joint's limits in actuator space (``None`` where the joint has none).

    Args:
        actuator: The actuator and its transmission.
        lower: The joint's lower position limit.
        upper: Its upper position limit.
        velocity: Its velocity limit.
        effort: Its effort limit.
        command_range: The driver's command range of the joint (within the soft limits), which a
            velocity command must not carry the actuator past; ``None``: ``lower`` to ``upper``.

    Returns:
        ``position_min`` / ``position_max`` (the range), ``command_min`` / ``command_max`` (the
        command range), ``velocity`` and ``effort``.
    """
    r = actuator.signed_reduction

    def ends(low: float, high: float) -> tuple[float | None, float | None]:
        if not (math.isfinite(low) and math.isfinite(high)):
            return None, None
        first, second = sorted(((low - actuator.offset) * r, (high - actuator.offset) * r))
        return _number(first), _number(second)

    position_min, position_max = ends(lower, upper)
    command_min, command_max = ends(*(command_range or (lower, upper)))
    return {
        "position_min": position_min,
        "position_max": position_max,
        "command_min": command_min,
        "command_max": command_max,
        "velocity": _number(velocity * abs(r)),
        "effort": _number(effort / abs(r)),
    }


def index_document(
    robot_name: str,
    namespace: str,
    style: str,
    actuators: Sequence[Actuator],
    topics: Sequence[ActuatorTopics],
    limits: Sequence[Mapping[str, Any]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document published on ``<ns>/actuators`` (see ``docs/nodes/actuators.md``)."""
    entries = []
    for i, (actuator, topic) in enumerate(zip(actuators, topics, strict=True)):
        entry: dict[str, Any] = {
            "name": actuator.name,
            "joint": actuator.joint,
            "joint_type": actuator.joint_type,
            "path": list(actuator.path),
            "command_topic": topic.command,
            "state_topic": topic.state,
            "transmission": {
                "type": "simple",
                "reduction": actuator.reduction,
                "offset": actuator.offset,
                "reversed": actuator.reversed,
                "signed_reduction": actuator.signed_reduction,
                "source": actuator.source,
            },
        }
        if limits is not None:
            entry["limits"] = dict(limits[i])
        entries.append(entry)
    document: dict[str, Any] = {
        "version": INDEX_VERSION,
        "robot": robot_name,
        "namespace": namespace,
        "actuator_topic_style": style,
        "command_type": "sensor_msgs/msg/JointState",
        "state_type": "sensor_msgs/msg/JointState",
        "actuators": entries,
    }
    if extra:
        document.update(extra)
    return document
