"""Handing one received data message to the subscriptions of its topic.

Runs on the built-in transport's data thread: builds the :class:`~bb_robot.gz.interface.MessageInfo`,
decodes the payload once per class, skips (and reports) a subscription of another type, and
never lets a callback's exception escape.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from google.protobuf.message import DecodeError, Message

from bb_robot.gz import wire
from bb_robot.gz.diagnosis import ProblemLog
from bb_robot.gz.handles import BuiltinSubscription
from bb_robot.gz.interface import Logger, MessageInfo


def deliver(
    topic: str,
    frames: Sequence[bytes],
    subs: Sequence[BuiltinSubscription],
    class_for: Callable[[str], type[Message] | None],
    problems: ProblemLog,
    log: Logger,
) -> None:
    """Deliver one message to ``subs``.

    Args:
        topic: The fully qualified topic it came on.
        frames: Its four ZeroMQ frames (topic, sender address, payload, type name).
        subs: The subscriptions of ``topic``.
        class_for: The message class of a type name (``None``: unknown, reported by it).
        problems: Where a message of another type than subscribed is reported.
        log: Where an undecodable message is reported.
    """
    type_name = frames[3].decode(errors="replace")
    data = frames[2]
    parts = wire.split_fully_qualified(topic)
    now = time.monotonic_ns()
    info = MessageInfo(
        topic=parts[1] if parts else topic,
        partition=wire.bare_partition(parts[0]) if parts else "",
        type_name=type_name,
        publisher_address=frames[1].decode(errors="replace"),
        received_ns=now,
    )
    decoded: dict[type[Message], Message] = {}
    for sub in subs:
        if not sub.active:
            continue
        if not sub.accepts(type_name):
            problems.report(
                f"type:{topic}:{sub.type_name}:{type_name}",
                f"{info.topic}: received a {type_name} from {info.publisher_address}; subscribed as "
                f"{sub.type_name}: dropped",
            )
            continue
        payload: Message | bytes = data
        if not sub.raw:
            cls = sub.message_class or class_for(type_name)
            if cls is None:
                continue
            message = decoded.get(cls)
            if message is None:
                message = cls()
                try:
                    message.ParseFromString(data)
                except DecodeError:
                    log.warning(f"gz transport: {info.topic}: cannot decode a {type_name}")
                    continue
                decoded[cls] = message
            payload = message
        sub.count += 1
        sub.last_ns = now
        try:
            sub.callback(payload, info)
        except Exception:
            logging.getLogger("bb_robot.gz").exception(f"gz transport: callback for {info.topic} failed")
