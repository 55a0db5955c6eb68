"""The checks every authoring element runs on what it is given, and the error they raise."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

from bb_robot.errors import BbRobotError
from bb_robot.urdf.writer import UrdfElements, non_xml_character

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Rgba = tuple[float, float, float, float]


class AuthoringError(BbRobotError, ValueError):
    """An element was given a value it refuses; the message names the element and the value."""


def check_number(where: str, value: object) -> float:
    """``value`` as a finite float, or AuthoringError naming ``where``."""
    if type(value) is float and math.isfinite(value):  # the common case, fast
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AuthoringError(f"{where}: {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise AuthoringError(f"{where}: {number!r} is not a finite number (NaN and infinity cannot be written)")
    return number


def check_non_negative(where: str, value: object) -> float:
    """``value`` as a finite float ≥ 0, or AuthoringError naming ``where``."""
    number = check_number(where, value)
    if number < 0.0:
        raise AuthoringError(f"{where}: {number!r} is negative")
    return number


def check_optional(where: str, value: object) -> float | None:
    """``None``, or ``value`` as a finite float."""
    return None if value is None else check_number(where, value)


def check_optional_non_negative(where: str, value: object) -> float | None:
    """``None``, or ``value`` as a finite float ≥ 0."""
    return None if value is None else check_non_negative(where, value)


def check_vector(where: str, value: object, count: int) -> tuple[float, ...]:
    """``value`` as ``count`` finite floats, or AuthoringError naming ``where``."""
    if not isinstance(value, (tuple, list)) and (isinstance(value, (str, bytes)) or not isinstance(value, Iterable)):
        raise AuthoringError(f"{where}: {value!r} is not a sequence of {count} numbers")
    items = tuple(value)
    if len(items) != count:
        raise AuthoringError(f"{where}: {value!r} has {len(items)} components, expected {count}")
    return tuple(check_number(where, item) for item in items)


def check_vec3(where: str, value: object) -> Vec3:
    """``value`` as 3 finite floats."""
    x, y, z = check_vector(where, value, 3)
    return (x, y, z)


def check_name(where: str, value: object) -> str:
    """``value`` as a non-empty string XML can carry, or AuthoringError naming ``where``."""
    if not isinstance(value, str):
        raise AuthoringError(f"{where}: {value!r} is not a string")
    if not value:
        raise AuthoringError(f"{where}: the name is empty")
    bad = non_xml_character(value)
    if bad is not None:
        raise AuthoringError(f"{where}: {value!r} holds the character {bad!r}, which XML cannot carry")
    return value


def check_optional_name(where: str, value: object) -> str | None:
    """``None``, or ``value`` checked by :func:`check_name`."""
    return None if value is None else check_name(where, value)


def check_instance(where: str, value: object, kinds: tuple[type, ...]) -> None:
    """Raise AuthoringError naming ``where`` unless ``value`` is one of ``kinds``."""
    if not isinstance(value, kinds):
        expected = " or ".join(kind.__name__ for kind in kinds)
        raise AuthoringError(f"{where}: expected {expected}, got {type(value).__name__} {value!r}")


def set_field(obj: object, name: str, value: object) -> None:
    """Set a field of a frozen dataclass from its own ``__init__``/``__post_init__``."""
    object.__setattr__(obj, name, value)


URDF_ELEMENTS = UrdfElements()
"""Writes the elements' URDF text (the writer the rest of bb_robot uses)."""
