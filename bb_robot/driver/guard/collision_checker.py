"""The collision guard's measurements, and the process of its own that makes them for a running loop.

:class:`Measurer` answers the guard's one question: how near is the nearest checked pair where
the arm is, how near where its commands lead, and so how fast may streamed motion go
(:func:`speed_scale`).

:class:`CheckerProcess` runs a :class:`Measurer` in a separate Python process.  A coal query
keeps the interpreter lock for its whole length, and a checker thread's Python code takes it
back at every switch interval, so a checker in the driver's own process delays the 500 Hz loop
each time the loop thread wakes.  In a process of its own it takes none of the loop's time:
the loop writes the pose it is at and the pose it heads to (a *heading*) to the process's
standard input, and reads the verdicts from its standard output, never waiting for either.

The wire: fixed-size records, each written by one ``write`` of at most ``PIPE_BUF`` bytes, so
a pipe passes each whole or not at all (POSIX); the reader keeps the newest complete one.

- heading: ``stamp_ns`` (int64), then the driver joints' positions and targets (float64 each);
- verdict: the heading's ``stamp_ns``, the nearest pair's index in the collision model (-1:
  nothing within reach, -2: the measurement failed), the distances where the arm is and where
  it heads, the speed scale, and a failure's text.

The process learns its :class:`Measurer` as one pickle on its standard input, answers it with a
first verdict (``stamp_ns`` -1) when it is ready, and ends when its standard input closes: when
the driver stops it, or dies.

When the scene changes (objects added at run time), the driver hands the process a new measurer
between two headings: a heading record stamped :data:`UPDATE`, the pickle's length (uint64) and
the pickle, written by the loop thread alone as the pipe takes it (no heading until it is whole).
Every measurement carries its measurer's ``generation``, so the guard knows which scene a verdict
measured (and which model names its pair).

A process that dies is started again by the guard, as :class:`RestartBudget` allows: at most
once per :data:`RESTART_SPACING` and :data:`RESTARTS_PER_MINUTE` times a minute.

Starting takes a second of CPU here (numba, its first compilation context, the placement kernel
from numba's cache), several on a slow host.  The process loads all that before it reads its
measurer, so the driver starts it at configure (:func:`spawn`) and hands it the measurer at
activation (:meth:`CheckerProcess.start`), by when it is ready or nearly: the two processes load
their kernels at the same time.  It runs in a process group of its own and ignores SIGINT: a
terminal's Ctrl-C is the driver's to handle, which closes the process's input (it then exits 0,
without a word, also while it is still loading).
"""

from __future__ import annotations

import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bb_robot.collision.model import CollisionModel

FloatArray = npt.NDArray[np.float64]

#: How long the process may take to import coal and build its model before ``start`` gives up (s).
START_TIMEOUT = 60.0
#: The verdict record: stamp, pair, distance, ahead, scale, the measurer's generation, then the
#: failure's text (UTF-8, cut).
_VERDICT = struct.Struct("<qqdddq208s")
#: One ``write`` of up to this many bytes reaches a pipe's reader whole (POSIX guarantees 512; Linux 4096).
_ATOMIC = getattr(select, "PIPE_BUF", 512)
NO_PAIR = -1
FAILED = -2
READY = -1
#: The stamp of a heading record that announces a new measurer (its length and pickle follow).
UPDATE = -3
#: The length of that pickle.
_LENGTH = struct.Struct("<Q")
#: A dead checker is restarted at most once per this many seconds ...
RESTART_SPACING = 1.0
#: ... and at most this many times a minute; the next death leaves the guard down.
RESTARTS_PER_MINUTE = 5


class CheckerError(RuntimeError):
    """The checker process could not be started, or a record was not what the other side sent."""


