"""The transport's public face: the :class:`GzTransport` interface and :func:`create_transport`.

Two implementations sit behind it:

- ``builtin`` (:class:`~bb_robot.gz.builtin.BuiltinTransport`, the default): this project's own
  client of the gz-transport wire protocol (pyzmq + UDP), needing no Gazebo library;
- ``official`` (:class:`~bb_robot.gz.official.OfficialTransport`): a thin adapter over Gazebo
  Harmonic's ``gz.transport13`` Python bindings, imported only when chosen.

The interface and its types live in :mod:`bb_robot.gz.interface` and
:mod:`bb_robot.gz.diagnostics` (re-exported here); this module sits above both implementations
and imports each only when it is chosen.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bb_robot.gz.diagnostics import AdvertisedTopic, Diagnostics, PeerSeen, SubscribedTopic, TopicSeen
from bb_robot.gz.interface import (
    GzClosedError,
    GzMessageTypeError,
    GzNetworkError,
    GzPublisher,
    GzSubscription,
    GzTransport,
    GzTransportError,
    GzUsageError,
    Logger,
    MessageCallback,
    MessageInfo,
    MessageType,
    type_name_of,
)

__all__ = [
    "IMPLEMENTATIONS",
    "AdvertisedTopic",
    "Diagnostics",
    "GzClosedError",
    "GzMessageTypeError",
    "GzNetworkError",
    "GzPublisher",
    "GzSubscription",
    "GzTransport",
    "GzTransportError",
    "GzUsageError",
    "Logger",
    "MessageCallback",
    "MessageInfo",
    "MessageType",
    "PeerSeen",
    "SubscribedTopic",
    "TopicSeen",
    "create_transport",
    "type_name_of",
]

IMPLEMENTATIONS: Sequence[str] = ("builtin", "official")


def create_transport(
    implementation: str = "builtin",
    *,
    partition: str | None = None,
    logger: Logger | None = None,
    **options: Any,
) -> GzTransport:
    """A transport by name.

    Args:
        implementation: ``builtin`` (default) or ``official`` (``gz.transport13``, if importable).
        partition: Defaults to ``GZ_PARTITION``, else ``<hostname>:<username>``.
        logger: Where the transport logs (default: the ``bb_robot.gz`` logger).
        **options: Passed to the implementation (see
            :class:`~bb_robot.gz.builtin.BuiltinTransport`); their types depend on it.

    Returns:
        The open transport.

    Raises:
        GzUsageError: ``implementation`` is not one of :data:`IMPLEMENTATIONS` (a ``ValueError``).
        GzNetworkError: The built-in transport's sockets cannot be set up (an ``OSError``).
        ImportError: ``official`` was chosen and ``gz.transport13`` does not import.
    """
    log: Logger = logger if logger is not None else logging.getLogger("bb_robot.gz")
    if implementation == "builtin":
        from bb_robot.gz.builtin import BuiltinTransport

        return BuiltinTransport(partition=partition, logger=log, **options)
    if implementation == "official":
        from bb_robot.gz.official import OfficialTransport

        return OfficialTransport(partition=partition, logger=log, **options)
    raise GzUsageError(f"unknown gz transport {implementation!r}; choose one of {', '.join(IMPLEMENTATIONS)}")
