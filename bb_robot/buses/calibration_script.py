"""``bb-robot calibrate --script FILE``: the hand moves and Enter presses of a calibration, from a file.

A calibration script stands for the person at the arm, so that a calibration can run against the
bus emulator unattended (the tests do). One line each, fields separated by spaces or commas, ``#``
starting a comment, times in seconds since the servos were found (the motion scripts' syntax,
:mod:`~bb_robot.buses.emulator_control`, plus ``enter``)::

    # time  joint          position
    0.0     enter                          # the arm is at mid-range: Enter
    1.0     shoulder_pan   1.4             # moved by hand to 1.4 rad ...
    2.5     shoulder_pan   -1.4            # ... then to -1.4 rad
    3.0     gripper        2900t           # present ticks
    3.5     enter                          # every joint went through its range: Enter

- ``TIME JOINT POSITION``: the joint (its name, or its servo ID) goes linearly from where it was at
  its previous line (or at time 0) to ``POSITION`` at ``TIME``; positions as the emulator's
  control socket takes them: radians through the emulator's own calibration, or present ticks
  ``2048t``, as the servo reads them during the session (the session changes no offset before it
  ends). The emulator moves the joint by the difference between the number and its present
  reading (0..4095): from ``200t``, ``-300t`` crosses the wrap point downwards, and the way back
  up across it is ``4996t`` (``900t`` would turn the long way round);
- ``TIME enter``: Enter, at ``TIME``, once every move before it has ended and been read. The first
  ends step 1 (the arm at mid-range), the second step 2 (the ranges); a script has exactly two.

Times never decrease down the file. A line moves its joint less than half a turn (2048 ticks) from
its previous line: readings are unwrapped across the encoder's wrap point, and a longer step
between two readings could be read either way round. The moves go to the emulator through its
control socket (:class:`~bb_robot.buses.emulator_control.ControlClient`), and the session reads
the servos as it would a real arm. :class:`HandScript` waits for a reading taken after each move
has ended before it starts the joint's next move or presses Enter, so that every position a line
names is read, however loaded the host: the recorded ranges are exactly the scripted ones (to the
tick the servo rounds to).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bb_robot.buses.emulator_control import ControlError, script_lines
from bb_robot.errors import BbRobotError

ENTER = "enter"


class CalibrationScriptError(BbRobotError):
    """A calibration script that cannot be used or played (the message names the file and line)."""


@dataclass(frozen=True)
class ScriptLine:
    """One line of a calibration script.

    Attributes:
        number: its line number in the file.
        time: seconds since the start.
        joint: the joint it moves, or ``None`` for Enter.
        position: where the joint goes (radians, or ticks with a ``t`` suffix).
    """

    number: int
    time: float
    joint: str | None
    position: str = ""


def read_calibration_script(path: str | Path, joints: Collection[str]) -> list[ScriptLine]:
    """Read and check a calibration script (module docstring).

    Args:
        path: the file.
        joints: the joints (names or servo IDs as text) the session calibrates.

    Returns:
        Its lines, in file order.

    Raises:
        CalibrationScriptError: an unreadable file, a line that is neither ``TIME enter`` nor
            ``TIME JOINT POSITION``, a time that is not a number >= 0 or is earlier than the line
            before, a joint the session does not have, a position that is not a number, not
            exactly two ``enter`` lines, or a line after the second (each naming the file and line).
    """
    try:
        found = script_lines(path, "calibration script")
    except ControlError as error:
        raise CalibrationScriptError(str(error)) from None
    lines: list[ScriptLine] = []
    enters = 0
    for number, text, fields in found:
        where = f"{path}:{number}"
        try:
            time = float(fields[0])
        except ValueError:
            time = math.nan
        if not (math.isfinite(time) and time >= 0):
            raise CalibrationScriptError(f"{where}: '{fields[0]}' is not a time in seconds (>= 0), in '{text}'")
        if lines and time < lines[-1].time:
            raise CalibrationScriptError(
                f"{where}: time {time:g} is earlier than line {lines[-1].number}'s {lines[-1].time:g}; "
                "times never decrease down the file"
            )
        if enters == 2:
            raise CalibrationScriptError(f"{where}: a line after the second 'enter', which ends the calibration")
        if len(fields) == 2 and fields[1].lower() == ENTER:
            enters += 1
            lines.append(ScriptLine(number, time, None))
            continue
        if len(fields) != 3:
            raise CalibrationScriptError(f"{where}: expected 'time joint position' or 'time enter', got '{text}'")
        joint, position = fields[1], fields[2]
        if joint not in joints:
            raise CalibrationScriptError(
                f"{where}: no joint '{joint}' on this bus; the joints calibrated are {', '.join(joints)}"
            )
        try:
            float(position[:-1] if position.endswith("t") else position)
        except ValueError:
            raise CalibrationScriptError(
                f"{where}: position '{position}' is neither radians nor ticks (e.g. 2048t)"
            ) from None
        lines.append(ScriptLine(number, time, joint, position))
    if enters != 2:
        raise CalibrationScriptError(
            f"{path}: {enters} 'enter' line(s); a calibration script has two: one when the arm is at mid-range, "
            "one when every joint has gone through its range"
        )
    return lines


class HandScript:
    """Plays a calibration script against the emulator's control socket, step by step.

    Args:
        path: the script's file (for messages).
        lines: from :func:`read_calibration_script`.
        ask: sends one control-socket request and returns the answer
            (:meth:`~bb_robot.buses.emulator_control.ControlClient.ask`).
        clock: seconds since the start, on a clock the emulator's agrees with (``time.monotonic``'s).
        target: the emulator's name of a joint (by default the joint itself; its servo ID as text works too).
    """

    def __init__(
        self,
        path: str | Path,
        lines: list[ScriptLine],
        ask: Callable[[dict[str, Any]], dict[str, Any]],
        clock: Callable[[], float],
        target: Callable[[str], str] = str,
    ) -> None:
        self.path = str(path)
        self.lines = lines
        self.ask = ask
        self.clock = clock
        self.target = target
        self._next = 0
        #: Per joint: its previous line's time, and when (``clock``) its last move has surely ended.
        self._previous: dict[str, float] = {}
        self._ends: dict[str, float] = {}

    @property
    def done(self) -> bool:
        """Whether every line has been played."""
        return self._next >= len(self.lines)

    def step(self, read_at: float) -> int:
        """Play what is due now: the moves whose start has come, Enter once everything before it was read.

        Args:
            read_at: when (``clock``) the latest reading of every servo was started; a move counts as
                read by a reading started strictly after it ended.

        Returns:
            How many Enter presses happened (0, 1, or 2 when the script presses both at once).

        Raises:
            CalibrationScriptError: the emulator refused a move (a joint with torque on, a position
                it cannot take) or went away, naming the file, line and the emulator's answer.
        """
        presses = 0
        while not self.done:
            line, now = self.lines[self._next], self.clock()
            if line.joint is None:
                if now < line.time or any(read_at <= end for end in self._ends.values()):
                    break
                presses += 1
            else:
                if now < self._previous.get(line.joint, 0.0) or read_at <= self._ends.get(line.joint, -math.inf):
                    break
                self._move(line, now)
            self._next += 1
        return presses

    def _move(self, line: ScriptLine, now: float) -> None:
        joint = str(line.joint)
        duration = max(0.0, line.time - now)
        request: dict[str, Any] = {"move": self.target(joint), "duration": duration}
        if line.position.endswith("t"):
            request["ticks"] = float(line.position[:-1])
        else:
            request["position"] = float(line.position)
        where = f"{self.path}:{line.number}"
        try:
            answer = self.ask(request)
        except ControlError as error:
            raise CalibrationScriptError(f"{where}: {error}") from None
        if not answer.get("ok"):
            raise CalibrationScriptError(f"{where}: the emulator refused to move {joint}: {answer.get('error')}")
        if not answer.get("moved", True):
            raise CalibrationScriptError(f"{where}: the emulator did not move {joint}: {answer.get('why', '')}")
        self._previous[joint] = line.time
        # The emulator started the move before it answered, so it has ended ``duration`` after now.
        self._ends[joint] = self.clock() + duration


__all__ = ["ENTER", "CalibrationScriptError", "HandScript", "ScriptLine", "read_calibration_script"]
