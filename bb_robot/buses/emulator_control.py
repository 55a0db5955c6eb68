"""Moving the emulator's joints by hand, and its control socket.

A torque-off joint of the emulator moves when a *motion script* says so or when a client of the
*control socket* asks. Positions are joint angles in radians (bb_robot's convention,
:func:`bb_robot.buses.units.ticks_to_angle`, through the joint's calibration) or, written with a
``t`` suffix (``2048t``), present ticks.

Motion script (``--motion FILE``): one move per line, ``time joint position``, separated by
spaces or commas; ``#`` starts a comment. The joint goes from where it is at the previous line
for that joint (or at time 0) linearly to ``position`` at ``time`` (seconds since the emulator
started)::

    # time  joint          position
    0.5     shoulder_pan   0.3
    1.5     shoulder_pan   -0.3
    2.0     gripper        2500t

Control socket (``--control PATH``, a Unix stream socket): one JSON object a line, one JSON
answer a line (``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``):

- ``{"move": JOINT, "position": RAD}`` or ``{"move": JOINT, "ticks": N}``, optionally ``"duration": S``;
- ``{"fault": "drop"|"corrupt"|"partial"|"late", "count": N, "id": ID}`` (``id`` optional);
- ``{"overheat": ID}``, ``{"revive": ID}`` (a missing servo answers), ``{"close": true}`` (the port);
- ``{"state": true}``: every servo's ID, joint, present ticks, angle, torque and goal.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bb_robot.buses.emulator import BusEmulator, EmulatorError
from bb_robot.buses.emulator_faults import fault
from bb_robot.buses.units import angle_to_ticks, ticks_to_angle
from bb_robot.errors import BbRobotError


class ControlError(BbRobotError):
    """A motion script or control request that cannot be used (the message names the file and line)."""


@dataclass(frozen=True)
class Move:
    """One line of a motion script: ``joint`` reaches ``position`` at ``time``."""

    time: float
    joint: str
    position: str


def present_of(emulator: BusEmulator, joint: str, position: str | float) -> tuple[int, float]:
    """The servo ID and present ticks of ``position`` (radians, or ticks with a ``t`` suffix) of ``joint``.

    Raises:
        ControlError: a position that is not a number, or radians for a joint without a calibration.
        EmulatorError: an unknown joint.
    """
    servo = emulator.servo_of(joint)
    text = str(position).strip()
    try:
        if text.endswith("t"):
            return servo.servo_id, float(text[:-1])
        angle = float(text)
    except ValueError:
        raise ControlError(
            f"joint '{joint}': position '{position}' is neither radians nor ticks (e.g. 2048t)"
        ) from None
    name = next((n for n, i in emulator.joints.items() if i == servo.servo_id), None)
    if name is None or name not in emulator.calibrations:
        raise ControlError(f"servo {servo.servo_id} has no calibration: give its position in ticks (e.g. 2048t)")
    return servo.servo_id, float(angle_to_ticks(angle, emulator.calibrations[name]))


def move_joint(emulator: BusEmulator, joint: str, position: str | float, duration: float = 0.0) -> bool:
    """Move a joint by hand now (over ``duration`` seconds); ``False`` when its torque is on.

    Raises:
        ControlError, EmulatorError: as :func:`present_of`.
    """
    servo_id, present = present_of(emulator, joint, position)
    with emulator.lock:
        return emulator.servos[servo_id].move_by_hand(present, emulator.now(), duration)


def script_lines(path: str | Path, what: str = "motion script") -> list[tuple[int, str, list[str]]]:
    """The non-empty lines of a script: ``(line number, line, fields)``, fields split at spaces or
    commas, ``#`` comments removed (the motion scripts' and ``bb-robot calibrate --script``'s syntax).

    Raises:
        ControlError: an unreadable file (naming it and ``what`` it is).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ControlError(f"{path}: cannot read the {what} ({error})") from None
    out = []
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].replace(",", " ").split()
        if fields:
            out.append((number, line.strip(), fields))
    return out


def read_script(path: str | Path) -> list[Move]:
    """Read a motion script.

    Raises:
        ControlError: an unreadable file, or a line without a time, joint and position (file and line named).
    """
    moves = []
    for number, line, fields in script_lines(path):
        try:
            when = float(fields[0])
            if len(fields) != 3:
                raise ValueError
        except ValueError:
            raise ControlError(f"{path}:{number}: expected 'time joint position', got '{line}'") from None
        moves.append(Move(when, fields[1], fields[2]))
    return sorted(moves, key=lambda move: move.time)


