"""bb_robot.common.collector: collect, then freeze what lives."""

from __future__ import annotations

import gc
import weakref

from bb_robot.common.collector import settle_collector


def test_settle_collector_collects_garbage_then_freezes_what_lives() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    def cycle() -> Node:
        a, b = Node(), Node()
        a.other, b.other = b, a
        return a

    garbage, alive = weakref.ref(cycle()), cycle()
    later = weakref.ref(alive)
    try:
        assert garbage() is not None  # a cycle: only the collector frees it
        frozen = settle_collector()
        assert garbage() is None, "garbage was frozen with the living"
        assert frozen == gc.get_freeze_count() > 0
        # A collection leaves the frozen objects alone, even when they have died since.
        del alive
        gc.collect()
        assert later() is not None
        # Settling again (a restarted loop) returns them to the collector first.
        settle_collector()
        assert later() is None
    finally:
        gc.unfreeze()
