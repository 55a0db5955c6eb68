"""``ros2msg`` schemas: a ROS 2 message definition with the definitions it depends on.

Foxglove, ``mcap-ros2-support`` and rosbag2's MCAP storage describe a ``cdr`` channel by a
schema named with the type's full name (``tf2_msgs/msg/TFMessage``) whose text is the type's
``.msg`` definition followed, for every message type it uses (directly or not, each once), by a
line of 80 ``=``, a line ``MSG: <package>/<Type>`` and that type's definition.  The ``.msg``
files are read from ``share/<package>/msg/`` under the prefixes of ``AMENT_PREFIX_PATH`` (a
ROS install, or the venv that scripts/setup makes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from bb_robot.errors import BbRobotError

#: The schema encoding of ROS 2 message definitions in MCAP and the Foxglove protocol.
SCHEMA_ENCODING = "ros2msg"
#: The message encoding of ROS 2 messages (the serialized bytes, with their 4-byte header).
MESSAGE_ENCODING = "cdr"
SEPARATOR = "=" * 80

_PRIMITIVES = frozenset(
    "bool byte char float32 float64 int8 uint8 int16 uint16 int32 uint32 int64 uint64 string wstring".split()
)
_FIELD = re.compile(r"^\s*([A-Za-z][\w/]*)")

#: Finds the text of ``package/Type``'s ``.msg`` file (raises :class:`SchemaError` if none).
DefinitionSource = Callable[[str, str], str]


class SchemaError(BbRobotError):
    """A message definition could not be found or read; the message names the type and where it looked."""


def split_type_name(type_name: str) -> tuple[str, str]:
    """``"tf2_msgs/msg/TFMessage"`` or ``"tf2_msgs/TFMessage"`` → ``("tf2_msgs", "TFMessage")``.

    Raises:
        SchemaError: the name is not ``package/msg/Type`` or ``package/Type``.
    """
    parts = type_name.split("/")
    if len(parts) == 3 and parts[1] == "msg" and all(parts):
        return parts[0], parts[2]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise SchemaError(f"message type '{type_name}': expected package/msg/Type")


def full_type_name(type_name: str) -> str:
    """The full name ``package/msg/Type`` of a message type given in either form."""
    package, name = split_type_name(type_name)
    return f"{package}/msg/{name}"


def share_prefixes() -> list[Path]:
    """The prefixes of ``AMENT_PREFIX_PATH``, in order (where ``share/<package>/msg`` is looked up)."""
    return [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]


def msg_file_source(prefixes: Sequence[Path] | None = None) -> DefinitionSource:
    """A :data:`DefinitionSource` reading ``<prefix>/share/<package>/msg/<Type>.msg``.

    Args:
        prefixes: where to look; default: :func:`share_prefixes` at each call.
    """

    def read(package: str, name: str) -> str:
        searched = list(prefixes) if prefixes is not None else share_prefixes()
        for prefix in searched:
            path = prefix / "share" / package / "msg" / f"{name}.msg"
            if path.is_file():
                return path.read_text(encoding="utf-8")
        where = ", ".join(str(p) for p in searched) or "nowhere: AMENT_PREFIX_PATH is empty"
        raise SchemaError(f"message type '{package}/msg/{name}': no {name}.msg in share/{package}/msg of {where}")

    return read


def dependencies(package: str, definition: str) -> list[tuple[str, str]]:
    """The message types a definition's fields use, in order of appearance, each once.

    Unqualified names are in ``package`` (as in ROS 2 ``.msg`` files); constants and
    primitive fields (also bounded strings, ``string<=10``) use none.
    """
    found: list[tuple[str, str]] = []
    for line in definition.splitlines():
        code = line.split("#", 1)[0]
        match = _FIELD.match(code)
        if match is None or not code.strip():
            continue
        base = re.split(r"[\[<]", match.group(1), maxsplit=1)[0]
        if base in _PRIMITIVES:
            continue
        if "/" in base:
            dependency = split_type_name(base)
        else:
            dependency = (package, base)
        if dependency not in found:
            found.append(dependency)
    return found


def ros2msg_schema(type_name: str, source: DefinitionSource | None = None) -> str:
    """The concatenated ``ros2msg`` definition of ``type_name`` (see the module's docstring).

    Args:
        type_name: ``package/msg/Type`` (or ``package/Type``).
        source: where definitions come from; default :func:`msg_file_source`.

    Returns:
        The schema text: the type's own definition, then each dependency after a separator.

    Raises:
        SchemaError: a definition (of the type or one it uses) is not found.
    """
    read = source or msg_file_source()
    top = split_type_name(type_name)
    texts: dict[tuple[str, str], str] = {top: read(*top)}
    order: list[tuple[str, str]] = []
    pending = list(dependencies(top[0], texts[top]))
    while pending:
        current = pending.pop(0)
        if current in texts:
            continue
        texts[current] = read(*current)
        order.append(current)
        pending.extend(d for d in dependencies(current[0], texts[current]) if d not in texts)
    parts = [texts[top].rstrip("\n")]
    for package, name in order:
        parts.append(f"{SEPARATOR}\nMSG: {package}/{name}\n{texts[(package, name)].rstrip(chr(10))}")
    return "\n".join(parts) + "\n"
