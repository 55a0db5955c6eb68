"""Topic names as gz-transport 13 makes them valid and absolute, and gz-sim 8's scoped topics.

ROS-free and independent of :mod:`bb_robot.gz` (the wire's fully qualified names live in
:mod:`bb_robot.gz.wire`).  See the module docstring of :mod:`bb_robot.gzsim.topics` for where
each rule is used ([valid], [scoped]).
"""

from __future__ import annotations


def as_valid_topic(topic: str) -> str:
    """gz-transport 13's ``TopicUtils::AsValidTopic``.

    Spaces become ``_``; ``@``, ``~``, ``//`` and ``:=`` are removed.

    Args:
        topic: A topic as written (in a ``<plugin>`` or a parameter).

    Returns:
        The valid topic, or ``""`` when no valid topic results.
    """
    out: list[str] = []
    i, n = 0, len(topic)
    while i < n:
        c = topic[i]
        if c == " ":
            out.append("_")
        elif c in "@~":
            pass
        elif c == ":" and i + 1 < n and topic[i + 1] == "=":
            i += 1
        elif c == "/" and i + 1 < n and topic[i + 1] == "/":
            i += 1
        else:
            out.append(c)
        i += 1
    valid = "".join(out)
    if not valid or valid == "/" or any(bad in valid for bad in ("~", " ", "//", "@", ":=")):
        return ""
    return valid


def absolute_topic(topic: str) -> str:
    """The topic as it is on the wire for a node without namespace.

    ``rotor_cmd`` becomes ``/rotor_cmd`` and a trailing ``/`` is dropped, as
    ``TopicUtils::FullyQualifiedName`` forms it.

    Args:
        topic: A valid topic (see :func:`as_valid_topic`).

    Returns:
        The absolute topic.
    """
    if topic.endswith("/"):
        topic = topic[:-1]
    return topic if topic.startswith("/") else "/" + topic


def valid_topic(topic: str) -> str:
    """:func:`as_valid_topic`, then :func:`absolute_topic`.

    Args:
        topic: A topic as written.

    Returns:
        Its wire form, or ``""`` if it is not valid.
    """
    valid = as_valid_topic(topic)
    return absolute_topic(valid) if valid else ""


def scoped_topic(world: str, scoped_model: str) -> str:
    """gz-sim's ``topicFromScopedName(model, ecm, false)``.

    Args:
        world: The world's name.
        scoped_model: The model's scoped name in Gazebo (``a::b``).

    Returns:
        ``/world/<world>/model/<a>/model/<b>``, or ``""`` if that is not a valid topic.
    """
    parts = ["world", world]
    for name in scoped_model.split("::"):
        parts += ["model", name]
    return valid_topic("/" + "/".join(parts))
