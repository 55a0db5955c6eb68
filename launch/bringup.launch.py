"""Bring up a whole robot: the description node and the driver from one parameter file.

    ros2 launch bb_robot bringup.launch.py                       # bb_arm on the simulator, driver active
    ros2 launch bb_robot bringup.launch.py config:=bb_arm_pair.yaml            # two arms in one TF tree
    ros2 launch bb_robot bringup.launch.py config:=bb_arm_actuators.yaml       # servos (start a bridge)
    ros2 launch bb_robot bringup.launch.py config:=worlds/ur3e_world_gazebo.yaml \\
        model:=/path/to/ur3e_world.sdf world:=/path/to/ur3e_world.sdf gz:=true

Arguments (``ros2 launch bb_robot bringup.launch.py --show-args``): ``model``, ``model_scope``
(empty: the parameter file's), ``model_dirs`` (``:``-separated extra directories a model and its
includes may come from), ``config`` (a name under bb_robot's ``config/`` or an absolute path;
default ``bb_arm.yaml``), ``backend`` (empty: the parameter file's, else ``sim``; ``gazebo``,
``actuators``), ``namespace``, ``frame_prefix``, ``use_sim_time``, ``rviz`` (RViz with
``config/bringup.rviz`` where ``rviz2`` exists), ``world`` and ``gz`` (``gz sim -r <world>`` where
``gz`` exists) and ``robots`` (``,``-separated namespaces; empty: the robots the parameter file
has sections for, e.g. ``/left/description`` and ``/right/description``, else one robot) and
``respawn`` (``true``: a description node or driver that ends is started again after a second;
the driver then comes back disarmed, see ``docs/safety.md``) and ``planning`` (default ``true``:
a ``move_group`` node per robot; ``false`` leaves it out).

Each robot is a description node, a driver (``autostart``: it configures and activates itself) and
a move_group node (MoveIt's actions and services, ``docs/nodes/move_group.md``) in the robot's
namespace. See ``docs/bringup.md``.
"""

import importlib.util
import os
import shutil

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from bb_robot.bringup.config import read_config
from bb_robot.driver.backends.base import builtin_backends

PACKAGE = "bb_robot"
DEFAULT_CONFIG = "bb_arm.yaml"  # as bb_robot.bringup.config.DEFAULT_CONFIG
RVIZ_CONFIG = "bringup.rviz"

ARGUMENTS = (
    ("model", "", "URDF, xacro or SDF file (path, package:// or model:// URI); empty: the parameter file's"),
    ("model_scope", "", "SDF: '::'-separated nested model names down to the robot"),
    ("model_dirs", "", "':'-separated extra directories the model and its includes may come from"),
    ("config", DEFAULT_CONFIG, "parameter file: a name under bb_robot's config/ or an absolute path"),
    ("backend", "", "what moves the joints: " + ", ".join(builtin_backends()) + " (empty: the parameter file's)"),
    ("namespace", "", "namespace of every node and topic"),
    ("frame_prefix", "", "prefix of every published frame id, e.g. 'left/' (one robot)"),
    ("use_sim_time", "false", "take time from /clock"),
    ("rviz", "false", "true: start RViz (rviz2) showing RobotModel and TF in frame 'world'"),
    ("world", "", "Gazebo: the SDF world file for gz:=true"),
    ("gz", "false", "true: also start 'gz sim -r <world>'"),
    ("robots", "", "','-separated robot namespaces (empty: those the parameter file has sections for)"),
    ("view", "false", "true: start the view node, serving the robot to Foxglove (docs/view.md)"),
    ("view_host", "127.0.0.1", "view: the address the Foxglove server listens on (unauthenticated beyond localhost)"),
    ("view_port", "8765", "view: the Foxglove server's port (0: any free port)"),
    ("record", "", "an MCAP file the view node records the robot's topics to (it must not exist yet)"),
    ("respawn", "false", "true: restart a description node or driver that ends (the driver comes back disarmed)"),
    ("planning", "true", "true: a move_group node per robot: MoveIt's interface (docs/nodes/move_group.md)"),
    ("bus_port", "", "the servo bus's port when the parameter file has a /**/bus section (empty: the file's)"),
)

