"""What the built-in transport diagnoses from discovery traffic, and the log of its problems.

Pure functions of a snapshot (:class:`TransportView`) and of what discovery heard, so the rules
read in one place: a subscription whose topic is published only in another partition or with
another type name; a topic we publish that is requested from another partition, by a process
that never connects, or by a subscriber of another type; discovery messages of another wire
version.  :class:`ProblemLog` logs each problem once when it appears and when it is resolved.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bb_robot.gz import wire
from bb_robot.gz.diagnostics import TopicSeen
from bb_robot.gz.discovery import PublisherInfo, SubscribeSighting
from bb_robot.gz.handles import BuiltinPublisher, BuiltinSubscription
from bb_robot.gz.interface import Logger

#: A subscriber that asked for a topic we publish but has not connected this long after: diagnose.
CONNECT_GRACE = 3.0
#: Problems found on the data path (a wrong type received, an unknown class) stay until closed.
_DATA_PATH = ("type:", "unknown:")


@dataclass(frozen=True)
class TransportView:
    """What the transport holds, copied under its lock for :func:`find_problems`.

    ``partition`` is the bare partition; ``subscriptions`` and ``publishers`` are keyed by fully
    qualified topic; ``ever_connected`` holds ``(topic, subscriber process)`` pairs that sent
    NEW_CONNECTION; ``reported`` the subscribers gz-transport 13 peers reported, with when.
    """

    partition: str
    process_uuid: str
    started: float
    subscriptions: Mapping[str, Sequence[BuiltinSubscription]]
    publishers: Mapping[str, BuiltinPublisher]
    ever_connected: frozenset[tuple[str, str]]
    reported: Sequence[tuple[PublisherInfo, float]]


def find_problems(
    view: TransportView,
    remote: Sequence[PublisherInfo],
    sightings: Sequence[SubscribeSighting],
    foreign_versions: Sequence[tuple[int, str, int]],
    now: float,
) -> dict[str, str]:
    """The problems diagnosable now.

    Args:
        view: The transport's own topics.
        remote: Every remote publisher discovery knows (any partition).
        sightings: Every SUBSCRIBE heard (any partition).
        foreign_versions: ``(wire version, ip, count)`` of ignored discovery messages.
        now: ``time.monotonic()``.

    Returns:
        A sentence per problem, keyed so that the same problem keeps its key.
    """
    problems: dict[str, str] = {}
    bare = view.partition
    for full, items in view.subscriptions.items():
        parts = wire.split_fully_qualified(full)
        name = parts[1] if parts else full
        types = sorted({s.type_name for s in items})
        here = [p for p in remote if p.topic == full]
        if not any(any(s.accepts(p.type_name) for s in items) for p in here):
            for pub in here:
                problems[f"sub-type:{full}:{pub.process_uuid}:{pub.type_name}"] = (
                    f"{name}: the publisher at {pub.address} sends {pub.type_name}, but we subscribed as "
                    f"{' / '.join(types)}: type names must match exactly (gz.msgs.* in Gazebo Harmonic, "
                    "ignition.msgs.* in older ign-transport); nothing will be received from it"
                )
            elsewhere = sorted({p.partition for p in remote if p.name == name and p.partition != bare})
            if elsewhere:
                problems[f"sub-partition:{full}:{','.join(elsewhere)}"] = (
                    f"{name}: no publisher in our partition {bare!r}, but published in partition"
                    f"{'s' if len(elsewhere) > 1 else ''} {', '.join(repr(p) for p in elsewhere)}: "
                    f"set GZ_PARTITION to the simulator's partition"
                )
    for full, publisher in view.publishers.items():
        name = publisher.topic if publisher.topic.startswith("/") else full.rsplit("@", 1)[-1]
        askers = sorted({s.partition for s in sightings if s.name == name and s.partition != bare})
        if askers:
            problems[f"pub-partition:{full}:{','.join(askers)}"] = (
                f"{name}: requested by a subscriber in partition{'s' if len(askers) > 1 else ''} "
                f"{', '.join(repr(p) for p in askers)}, but we publish it in {bare!r}: set GZ_PARTITION alike"
            )
        for sighting in sightings:
            if (
                sighting.topic == full
                and (full, sighting.process_uuid) not in view.ever_connected
                and now - sighting.last_seen > CONNECT_GRACE
                and sighting.last_seen > view.started
            ):
                problems[f"pub-noconnect:{full}:{sighting.process_uuid}"] = (
                    f"{name}: the process at {sighting.ip} asked for it but never connected: its subscriber "
                    f"probably expects another type than {publisher.type_name}"
                )
        for subscriber, _ in view.reported:
            if (
                subscriber.topic == full
                and subscriber.type_name not in (publisher.type_name, wire.GENERIC_MESSAGE_TYPE)
                and subscriber.process_uuid != view.process_uuid
            ):
                problems[f"pub-type:{full}:{subscriber.process_uuid}:{subscriber.type_name}"] = (
                    f"{name}: a subscriber at {subscriber.address} expects {subscriber.type_name}, "
                    f"we publish {publisher.type_name}: it receives nothing"
                )
    for version, ip, count in foreign_versions:
        reason = (
            "its topic statistics are on (GZ_TRANSPORT_TOPIC_STATISTICS=1)"
            if version == wire.WIRE_VERSION + wire.STATISTICS_VERSION_OFFSET
            else "an incompatible gz-transport version"
        )
        problems[f"version:{version}:{ip}"] = (
            f"ignored {count} discovery messages of wire version {version} from {ip}: {reason}"
        )
    return problems


def topics_seen(
    remote: Sequence[PublisherInfo],
    sightings: Sequence[SubscribeSighting],
    reported: Sequence[tuple[PublisherInfo, float]],
    now: float,
) -> list[TopicSeen]:
    """Every topic seen in discovery traffic, for :class:`~bb_robot.gz.diagnostics.Diagnostics`.

    Args:
        remote: Every remote publisher discovery knows.
        sightings: Every SUBSCRIBE heard.
        reported: The subscribers gz-transport 13 peers reported, with when.
        now: ``time.monotonic()``.

    Returns:
        Publishers, requests and subscribers, in that order.
    """
    seen = [
        TopicSeen(pub.partition, pub.name, pub.type_name, "publisher", pub.process_uuid, pub.address, 0.0)
        for pub in remote
    ]
    seen += [TopicSeen(s.partition, s.name, "", "request", s.process_uuid, s.ip, now - s.last_seen) for s in sightings]
    seen += [
        TopicSeen(sub.partition, sub.name, sub.type_name, "subscriber", sub.process_uuid, sub.address, now - when)
        for sub, when in reported
    ]
    return seen


class ProblemLog:
    """The transport's current problems; each is logged once when found (warning) and when resolved (info).

    Args:
        log: Where to log.
    """

    def __init__(self, log: Logger) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._current: dict[str, str] = {}

    def report(self, key: str, text: str) -> None:
        """Record a problem found on the data path (kept until the transport closes)."""
        with self._lock:
            new = key not in self._current
            self._current[key] = text
        if new:
            self._log.warning(f"gz transport: {text}")

    def update(self, found: Mapping[str, str]) -> None:
        """Replace the diagnosed problems by ``found``; log the new and the resolved ones."""
        with self._lock:
            old = self._current
            kept = {k: v for k, v in old.items() if k.startswith(_DATA_PATH)}
            kept.update(found)
            self._current = kept
        for key, text in found.items():
            if key not in old:
                self._log.warning(f"gz transport: {text}")
        for key, text in old.items():
            if key not in kept:
                self._log.info(f"gz transport: resolved: {text}")

    def current(self) -> list[str]:
        """The problems now, as sentences."""
        with self._lock:
            return list(self._current.values())
