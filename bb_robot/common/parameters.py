"""One description of a node parameter, for the nodes' tables, their launch files, docs and tests.

The node layer turns a :class:`ParameterSpec` into a ROS parameter descriptor
(:func:`bb_robot.ros.parameters.descriptor`); nothing here imports ROS.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bb_robot.resources import share_directories

#: A parameter's value as ROS holds it (arrays as lists or tuples).
ParameterValue = str | float | int | bool | list[str] | list[float] | tuple[str, ...] | tuple[float, ...]

#: The parameter types: ROS's, plus ``"dynamic"`` (any type: ``dynamic_typing``).
PARAMETER_TYPES = ("string", "double", "integer", "bool", "string_array", "double_array", "dynamic")
#: When a change applies (see :attr:`ParameterSpec.when`).
WHEN = ("live", "configure", "activate", "start")


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: name, default, description, ROS type and when changes apply.

    Attributes:
        name: The parameter's name (a pattern with ``<joint>`` in per-joint tables).
        default: The value it starts with; ``None``: computed at start-up.
        description: What it does, as ``ros2 param describe`` shows it.
        type: One of :data:`PARAMETER_TYPES`.
        when: ``"live"`` (any time), ``"configure"`` / ``"activate"`` (changes refused while the
            node is configured / active), or ``"start"`` (read-only).
        choices: The allowed values of a string (added to the description).
        range: The inclusive range of a number, as ``(low, high)``.
    """

    name: str
    default: ParameterValue | None
    description: str
    type: str = "string"
    when: str = "live"
    choices: tuple[str, ...] = ()
    range: tuple[float, float] | None = None

    @property
    def read_only(self) -> bool:
        """Whether the parameter is fixed once the node started (``when == "start"``)."""
        return self.when == "start"

    def described(self) -> str:
        """The description with the allowed values appended (as the descriptor carries it)."""
        if self.choices:
            return f"{self.description} One of: {', '.join(self.choices)}."
        return self.description


def configure_parameter(
    name: str,
    default: ParameterValue,
    description: str,
    type: str = "string",  # noqa: A002 - as ParameterSpec's field
    *,
    choices: tuple[str, ...] = (),
    range: tuple[float, float] | None = None,  # noqa: A002 - as ParameterSpec's field
) -> ParameterSpec:
    """A parameter read at configure (changes refused while the node is configured), as every
    backend parameter is.

    Args:
        name: Its name (a backend's: without the ``<backend>.`` prefix).
        default: Its default.
        description: What it does.
        type: One of :data:`PARAMETER_TYPES`.
        choices: The allowed values of a string.
        range: The inclusive range of a number.

    Returns:
        The spec, ``when="configure"``.
    """
    return ParameterSpec(name, default, description, type=type, when="configure", choices=choices, range=range)


def default_model_dirs() -> tuple[str, ...]:
    """The default ``model_dirs`` of both nodes: ``models/`` of the first bb_robot share directory
    that has one (an installed package, else the source tree).

    Returns:
        One directory, resolved.
    """
    for directory in share_directories():
        if (directory / "models").is_dir():
            return (str((directory / "models").resolve()),)
    return (str(Path(share_directories()[0]) / "models"),)


def initial_value(spec: ParameterSpec) -> ParameterValue:
    """The value a node declares ``spec`` with: its default (arrays as lists), or for ``model_dirs``
    without one, :func:`default_model_dirs`.

    Raises:
        ValueError: ``spec`` has no default and none is computed for it.
    """
    default = spec.default
    if default is None:
        if spec.name != "model_dirs":
            raise ValueError(f"parameter '{spec.name}' has no default")
        default = default_model_dirs()
    if isinstance(default, tuple):
        return [str(v) for v in default] if all(isinstance(v, str) for v in default) else [float(v) for v in default]
    return default