@dataclass(frozen=True)
class GuardSettings:
    """The ``collision.*`` parameters the guard uses (metres, Hz).

    Attributes:
        clearance: a trajectory coming nearer than this is refused.
        slowdown_distance: streamed motion slows below this distance.
        stop_distance: streamed motion stops at this distance.
        check_rate: how often the checker measures while nothing is near.
    """

    clearance: float = 0.002
    slowdown_distance: float = 0.02
    stop_distance: float = 0.005
    check_rate: float = 100.0


def speed_scale(distance: float, ahead: float, settings: GuardSettings) -> float:
    """The scale of streamed speed: 1 beyond ``slowdown_distance``, 0 at ``stop_distance``, smooth between.

    Between the two, ``(d - stop) / (slow - stop)``: the speed is proportional to what is left of
    the gap, so the gap closes towards the stop distance ever more slowly; MoveIt's exponential
    never reaches 0, this does, at the stop distance.  Motion whose target pose
    (``ahead``) is no nearer than the current one (``distance``) is not slowed: moving away continues.

    Args:
        distance: the nearest distance where the arm is.
        ahead: the nearest distance where the commands lead.
        settings: the distances.

    Returns:
        The scale.
    """
    if ahead >= distance or distance >= settings.slowdown_distance:
        return 1.0
    span = settings.slowdown_distance - settings.stop_distance
    if distance <= settings.stop_distance or span <= 0:
        return 0.0
    return (distance - settings.stop_distance) / span


@dataclass(frozen=True)
class Measurement:
    """One measurement of a heading.

    Attributes:
        pair: the nearest pair's index in the collision model (:data:`NO_PAIR`: none within reach).
        distance: its distance where the arm is (``inf`` with no pair).
        ahead: the nearest distance where the commands lead (``inf``: nothing near).
        scale: the speed scale for streamed motion, 0 to 1.
        generation: the measurer's generation (which scene was measured).
    """

    pair: int
    distance: float
    ahead: float
    scale: float
    generation: int = 0


class Measurer:
    """Measures headings with one collision model (one thread or process at a time: coal's transforms are its own).

    Args:
        model: the collision model.
        joints: the driver's joints, in order; every other coordinate of the model is held at 0.
        settings: the distances.
        generation: which scene ``model`` is (0: the configured one; each run-time change counts one up).
    """

    def __init__(
        self, model: CollisionModel, joints: Sequence[str], settings: GuardSettings, generation: int = 0
    ) -> None:
        self.model = model
        self.joints = tuple(joints)
        self.settings = settings
        self.generation = generation
        coordinates = {name: i for i, name in enumerate(model.fk.joint_names)}
        self._columns = np.array([coordinates.get(name, -1) for name in self.joints], dtype=np.intp)
        self._driven = self._columns >= 0

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Measurer, (self.model, self.joints, self.settings, self.generation))

    def configuration(self, positions: FloatArray) -> FloatArray:
        """The model's coordinates for driver joint positions (others at 0; NaN as 0)."""
        q = np.zeros(len(self.model.fk.joint_names))
        q[self._columns[self._driven]] = np.nan_to_num(np.asarray(positions, dtype=float)[self._driven])
        return q

    def path(self, rows: FloatArray) -> FloatArray:
        """The model's coordinates for rows of driver joint positions (others at 0)."""
        path = np.zeros((len(rows), len(self.model.fk.joint_names)))
        path[:, self._columns[self._driven]] = rows[:, self._driven]
        return path

    def measure(self, position: FloatArray, target: FloatArray) -> Measurement:
        """Measure where the arm is and where it is heading, and decide the scale.

        Args:
            position: the driver joints' positions now.
            target: where the commands lead them in the coming cycles.

        Returns:
            The measurement; distances beyond twice ``slowdown_distance`` are not computed (``inf``).
        """
        limit = 2 * self.settings.slowdown_distance
        here, there = self.configuration(position), self.configuration(target)
        pair, distance = self.model.nearest_pair(here, limit)
        ahead_pair, ahead = self.model.nearest_pair(there, limit)
        distance = math.inf if pair < 0 else distance
        ahead = math.inf if ahead_pair < 0 else ahead
        if 0 <= pair == ahead_pair and ahead < distance and not self.model.pair_moves(pair, here, there):
            # A motion that leaves the nearest pair as it stands (the SO-101's jaw and wrist while the shoulder
            # pans) comes no nearer: its two distances differ by coal's tolerance only, either way, and half
            # the cycles of such a motion were slowed, and stopped whenever a verdict came late.
            ahead = distance
        return Measurement(pair, distance, ahead, speed_scale(distance, ahead, self.settings), self.generation)


