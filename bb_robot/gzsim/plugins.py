"""Which gz-sim 8 systems an SDF world's ``<plugin>`` elements load, and their settings.

ROS-free.  :func:`system_of` names the system a plugin loads (by class name, else by library
file name); :func:`read_plugin` reads its child elements as libsdformat hands them to the
system's ``Configure``: trimmed text; booleans ``true`` / ``1`` (any case) are true, anything
else false; integers as ``std::stoi`` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bb_robot.errors import BbRobotError
from bb_robot.sdf.document import SdfPlugin
from bb_robot.xmlsafe import XmlError, parse_xml

#: The gz-sim 8 systems this package knows, by class name (the last part of ``<plugin name>``).
SYSTEMS = (
    "JointPositionController",
    "JointController",
    "ApplyJointForce",
    "JointTrajectoryController",
    "JointStatePublisher",
)
#: The plugin library each system is in (``filename``), for plugins named in another way.
_LIBRARIES = {
    "joint-position-controller-system": "JointPositionController",
    "joint-controller-system": "JointController",
    "apply-joint-force-system": "ApplyJointForce",
    "joint-trajectory-controller-system": "JointTrajectoryController",
    "joint-state-publisher-system": "JointStatePublisher",
}


class PluginError(BbRobotError, ValueError):
    """A ``<plugin>``'s settings cannot be read (the message names its file, line and name)."""


def system_of(plugin: SdfPlugin) -> str | None:
    """The gz-sim system a ``<plugin>`` loads.

    By class name (``gz::sim::systems::JointPositionController``, also the ``ignition::gazebo``
    spelling gz-sim 8 still accepts), else by library file name.

    Args:
        plugin: A plugin of a model in the world.

    Returns:
        One of :data:`SYSTEMS`, or ``None`` for any other plugin.
    """
    cls = plugin.name.rsplit("::", 1)[-1].strip()
    if cls in SYSTEMS:
        return cls
    library = plugin.filename.strip()
    for suffix, system in _LIBRARIES.items():
        stem = library.rsplit("/", 1)[-1]
        stem = stem[3:] if stem.startswith("lib") else stem
        stem = stem[:-3] if stem.endswith(".so") else stem
        if stem.endswith(suffix) and stem[: -len(suffix)] in ("gz-sim-", "gz-sim8-", "ignition-gazebo-"):
            # "joint-controller-system" is also the end of "joint-position-controller-system": the
            # prefix check above makes the match exact.
            return system
    return None


@dataclass(frozen=True)
class PluginSettings:
    """The child elements of a ``<plugin>`` (trimmed text, in order) and where it was written."""

    system: str
    values: Mapping[str, tuple[str, ...]]
    where: str

    def has(self, tag: str) -> bool:
        """Whether the plugin has a ``<tag>`` element."""
        return tag in self.values

    def all(self, tag: str) -> tuple[str, ...]:
        """The text of every ``<tag>`` element, in order."""
        return self.values.get(tag, ())

    def text(self, tag: str) -> str | None:
        """The text of the first ``<tag>`` element, or ``None``."""
        found = self.values.get(tag)
        return found[0] if found else None

    def flag(self, tag: str) -> bool:
        """libsdformat's bool from a plugin element: ``true`` or ``1`` in any case; else false."""
        value = self.text(tag)
        return value is not None and value.lower() in ("true", "1")

    def integer(self, tag: str, default: int) -> int:
        """libsdformat's ``std::stoi`` reading (leading digits, ``0x`` hex, true/false).

        Args:
            tag: The element's name.
            default: The value when the element is absent or unreadable.

        Returns:
            The integer read.
        """
        value = self.text(tag)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ("true", "false"):
            return 1 if lowered == "true" else 0
        try:
            if lowered.startswith(("0x", "-0x", "+0x")):
                return int(lowered, 16)
            match = re.match(r"[+-]?\d+", value)
            return int(match.group(0)) if match else default
        except ValueError:
            return default


def read_plugin(plugin: SdfPlugin, system: str) -> PluginSettings:
    """Parse a ``<plugin>``'s inner XML.

    Args:
        plugin: The plugin as read from the SDF file.
        system: The system it loads (from :func:`system_of`).

    Returns:
        Its settings.

    Raises:
        PluginError: The inner XML is not well-formed (or not safe to read).
    """
    where = str(plugin.where)
    try:
        root = parse_xml(f"<plugin>{plugin.xml}</plugin>", where)
    except XmlError as error:
        raise PluginError(f"{where}: <plugin name='{plugin.name}'> cannot be read: {error}") from None
    values: dict[str, list[str]] = {}
    assert root is not None
    for child in root.children:
        values.setdefault(child.tag, []).append(child.text.strip())
    return PluginSettings(system, {k: tuple(v) for k, v in values.items()}, where)
