"""Network interfaces and the host address, chosen the way gz-transport chooses them.

- ``GZ_IP`` set: that address is the host address and the only discovery interface;
- otherwise the IPv4 address of every interface that is up and multicast-capable, except
  127.0.0.1 (which is used only when there is nothing else); the host address is the hostname's
  address if it is public and one of those interfaces, else the first public one, else the first.
"""

from __future__ import annotations

import array
import fcntl
import os
import socket
import struct

_SIOCGIFFLAGS = 0x8913
_SIOCGIFADDR = 0x8915
_IFF_UP = 0x1
_IFF_MULTICAST = 0x1000


def _ioctl(sock: socket.socket, request: int, name: str) -> bytes:
    buffer = array.array("B", struct.pack("256s", name.encode()[:15]))
    fcntl.ioctl(sock.fileno(), request, buffer, True)
    return buffer.tobytes()


def interface_addresses() -> list[str]:
    """The primary IPv4 address of each interface that is up and multicast-capable (127.0.0.1 excluded)."""
    result: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _index, name in socket.if_nameindex():
            try:
                flags = struct.unpack_from("H", _ioctl(sock, _SIOCGIFFLAGS, name), 16)[0]
                address = socket.inet_ntoa(_ioctl(sock, _SIOCGIFADDR, name)[20:24])
            except OSError:  # no IPv4 address
                continue
            if address == "127.0.0.1" or not flags & _IFF_UP or not flags & _IFF_MULTICAST:
                continue
            if address not in result:
                result.append(address)
    return result


def is_private(address: str) -> bool:
    """gz-transport's notion of private: 192.168.*, 10.*, 169.254.*."""
    return address.startswith(("192.168", "10.", "169.254"))


def discovery_interfaces(ip: str | None = None) -> list[str]:
    """``[ip]`` (or ``[GZ_IP]``) when given, else :func:`interface_addresses` or ``["127.0.0.1"]``."""
    ip = ip if ip is not None else os.environ.get("GZ_IP") or None
    if ip:
        return [ip]
    return interface_addresses() or ["127.0.0.1"]


def host_address(ip: str | None = None) -> str:
    """The address our ZeroMQ sockets bind to and that we advertise."""
    ip = ip if ip is not None else os.environ.get("GZ_IP") or None
    if ip:
        return ip
    interfaces = interface_addresses()
    try:
        hostname = socket.gethostname()
        if hostname and hostname != "localhost":
            resolved = socket.gethostbyname(hostname)
            if not is_private(resolved) and not resolved.startswith("127.0.") and resolved in interfaces:
                return resolved
    except OSError:
        pass
    for address in interfaces:
        if not is_private(address):
            return address
    return interfaces[0] if interfaces else "127.0.0.1"


def relay_addresses(relays: str | None = None) -> list[str]:
    """The unicast relays of ``GZ_RELAY`` (colon-separated addresses; gz-transport's format)."""
    value = relays if relays is not None else os.environ.get("GZ_RELAY", "")
    return [address for address in value.split(":") if address]