class RestartBudget:
    """When a dead checker may be started again: at most once per ``spacing``, ``per_minute`` times a minute.

    Args:
        clock: monotonic nanoseconds (tests pass their own).
        spacing: the least time between two restarts (s).
        per_minute: the most restarts within any 60 s.
    """

    def __init__(
        self,
        clock: Callable[[], int] = time.monotonic_ns,
        spacing: float = RESTART_SPACING,
        per_minute: int = RESTARTS_PER_MINUTE,
    ) -> None:
        self.clock = clock
        self.spacing_ns = int(spacing * 1e9)
        self.per_minute = per_minute
        self._times: deque[int] = deque()

    def decide(self) -> str:
        """``"now"``, ``"later"`` (the last restart was under ``spacing`` ago) or ``"never"`` (the
        minute's restarts are spent)."""
        now = self.clock()
        while self._times and now - self._times[0] >= 60_000_000_000:
            self._times.popleft()
        if len(self._times) >= self.per_minute:
            return "never"
        if self._times and now - self._times[-1] < self.spacing_ns:
            return "later"
        return "now"

    def spend(self) -> int:
        """Count a restart now; returns how many the last minute has had, this one included."""
        self._times.append(self.clock())
        return len(self._times)

    def reset(self) -> None:
        """Forget the restarts (at activation)."""
        self._times.clear()


# ---------------------------------------------------------------------- the wire
def heading_format(joints: int) -> struct.Struct:
    """The heading record of ``joints`` driver joints.

    Raises:
        CheckerError: the record would not pass a pipe whole (over ``PIPE_BUF`` bytes: about 250 joints).
    """
    record = struct.Struct(f"<q{2 * joints}d")
    if record.size > _ATOMIC:
        raise CheckerError(
            f"the collision checker process takes up to {(_ATOMIC - 8) // 16} driver joints, not {joints}: "
            "a heading must fit one pipe write"
        )
    return record


def pack_verdict(stamp_ns: int, measurement: Measurement | None, failure: str = "") -> bytes:
    """A verdict record: a measurement of the heading stamped ``stamp_ns``, or a failure (``measurement`` None)."""
    if measurement is None:
        return _VERDICT.pack(stamp_ns, FAILED, math.nan, math.nan, 0.0, -1, failure.encode("utf-8", "replace")[:208])
    m = measurement
    return _VERDICT.pack(stamp_ns, m.pair, m.distance, m.ahead, m.scale, m.generation, b"")


def unpack_verdict(record: bytes) -> tuple[int, Measurement | None, str]:
    """``(stamp_ns, measurement, failure)`` of a verdict record (``measurement`` None for a failure)."""
    stamp, pair, distance, ahead, scale, generation, text = _VERDICT.unpack(record)
    if pair == FAILED:
        return stamp, None, text.rstrip(b"\0").decode("utf-8", "replace")
    return stamp, Measurement(pair, distance, ahead, scale, generation), ""


def update_record(joints: int, measurer: Measurer) -> bytes:
    """What announces and carries a new measurer on the process's input (module docstring).

    Args:
        joints: the driver joints (the heading record's size).
        measurer: the new measurer (pickled here: call it off the loop's thread).

    Returns:
        The bytes to write, in order, between two headings.
    """
    payload = pickle.dumps(measurer, protocol=pickle.HIGHEST_PROTOCOL)
    return heading_format(joints).pack(UPDATE, *([0.0] * 2 * joints)) + _LENGTH.pack(len(payload)) + payload


