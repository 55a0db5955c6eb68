"""Which gz-transport topics command and report a robot's joints in a Gazebo Harmonic world.

ROS-free.  :func:`derive_topics` reads the ``<plugin>`` elements of a world loaded with
:func:`bb_robot.sdf.load_from_file` (which systems they load: :mod:`bb_robot.gzsim.plugins`) and
applies gz-sim 8's own naming rules (read in its sources, branch ``gz-sim8``; cited as *[rule]*
below and in ``docs/nodes/gazebo.md``; the name rules in :mod:`bb_robot.gzsim.names`):

- **[owner]** A ``<plugin>`` belongs to the model that holds it; one written in an ``<include>``
  belongs to the included model (libsdformat adds it to that model's plugins), one in a
  ``merge="true"`` include to the including model.  gz-sim 8 loads the plugins of *every* model,
  nested ones too, with that model's entity (``SdfEntityCreator::CreateEntities``,
  ``LoadModelPlugins``).
- **[name]** The command systems name their topics after ``Model::Name`` of that entity: the
  model's **own** name, not its scoped name (``/model/ur3e/...`` for
  ``ur3e::ur3e_position_controller::ur3e``).
- **[scoped]** JointStatePublisher uses ``topicFromScopedName(model, ecm, false)`` (``src/Util.cc``):
  every ancestor from the world down, each as ``<type>/<name>`` —
  ``/world/<world>/model/<a>/model/<b>/joint_state``.
- **[valid]** Every topic goes through gz-transport's ``TopicUtils::AsValidTopic`` (spaces become
  ``_``; ``@``, ``~``, ``//`` and ``:=`` are removed; an invalid result is empty and the system
  does not subscribe), and a relative topic (``<topic>rotor_cmd</topic>``) is absolute on the wire
  under the node's empty namespace (``/rotor_cmd``), with a trailing ``/`` dropped
  (``TopicUtils::FullyQualifiedName``).

Per system (``Configure`` of each):

========================= ===================================================================
JointPositionController   ``<topic>``, else ``/model/<name>/<sub_topic>``, else with
                          ``<use_actuator_msg>`` and ``<actuator_number>`` ``/actuators``, else
                          ``/model/<name>/joint/<joint_name>/<joint_index>/cmd_pos``;
                          ``gz.msgs.Double`` (``gz.msgs.Actuators``: ``position[actuator_number]``).
                          ``<joint_name>`` is scoped relative to the model (``child::joint``).
JointController           as above without the index: ``.../joint/<joint_name>/cmd_vel``
                          (Actuators: ``velocity[actuator_number]``); ``<joint_name>``: a joint
                          of the model itself (``Model::JointByName``).
ApplyJointForce           ``/model/<name>/joint/<joint_name>/cmd_force`` only; ``gz.msgs.Double``.
JointTrajectoryController ``<topic>``, else ``/model/<name>/joint_trajectory``;
                          ``gz.msgs.JointTrajectory`` with the joints' own names; progress on
                          ``<topic>_progress`` (``gz.msgs.Float``).  Joints: the listed
                          ``<joint_name>``\\ s or every single-axis joint of the model itself.
JointStatePublisher       ``<topic>`` if valid, else the [scoped] topic + ``/joint_state``;
                          ``gz.msgs.Model`` whose joints carry their own (bare) names: the listed
                          ``<joint_name>``\\ s or every joint of the model itself (not of nested
                          models).
========================= ===================================================================

A system with several ``<joint_name>``\\ s moves them together from one command (the PID runs on
the first one found): only that first joint is driven through it; the others are reported as
coupled.  Element values are read as libsdformat reads a plugin's: trimmed; booleans ``true`` /
``1`` (any case) are true, anything else false.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from bb_robot.errors import BbRobotError
from bb_robot.gzsim.names import absolute_topic, as_valid_topic, scoped_topic, valid_topic
from bb_robot.gzsim.plugins import PluginError, PluginSettings, read_plugin, system_of
from bb_robot.sdf.document import SdfModel

if TYPE_CHECKING:
    from bb_robot.sdf.loader import SdfLoadResult

Interface = Literal["position", "velocity", "effort", "trajectory"]
INTERFACES: tuple[Interface, ...] = ("position", "velocity", "effort", "trajectory")

#: The message types the systems use (Gazebo Harmonic's names).
DOUBLE = "gz.msgs.Double"
ACTUATORS = "gz.msgs.Actuators"
JOINT_TRAJECTORY = "gz.msgs.JointTrajectory"
FLOAT = "gz.msgs.Float"
MODEL = "gz.msgs.Model"
CLOCK = "gz.msgs.Clock"

#: Joint types JointTrajectoryController enables (one actuated axis).
_SINGLE_AXIS = frozenset({"revolute", "prismatic", "continuous", "gearbox"})


class TopicError(BbRobotError, ValueError):
    """Topics cannot be derived or overridden (a malformed override, a joint that is not driven, ...).

    The message names the parameter entry or topic concerned.
    """


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class CommandTopic:
    """One way to command one joint.

    ``interface``: ``position`` (JointPositionController), ``velocity`` (JointController),
    ``effort`` (ApplyJointForce) or ``trajectory`` (JointTrajectoryController, a position
    target sent as a one-point trajectory).  ``type_name``: ``gz.msgs.Double``,
    ``gz.msgs.Actuators`` (``actuator`` is the index into its ``position`` / ``velocity``) or
    ``gz.msgs.JointTrajectory`` (``gz_joint`` is the joint's name in it).  ``system``, ``model``
    (scoped), ``where`` (file:line) and ``rule`` say where it came from.
    """

    joint: str
    interface: Interface
    topic: str
    type_name: str
    gz_joint: str
    system: str
    model: str
    where: str
    rule: str
    actuator: int | None = None
    progress_topic: str = ""


@dataclass(frozen=True)
class StateTopic:
    """A JointStatePublisher's ``gz.msgs.Model`` topic; ``joints`` maps the names in its messages
    (bare joint names) to the robot's joint names (only the robot's driven joints)."""

    topic: str
    joints: Mapping[str, str]
    model: str
    where: str
    rule: str


@dataclass(frozen=True)
class GazeboTopics:
    """Every derived topic for the robot's ``joints`` (see the module docstring)."""

    world: str | None
    scope: str
    joints: tuple[str, ...]
    commands: tuple[CommandTopic, ...]
    states: tuple[StateTopic, ...]
    clock: str | None
    warnings: tuple[str, ...] = field(default=())

    def command(self, joint: str, interface: Interface) -> CommandTopic | None:
        """The route commanding ``joint`` through ``interface`` (the first one found), or ``None``."""
        return next((c for c in self.commands if c.joint == joint and c.interface == interface), None)

    def interfaces(self, joint: str) -> tuple[Interface, ...]:
        """The interfaces ``joint`` can be commanded through, in :data:`INTERFACES` order."""
        return tuple(i for i in INTERFACES if self.command(joint, i) is not None)

    def state_of(self, joint: str) -> StateTopic | None:
        """The joint-state topic that reports ``joint`` (the first one found), or ``None``."""
        return next((s for s in self.states if joint in s.joints.values()), None)

    def describe(self) -> list[str]:
        """One line per route, for logs and ``docs``."""
        lines = []
        for joint in self.joints:
            routes = [c for c in self.commands if c.joint == joint]
            if not routes:
                lines.append(f"{joint}: no command topic")
            for c in routes:
                index = f" [{'position' if c.interface == 'position' else 'velocity'}[{c.actuator}]]"
                lines.append(
                    f"{joint}: {c.interface} -> {c.topic} ({c.type_name}"
                    + (index if c.actuator is not None else "")
                    + f"; {c.system} of '{c.model}', {c.rule})"
                )
        for s in self.states:
            lines.append(f"joint state <- {s.topic} (gz.msgs.Model; {', '.join(sorted(s.joints))}; {s.rule})")
        if self.clock:
            lines.append(f"clock <- {self.clock} (gz.msgs.Clock)")
        return lines