TRUE = ("true", "1", "yes", "on")


def _config_file(name):
    return name if os.path.isabs(name) else os.path.join(get_package_share_directory(PACKAGE), "config", name)


def _overrides(context):
    """Node parameters common to both nodes, from the non-empty launch arguments."""
    value = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    common = {"use_sim_time": value("use_sim_time").lower() in TRUE}
    description = {}
    driver = {"autostart": True}
    if value("respawn").lower() in TRUE:
        driver["respawn"] = True  # a restart comes back disarmed, whatever auto_arm says
    model = value("model")
    if model:
        description["model"] = model
    if value("model_scope"):
        description["model_scope"] = value("model_scope")
        driver["model_scope"] = value("model_scope")
    extra_dirs = [d for d in value("model_dirs").split(":") if d]
    if model and os.path.isabs(model):
        extra_dirs.insert(0, os.path.dirname(model))
    if extra_dirs:
        models = os.path.join(get_package_share_directory(PACKAGE), "models")
        description["model_dirs"] = [*extra_dirs, models]
        driver["model_dirs"] = [*extra_dirs, models]
    if value("frame_prefix"):
        description["frame_prefix"] = value("frame_prefix")
    if value("backend"):
        driver["backend"] = value("backend")
    backend = value("backend") or read_config(_config_file(value("config"))).backend
    if model and backend == "gazebo":
        driver["model"] = model  # the gazebo backend reads the world's topics from the file itself
    return {**common, **description}, {**common, **driver}


def _robot_nodes(context, config, robots):
    description, driver = _overrides(context)
    outer = LaunchConfiguration("namespace").perform(context).strip("/")
    respawn = {"respawn": LaunchConfiguration("respawn").perform(context).lower() in TRUE, "respawn_delay": 1.0}
    nodes = []
    for robot in robots:
        namespace = "/".join(part for part in (outer, robot) if part)
        nodes.append(
            Node(
                package=PACKAGE,
                executable="description",
                name="description",
                namespace=namespace,
                parameters=[config, description],
                output="screen",
                **respawn,
            )
        )
        nodes.append(
            Node(
                package=PACKAGE,
                executable="driver",
                name="driver",
                namespace=namespace,
                parameters=[config, driver],
                output="screen",
                **respawn,
            )
        )
        nodes.extend(_move_group(context, config, namespace, description, respawn))
        nodes.extend(_bus(context, config, namespace))
    return nodes


def _bus(context, config, namespace):
    """The bus bridge (``bb-robot bus``, docs/buses.md) when the parameter file has a /**/bus section:
    the servos behind the actuators backend's topics; ``bus_port`` overrides the file's port."""
    if not read_config(config).bus:
        return []
    port = LaunchConfiguration("bus_port").perform(context)
    return [
        Node(
            package=PACKAGE,
            executable="bus",
            name="bus",
            namespace=namespace,
            parameters=[config, {"port": port} if port else {}],
            output="screen",
        )
    ]


