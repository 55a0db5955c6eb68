"""One description of a node parameter, for the nodes' tables, their launch files, docs and tests.

The node layer turns a :class:`ParameterSpec` into a ROS parameter descriptor
(:func:`bb_robot.ros.parameters.descriptor`); nothing here imports ROS.
"""

from __future__ import annotations

from dataclasses import dataclass

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
