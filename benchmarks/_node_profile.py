"""Where a description node's time goes per joint_states → /tf message: its own cProfile, split.

``bench_description.py`` runs one more description node under ``python -m cProfile -o FILE``,
sends it joint states at a fixed rate, stops it with SIGINT (the node exits normally and
cProfile writes its statistics), and :func:`per_message` divides what the profile holds by the
number of messages the node handled (calls of its per-message handler ``_on_joint_state``).
The split follows the call tree of the real process; the executor's idle wait
(``rclpy._rclpy_pybind11.wait``) is left out, start-up too (only time under ``spin_once``):

- *rclpy: take + deserialise* — ``take_message`` (the middleware hands over a message and
  rclpy converts it into a Python ``JointState``), by the executor or by the node's drain loop;
- *rclpy: publish* — ``Publisher.publish`` of the /tf bytes;
- *ours* — bb_robot's work on each message: merging the joint values (``merge``), the
  transforms (``publication``), writing them into the wire bytes (``encode``);
- *node layer, rest* — the callbacks' remaining Python (bookkeeping in ``bb_robot/nodes``);
- *rclpy: executor, rest* — the executor's own Python around each round.

A deterministic profiler slows Python code more than C calls, so the Python shares come out
larger than they are unprofiled: read the split, not the absolute µs.
"""

from __future__ import annotations

import pstats
from pathlib import Path

Key = tuple[str, int, str]


def _find(stats: pstats.Stats, name: str, where: str) -> list[Key]:
    """Profile keys of functions called ``name`` (Python) or ending in ``.name>`` (C) whose file has ``where``."""
    table = stats.stats  # type: ignore[attr-defined]
    return [
        key
        for key in table
        if (key[2] == name and where in key[0]) or (key[0] == "~" and key[2].endswith(f".{name}>") and where in key[2])
    ]


def _total(stats: pstats.Stats, keys: list[Key], index: int) -> float:
    """Sum of field ``index`` (2: own time, 3: cumulative time, 1: calls) over ``keys``."""
    table = stats.stats  # type: ignore[attr-defined]
    return float(sum(table[key][index] for key in keys))


def per_message(profile: Path) -> tuple[list[tuple[str, float]], int]:
    """``(part, seconds per message)`` rows from a description node's cProfile file, and the message count."""
    stats = pstats.Stats(str(profile))
    table = stats.stats  # type: ignore[attr-defined]
    messages = int(_total(stats, _find(stats, "_on_joint_state", "bb_robot/nodes/description"), 1))
    busy = _total(stats, _find(stats, "spin_once", "rclpy/executors"), 3)
    busy -= _total(stats, _find(stats, "wait", "rclpy._rclpy_pybind11"), 2)
    take_keys = _find(stats, "take_message", "rclpy._rclpy_pybind11")
    take = _total(stats, take_keys, 3)
    take_in_node = sum(
        timing[3] for key in take_keys for caller, timing in table[key][4].items() if "bb_robot/nodes" in caller[0]
    )
    publish = _total(stats, _find(stats, "publish", "rclpy/publisher"), 3)
    ours = [
        (f"ours: `{name}`", _total(stats, _find(stats, name, where), 3))
        for name, where in (
            ("merge", "bb_robot/description"),
            ("publication", "bb_robot/description"),
            ("encode", "bb_robot/description/tf_wire"),
        )
    ]
    callbacks = _total(stats, _find(stats, "_on_joint_states", "bb_robot/nodes/description"), 3)
    node_rest = callbacks - sum(t for _, t in ours) - publish - take_in_node
    executor_rest = busy - callbacks - (take - take_in_node)
    rows = [
        ("rclpy: take + deserialise (`take_message`)", take),
        ("rclpy: publish the /tf bytes (`Publisher.publish`)", publish),
        *ours,
        ("node layer, rest (`bb_robot/nodes/description.py`)", max(0.0, node_rest)),
        ("rclpy: executor, rest", max(0.0, executor_rest)),
        ("total per message, idle wait excluded", busy),
    ]
    return [(label, seconds / max(messages, 1)) for label, seconds in rows], messages