def spawn() -> subprocess.Popen[bytes]:
    """Start a checker process, which loads its kernels and then waits for its measurer (never waits).

    Hand it to :class:`CheckerProcess`; closing its standard input ends it.
    """
    # This very bb_robot first on the path (not one the working directory may hold): the two sides
    # must agree on the pickle and the record layout.  SIGINT ignored before anything else runs.
    package_parent = str(Path(__file__).resolve().parents[2])
    bootstrap = (
        "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        f"import sys; sys.path.insert(0, {package_parent!r}); "
        "from bb_robot.driver.guard.collision_checker import main; sys.exit(main())"
    )
    return subprocess.Popen(  # noqa: S603 - this interpreter, this module
        [sys.executable, "-c", bootstrap],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        process_group=0,  # a terminal's Ctrl-C reaches the driver only
    )


def _newest(buffer: bytearray, size: int) -> bytes | None:
    """Take the complete records out of ``buffer`` and return the newest (``None``: none complete)."""
    whole = len(buffer) // size * size
    if whole == 0:
        return None
    newest = bytes(buffer[whole - size : whole])
    del buffer[:whole]
    return newest


# ---------------------------------------------------------------------- the driver's side
class CheckerProcess:
    """A :class:`Measurer` in a process of its own (see the module docstring); its methods never wait,
    but :meth:`start`.

    Args:
        measurer: what the process measures with (pickled to it).
        process: a process :func:`spawn` started earlier, to take over (``None``: :meth:`start` spawns one).
    """

    def __init__(self, measurer: Measurer, process: subprocess.Popen[bytes] | None = None) -> None:
        self._measurer = measurer
        self._heading = heading_format(len(measurer.joints))
        self._spawned = process
        self._process: subprocess.Popen[bytes] | None = None
        self._inbox = bytearray()
        #: Why the process stopped answering ("" while it answers).
        self.failure = ""
        #: Headings the pipe could not take (the process was behind): the newest one next time counts.
        self.dropped = 0
        #: The generation of the newest measurer handed to the process (whole or still being written).
        self.generation = measurer.generation
        #: What is left to write of a new measurer's record (:meth:`update`): headings wait for it.
        self._outgoing = bytearray()
        self._outgoing_whole = True  # nothing of it written yet

    @property
    def pid(self) -> int | None:
        process = self._process or self._spawned
        return None if process is None else process.pid

    def start(self, timeout: float = START_TIMEOUT, cancel: threading.Event | None = None) -> None:
        """Start the process and wait until it has built its model (idempotent).

        Args:
            timeout: how long to wait for it (s).
            cancel: stops the wait when set (within half a second): a restart the driver no longer wants.

        Raises:
            CheckerError: it exited, was not ready within ``timeout`` (its own error is on stderr), or
                ``cancel`` was set.
            KeyboardInterrupt: SIGINT while waiting (the process is ended first).
        """
        if self._process is not None:
            return
        process, self._spawned = self._spawned or spawn(), None
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        try:
            payload = pickle.dumps(self._measurer, protocol=pickle.HIGHEST_PROTOCOL)
            process.stdin.write(struct.pack("<Q", len(payload)) + payload)
            ready = self._await_ready(timeout, cancel)
        except (OSError, CheckerError) as error:
            self.close()
            raise CheckerError(f"the collision checker process did not start: {error}") from None
        except BaseException:  # KeyboardInterrupt: no process left behind
            self.close()
            raise
        if not ready:
            code = process.poll()
            self.close()
            raise CheckerError(
                f"the collision checker process did not start within {timeout:g} s"
                if code is None
                else f"the collision checker process exited with code {code} before it was ready (its error is above)"
            )
        os.set_blocking(process.stdin.fileno(), False)
        os.set_blocking(process.stdout.fileno(), False)

    def _await_ready(self, timeout: float, cancel: threading.Event | None) -> bool:
        process = self._process
        assert process is not None and process.stdout is not None
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if cancel is not None and cancel.is_set():
                raise CheckerError("cancelled")
            readable, _, _ = select.select([process.stdout], [], [], min(left, 0.5))
            if readable:
                data = os.read(process.stdout.fileno(), _VERDICT.size - len(self._inbox))
                if not data:
                    return False
                self._inbox += data
                if len(self._inbox) == _VERDICT.size:
                    stamp, _, failure = unpack_verdict(bytes(self._inbox))
                    self._inbox.clear()
                    if stamp != READY:
                        raise CheckerError(f"its first record was not 'ready' (stamp {stamp})")
                    if failure:
                        raise CheckerError(failure)
                    return True
            elif process.poll() is not None:
                return False
        return False

    def update(self, generation: int, record: bytes) -> None:
        """Hand the process a new measurer (the loop's thread; never waits): written before the next headings.

        Args:
            generation: the new measurer's generation.
            record: its :func:`update_record`.  One not yet begun is replaced by a newer one; one begun
                is finished first.
        """
        if not self._outgoing or self._outgoing_whole:
            self._outgoing = bytearray(record)
        else:
            self._outgoing += record
        self._outgoing_whole = True
        self.generation = generation

    def _flush(self, fd: int) -> None:
        """Write a pending measurer's record (``BlockingIOError`` when the pipe is full: the rest next time)."""
        while self._outgoing:
            written = os.write(fd, self._outgoing[: 1 << 16])
            del self._outgoing[:written]
            self._outgoing_whole = False
        self._outgoing_whole = True

    def send(self, stamp_ns: int, position: FloatArray, target: FloatArray) -> bool:
        """Hand the process a heading (never waits), after what is pending of a new measurer.

        Returns:
            Whether the pipe took it (a process behind loses the heading; a dead one sets :attr:`failure`).
        """
        process = self._process
        if process is None or process.stdin is None or self.failure:
            return False
        try:
            self._flush(process.stdin.fileno())
            os.write(process.stdin.fileno(), self._heading.pack(stamp_ns, *position, *target))
        except BlockingIOError:
            self.dropped += 1
            return False
        except OSError as error:  # BrokenPipeError: it is gone
            self._gone(error)
            return False
        return True

    def receive(self) -> tuple[int, Measurement | None, str] | None:
        """The newest verdict since the last call, ``(stamp_ns, measurement, failure)``, or ``None`` (never waits).

        It reads until the pipe is empty: a process that has ended is found so in the first call after
        it ended, even with verdicts still in the pipe (they are dropped: it is gone).
        """
        process = self._process
        if process is None or process.stdout is None or self.failure:
            return None
        while True:
            try:
                data = os.read(process.stdout.fileno(), 64 * _VERDICT.size)
            except BlockingIOError:
                break
            except OSError as error:
                self._gone(error)
                return None
            if not data:
                self._gone(None)
                return None
            self._inbox += data
        newest = _newest(self._inbox, _VERDICT.size)
        return None if newest is None else unpack_verdict(newest)

    def _gone(self, error: OSError | None) -> None:
        process = self._process
        code = None if process is None else process.poll()
        reason = f"exited with code {code}" if code is not None else f"stopped answering ({error or 'end of output'})"
        self.failure = f"the collision checker process (pid {self.pid}) {reason}"

    def close(self) -> None:
        """End the process: close its input (it exits), then kill it if it has not within a second."""
        process, self._process = self._process or self._spawned, None
        self._spawned = None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---------------------------------------------------------------------- the process
