"""The bus emulator: servos answering on a pseudo-terminal, as they would on a real bus.

:class:`BusEmulator` opens a pseudo-terminal (``os.openpty``) and serves every instruction
packet written to it (PING, broadcast PING, READ, WRITE, SYNC_READ, SYNC_WRITE) from its
:class:`~bb_robot.buses.emulator_servo.EmulatedServo` objects, in one thread. A client opens the
pty's path like a serial adapter (:meth:`bb_robot.buses.transport.Bus.open`, or a vendor SDK).

Timing model: a pty delivers bytes at once, so each reply is held back until the request's and
the replies' bytes would have crossed the wire at the configured baud (10 bits a byte), plus each
replying servo's return delay, plus a per-transaction latency (default 1 ms, what a USB adapter
with its latency timer at 1 adds). Only servos whose ``baud_rate`` register matches the
emulator's baud answer, like servos left at another baud on a real bus.

:meth:`BusEmulator.so101` builds the SO-101's six STS3215 servos from a LeRobot calibration
(``config/so101_calibration.json`` by default); :meth:`BusEmulator.dynamixel` builds X-series
servos with given IDs. Faults: :mod:`~bb_robot.buses.emulator_faults`; moving joints by hand:
:mod:`~bb_robot.buses.emulator_control`.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bb_robot.buses.calibration import MotorCalibration, load_calibration, shipped_calibration
from bb_robot.buses.dynamixel import DYNAMIXEL
from bb_robot.buses.emulator_faults import Fault, Faults, damage
from bb_robot.buses.emulator_servo import EmulatedServo
from bb_robot.buses.feetech import FEETECH
from bb_robot.buses.packets import Codec, Instruction, Scan
from bb_robot.buses.tables import model as servo_model
from bb_robot.buses.transport import BITS_PER_BYTE
from bb_robot.errors import BbRobotError

#: The SO-101's motors in LeRobot's names, by servo ID.
SO101_MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
#: The Koch v1.1 follower's Dynamixel servos by ID (``config/koch_follower.yaml``): XL430-W250 at the
#: shoulder, XL330-M288 elsewhere.
KOCH_FOLLOWER_MODELS = {1: "xl430-w250", 2: "xl430-w250", 3: "xl330-m288", 4: "xl330-m288", 5: "xl330-m288",
                        6: "xl330-m288"}  # fmt: skip


class EmulatorError(BbRobotError):
    """The emulator cannot start (a pty, a link path) or was asked about a joint it does not have."""


@dataclass
class EmulatorStats:
    """What the emulator has served.

    Attributes:
        requests: instruction packets served.
        replies: status packets sent whole and on time.
        garbage: bytes that were not part of a valid instruction packet.
    """

    requests: int = 0
    replies: int = 0
    garbage: int = 0


class BusEmulator:
    """Emulated servos on a pseudo-terminal.

    Args:
        servos: the servos, by ID.
        codec: the protocol they speak.
        baud: the bus's baud rate (for the timing model and which servos answer).
        latency: seconds added to every transaction that gets a reply.
        timing: ``False`` answers at once (no wire time, no latency).
        faults: fault settings (none by default).
        joints: joint name → servo ID, for moving joints by name.
        calibrations: joint name → calibration, for positions in radians.
        clock: the time source (seconds); ``time.monotonic`` by default.
    """

    def __init__(
        self,
        servos: Mapping[int, EmulatedServo],
        codec: Codec,
        *,
        baud: int = 1_000_000,
        latency: float = 0.001,
        timing: bool = True,
        faults: Faults | None = None,
        joints: Mapping[str, int] | None = None,
        calibrations: Mapping[str, MotorCalibration] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.servos = dict(servos)
        self.codec = codec
        self.baud = baud
        self.latency = latency
        self.timing = timing
        self.faults = faults or Faults()
        self.joints = dict(joints or {})
        self.calibrations = dict(calibrations or {})
        self.stats = EmulatorStats()
        self._clock = clock
        self._start = clock()
        self._master = -1
        self._slave = -1
        self._path = ""
        self._link: Path | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._closed = threading.Event()
        self._gone = threading.Event()
        self.lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.late_sent = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def so101(cls, calibration: str | Path | None = None, **options: object) -> BusEmulator:
        """The SO-101's six STS3215 servos at 1 Mbaud, their EEPROM from a LeRobot calibration.

        Each servo starts at the middle of its calibrated range (joint angle 0), torque off.

        Raises:
            CalibrationError: the calibration file cannot be used.
        """
        path = Path(calibration) if calibration else shipped_calibration("so101")
        calibrations = load_calibration(path, "feetech")
        sts = servo_model("sts3215")
        servos = {}
        for c in calibrations.values():
            eeprom = {"homing_offset": c.homing_offset, "min_position_limit": c.range_min,
                      "max_position_limit": c.range_max}  # fmt: skip
            servos[c.id] = EmulatedServo(sts, c.id, eeprom, present=round(c.mid))
        joints = {name: c.id for name, c in calibrations.items()}
        return cls(servos, FEETECH, joints=joints, calibrations=calibrations, **options)  # type: ignore[arg-type]

    @classmethod
    def dynamixel(cls, ids: Sequence[int], model: str | Sequence[str] = "xl430-w250", baud: int = 1_000_000,
                  **options: object) -> BusEmulator:  # fmt: skip
        """Dynamixel X servos with the given IDs, at ``baud``, return delay 0, torque off at present 2048.

        Args:
            ids: the servos' IDs.
            model: one model for every servo, or one per ID (in the order of ``ids``).
            baud: the bus's baud.
            **options: as the constructor's (timing, latency, faults, clock).

        Raises:
            TableError: an unknown model or a baud it does not offer.
            ValueError: a list of models that does not match ``ids`` one for one.
        """
        models = [model] * len(ids) if isinstance(model, str) else list(model)
        if len(models) != len(ids):
            raise ValueError(f"{len(models)} Dynamixel models for {len(ids)} IDs: give one, or one per ID")
        servos = {}
        for servo_id, name in zip(ids, models, strict=True):
            table = servo_model(name)
            eeprom = {"baud_rate": table.baud_code(baud), "return_delay": 0}
            servos[servo_id] = EmulatedServo(table, servo_id, eeprom, present=2048)
        return cls(servos, DYNAMIXEL, baud=baud, **options)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ life
    @property
    def path(self) -> str:
        """The pseudo-terminal's path (empty before :meth:`start`)."""
        return self._path

    def now(self) -> float:
        """Seconds since the emulator was made (the servos' and the faults' time)."""
        return self._clock() - self._start

    def start(self, link: str | Path | None = None) -> str:
        """Open the pty, start serving, and return its path.

        Args:
            link: a path to make a symbolic link to the pty at (an existing link is replaced).

        Raises:
            EmulatorError: no pty can be opened, or ``link`` exists and is not a symbolic link.
        """
        try:
            self._master, self._slave = os.openpty()
        except OSError as error:
            raise EmulatorError(f"cannot open a pseudo-terminal ({error})") from None
        tty.setraw(self._slave)  # no echo, no line discipline: a serial line
        self._path = os.ttyname(self._slave)
        if link is not None:
            link = Path(link)
            if link.exists() and not link.is_symlink():
                raise EmulatorError(f"{link}: exists and is not a symbolic link; choose another --link path")
            if link.is_symlink():
                link.unlink()
            link.symlink_to(self._path)
            self._link = link
        self._thread = threading.Thread(target=self._serve, name="bus-emulator", daemon=True)
        self._thread.start()
        return self._path

    def stop(self) -> None:
        """Stop serving, close the pty and remove the link."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close_port()
        if self._link is not None and self._link.is_symlink():
            self._link.unlink()

    @property
    def port_closed(self) -> bool:
        """Whether the port was closed by :meth:`close_port` or the ``close_at`` fault."""
        return self._closed.is_set()

    def close_port(self, wait: float = 5.0) -> None:
        """Close the pty now, as an adapter pulled out mid-run (clients see the port fail).

        Returns when the pty is closed (or after ``wait`` seconds).
        """
        self._closed.set()
        if self._thread is not None and self._thread.is_alive():
            self._gone.wait(wait)

    def __enter__(self) -> BusEmulator:
        if not self._path:
            self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _close_port(self) -> None:
        for fd in (self._master, self._slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = -1

    # ------------------------------------------------------------------ serving
    def _serve(self) -> None:
        buffer = bytearray()
        while not self._stop.is_set():
            if self._closed.is_set() or (self.faults.close_at is not None and self.now() >= self.faults.close_at):
                self._closed.set()
                with self._write_lock:
                    self._close_port()
                self._gone.set()
                return
            self._events()
            try:
                ready = select.select([self._master], [], [], 0.01)[0]
                data = os.read(self._master, 4096) if ready else b""
            except OSError:
                return
            if not data:
                continue
            arrived = self._clock()
            buffer += data
            while True:
                found = self.codec.scan(buffer)
                if found.kind is Scan.FRAME and found.frame is not None:
                    self.stats.garbage += found.start
                    decoded = self.codec.decode_instruction(found.frame)
                    request = bytes(buffer[found.start : found.end])
                    del buffer[: found.end]
                    if decoded is not None:
                        self._answer(found.frame.servo_id, decoded[0], decoded[1], len(request), arrived)
                    continue
                if found.kind is Scan.CORRUPT:
                    self.stats.garbage += found.end
                elif found.kind is Scan.NOTHING:
                    self.stats.garbage += found.end
                del buffer[: found.end]
                if found.kind in (Scan.INCOMPLETE, Scan.NOTHING):
                    break

    def _events(self) -> None:
        t = self.now()
        for servo_id, when in list(self.faults.overheat_at.items()):
            if t >= when and servo_id in self.servos:
                with self.lock:
                    self.servos[servo_id].overheat(t)
                del self.faults.overheat_at[servo_id]

    def _listening(self, servo_id: int) -> EmulatedServo | None:
        servo = self.servos.get(servo_id)
        if servo is None or servo.baud != self.baud or not self.faults.answers(servo_id):
            return None
        return servo

    def serve_request(self, servo_id: int, instruction: int, params: bytes) -> list[tuple[int, bytes]]:
        """The replies to one instruction (servo ID, status packet), in order; the servos' state changes.

        The emulator's thread calls it for every request; it is public so that its answers can be
        checked without a pty.
        """
        t = self.now()
        codec = self.codec
        replies: list[tuple[int, bytes]] = []
        with self.lock:
            self.stats.requests += 1
            if instruction == Instruction.PING:
                ids = sorted(self.servos) if servo_id == codec.broadcast_id else [servo_id]
                for i in ids:
                    servo = self._listening(i)
                    if servo is not None:
                        payload = b""
                        if codec.name == "dynamixel":
                            payload = servo.peek("model_number").to_bytes(2, "little") + bytes([servo.peek("firmware")])
                        replies.append((i, codec.status(i, servo.error_byte(), payload)))
            elif instruction == Instruction.READ and servo_id != codec.broadcast_id:
                servo = self._listening(servo_id)
                if servo is not None:
                    address, length = codec.split_address(params)
                    replies.append(
                        (servo_id, codec.status(servo_id, servo.error_byte(), servo.read(address, length, t)))
                    )
            elif instruction == Instruction.WRITE:
                size = codec.field_size
                address, data = int.from_bytes(params[:size], "little"), params[size:]
                targets = sorted(self.servos) if servo_id == codec.broadcast_id else [servo_id]
                for i in targets:
                    servo = self._listening(i)
                    if servo is not None:
                        error = servo.write(address, data, t)
                        level = servo.peek("status_return_level")
                        if servo_id != codec.broadcast_id and level >= (2 if codec.name == "dynamixel" else 1):
                            replies.append((i, codec.status(i, error | servo.error_byte(), b"")))
                self._rekey()
            elif instruction == Instruction.SYNC_READ:
                address, length = codec.split_address(params)
                for i in params[2 * codec.field_size :]:
                    servo = self._listening(i)
                    if servo is not None:
                        replies.append((i, codec.status(i, servo.error_byte(), servo.read(address, length, t))))
            elif instruction == Instruction.SYNC_WRITE:
                address, length = codec.split_address(params)
                body = params[2 * codec.field_size :]
                for at in range(0, len(body) - length, length + 1):
                    servo = self._listening(body[at])
                    if servo is not None:
                        servo.write(address, body[at + 1 : at + 1 + length], t)
                self._rekey()
        return replies

    def _rekey(self) -> None:
        """Servos whose ``id`` register was written answer to the new ID."""
        if any(i != s.servo_id for i, s in self.servos.items()):
            self.servos = {s.servo_id: s for s in self.servos.values()}

    def _answer(self, servo_id: int, instruction: int, params: bytes, request_size: int, arrived: float) -> None:
        try:
            replies = self.serve_request(servo_id, instruction, params)
        except BbRobotError:  # a malformed request: a real servo ignores it
            self.stats.garbage += request_size
            return
        if not replies:
            return
        delays = sum(self.servos[i].peek("return_delay") * 2e-6 for i, _ in replies if i in self.servos)
        total = request_size + sum(len(r) for _, r in replies)
        due = arrived + self.latency + total * BITS_PER_BYTE / self.baud + delays if self.timing else arrived
        out = bytearray()
        late: list[bytes] = []
        for i, reply in replies:
            kind = self.faults.next_fault(i)
            if kind is Fault.DROP:
                continue
            if kind is Fault.LATE:
                late.append(reply)
                continue
            out += damage(reply, kind) if kind is not None else reply
            self.stats.replies += kind is None
        self._write_at(due, bytes(out))
        if late:  # sent from a timer, so that the emulator goes on serving meanwhile
            timer = threading.Timer(
                max(0.0, due - self._clock()) + self.faults.late_by, self._send_late, (b"".join(late),)
            )
            timer.daemon = True
            timer.start()

    def _send_late(self, data: bytes) -> None:
        self._write_at(0.0, data)
        self.late_sent += 1

    def _write_at(self, due: float, data: bytes) -> None:
        wait = due - self._clock() if self.timing else 0.0
        if wait > 0:
            time.sleep(wait)
        with self._write_lock:
            if data and self._master >= 0:
                try:
                    os.write(self._master, data)
                except OSError:
                    pass

    # ------------------------------------------------------------------ by hand
    def servo_of(self, joint: str | int) -> EmulatedServo:
        """The servo of a joint name or servo ID.

        Raises:
            EmulatorError: naming the joints and IDs there are.
        """
        servo_id = self.joints.get(joint) if isinstance(joint, str) else joint
        if servo_id is None and isinstance(joint, str) and joint.isdigit():
            servo_id = int(joint)
        if servo_id is None or servo_id not in self.servos:
            raise EmulatorError(f"no joint or servo '{joint}' on this bus; joints: {', '.join(self.joints) or 'none'}, "
                                f"servo IDs: {', '.join(map(str, sorted(self.servos)))}")  # fmt: skip
        return self.servos[servo_id]
