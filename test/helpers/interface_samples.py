"""Every message type of a ROS 2 interface package, each filled with values other than its defaults.

For tests of the packages ``scripts/build_interfaces`` compiles (MoveIt's, tf2_msgs, control_msgs,
composition_interfaces): a message whose every field, nested or in a sequence, holds a value that is
not its default round-trips through rclpy's serialisation only when the generated C structs, the
Python extension's conversions and the Fast DDS typesupport agree field by field.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

#: How many elements an unbounded sequence gets: more than one, so an element's offset is checked.
SEQUENCE_LENGTH = 2


def message_types(package: str) -> Iterator[tuple[str, type]]:
    """Every message class of a package: its messages, its services' requests and responses, and its
    actions' goals, results and feedback with the messages their services and topics carry.

    Args:
        package: an importable ROS 2 interface package, such as ``moveit_msgs``.

    Returns:
        ``(name, class)`` pairs, ``name`` like ``moveit_msgs/srv/GetPositionIK.Request``, sorted.
    """
    found: dict[type, str] = {}  # a class by its first name (srv/X.Request is also srv/X_Request)
    for kind in ("msg", "srv", "action"):
        try:
            module = importlib.import_module(f"{package}.{kind}")
        except ModuleNotFoundError:
            continue
        for name in dir(module):
            interface = getattr(module, name)
            if name.startswith("_") or not isinstance(interface, type):
                continue
            for part, cls in _parts(interface):
                found.setdefault(cls, f"{package}/{kind}/{name}{part}")
    yield from sorted((name, cls) for cls, name in found.items())


def _parts(interface: type) -> Iterator[tuple[str, type]]:
    if hasattr(interface, "SLOT_TYPES"):
        yield "", interface
        return
    for attribute in ("Request", "Response", "Goal", "Result", "Feedback"):
        if hasattr(interface, attribute):
            yield f".{attribute}", getattr(interface, attribute)
    impl = getattr(interface, "Impl", None)
    if impl is not None:
        yield ".Impl.FeedbackMessage", impl.FeedbackMessage
        for service in ("SendGoalService", "GetResultService"):
            yield f".Impl.{service}.Request", getattr(impl, service).Request
            yield f".Impl.{service}.Response", getattr(impl, service).Response


def filled(cls: type) -> Any:
    """An instance of a message class with every field set to a value other than its default.

    Args:
        cls: a generated ROS 2 message class (it has ``SLOT_TYPES``).

    Returns:
        The instance.

    Raises:
        TypeError: a field type this helper does not know (a new rosidl type).
    """
    message = cls()
    for field, slot_type in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES, strict=True):
        setattr(message, field, _value(slot_type, f"{cls.__name__}.{field}"))
    return message


def _value(slot_type: Any, where: str) -> Any:
    from rosidl_parser.definition import (
        AbstractGenericString,
        AbstractNestedType,
        AbstractSequence,
        AbstractWString,
        Array,
        BasicType,
        BoundedSequence,
        NamespacedType,
    )

    if isinstance(slot_type, BasicType):
        return _basic(slot_type.typename, where)
    if isinstance(slot_type, AbstractGenericString):
        text = "ab\u00e9" if isinstance(slot_type, AbstractWString) else "ab"
        limit = getattr(slot_type, "maximum_size", None)
        return text[:limit] if limit is not None else text
    if isinstance(slot_type, NamespacedType):
        module = importlib.import_module(".".join(slot_type.namespaces))
        if hasattr(module, slot_type.name):
            return filled(getattr(module, slot_type.name))
        # An action's part, such as moveit_msgs/action/ExecuteTrajectory_Result: ExecuteTrajectory.Result.
        action, _, part = slot_type.name.rpartition("_")
        return filled(getattr(getattr(module, action), part))
    if isinstance(slot_type, AbstractNestedType):
        if isinstance(slot_type, Array):
            count = slot_type.size
        elif isinstance(slot_type, BoundedSequence):
            count = min(SEQUENCE_LENGTH, slot_type.maximum_size)
        elif isinstance(slot_type, AbstractSequence):
            count = SEQUENCE_LENGTH
        else:
            raise TypeError(f"{where}: a nested type this helper does not know: {slot_type!r}")
        return [_value(slot_type.value_type, where) for _ in range(count)]
    raise TypeError(f"{where}: a field type this helper does not know: {slot_type!r}")


def _basic(typename: str, where: str) -> Any:
    if typename in ("float", "double", "long double"):
        return 1.5
    if typename == "boolean":
        return True
    if typename in ("octet", "byte"):
        return b"\x07"
    if typename in ("char", "wchar"):
        return "a"
    if "int" in typename:
        return 7
    raise TypeError(f"{where}: a basic type this helper does not know: {typename}")
