"""How long this process has been running (for the node's start-up report)."""

from __future__ import annotations

import os
import time


def process_age() -> float | None:
    """Seconds since this process started (Linux: ``/proc/self/stat``), or ``None`` elsewhere.

    Counted from the process's start, so it includes the interpreter's start-up and imports
    (and the re-exec of the ROS wheels' bootstrapper, which keeps the process).  Resolution:
    one clock tick (10 ms).
    """
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of stat(5), counted from 1 with pid and comm before ")"
        hertz = os.sysconf("SC_CLK_TCK")
        return time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / hertz
    except (OSError, ValueError, IndexError, AttributeError):
        return None
