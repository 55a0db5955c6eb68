"""The C++ test peer (``test/gz/peer/gz_peer.cc``, ign-transport 11): building it once, running it.

:func:`build_peer` compiles it with ``g++`` and ``pkg-config ignition-transport11`` into a cache
directory, once per source/library/compiler version (:class:`PeerUnavailable` says what is missing);
:class:`Peer` runs one instance in a partition on loopback and collects its output lines.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from helpers.cxx_build import build_cached

PEER_SOURCE = Path(__file__).resolve().parents[1] / "gz" / "peer" / "gz_peer.cc"
PKG_CONFIG_MODULE = "ignition-transport11"
TOPIC_TOOL = Path("/usr/libexec/ignition/transport11/ign-transport-topic")


class PeerUnavailable(RuntimeError):
    """The compiler, pkg-config or ign-transport 11's development files are missing."""


def build_peer(cache_dir: Path, source: Path = PEER_SOURCE) -> Path:
    """Compile ``source`` (default ``gz_peer.cc``) into ``cache_dir`` (reused while source, library and
    compiler match)."""
    return build_cached(
        source,
        PKG_CONFIG_MODULE,
        cache_dir,
        what="the gz-transport test peer",
        library="ign-transport 11",
        debian_package="libignition-transport-dev",
        unavailable=PeerUnavailable,
    )


def ign_env(partition: str) -> dict[str, str]:
    """The environment of an ign-transport 11 process in ``partition``, on loopback only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IGN_", "GZ_"))}
    env.update(IGN_IP="127.0.0.1", IGN_PARTITION=partition)
    return env


class Peer:
    """One running ``gz_peer``: ``lines`` collects its standard output; stop() closes its input."""

    def __init__(self, binary: Path, args: Sequence[str], partition: str) -> None:
        self.args = list(args)
        self.process = subprocess.Popen(
            [str(binary), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ign_env(partition),
        )
        self.lines: list[str] = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._cv:
                self.lines.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def wait_for(self, predicate: Callable[[list[str]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cv:
            while not predicate(self.lines):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    return predicate(self.lines)
                self._cv.wait(min(remaining, 0.1))
            return True

    def wait_line(self, text: str, timeout: float = 10.0) -> bool:
        return self.wait_for(lambda lines: text in lines, timeout)

    def messages(self) -> list[tuple[str, bytes]]:
        """``(type name, payload)`` of each ``MSG`` line so far."""
        with self._cv:
            lines = list(self.lines)
        found = []
        for line in lines:
            if line.startswith("MSG "):
                parts = line.split(" ")
                found.append((parts[1], bytes.fromhex(parts[2] if len(parts) > 2 else "")))
        return found

    def send(self, payload: bytes) -> None:
        """Give a publishing peer its (next) payload."""
        assert self.process.stdin is not None
        self.process.stdin.write(payload.hex() + "\n")
        self.process.stdin.flush()

    def stop(self, timeout: float = 5.0) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout)

    def kill(self) -> None:
        """End it without a BYE (a crash)."""
        self.process.kill()
        self.process.wait()
        self._reader.join(5.0)
