"""MoveIt's ``.scene`` text format as obstacles.

The format (what MoveIt's "export scene geometry" writes), one value group per line::

    my_scene                 the scene's name
    * table                  an object: '*' and its name
    0.5 0 0.3                its pose: position (new format only; the old one has no object pose)
    0 0 0 1                  and orientation x y z w
    1                        how many shapes
    box                      a shape: box (x y z), sphere (radius), cylinder or cone (radius length),
    1.2 0.8 0.05             or mesh (vertex and triangle counts, then the vertices x y z, then
    0 0 0                    the triangles' vertex indices); then its pose in the object
    0 0 0 1                  (position, orientation x y z w)
    0.5 0.5 0.5 1            and its colour r g b a (not used)
    0                        how many subframes (new format only), each a name, position, orientation
    .                        the end

A file is in the new format when the line after the first object's name holds more than one
number (MoveIt's own rule).  Each shape is placed at the object's pose times its own.  Obstacles
are named ``world/<object>``; errors name the file, the line, the object and the field.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from bb_robot.collision.errors import WorldError
from bb_robot.collision.objects import WORLD_PREFIX, Shape, TriangleMesh, object_parts, pose_matrix, primitive
from bb_robot.collision.shapes import Part
from bb_robot.errors import BbRobotError
from bb_robot.model.transforms import Matrix


class _Tokens:
    """The file's whitespace-separated words with their line numbers, read in order."""

    def __init__(self, source: str, lines: list[str], start: int) -> None:
        self.source = source
        self.words = [(word, number) for number, line in enumerate(lines[start:], start + 1) for word in line.split()]
        self.at = 0
        self.context = ""

    def fail(self, what: str) -> WorldError:
        line = self.words[min(self.at, len(self.words) - 1)][1] if self.words else 1
        return WorldError(self.source, f"line {line}: {self.context}{what}")

    def word(self, what: str) -> str:
        if self.at >= len(self.words):
            raise self.fail(f"{what}: the file ends (no '.' line)")
        word = self.words[self.at][0]
        self.at += 1
        return word

    def numbers(self, count: int, what: str) -> list[float]:
        values = []
        for _ in range(count):
            word = self.word(what)
            try:
                value = float(word)
            except ValueError:
                self.at -= 1
                raise self.fail(f"{what}: needs {count} numbers, got {word!r}") from None
            if not math.isfinite(value):
                self.at -= 1
                raise self.fail(f"{what}: needs finite numbers, got {word!r}")
            values.append(value)
        return values

    def count(self, what: str) -> int:
        word = self.word(what)
        if not word.isdigit():
            self.at -= 1
            raise self.fail(f"{what}: needs a count, got {word!r}")
        return int(word)

    def pose(self, what: str) -> Matrix:
        position = self.numbers(3, f"{what} position")
        orientation = self.numbers(4, f"{what} orientation")
        try:
            return pose_matrix(position, orientation)
        except ValueError as error:
            self.at -= 1
            raise self.fail(f"{what}: {error}") from None


def _shape(tokens: _Tokens, index: int) -> Shape:
    what = f"shape {index}"
    kind = tokens.word(f"{what} type")
    if kind == "mesh":
        vertices, triangles = tokens.count(f"{what} vertex count"), tokens.count(f"{what} triangle count")
        points = np.array(tokens.numbers(3 * vertices, f"{what} vertices")).reshape(-1, 3)
        faces = [tokens.count(f"{what} triangles") for _ in range(3 * triangles)]
        return TriangleMesh(points, np.array(faces, dtype=np.int64).reshape(-1, 3))
    counts = {"box": 3, "sphere": 1, "cylinder": 2, "cone": 2}
    if kind not in counts:
        tokens.at -= 1
        raise tokens.fail(f"{what}: unknown shape type {kind!r} (known: box, sphere, cylinder, cone, mesh)")
    values = tokens.numbers(counts[kind], f"{what} {kind} dimensions")
    if kind in ("cylinder", "cone"):  # the text gives radius, length; a SolidPrimitive height, radius
        values = [values[1], values[0]]
    try:
        return primitive(kind, values)
    except ValueError as error:
        tokens.at -= 1
        raise tokens.fail(f"{what}: {error}") from None


def scene_text_obstacles(path: str, to_root: Matrix) -> tuple[Part, ...]:
    """The obstacles of a ``.scene`` file (see the module docstring), in the robot's root frame.

    Args:
        path: the file.
        to_root: the scene's frame (the world frame) → the robot's root frame.

    Returns:
        The parts, one per shape.

    Raises:
        WorldError: an unreadable or malformed file, naming the line, the object and the field.
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise WorldError(path, f"cannot read: {error}") from None
    if not lines:
        raise WorldError(path, "line 1: empty; a .scene file starts with the scene's name")
    starts = [i for i, line in enumerate(lines) if line.strip().startswith("*")]
    following = next((line for line in lines[starts[0] + 1 :] if line.strip()), "") if starts else ""
    new_format = len(following.split()) > 1
    tokens = _Tokens(path, lines, 1)
    parts: list[Part] = []
    names: set[str] = set()
    while True:
        tokens.context = ""
        marker = tokens.word("an object ('*') or the end ('.')")
        if marker == ".":
            return tuple(parts)
        if not marker.startswith("*"):
            tokens.at -= 1
            raise tokens.fail(f"expected '*' (an object) or '.' (the end), got {marker!r}")
        line = tokens.words[tokens.at - 1][1]
        name = lines[line - 1].strip()[1:].strip()
        tokens.at = next((i for i, (_, n) in enumerate(tokens.words) if n > line), len(tokens.words))
        if not name or name in names:
            raise tokens.fail(f"object names must be unique and non-empty, got {name!r}")
        names.add(name)
        tokens.context = f"object '{name}': "
        pose = tokens.pose("object pose") if new_format else np.eye(4)
        shapes: list[tuple[Shape, Matrix]] = []
        for index in range(tokens.count("shape count")):
            shape = _shape(tokens, index)
            shapes.append((shape, pose @ tokens.pose(f"shape {index} pose")))
            tokens.numbers(4, f"shape {index} colour")
        if new_format:
            for index in range(tokens.count("subframe count")):
                tokens.word(f"subframe {index} name")
                tokens.pose(f"subframe {index} pose")
        try:
            parts.extend(object_parts(f"{WORLD_PREFIX}{name}", [(s, to_root @ p) for s, p in shapes], path))
        except (BbRobotError, ValueError) as error:
            raise tokens.fail(str(error)) from None