# ------------------------------------------------------------------ derivation
@dataclass
class _Context:
    world: str | None
    robot_joint: dict[str, str]  # full scoped joint name -> the robot's joint name
    model_joints: dict[str, tuple[tuple[str, str], ...]]  # scoped model -> its own joints (name, type)
    gz_names: dict[str, str]  # scoped model -> its name in Gazebo
    gz_scopes: dict[str, str]  # scoped model -> its scoped name in Gazebo
    commands: list[CommandTopic] = field(default_factory=list)
    states: list[StateTopic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def derive_topics(
    result: SdfLoadResult,
    joints: Sequence[str] | None = None,
    *,
    world_name: str | None = None,
    model_name: str | None = None,
) -> GazeboTopics:
    """The command, joint-state and clock topics of ``joints``.

    Joints of the robot are matched by their full scoped names (``result.scoped_names``).  A
    plugin whose settings cannot be read, a second controller of a joint and the like are
    reported in :attr:`GazeboTopics.warnings`, not raised.

    Args:
        result: A world (or model) file as loaded by :func:`bb_robot.sdf.load_from_file`.
        joints: The robot's joints to derive topics for (default: ``result.joint_names``).
        world_name: Replaces the file's world name (required for a model file, which names no
            world, to derive joint-state topics).
        model_name: Renames the top-level model as it was spawned into Gazebo
            (``gz service .../create`` with another name).

    Returns:
        Every derived topic, with the rule and plugin each came from.
    """
    document = result.document
    chosen = tuple(result.joint_names if joints is None else joints)
    robot_joint = {result.scoped_names[j]: j for j in chosen if j in result.scoped_names}
    models: list[SdfModel] = document.models()
    world = world_name or result.world.name
    gz_names: dict[str, str] = {}
    gz_scopes: dict[str, str] = {}
    for model in models:
        parts = model.scoped_name.split("::")
        if model_name and len(parts) >= 1:
            parts[0] = model_name
        gz_scopes[model.scoped_name] = "::".join(parts)
        gz_names[model.scoped_name] = parts[-1]
    ctx = _Context(
        world=world,
        robot_joint=robot_joint,
        model_joints={m.scoped_name: tuple((j.name, j.type) for j in m.joints) for m in models},
        gz_names=gz_names,
        gz_scopes=gz_scopes,
    )
    for model in models:
        for plugin in model.plugins:
            system = system_of(plugin)
            if system is None:
                continue
            try:
                settings = read_plugin(plugin, system)
            except PluginError as error:
                ctx.warnings.append(str(error))
                continue
            _HANDLERS[system](ctx, model, settings)
    clock = valid_topic(f"/world/{world}/clock") if world else None
    _check_duplicates(ctx, chosen)
    return GazeboTopics(
        world=world,
        scope=result.source_scope,
        joints=chosen,
        commands=tuple(ctx.commands),
        states=tuple(ctx.states),
        clock=clock or None,
        warnings=tuple(ctx.warnings),
    )


def _check_duplicates(ctx: _Context, joints: Sequence[str]) -> None:
    seen: dict[tuple[str, str], CommandTopic] = {}
    for command in ctx.commands:
        key = (command.joint, command.interface)
        first = seen.setdefault(key, command)
        if first is not command:
            ctx.warnings.append(
                f"{command.where}: {command.joint} has a second {command.interface} controller "
                f"({command.system} on {command.topic}); the driver uses the first ({first.topic}, {first.where})"
            )
    for joint in joints:
        kinds = {c.interface for c in ctx.commands if c.joint == joint}
        fighting = kinds & {"position", "velocity", "trajectory"}
        if len(fighting) > 1:
            ctx.warnings.append(
                f"{joint} has {' and '.join(sorted(fighting))} controllers: Gazebo runs every one of them at each "
                "step with its latest command, so they act against each other"
            )


def _joints_of(ctx: _Context, model: SdfModel, names: Sequence[str], *, scoped: bool) -> list[str]:
    """Full scoped names of the listed joints that exist: ``scoped`` resolves ``a::b`` relative to
    the model (entitiesFromScopedName); otherwise only the model's own joints (JointByName)."""
    own = {name for name, _ in ctx.model_joints.get(model.scoped_name, ())}
    found = []
    for name in names:
        if scoped:
            head, _, tail = name.rpartition("::")
            inner = f"{model.scoped_name}::{head}" if head else model.scoped_name
            if tail in {n for n, _ in ctx.model_joints.get(inner, ())}:
                found.append(f"{inner}::{tail}")
        elif name in own:
            found.append(f"{model.scoped_name}::{name}")
    return found


def _primary(
    ctx: _Context, model: SdfModel, settings: PluginSettings, *, scoped: bool
) -> tuple[str | None, str | None]:
    """``(first joint name as written, its robot joint)``; warns about missing and coupled joints."""
    names = [n for n in settings.all("joint_name") if n]
    if not names:
        ctx.warnings.append(f"{settings.where}: {settings.system} has no <joint_name>; Gazebo does not load it")
        return None, None
    found = _joints_of(ctx, model, names, scoped=scoped)
    if not found:
        return names[0], None
    primary = ctx.robot_joint.get(found[0])
    coupled = [ctx.robot_joint[f] for f in found[1:] if f in ctx.robot_joint]
    if coupled and primary is not None:
        ctx.warnings.append(
            f"{settings.where}: {settings.system} moves {', '.join(coupled)} together with {primary} "
            f"(one command for all its <joint_name>s): they are not commanded through it"
        )
    elif coupled:
        ctx.warnings.append(
            f"{settings.where}: {settings.system} moves {', '.join(coupled)} together with a joint the "
            "driver does not drive: not commanded through it"
        )
    return names[0], primary


def _controller(ctx: _Context, model: SdfModel, settings: PluginSettings) -> None:
    """JointPositionController and JointController (same topic rules)."""
    position = settings.system == "JointPositionController"
    first, joint = _primary(ctx, model, settings, scoped=position)
    if first is None or joint is None:
        return
    name = ctx.gz_names[model.scoped_name]
    index = settings.integer("joint_index", 0) if position else 0
    actuator: int | None = None
    if settings.flag("use_actuator_msg"):
        if settings.has("actuator_number"):
            actuator = settings.integer("actuator_number", 0)
        else:
            ctx.warnings.append(
                f"{settings.where}: <use_actuator_msg> without <actuator_number>: Gazebo ignores it and "
                "listens for gz.msgs.Double"
            )
    suffix = f"joint/{first}/{index}/cmd_pos" if position else f"joint/{first}/cmd_vel"
    if settings.has("topic"):
        written = settings.text("topic") or ""
        topic, rule = valid_topic(written), f"<topic>{written}</topic>"
    elif settings.has("sub_topic"):
        written = f"/model/{name}/{settings.text('sub_topic') or ''}"
        topic, rule = valid_topic(written), "/model/<model name>/<sub_topic>"
    elif actuator is not None:
        topic, rule = "/actuators", "<use_actuator_msg>: /actuators"
    else:
        written = f"/model/{name}/{suffix}"
        topic = valid_topic(written)
        rule = (
            "default /model/<model name>/joint/<joint_name>/<joint_index>/cmd_pos"
            if position
            else "default /model/<model name>/joint/<joint_name>/cmd_vel"
        )
    if not topic:
        ctx.warnings.append(f"{settings.where}: {settings.system} of {joint}: no valid topic ({rule}); Gazebo fails it")
        return
    if position and index != 0:
        ctx.warnings.append(
            f"{settings.where}: JointPositionController of {joint} has <joint_index>{index}</joint_index>; "
            "a single-axis joint has only axis 0, so Gazebo refuses its commands: not used"
        )
        return
    ctx.commands.append(
        CommandTopic(
            joint=joint,
            interface="position" if position else "velocity",
            topic=topic,
            type_name=ACTUATORS if actuator is not None else DOUBLE,
            gz_joint=first,
            system=settings.system,
            model=model.scoped_name,
            where=settings.where,
            rule=rule,
            actuator=actuator,
        )
    )


def _apply_force(ctx: _Context, model: SdfModel, settings: PluginSettings) -> None:
    first = settings.text("joint_name") or ""  # only the first <joint_name> (GetElement)
    if not first:
        ctx.warnings.append(f"{settings.where}: ApplyJointForce has no <joint_name>; Gazebo does not load it")
        return
    found = _joints_of(ctx, model, [first], scoped=False)
    joint = ctx.robot_joint.get(found[0]) if found else None
    if joint is None:
        return
    name = ctx.gz_names[model.scoped_name]
    topic = valid_topic(f"/model/{name}/joint/{first}/cmd_force")
    if not topic:
        ctx.warnings.append(f"{settings.where}: ApplyJointForce of {joint}: no valid topic")
        return
    ctx.commands.append(
        CommandTopic(
            joint=joint,
            interface="effort",
            topic=topic,
            type_name=DOUBLE,
            gz_joint=first,
            system=settings.system,
            model=model.scoped_name,
            where=settings.where,
            rule="/model/<model name>/joint/<joint_name>/cmd_force",
        )
    )


def _trajectory(ctx: _Context, model: SdfModel, settings: PluginSettings) -> None:
    own = ctx.model_joints.get(model.scoped_name, ())
    listed = [n for n in settings.all("joint_name") if n]
    if listed:
        names = [n for n in dict.fromkeys(listed) if n in {j for j, _ in own}]
        types = dict(own)
        names = [n for n in names if types.get(n) in _SINGLE_AXIS]
    else:
        names = [n for n, kind in own if kind in _SINGLE_AXIS]
    written = settings.text("topic") or ""
    if written:
        topic, rule = valid_topic(written), f"<topic>{written}</topic>"
    else:
        topic = valid_topic(f"/model/{ctx.gz_names[model.scoped_name]}/joint_trajectory")
        rule = "default /model/<model name>/joint_trajectory"
    for name in names:
        joint = ctx.robot_joint.get(f"{model.scoped_name}::{name}")
        if joint is None:
            continue
        if not topic:
            ctx.warnings.append(f"{settings.where}: JointTrajectoryController of {joint}: no valid topic ({rule})")
            return
        ctx.commands.append(
            CommandTopic(
                joint=joint,
                interface="trajectory",
                topic=topic,
                type_name=JOINT_TRAJECTORY,
                gz_joint=name,
                system=settings.system,
                model=model.scoped_name,
                where=settings.where,
                rule=rule,
                progress_topic=topic + "_progress",
            )
        )


def _state(ctx: _Context, model: SdfModel, settings: PluginSettings) -> None:
    own = [name for name, _ in ctx.model_joints.get(model.scoped_name, ())]
    listed = [n for n in settings.all("joint_name") if n]
    names = [n for n in listed if n in own] if settings.has("joint_name") else own
    joints = {
        name: ctx.robot_joint[f"{model.scoped_name}::{name}"]
        for name in names
        if f"{model.scoped_name}::{name}" in ctx.robot_joint
    }
    if not joints:
        return
    written = settings.text("topic")
    topic = valid_topic(written) if written else ""
    rule = f"<topic>{written}</topic>"
    if not topic:
        if written:
            ctx.warnings.append(f"{settings.where}: JointStatePublisher <topic>{written}</topic> is not valid")
        if ctx.world is None:
            ctx.warnings.append(
                f"{settings.where}: the file names no world, so the JointStatePublisher topic of "
                f"'{model.scoped_name}' is unknown: set the world name"
            )
            return
        topic = scoped_topic(ctx.world, ctx.gz_scopes[model.scoped_name])
        topic = topic + "/joint_state" if topic else ""
        rule = "default /world/<world>/model/<each model from the top>/joint_state"
        if not topic:
            ctx.warnings.append(f"{settings.where}: no valid JointStatePublisher topic for '{model.scoped_name}'")
            return
    ctx.states.append(StateTopic(topic=topic, joints=joints, model=model.scoped_name, where=settings.where, rule=rule))


_HANDLERS = {
    "JointPositionController": _controller,
    "JointController": _controller,
    "ApplyJointForce": _apply_force,
    "JointTrajectoryController": _trajectory,
    "JointStatePublisher": _state,
}


# ------------------------------------------------------------------ overrides
def parse_override(entry: str) -> tuple[str, str, int | None]:
    """Read one entry of a ``gazebo.*_topics`` parameter.

    Args:
        entry: ``"joint=/topic"`` (``gz.msgs.Double``) or ``"joint=/topic@N"``
            (``gz.msgs.Actuators``, index ``N``).

    Returns:
        ``(joint, topic, N or None)``.

    Raises:
        TopicError: The entry is malformed or its topic is not a valid gz-transport topic.
    """
    joint, sep, rest = entry.partition("=")
    joint, rest = joint.strip(), rest.strip()
    if not sep or not joint or not rest:
        raise TopicError(f"'{entry}': write joint=/topic, or joint=/topic@N for gz.msgs.Actuators index N")
    actuator: int | None = None
    if "@" in rest:
        rest, _, number = rest.rpartition("@")
        if not number.isdigit():
            raise TopicError(f"'{entry}': the actuator index after '@' must be a number")
        actuator = int(number)
    topic = as_valid_topic(rest)
    if topic != rest or not topic:
        raise TopicError(f"'{entry}': '{rest}' is not a valid gz-transport topic")
    return joint, absolute_topic(topic), actuator


def with_overrides(
    topics: GazeboTopics,
    *,
    position: Sequence[str] = (),
    velocity: Sequence[str] = (),
    effort: Sequence[str] = (),
    joint_state: Sequence[str] = (),
    clock: str = "",
) -> GazeboTopics:
    """``topics`` with the explicit topics of the backend's parameters in place of the derived ones.

    ``position`` / ``velocity`` / ``effort``: ``joint=/topic`` or ``joint=/topic@N`` (see
    :func:`parse_override`); each replaces every derived route of that joint and interface
    (a position override also replaces a trajectory route).  ``joint_state``: topics whose
    ``gz.msgs.Model`` report the joints under the robot's names; given, they replace the derived
    ones.  ``clock``: the ``gz.msgs.Clock`` topic.

    Args:
        topics: The derived topics.
        position: ``joint=/topic[@N]`` entries for position commands.
        velocity: ``joint=/topic[@N]`` entries for velocity commands.
        effort: ``joint=/topic[@N]`` entries for effort commands.
        joint_state: ``gz.msgs.Model`` topics.
        clock: The ``gz.msgs.Clock`` topic (empty: the derived one).

    Returns:
        The topics with the overrides in place.

    Raises:
        TopicError: An entry is malformed, names a joint that is not driven, or a topic is
            not valid.
    """
    commands = list(topics.commands)
    joints = set(topics.joints)
    for interface, entries in (("position", position), ("velocity", velocity), ("effort", effort)):
        for entry in entries:
            joint, topic, actuator = parse_override(entry)
            if joint not in joints:
                raise TopicError(f"'{entry}': '{joint}' is not a driven joint ({', '.join(topics.joints)})")
            replaced = {interface, "trajectory"} if interface == "position" else {interface}
            commands = [c for c in commands if not (c.joint == joint and c.interface in replaced)]
            commands.append(
                CommandTopic(
                    joint=joint,
                    interface=interface,  # type: ignore[arg-type]
                    topic=topic,
                    type_name=ACTUATORS if actuator is not None else DOUBLE,
                    gz_joint=joint.rsplit("::", 1)[-1],
                    system="override",
                    model="",
                    where="parameter",
                    rule=f"{interface}_topics parameter",
                    actuator=actuator,
                )
            )
    states = topics.states
    if joint_state:
        names = {j.rsplit("::", 1)[-1]: j for j in topics.joints}
        states = tuple(
            StateTopic(topic=_override_topic(t), joints=dict(names), model="", where="parameter", rule="parameter")
            for t in joint_state
        )
    return replace(
        topics, commands=tuple(commands), states=states, clock=_override_topic(clock) if clock else topics.clock
    )


def _override_topic(topic: str) -> str:
    valid = as_valid_topic(topic.strip())
    if not valid or valid != topic.strip():
        raise TopicError(f"'{topic}' is not a valid gz-transport topic")
    return absolute_topic(valid)
