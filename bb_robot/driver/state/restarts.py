"""Whether this driver process is a respawn: a start after the first under the same launch.

``launch`` respawns a node by running the same command again, with the same parameters, so a
respawned driver cannot tell from them that it is one.  With ``respawn: true`` (which
``launch/bringup.launch.py respawn:=true`` sets) the driver counts its starts in a small file
named by its parent process (the launch, identified by pid and start time, so a reused pid is
another launch) and its node name.  A start with an earlier one on record is a **restart**: the
driver comes back disarmed whatever ``auto_arm`` says, resumes no goal and no command, and
reports the restart in its log and on ``/diagnostics``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def _start_time(pid: int) -> str:
    """The start time of process ``pid`` in clock ticks since boot (``""`` where /proc has none)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def record_start(node: str, parent: int | None = None, directory: Path | None = None) -> int:
    """Count a start of ``node`` under its parent process; returns the earlier starts on record.

    Args:
        node: The node's fully qualified name (``/arm/driver``).
        parent: The parent process (default: this process's parent, the launch).
        directory: Where the counts are kept (default: the system's temporary directory).

    Returns:
        0 for the first start under this parent, 1 for the first restart, and so on.  An
        unwritable directory counts as a first start (the driver then keeps ``auto_arm``).
    """
    parent = os.getppid() if parent is None else parent
    key = hashlib.sha256(f"{parent}:{_start_time(parent)}:{node}".encode()).hexdigest()[:24]
    path = (directory or Path(tempfile.gettempdir())) / f"bb_robot_starts_{key}"
    try:
        earlier = int(path.read_text() or "0") if path.exists() else 0
        path.write_text(str(earlier + 1))
    except (OSError, ValueError):
        return 0
    return earlier
