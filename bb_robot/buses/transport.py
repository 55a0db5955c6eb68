"""Transactions on a servo bus: ping, read, write, and one sync read and one sync write per cycle.

:class:`Bus` speaks one protocol (a :class:`~bb_robot.buses.packets.Codec`) over a serial port:
a pyserial ``Serial`` (:meth:`Bus.open`) or anything with ``fileno``, ``write`` and ``close``
(a pseudo-terminal's file, for instance). Each reply is waited for until a deadline computed
from the bytes on the wire at the baud rate (10 bits a byte), the servos' return delay and a
per-transaction latency allowance (USB adapters add about 1 ms with their latency timer at 1,
16 ms at the common default of 16). A reply that does not come, fails its checksum or stops
short is retried a bounded number of times, counted in :class:`BusStats` and, when the retries
are spent, raised as :class:`BusError`; it is never taken as a value. Bytes that arrive outside
a transaction (a late reply) are dropped and counted before the next request is sent, and an
adapter's echo of the request is skipped.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bb_robot.buses.packets import Codec, Frame, Instruction, Scan
from bb_robot.buses.tables import Block, Register
from bb_robot.errors import BbRobotError

#: Bits on the wire per byte: start, eight data bits, stop (8N1).
BITS_PER_BYTE = 10


class BusError(BbRobotError):
    """A transaction that failed for good, or a port that cannot be used.

    Attributes:
        port: the port's path.
        kind: ``timeout`` (no reply), ``corrupt`` (failed checksum), ``partial`` (a reply cut
            short), ``refused`` (the servo answered with an error), ``port`` (the port failed or
            closed), ``usage`` (a request that cannot be sent).
        servo_ids: the servos concerned.
        register: the register or block's name, when there is one.
    """

    def __init__(
        self, message: str, *, port: str, kind: str, servo_ids: Sequence[int] = (), register: str | None = None
    ) -> None:
        super().__init__(message)
        self.port = port
        self.kind = kind
        self.servo_ids = tuple(servo_ids)
        self.register = register


class Port(Protocol):
    """What :class:`Bus` needs of a port (pyserial's ``Serial`` has it)."""

    def fileno(self) -> int: ...

    def write(self, data: bytes, /) -> int | None: ...

    def close(self) -> None: ...


@dataclass
class BusStats:
    """Counters of a :class:`Bus` since it was opened (or :meth:`Bus.reset_stats`).

    Attributes:
        transactions: requests sent (retries included).
        retries: requests sent again after a failed reply.
        timeouts: replies that never started within their deadline.
        corrupt: frames that failed their checksum (or had an impossible length).
        partial: replies that started but were cut short at the deadline.
        unexpected: valid frames nobody asked for (another ID, another length).
        stray_bytes: bytes found waiting before a request (late replies), dropped.
        refused: status packets saying the servo refused the instruction.
        failures: transactions given up after their retries.
    """

    transactions: int = 0
    retries: int = 0
    timeouts: int = 0
    corrupt: int = 0
    partial: int = 0
    unexpected: int = 0
    stray_bytes: int = 0
    refused: int = 0
    failures: int = 0
    last_error: str = ""


@dataclass(frozen=True)
class PingReply:
    """A servo's answer to PING.

    Attributes:
        servo_id: its ID.
        error: the status packet's error byte.
        model_number: Dynamixel's ping reply carries it; ``None`` for Feetech (read ``model_number``).
        firmware: Dynamixel's firmware version; ``None`` for Feetech.
    """

    servo_id: int
    error: int
    model_number: int | None = None
    firmware: int | None = None


@dataclass(frozen=True)
class SyncRead:
    """The values of one sync read.

    Attributes:
        values: by servo ID, the block's registers by name.
        status: by servo ID, the error byte of its status packet (status bits, alerts).
        missing: servos that did not answer validly after the retries (only with ``allow_missing``).
    """

    values: dict[int, dict[str, int]]
    status: dict[int, int]
    missing: tuple[int, ...] = ()


@dataclass
class _Outcome:
    frames: dict[int, Frame] = field(default_factory=dict)
    corrupt: int = 0
    partial: bool = False


class Bus:
    """One serial bus of one protocol.

    Args:
        port: the open port (see :class:`Port`).
        codec: the protocol (:data:`bb_robot.buses.feetech.FEETECH`, :data:`bb_robot.buses.dynamixel.DYNAMIXEL`).
        baud: the port's baud rate, for the wire time of each transaction.
        name: the port's path, for messages.
        latency: seconds allowed per transaction on top of the wire time (the adapter's latency).
        return_delay: seconds each servo waits before replying (its return delay setting).
        retries: how many times a failed transaction is sent again before :class:`BusError`.
    """

    def __init__(
        self,
        port: Port,
        codec: Codec,
        *,
        baud: int,
        name: str = "",
        latency: float = 0.010,
        return_delay: float = 0.0,
        retries: int = 2,
    ) -> None:
        self.port = port
        self.codec = codec
        self.baud = baud
        self.name = name or str(getattr(port, "port", "") or getattr(port, "name", "") or "the port")
        self.latency = latency
        self.return_delay = return_delay
        self.retries = retries
        self.stats = BusStats()
        self._fd = port.fileno()
        self._closed = False

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str, codec: Codec, *, baud: int, **options: float) -> Bus:
        """Open ``path`` with pyserial (8N1, exclusive) and return its :class:`Bus`.

        Args:
            path: the device (``/dev/ttyACM0``) or the emulator's pseudo-terminal.
            codec: the protocol.
            baud: bits per second.
            options: ``latency``, ``return_delay``, ``retries`` (see :class:`Bus`).

        Raises:
            BusError: the port does not exist, is busy or cannot be configured (the message says
                what to check).
        """
        import serial  # pyserial; imported here so that the codecs need nothing beyond the standard library

        try:
            port = serial.Serial(path, baudrate=baud, timeout=0, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as error:
            raise BusError(
                f"{path}: cannot open the serial port at {baud} baud ({error}); check the path, that no other "
                "program holds it, and that you may use it (the dialout group on Linux)",
                port=path,
                kind="port",
            ) from None
        retries = int(options.pop("retries", 2))
        return cls(port, codec, baud=baud, name=path, retries=retries, **options)

    def close(self) -> None:
        """Close the port (idempotent)."""
        if not self._closed:
            self._closed = True
            self.port.close()

    def reset_stats(self) -> None:
        """Zero the counters."""
        self.stats = BusStats()

    # ------------------------------------------------------------------ timing
    def wire_time(self, n_bytes: int) -> float:
        """Seconds ``n_bytes`` take on the wire at the bus's baud."""
        return n_bytes * BITS_PER_BYTE / self.baud

    def reply_timeout(self, request_bytes: int, reply_bytes: int, replies: int) -> float:
        """Seconds to wait for ``replies`` status packets totalling ``reply_bytes`` after a request."""
        return self.wire_time(request_bytes + reply_bytes) + replies * self.return_delay + self.latency

    # ------------------------------------------------------------------ transactions
    def ping(self, servo_id: int) -> PingReply | None:
        """Ping one servo; ``None`` when it does not answer (after the retries).

        Raises:
            BusError: the port failed, or the ID cannot be sent.
        """
        n_params = 3 if self.codec.name == "dynamixel" else 0
        for attempt in range(self.retries + 1):
            frames, kind = self._once(servo_id, Instruction.PING, b"", {servo_id: n_params}, "ping", attempt)
            if kind is None:
                return self._ping_reply(frames[servo_id])
        return None

    def broadcast_ping(self, max_replies: int = 253) -> list[PingReply]:
        """Ping the broadcast ID and return every servo that answers, by ID.

        Waits as long as ``max_replies`` replies take; no retries (there is nothing to compare with).

        Raises:
            BusError: the port failed.
        """
        n_params = 3 if self.codec.name == "dynamixel" else 0
        request = self.codec.instruction(self.codec.broadcast_id, Instruction.PING)
        size = self.codec.status_size(n_params)
        deadline_in = self.reply_timeout(len(request), size * max_replies, max_replies)
        self._drain()
        self._send(request, (), "broadcast ping")
        frames = self._collect(request, None, n_params, time.monotonic() + deadline_in, stop_after=max_replies)
        return [self._ping_reply(frames.frames[i]) for i in sorted(frames.frames)]

    def read_raw(self, servo_id: int, address: int, length: int, *, what: str = "") -> tuple[int, bytes]:
        """Read ``length`` bytes at ``address`` of one servo; returns ``(status byte, data)``.

        Raises:
            BusError: no valid reply after the retries, a refusal, or a port failure.
        """
        params = self.codec.read_params(address, length)
        frames = self._transact(
            servo_id, Instruction.READ, params, {servo_id: length}, what=what or f"address {address}"
        )
        error, data = self._status(frames[servo_id])
        return error, data

    def read(self, servo_id: int, register: Register) -> int:
        """Read one register of one servo.

        Raises:
            BusError: as :meth:`read_raw`.
        """
        _, data = self.read_raw(servo_id, register.address, register.size, what=register.name)
        return register.decode(data)

    def read_block(self, servo_id: int, block: Block) -> dict[str, int]:
        """Read a block of registers of one servo in one READ.

        Raises:
            BusError: as :meth:`read_raw`.
        """
        _, data = self.read_raw(servo_id, block.address, block.length, what="+".join(block.names))
        return block.decode(data)

    def write_raw(self, servo_id: int, address: int, data: bytes, *, what: str = "") -> int:
        """Write bytes at ``address`` of one servo and wait for its status; returns the status byte.

        Raises:
            BusError: no valid status after the retries, a refusal (Dynamixel's error numbers:
                an EEPROM register while torque is on, a value over a limit), or a port failure.
        """
        params = self.codec.write_params(address, data)
        frames = self._transact(servo_id, Instruction.WRITE, params, {servo_id: 0}, what=what or f"address {address}")
        error, _ = self._status(frames[servo_id])
        return error

    def write(self, servo_id: int, register: Register, value: int) -> int:
        """Write one register of one servo; returns the status byte.

        Raises:
            BusError: as :meth:`write_raw`; a value the register cannot hold (kind ``usage``).
        """
        data = self._encode(register, value, servo_id)
        return self.write_raw(servo_id, register.address, data, what=f"{register.name} = {value}")

    def sync_read(self, ids: Sequence[int], block: Block, *, allow_missing: bool = False) -> SyncRead:
        """Read ``block`` of every servo in ``ids`` with one SYNC_READ (servos that fail are asked again).

        Args:
            ids: the servos, each answering with its own status packet.
            block: the registers (one address range).
            allow_missing: return the servos that failed after the retries in ``missing`` rather
                than raise.

        Raises:
            BusError: a servo without a valid reply after the retries (unless ``allow_missing``),
                or a port failure.
        """
        expected = {i: block.length for i in ids}
        what = "+".join(block.names)
        frames: dict[int, Frame] = {}
        pending = dict(expected)
        kind: str | None = None
        for attempt in range(self.retries + 1):
            params = self.codec.sync_read_params(block.address, block.length, list(pending))
            got, kind = self._once(self.codec.broadcast_id, Instruction.SYNC_READ, params, pending, what, attempt)
            frames.update(got)
            pending = {i: n for i, n in pending.items() if i not in frames}
            if not pending:
                break
        values: dict[int, dict[str, int]] = {}
        status: dict[int, int] = {}
        for servo_id, frame in frames.items():
            status[servo_id], data = self._status(frame)
            values[servo_id] = block.decode(data)
        if pending:
            self.stats.failures += 1
            message = self._failure_message(list(pending), what, kind)
            self.stats.last_error = message
            if not allow_missing:
                raise BusError(message, port=self.name, kind=kind or "timeout", servo_ids=list(pending), register=what)
        return SyncRead(values, status, tuple(pending))

    def sync_write(self, block: Block, values: Mapping[int, Mapping[str, int]]) -> None:
        """Write ``block`` of every servo in ``values`` with one SYNC_WRITE (no reply comes).

        Raises:
            BusError: a value a register cannot hold (kind ``usage``), a block with gaps, or a port failure.
        """
        data = {}
        for servo_id, named in values.items():
            for register in block.registers:
                if register.name not in named:
                    raise BusError(f"{self.name}: sync write of {'+'.join(block.names)} to servo {servo_id}: "
                                   f"no value for {register.name}", port=self.name, kind="usage",
                                   servo_ids=[servo_id], register=register.name)  # fmt: skip
            data[servo_id] = b"".join(self._encode(r, named[r.name], servo_id) for r in block.registers)
        if not block.contiguous:
            names = "+".join(block.names)
            raise BusError(f"{self.name}: block {names} has gaps; a sync write needs adjacent registers",
                           port=self.name, kind="usage", register=names)  # fmt: skip
        params = self.codec.sync_write_params(block.address, block.length, data)
        request = self.codec.instruction(self.codec.broadcast_id, Instruction.SYNC_WRITE, params)
        self._drain()
        self.stats.transactions += 1
        self._send(request, list(values), "+".join(block.names))

    # ------------------------------------------------------------------ machinery
    def _encode(self, register: Register, value: int, servo_id: int) -> bytes:
        lo, hi = register.limits
        if not lo <= value <= hi:
            raise BusError(f"{self.name}: servo {servo_id}: {register.name} (address {register.address}) holds "
                           f"{lo}..{hi}; {value} cannot be written", port=self.name, kind="usage",
                           servo_ids=[servo_id], register=register.name)  # fmt: skip
        return register.encode(value)

    def _ping_reply(self, frame: Frame) -> PingReply:
        error, params = self._status(frame)
        if len(params) >= 3:
            return PingReply(frame.servo_id, error, int.from_bytes(params[:2], "little"), params[2])
        return PingReply(frame.servo_id, error)

    def _status(self, frame: Frame) -> tuple[int, bytes]:
        decoded = self.codec.decode_status(frame)
        assert decoded is not None  # _collect keeps only status frames
        return decoded

    def _transact(
        self, servo_id: int, instruction: int, params: bytes, expected: dict[int, int], *, what: str
    ) -> dict[int, Frame]:
        kind: str | None = None
        for attempt in range(self.retries + 1):
            frames, kind = self._once(servo_id, instruction, params, expected, what, attempt)
            if kind is None:
                return frames
        self.stats.failures += 1
        message = self._failure_message(list(expected), what, kind)
        self.stats.last_error = message
        raise BusError(message, port=self.name, kind=kind or "timeout", servo_ids=list(expected), register=what)

    def _failure_message(self, ids: Sequence[int], what: str, kind: str | None) -> str:
        reason = {
            "timeout": "no reply",
            "corrupt": "only corrupt replies (failed checksum)",
            "partial": "only replies cut short",
        }.get(kind or "timeout", kind or "timeout")
        servos = ", ".join(str(i) for i in ids)
        return (
            f"{self.name}: servo {servos}: {what}: {reason} after {self.retries + 1} tries at {self.baud} baud "
            f"(each waited {self.latency * 1e3:.1f} ms beyond the wire time); check that the servo is powered and "
            "wired, that its ID and baud rate are these, and the adapter's latency timer"
        )

    def _once(
        self, servo_id: int, instruction: int, params: bytes, expected: dict[int, int], what: str, attempt: int
    ) -> tuple[dict[int, Frame], str | None]:
        """Send one request and collect its replies; returns the valid ones and what went wrong, if anything."""
        try:
            request = self.codec.instruction(servo_id, instruction, params)
        except BbRobotError as error:
            raise BusError(f"{self.name}: {what}: {error}", port=self.name, kind="usage",
                           servo_ids=list(expected), register=what) from None  # fmt: skip
        reply_bytes = sum(self.codec.status_size(n) for n in expected.values())
        timeout = self.reply_timeout(len(request), reply_bytes, len(expected))
        self._drain()
        if attempt:
            self.stats.retries += 1
        self.stats.transactions += 1
        self._send(request, list(expected), what)
        outcome = self._collect(request, expected, None, time.monotonic() + timeout)
        frames = outcome.frames
        for got_id, frame in frames.items():
            status, _ = self._status(frame)
            if not self.codec.data_is_valid(status):
                self.stats.refused += 1
                raise BusError(
                    f"{self.name}: servo {got_id}: {what}: refused ({', '.join(self.codec.describe_error(status))}); "
                    "EEPROM registers can be written only with torque off, and values only within the servo's limits",
                    port=self.name, kind="refused", servo_ids=[got_id], register=what,
                )  # fmt: skip
        if len(frames) == len(expected):
            return frames, None
        kind = "partial" if outcome.partial else "corrupt" if outcome.corrupt else "timeout"
        if kind == "timeout":
            self.stats.timeouts += 1
        elif kind == "partial":
            self.stats.partial += 1
        return frames, kind

    def _send(self, request: bytes, ids: Sequence[int], what: str) -> None:
        try:
            self.port.write(request)
        except Exception as error:  # pyserial raises SerialException, a pty OSError
            raise self._port_failure(ids, what, error) from None

    def _port_failure(self, ids: Iterable[int], what: str, error: object) -> BusError:
        message = (f"{self.name}: the port failed during {what} ({error}); the adapter was unplugged or the "
                   "emulator stopped: nothing can be sent to the servos until it is back")  # fmt: skip
        self.stats.last_error = message
        return BusError(message, port=self.name, kind="port", servo_ids=list(ids), register=what)

    def _drain(self) -> None:
        """Drop bytes waiting before a request (a late reply to an earlier one) and count them."""
        try:
            while select.select([self._fd], [], [], 0)[0]:
                data = os.read(self._fd, 4096)
                if not data:
                    raise OSError("end of file")
                self.stats.stray_bytes += len(data)
        except OSError as error:
            raise self._port_failure((), "a request", error) from None

    def _collect(
        self,
        request: bytes,
        expected: Mapping[int, int] | None,
        any_length: int | None,
        deadline: float,
        stop_after: int | None = None,
    ) -> _Outcome:
        """Read status frames until every expected one is in, or the deadline.

        ``expected`` maps IDs to their parameter count; with ``None`` any ID whose frame has
        ``any_length`` parameters counts (broadcast ping), until ``stop_after`` of them.
        """
        outcome = _Outcome()
        buffer = bytearray()
        echo_checked = False
        want = len(expected) if expected is not None else (stop_after or 0)
        while len(outcome.frames) < want:
            remaining = deadline - time.monotonic()
            try:
                ready = select.select([self._fd], [], [], max(0.0, remaining))[0]
                data = os.read(self._fd, 4096) if ready else b""
            except OSError as error:
                raise self._port_failure(expected or (), "a reply", error) from None
            if ready and not data:
                raise self._port_failure(expected or (), "a reply", "end of file")
            if not ready:
                outcome.partial = bool(buffer)
                break
            buffer += data
            if not echo_checked and len(buffer) >= len(request):
                echo_checked = True
                if buffer.startswith(request):  # a half-duplex adapter echoing what it sent
                    del buffer[: len(request)]
            while True:
                found = self.codec.scan(buffer)
                if found.kind is Scan.FRAME and found.frame is not None:
                    self._accept(found.frame, expected, any_length, outcome)
                elif found.kind is Scan.CORRUPT:
                    outcome.corrupt += 1
                    self.stats.corrupt += 1
                del buffer[: found.end]
                if found.kind in (Scan.INCOMPLETE, Scan.NOTHING):
                    break
        return outcome

    def _accept(
        self, frame: Frame, expected: Mapping[int, int] | None, any_length: int | None, outcome: _Outcome
    ) -> None:
        decoded = self.codec.decode_status(frame)
        if decoded is None:
            self.stats.unexpected += 1
            return
        n_params = expected.get(frame.servo_id) if expected is not None else any_length
        error, params = decoded
        valid = self.codec.data_is_valid(error)
        if n_params is None or frame.servo_id in outcome.frames or (valid and len(params) != n_params):
            self.stats.unexpected += 1
            return
        outcome.frames[frame.servo_id] = frame
