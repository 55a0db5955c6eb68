"""ROS parameter descriptors from :class:`~bb_robot.common.parameters.ParameterSpec` (both nodes, the backends)."""

from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType

from bb_robot.common.parameters import ParameterSpec

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
