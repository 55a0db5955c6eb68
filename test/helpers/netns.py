"""Two "hosts" on one machine for the network-cut test: network namespaces joined by a veth pair.

Root only (``ip netns``); private test addresses (10.231.<n>.1 and .2/24) inside namespaces the
test creates and deletes.  Each namespace gets its loopback up, its end of the pair with an
address, and a multicast route over the pair (Fast DDS's discovery multicast, 239.255.0.1).
The namespaces share /dev/shm with the rest of the machine, so every ROS process in them must
run UDP-only (``FASTDDS_BUILTIN_TRANSPORTS=UDPv4``) or shared memory would carry data past the
cut.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path


def _ip(*args: str, namespace: str | None = None) -> None:
    command = ["ip", *args] if namespace is None else ["ip", "netns", "exec", namespace, "ip", *args]
    subprocess.run(command, check=True, capture_output=True, text=True)


def can_make_namespaces() -> str | None:
    """``None`` when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    try:
        probe = f"bbprobe{uuid.uuid4().hex[:6]}"
        _ip("netns", "add", probe)
        _ip("netns", "del", probe)
    except (OSError, subprocess.CalledProcessError) as error:
        return f"cannot create a network namespace: {error}"
    return None


class TwoHosts:
    """Namespaces ``a`` and ``b`` (names unique per test) joined by veth ``va`` ↔ ``vb``."""

    def __init__(self, subnet: int) -> None:
        tag = uuid.uuid4().hex[:6]
        self.a, self.b = f"bbA{tag}", f"bbB{tag}"
        self.va, self.vb = f"va{tag}", f"vb{tag}"
        self.addr_a, self.addr_b = f"10.231.{subnet}.1", f"10.231.{subnet}.2"
        _ip("netns", "add", self.a)
        _ip("netns", "add", self.b)
        _ip("link", "add", self.va, "type", "veth", "peer", "name", self.vb)
        _ip("link", "set", self.va, "netns", self.a)
        _ip("link", "set", self.vb, "netns", self.b)
        for namespace, device, address in ((self.a, self.va, self.addr_a), (self.b, self.vb, self.addr_b)):
            _ip("link", "set", "lo", "up", namespace=namespace)
            _ip("addr", "add", f"{address}/24", "dev", device, namespace=namespace)
            _ip("link", "set", device, "up", namespace=namespace)
            _ip("route", "add", "224.0.0.0/4", "dev", device, namespace=namespace)

    def cut(self) -> None:
        """Take the link down (from host b's side: host a's end loses its carrier)."""
        _ip("link", "set", self.vb, "down", namespace=self.b)

    def restore(self) -> None:
        """Bring the link up again (and host b's multicast route, which went with it)."""
        _ip("link", "set", self.vb, "up", namespace=self.b)
        subprocess.run(
            ["ip", "netns", "exec", self.b, "ip", "route", "replace", "224.0.0.0/4", "dev", self.vb],
            check=True,
            capture_output=True,
        )

    def popen(self, namespace: str, command: Sequence[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        """Run ``command`` in ``namespace`` (``ip netns exec`` execs it: the pid is the command's)."""
        handle = open(log, "wb")  # noqa: SIM115 - the child holds it; closed with the process
        return subprocess.Popen(
            ["ip", "netns", "exec", namespace, *command], stdout=handle, stderr=subprocess.STDOUT, env=env
        )

    def delete(self) -> None:
        for namespace in (self.a, self.b):  # deleting a namespace deletes its end of the pair, and the pair
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
