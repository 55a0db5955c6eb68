"""Linux processes as the fault tests see them: ``/proc/<pid>/stat``."""

from __future__ import annotations

import time


def _stat(pid: int) -> list[str] | None:
    """The fields after the command name (``state``, ``ppid``, ...), or ``None`` when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return None


def ended(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie its parent has not reaped yet counts as ended)."""
    fields = _stat(pid)
    return fields is None or fields[0] == "Z"


def parent_of(pid: int) -> int | None:
    """The parent's process id, or ``None`` when there is no such process."""
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def wait_until_ended(pid: int, what: str, timeout: float = 10.0) -> None:
    """Wait for process ``pid`` to end; fail naming ``what`` if it has not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ended(pid):
        assert time.monotonic() < deadline, f"{what} (pid {pid}) still runs after {timeout:g} s"
        time.sleep(0.05)