def _read_exactly(fd: int, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        data = os.read(fd, size - len(chunks))
        if not data:
            raise EOFError(f"standard input closed after {len(chunks)} of {size} bytes")
        chunks += data
    return bytes(chunks)


def serve(source: int = 0, sink: int = 1) -> int:
    """The checker process: read the measurer, say ready, then answer each newest heading until ``source`` closes.

    Args:
        source: where the measurer and the headings come from (a file descriptor).
        sink: where the verdicts go.

    Returns:
        The exit code: 0 when the input or the output closed (the driver stopped or is gone, also
        before it sent the measurer), 1 when the measurer could not be read.
    """
    try:
        header = _read_exactly(source, 8)
    except EOFError:
        return 0  # the driver stopped (or died) before it sent the measurer
    try:
        (length,) = struct.unpack("<Q", header)
        measurer: Measurer = pickle.loads(_read_exactly(source, length))  # noqa: S301 - the driver's own pickle
        heading = heading_format(len(measurer.joints))
        joints = len(measurer.joints)
        rest = np.zeros(joints)
        measurer.measure(rest, rest)  # the kernels loaded before the first heading, not in it
    except Exception as error:  # noqa: BLE001 - said to the driver, which fails its activation
        _say(sink, pack_verdict(READY, None, f"could not build the collision model: {error!r}"))
        return 1
    if not _say(sink, pack_verdict(READY, Measurement(NO_PAIR, math.inf, math.inf, 1.0))):
        return 0
    os.set_blocking(source, False)
    inbox = bytearray()
    while True:
        select.select([source], [], [])
        try:
            while data := os.read(source, 1 << 16):
                inbox += data
            return 0  # end of input: the driver closed it, or is gone
        except BlockingIOError:
            pass
        newest, measurer = _take(inbox, heading, measurer)
        if newest is None:
            continue
        values = heading.unpack(newest)
        stamp, position, target = values[0], np.array(values[1 : 1 + joints]), np.array(values[1 + joints :])
        try:
            record = pack_verdict(stamp, measurer.measure(position, target))
        except Exception as error:  # noqa: BLE001 - reported; the driver stops streamed motion
            record = pack_verdict(stamp, None, repr(error))
        if not _say(sink, record):
            return 0


def _take(inbox: bytearray, heading: struct.Struct, measurer: Measurer) -> tuple[bytes | None, Measurer]:
    """Take the complete records out of ``inbox`` in order: the newest heading, and the measurer after
    the last whole update (an update still arriving stays in ``inbox``, with what follows it)."""
    newest: bytes | None = None
    offset = 0
    while len(inbox) - offset >= heading.size:
        (stamp,) = struct.unpack_from("<q", inbox, offset)
        if stamp != UPDATE:
            newest = bytes(inbox[offset : offset + heading.size])
            offset += heading.size
            continue
        start = offset + heading.size + _LENGTH.size
        if len(inbox) < start:
            break
        (length,) = _LENGTH.unpack_from(inbox, offset + heading.size)
        if len(inbox) < start + length:
            break
        measurer = pickle.loads(bytes(inbox[start : start + length]))  # noqa: S301 - the driver's own pickle
        offset = start + length
    del inbox[:offset]
    return newest, measurer


def _say(sink: int, record: bytes) -> bool:
    """Write one record to the driver; False when it closed its end (it stops, or is gone)."""
    try:
        os.write(sink, record)
    except BrokenPipeError:
        return False
    return True


def main() -> int:
    """The checker process's entry point (:func:`spawn` starts it): load the kernels, then :func:`serve`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the driver's to handle; it closes our input
    sink = os.dup(1)
    os.dup2(2, 1)  # anything printed by accident goes to stderr, never into the verdicts
    # numba imports SciPy when it first compiles (or loads a cached kernel), only to learn whether
    # np.dot and np.linalg have a BLAS; the placement kernel uses neither, and nothing else here uses
    # SciPy: a third of this process's start (0.35 s of 1.05 s here) saved.
    sys.modules.setdefault("scipy", None)  # type: ignore[arg-type]
    from bb_robot.collision.model import placement_kernel

    placement_kernel()  # before the measurer arrives: the driver goes on configuring meanwhile
    return serve(0, sink)


if __name__ == "__main__":
    sys.exit(main())
