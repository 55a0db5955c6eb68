"""Which ROS topics the view shows and records, and how to subscribe to each.

The view node lists the topics it is asked for (``topics``, default :data:`DEFAULT_TOPICS`:
the description, TF, joint states, the tip pose, the driver's arm state and diagnostics) and,
each time it looks at the ROS graph, bridges those that exist: a topic with at least one
publisher.  Its subscription matches the publishers: best effort if any publisher is best
effort (a reliable subscription would not match it), transient local (latched) if every
publisher is, so a late view still gets ``robot_description`` and ``/tf_static``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bb_robot.view.schemas import full_type_name

#: The default ``topics`` parameter; relative names follow the view node's namespace.
DEFAULT_TOPICS: tuple[str, ...] = (
    "robot_description",
    "/tf",
    "/tf_static",
    "joint_states",
    "/diagnostics",
    "description/tip_pose",
    "description/serial_manipulator",
    "driver/arm_state",
)
#: How many distinct latched messages a ``tf2_msgs/msg/TFMessage`` topic keeps for late
#: clients (one per static-transform publisher); other latched topics keep the last one.
STATIC_TF_DEPTH = 32


@dataclass(frozen=True)
class PublisherQos:
    """What matters of one publisher's QoS for a matching subscription."""

    reliable: bool
    transient_local: bool


@dataclass(frozen=True)
class TopicChoice:
    """A topic to bridge: its resolved name, full type name and how to subscribe."""

    topic: str
    type_name: str
    latched: bool
    best_effort: bool

    @property
    def latch_depth(self) -> int:
        """How many distinct messages to keep and resend to a late client (0: not latched)."""
        if not self.latched:
            return 0
        return STATIC_TF_DEPTH if self.type_name == "tf2_msgs/msg/TFMessage" else 1


def choose_topics(
    wanted: Sequence[str],
    types: Mapping[str, Sequence[str]],
    publishers: Mapping[str, Sequence[PublisherQos]],
) -> tuple[list[TopicChoice], list[str]]:
    """The topics of ``wanted`` that exist, and a note for each one that has several types.

    Args:
        wanted: resolved topic names, in the order to advertise them.
        types: topic name → the type names the graph reports for it.
        publishers: topic name → the QoS of each of its publishers.

    Returns:
        The choices (topics with at least one publisher and a type), and warnings naming a
        topic published with more than one type (the first type, in sorted order, is used).
    """
    choices: list[TopicChoice] = []
    notes: list[str] = []
    for topic in dict.fromkeys(wanted):
        found = sorted(types.get(topic, ()))
        qos = list(publishers.get(topic, ()))
        if not found or not qos:
            continue
        if len(found) > 1:
            notes.append(f"topic '{topic}' is published with several types {found}; showing it as {found[0]}")
        choices.append(
            TopicChoice(
                topic=topic,
                type_name=full_type_name(found[0]),
                latched=all(q.transient_local for q in qos),
                best_effort=any(not q.reliable for q in qos),
            )
        )
    return choices, notes