def _move_group(context, config, namespace, description, respawn):
    """The move_group node of one robot when planning:=true: it takes the robot from the description
    node's robot_description (as the driver does), the obstacles and limits from the driver's file,
    and the file's /**/move_group section (e.g. collision.clearance) over them."""
    if LaunchConfiguration("planning").perform(context).lower() not in TRUE:
        return []
    if importlib.util.find_spec("moveit_msgs") is None:
        return [
            LogInfo(
                msg="planning:=true but moveit_msgs is not importable (scripts/setup builds it from "
                "../shared/third_party/ros2/moveit; a ROS install has ros-<distro>-moveit-msgs): no move_group node"
            )
        ]
    read = read_config(config)
    parameters = {"use_sim_time": description["use_sim_time"], "planning.joint_limits_file": config}
    if read.collision_world:
        parameters["collision.world"] = read.collision_world
    if read.servo_tip:
        parameters["planning.tip"] = read.servo_tip
    if "model_dirs" in description:
        parameters["model_dirs"] = description["model_dirs"]
    parameters.update(read.move_group)  # the file's own /**/move_group section, if any
    return [
        Node(
            package=PACKAGE,
            executable="move_group",
            name="move_group",
            namespace=namespace,
            parameters=[parameters],
            output="screen",
            **respawn,
        )
    ]


def _rviz(context):
    if LaunchConfiguration("rviz").perform(context).lower() not in TRUE:
        return []
    if shutil.which("rviz2") is None:
        return [LogInfo(msg="rviz:=true but there is no rviz2 on PATH (install ROS 2's rviz2); running without it")]
    rviz_config = os.path.join(get_package_share_directory(PACKAGE), "config", RVIZ_CONFIG)
    return [Node(package="rviz2", executable="rviz2", arguments=["-d", rviz_config], output="screen")]


def _gazebo(context):
    if LaunchConfiguration("gz").perform(context).lower() not in TRUE:
        return []
    world = LaunchConfiguration("world").perform(context)
    if not world:
        raise RuntimeError("gz:=true needs world:=<SDF world file>")
    if shutil.which("gz") is None:
        return [
            LogInfo(
                msg=f"gz:=true but there is no 'gz' executable on PATH (install Gazebo Harmonic): not starting "
                f"'gz sim -r {world}'; the driver waits for a Gazebo already running"
            )
        ]
    return [ExecuteProcess(cmd=["gz", "sim", "-r", world], output="screen")]


def _view(context):
    """The view node (Foxglove server and/or MCAP recording) when view:=true or record:=FILE."""
    value = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    serve, record = value("view").lower() in TRUE, value("record")
    if not (serve or record):
        return []
    description, driver = _overrides(context)
    parameters = {"serve": serve, "host": value("view_host"), "port": int(value("view_port")), "record": record}
    if "model_dirs" in description:
        parameters["model_dirs"] = description["model_dirs"]
    config = read_config(_config_file(value("config")))
    if config.collision_world:  # the obstacles the driver checks, placed as it places them
        parameters["collision.world"] = config.collision_world
        parameters["model"] = driver.get("model", config.driver_model)
        parameters["model_scope"] = driver.get("model_scope", config.driver_model_scope)
    parameters["frame_prefix"] = description.get("frame_prefix", config.frame_prefix)
    if config.servo_tip:  # the tool whose planned path is drawn, the move_group node's planning.tip
        parameters["planning.tip"] = config.servo_tip
    namespace = LaunchConfiguration("namespace").perform(context).strip("/")
    return [
        Node(
            package=PACKAGE,
            executable="view",
            name="view",
            namespace=namespace,
            parameters=[parameters],
            output="screen",
        )
    ]


def _optional_nodes(context):
    """Further nodes some argument asks for: RViz, Gazebo, the Foxglove view."""
    return [*_rviz(context), *_gazebo(context), *_view(context)]


def _bringup(context, *_args, **_kwargs):
    backend = LaunchConfiguration("backend").perform(context)
    if backend and backend not in builtin_backends():
        raise RuntimeError(f"unknown backend '{backend}' (known: {', '.join(builtin_backends())})")
    config = _config_file(LaunchConfiguration("config").perform(context))
    robots_arg = LaunchConfiguration("robots").perform(context)
    robots = [r.strip("/") for r in robots_arg.split(",") if r.strip("/")] or list(read_config(config).robots) or [""]
    return [*_robot_nodes(context, config, robots), *_optional_nodes(context)]


def generate_launch_description():
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=_bringup)])
