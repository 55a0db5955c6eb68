"""The driver node's parameters on its rclpy node: declaring, reading, checking changes.

The tables (names, defaults, descriptions, when changes apply) are
:mod:`bb_robot.driver.parameters`; the descriptors are built by :mod:`bb_robot.ros.parameters`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter

from bb_robot.common.parameters import ParameterValue
from bb_robot.driver.backends.base import Backend
from bb_robot.driver.commands import limits as joint_limits
from bb_robot.driver.commands.limits import ClampMargins
from bb_robot.driver.commands.tolerances import ToleranceDefaults
from bb_robot.driver.commands.trajectory import TrajectoryOptions
from bb_robot.driver.guard.build import build_guard
from bb_robot.driver.guard.collision_guard import CollisionGuard, GuardSettings
from bb_robot.driver.parameters import JOINT_PARAMETERS, PARAMETERS, joint_parameter
from bb_robot.driver.state.snapshot import CoreSettings
from bb_robot.loading import LoadedModel
from bb_robot.model.robot import Robot
from bb_robot.ros.parameters import declared_value, descriptor

#: The model's bound parameters (Robot.param_subscriptions) start with these.
BOUND_PREFIXES = ("joints.", "transmissions.")


class DriverParameters:
    """The driver's parameters, read and declared on ``node``.

    Args:
        node: The driver node.
    """

    def __init__(self, node: Node) -> None:
        self._node = node

    # ------------------------------------------------------------------ reading
    def value(self, name: str) -> ParameterValue:
        """The current value of parameter ``name``."""
        # (an array declared by its type alone, see declared_value, reads as None until set)
        value: ParameterValue = self._node.get_parameter_or(name, Parameter(name, value=None)).value
        return value

    def text(self, name: str) -> str:
        """Parameter ``name`` as a string."""
        return str(self.value(name))

    def number(self, name: str) -> float:
        """Parameter ``name`` (a double or an integer) as a float."""
        value = self.value(name)
        assert isinstance(value, int | float), name
        return float(value)

    def flag(self, name: str) -> bool:
        """Parameter ``name`` as a bool."""
        return bool(self.value(name))

    def texts(self, name: str) -> list[str]:
        """Parameter ``name`` (a string array) as a list (``[]`` when unset)."""
        value = self.value(name)
        return [str(v) for v in value] if isinstance(value, list | tuple) else []

    # ---------------------------------------------------------------- declaring
    def declare_node_parameters(self) -> None:
        """Declare :data:`~bb_robot.driver.parameters.PARAMETERS` (when the node starts)."""
        for spec in PARAMETERS:  # (an empty array by its type: [] would be a byte array)
            self._node.declare_parameter(spec.name, declared_value(spec), descriptor(spec))

    def declare_backend_parameters(self, backend: type[Backend], selected_as: str) -> list[str]:
        """Declare ``backend``'s own parameters as ``<backend name>.<name>``.

        Args:
            backend: The backend class.
            selected_as: The ``backend`` parameter (its last ``:`` part names a class without a name).

        Returns:
            The names declared.
        """
        # Under the backend's own name (``sim.initial_positions``), also when it was selected as
        # ``package.module:Class``.
        prefix = backend.name or selected_as.rsplit(":", 1)[-1]
        names = []
        for spec in backend.parameters():
            name = f"{prefix}.{spec.name}"
            self._node.declare_parameter(name, declared_value(spec), descriptor(spec, name))
            names.append(name)
        return names

    def backend_options(self, names: Sequence[str]) -> dict[str, ParameterValue | None]:
        """The backend's parameters by their own name (without the ``<backend>.`` prefix; backend
        names have no dot)."""
        # An array never set (declared by its type alone, see declared_value) reads as None.
        unset = Parameter("unset", value=None)
        return {name.split(".", 1)[1]: self._node.get_parameter_or(name, unset).value for name in names}

    def declare_joint_parameters(
        self, joints: Sequence[str], robot: Robot, declared: list[str], bound: dict[str, float]
    ) -> None:
        """Per-joint limit overrides and tolerances, and the model's bound parameters.

        Args:
            joints: The driven joints.
            robot: The model as loaded (its bound parameters' values are the defaults).
            declared: Receives the names declared (undeclared at cleanup).
            bound: Receives the bound parameters' current values.
        """
        defaults: dict[str, ParameterValue] = {}
        path = self.text("joint_limits_file")
        if path:
            for joint, entry in joint_limits.load_overrides(path).items():
                for key, value in vars(entry).items():
                    if value is not None:
                        defaults[f"joint_limits.{joint}.{key}"] = value
        for joint in joints:
            for spec in JOINT_PARAMETERS:
                name = joint_parameter(spec.name, joint)
                initial = defaults.get(name, spec.default)
                if spec.type == "double" and isinstance(initial, int | float):
                    initial = float(initial)
                self._declare(declared, name, initial, descriptor(spec, name))
        for param_key, locations in robot.param_subscriptions.items():
            location = locations[0]
            if location.kind == "joint" and location.name not in joints:
                continue
            item: object = robot.joints[location.name] if location.kind == "joint" else robot.actuators[location.name]
            for part in location.field:
                item = getattr(item, part, None) if item is not None else None
            if not isinstance(item, int | float) or not np.isfinite(item):
                continue
            name = ".".join(param_key)
            what = ".".join(location.field)
            bound_descriptor = ParameterDescriptor(
                name=name,
                type=ParameterType.PARAMETER_DOUBLE,
                description=f"The model's {what} of {location.kind} '{location.name}' (a bound parameter of the "
                "robot model; a change takes effect at once).",
            )
            self._declare(declared, name, float(item), bound_descriptor)
            bound[name] = self.number(name)

    def _declare(
        self, declared: list[str], name: str, value: ParameterValue | None, parameter: ParameterDescriptor
    ) -> None:
        if not self._node.has_parameter(name):
            self._node.declare_parameter(name, value, parameter)
        declared.append(name)

    def undeclare(self, names: Sequence[str]) -> None:
        """Remove parameters declared at configure (never raises)."""
        for name in names:
            if self._node.has_parameter(name):
                try:
                    self._node.undeclare_parameter(name)
                except Exception:  # noqa: BLE001
                    pass

    # -------------------------------------------------------------- what they make
    def effective_limits(
        self, robot: Robot, joints: Sequence[str], declared: Sequence[str], warn: Callable[[str], None]
    ) -> joint_limits.JointLimitTable:
        """The model's limits (``robot``, with its bound parameters), tightened by the ``joint_limits.*`` ones."""
        values = {name: self.value(name) for name in declared if name.startswith("joint_limits.")}
        table = joint_limits.from_robot(robot, joints)
        return joint_limits.apply_overrides(
            table, joint_limits.override_from_parameters(values, joints), source="joint_limits", warn=warn
        )

    def clamp_margins(self) -> ClampMargins:
        """The ``clamp_margin.*`` parameters."""
        return ClampMargins(
            revolute=self.number("clamp_margin.revolute"),
            prismatic=self.number("clamp_margin.prismatic"),
            relative=self.number("clamp_margin.relative"),
        )

    def core_settings(self) -> CoreSettings:
        """The core's settings from the parameters."""
        return CoreSettings(
            command_timeout=self.number("command_timeout"),
            watchdog_action=self.text("watchdog_action"),
            stale_timeout=self.number("stale_timeout"),
            stale_action=self.text("stale_action"),
            trajectory=TrajectoryOptions(
                start_tolerance=self.number("trajectory.start_tolerance"),
                limit_margin=self.number("trajectory.limit_margin"),
                allow_partial_joints=self.flag("allow_partial_joints_goal"),
                allow_nonzero_end_velocity=self.flag("allow_nonzero_velocity_at_trajectory_end"),
                limit_policy=self.text("limit_policy"),
                clamp_margins=self.clamp_margins(),
            ),
            immediate_commands=self.flag("immediate_commands"),
        )

    def collision_guard(
        self, loaded: LoadedModel, limits: joint_limits.JointLimitTable, log: Callable[[str, str], None]
    ) -> CollisionGuard | None:
        """The collision guard of the ``collision.*`` parameters (``None``: the model has no collision geometry).

        Raises:
            CollisionError: see :func:`bb_robot.driver.guard.build.build_guard`.
        """
        stop, slow = self.number("collision.stop_distance"), self.number("collision.slowdown_distance")
        settings = GuardSettings(
            clearance=self.number("collision.clearance"),
            slowdown_distance=max(slow, stop),
            stop_distance=stop,
            check_rate=self.number("collision.check_rate"),
        )
        return build_guard(
            loaded,
            limits.names,
            settings,
            self.number("rate"),
            srdf=self.text("collision.srdf"),
            compute_matrix=self.flag("collision.compute_matrix"),
            world=self.text("collision.world"),
            search_dirs=self.texts("model_dirs"),
            log=log,
            velocity_limits=limits.velocity,
            trust_srdf=self.flag("collision.trust_srdf"),
        )

    def tolerance_defaults(self, joints: Sequence[str]) -> ToleranceDefaults:
        """The ``constraints.*`` parameters of ``joints``."""
        return ToleranceDefaults(
            trajectory={j: self.number(f"constraints.{j}.trajectory") for j in joints},
            goal={j: self.number(f"constraints.{j}.goal") for j in joints},
            stopped_velocity=self.number("constraints.stopped_velocity_tolerance"),
            goal_time=self.number("constraints.goal_time"),
        )


def parameter_problem(name: str, value: ParameterValue | None, state: str) -> str | None:
    """Why setting parameter ``name`` to ``value`` in lifecycle ``state`` is refused (``None``: it is not).

    Args:
        name: The parameter.
        value: The new value.
        state: The node's lifecycle state (``unconfigured``, ``inactive``, ``active``, ...).

    Returns:
        The reason, or ``None``.
    """
    spec = next((s for s in PARAMETERS if s.name == name), None)
    if spec is not None:
        if spec.when == "activate" and state == "active":
            return f"{name} applies at activate: deactivate first"
        if spec.when == "configure" and state in ("inactive", "active"):
            return f"{name} applies at configure: clean up first"
        if spec.choices and value not in spec.choices:
            return f"{name} must be one of {', '.join(spec.choices)}, not {value!r}"
        if (
            spec.type == "integer"
            and spec.range is not None
            and isinstance(value, int | float)
            and not spec.range[0] <= value <= spec.range[1]
        ):
            return f"{name} must be from {spec.range[0]:g} to {spec.range[1]:g}, not {value!r}"
    if name.startswith("joint_limits.") and isinstance(value, float):
        if not np.isfinite(value):
            return f"{name} must be a finite number"
        if name.rsplit(".", 1)[-1] in ("max_velocity", "max_acceleration", "max_effort") and value < 0:
            return f"{name} must be above 0 (0: not given)"
    return None
