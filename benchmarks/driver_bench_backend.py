"""A backend for benchmarks/bench_driver.py: the embedded simulator, recording when things happen.

Selected with ``backend: driver_bench_backend:RecordingBackend`` (this directory on
``PYTHONPATH``).  It records, on the driver's monotonic clock (``time.monotonic_ns``, shared by
every process of the machine):

- the start of every control cycle (the ``now`` of each ``read``);
- for each benchmark command, the moment it first reached ``write``: the benchmark encodes a
  sequence number ``k`` in the first joint's position target as ``BASE + k * STEP``.

On disconnect (the driver's clean-up or shutdown) it saves both to the ``.npz`` file named by
the environment variable ``BB_ROBOT_BENCH_RECORD``.
"""

from __future__ import annotations

import os
import time

import numpy as np

from bb_robot.driver.backends.base import BackendCommand, BackendContext, JointSample
from bb_robot.driver.backends.sim import SimBackend

BASE = 0.5
STEP = 1e-7
CAPACITY = 400_000


class RecordingBackend(SimBackend):
    name = "recording"
    summary = "the embedded simulator, recording cycle starts and command arrivals (benchmarks)"

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.starts = np.zeros(CAPACITY, dtype=np.int64)
        self.count = 0
        self.writes = np.zeros(CAPACITY, dtype=np.int64)
        self.last = float("nan")

    def read(self, now_ns: int) -> JointSample:
        if self.count < CAPACITY:
            self.starts[self.count] = now_ns
            self.count += 1
        return super().read(now_ns)

    def write(self, command: BackendCommand, now_ns: int) -> None:
        target = float(command.position[0])
        if target != self.last:
            self.last = target
            sequence = int(round((target - BASE) / STEP))
            if 0 <= sequence < CAPACITY and not self.writes[sequence]:
                self.writes[sequence] = time.monotonic_ns()
        super().write(command, now_ns)

    def disconnect(self) -> None:
        path = os.environ.get("BB_ROBOT_BENCH_RECORD")
        if path:
            np.savez(path, starts=self.starts[: self.count], writes=self.writes)
        super().disconnect()


BACKEND = RecordingBackend
