"""ROS parameter descriptors from :class:`~bb_robot.common.parameters.ParameterSpec` (both nodes, the backends)."""

from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType
from rclpy.parameter import Parameter

from bb_robot.common.parameters import ParameterSpec, ParameterValue, initial_value

_TYPES = {
    "string": ParameterType.PARAMETER_STRING,
    "double": ParameterType.PARAMETER_DOUBLE,
    "integer": ParameterType.PARAMETER_INTEGER,
    "bool": ParameterType.PARAMETER_BOOL,
    "string_array": ParameterType.PARAMETER_STRING_ARRAY,
    "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY,
}


def descriptor(spec: ParameterSpec, name: str | None = None) -> ParameterDescriptor:
    """The descriptor ``spec`` is declared with.

    Args:
        spec: The parameter.
        name: Its full name when not ``spec.name`` (a backend's ``<backend>.<name>``, a per-joint one).

    Returns:
        Name, type (``dynamic``: dynamic typing), description (with the choices), read-only flag and
        the range of a ``double``.
    """
    result = ParameterDescriptor(name=name or spec.name, description=spec.described(), read_only=spec.read_only)
    if spec.type == "dynamic":
        result.dynamic_typing = True
    else:
        result.type = _TYPES[spec.type]
    if spec.range is not None and spec.type == "double":
        result.floating_point_range = [FloatingPointRange(from_value=spec.range[0], to_value=spec.range[1])]
    return result


def declared_value(spec: ParameterSpec) -> ParameterValue | Parameter.Type:
    """What ``spec`` is declared with: its initial value, or for an empty array its type alone.

    rclpy takes ``[]`` for a byte array, so a parameter declared with ``[]`` would refuse the list
    of doubles or strings a parameter file gives it; declared by type, it has no value until one
    is set (read it with ``get_parameter_or``).

    Args:
        spec: The parameter.

    Returns:
        The value, or ``Parameter.Type.DOUBLE_ARRAY`` / ``STRING_ARRAY``.
    """
    value = initial_value(spec)
    if value == [] and spec.type == "double_array":
        return Parameter.Type.DOUBLE_ARRAY
    if value == [] and spec.type == "string_array":
        return Parameter.Type.STRING_ARRAY
    return value