class ScriptPlayer:
    """Plays a motion script on an emulator, in a thread: each move starts when the previous one of its joint ends.

    Args:
        emulator: the emulator (its clock is the script's).
        moves: from :func:`read_script`.
    """

    def __init__(self, emulator: BusEmulator, moves: list[Move]) -> None:
        self.emulator = emulator
        self.moves = moves
        for move in moves:  # unknown joints and bad positions fail now, not mid-run
            present_of(emulator, move.joint, move.position)
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, name="motion-script", daemon=True)

    def start(self) -> None:
        """Start playing."""
        self._thread.start()

    def stop(self) -> None:
        """Stop playing."""
        self._stop.set()
        self._thread.join(timeout=5)

    def _play(self) -> None:
        previous: dict[str, float] = {}
        for move in self.moves:
            start = previous.get(move.joint, 0.0)
            previous[move.joint] = move.time
            if self._stop.wait(max(0.0, start - self.emulator.now())):
                return
            duration = max(0.0, move.time - max(start, self.emulator.now()))
            if not move_joint(self.emulator, move.joint, move.position, duration):
                self.refused += 1


class ControlServer:
    """The control socket: a Unix stream socket at ``path`` taking JSON requests (module docstring).

    Raises:
        EmulatorError: the socket cannot be made at ``path``.
    """

    def __init__(self, emulator: BusEmulator, path: str | Path) -> None:
        self.emulator = emulator
        self.path = Path(path)
        if self.path.exists() or self.path.is_symlink():
            self.path.unlink()
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.bind(str(self.path))
        except OSError as error:
            raise EmulatorError(f"{path}: cannot make the control socket ({error})") from None
        self._socket.listen(4)
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="emulator-control", daemon=True)

    def start(self) -> None:
        """Start answering."""
        self._thread.start()

    def stop(self) -> None:
        """Stop answering and remove the socket file."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._socket.close()
        if self.path.exists():
            os.unlink(self.path)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._talk, args=(connection,), daemon=True).start()

    def _talk(self, connection: socket.socket) -> None:
        with connection, connection.makefile("rw", encoding="utf-8") as stream:
            for line in stream:
                try:
                    answer = {"ok": True, **self.handle(json.loads(line))}
                except (ValueError, BbRobotError) as error:
                    answer = {"ok": False, "error": str(error)}
                stream.write(json.dumps(answer) + "\n")
                stream.flush()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request (module docstring); the answer's fields besides ``ok``.

        Raises:
            ControlError: a request of no known kind; the errors of the request's own action.
        """
        emulator = self.emulator
        if "move" in request:
            position = f"{request['ticks']}t" if "ticks" in request else request.get("position", "")
            moved = move_joint(emulator, str(request["move"]), position, float(request.get("duration", 0.0)))
            return {"moved": moved} if moved else {"moved": False, "why": "torque is on"}
        if "fault" in request:
            emulator.faults.inject(fault(str(request["fault"])), int(request.get("count", 1)), request.get("id"))
            return {}
        if "overheat" in request:
            with emulator.lock:
                emulator.servo_of(int(request["overheat"])).overheat(emulator.now())
            return {}
        if "revive" in request:
            emulator.faults.revive(int(request["revive"]))
            return {}
        if request.get("close"):
            emulator.close_port()
            return {}
        if request.get("state"):
            return {"servos": state(emulator)}
        raise ControlError(f"unknown request {request}; see 'bb-robot bus-emulator --help'")


def state(emulator: BusEmulator) -> list[dict[str, Any]]:
    """Every servo's ID, joint, present ticks, joint angle (when calibrated), torque and goal."""
    names = {i: n for n, i in emulator.joints.items()}
    out = []
    with emulator.lock:
        t = emulator.now()
        for servo_id, servo in sorted(emulator.servos.items()):
            servo.advance(t)
            present = servo.present()
            name = names.get(servo_id)
            calibration = emulator.calibrations.get(name) if name else None
            out.append({
                "id": servo_id, "joint": name, "ticks": round(present, 3), "torque": servo.torque,
                "goal": servo.peek("goal_position"),
                "angle": ticks_to_angle(present, calibration) if calibration else None,
            })  # fmt: skip
    return out


class ControlClient:
    """A client of an emulator's control socket (``bb-robot bus-emulator --control PATH``): one
    connection, one JSON request and answer a line (module docstring).

    Args:
        path: the socket.
        timeout: seconds to wait for an answer.

    Raises:
        ControlError: nothing listens at ``path`` (naming it and how to start one).
    """

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = str(path)
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.settimeout(timeout)
        try:
            self._socket.connect(self.path)
        except OSError as error:
            self._socket.close()
            raise ControlError(
                f"{path}: cannot reach the emulator's control socket ({error}); start it with "
                f"'bb-robot bus-emulator --control {path}'"
            ) from None
        self._stream = self._socket.makefile("rw", encoding="utf-8")

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request; returns the answer (``{"ok": true, ...}`` or ``{"ok": false, "error": ...}``).

        Raises:
            ControlError: the emulator went away or answered something that is not JSON.
        """
        try:
            self._stream.write(json.dumps(request) + "\n")
            self._stream.flush()
            line = self._stream.readline()
            answer = json.loads(line)
        except (OSError, ValueError) as error:
            raise ControlError(f"{self.path}: the emulator's control socket failed ({error or 'closed'})") from None
        if not isinstance(answer, dict):
            raise ControlError(f"{self.path}: the emulator answered {answer!r}, not a JSON object")
        return answer

    def close(self) -> None:
        """Close the connection."""
        self._stream.close()
        self._socket.close()
