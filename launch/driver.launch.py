"""Launch bb_robot's driver node and bring it to active (joint commands in, joint states out).

    ros2 launch bb_robot driver.launch.py                      # the bundled arm on the simulator
    ros2 launch bb_robot driver.launch.py auto_arm:=true rate:=1000
    ros2 launch bb_robot driver.launch.py config:=worlds/ur3e_world.yaml \\
        model:=/path/to/sas_robot_driver_gazebo/sdf/ur3e_world.sdf

Arguments: ``backend`` (default: the parameter file's, else ``sim``), ``robot_name`` (prefix of
the sas topics), ``rate`` (control loop, Hz), ``model`` and ``model_scope`` (empty: the
``robot_description`` topic, or the parameter file's), ``auto_arm``, ``namespace``,
``use_sim_time``, ``config`` (the parameter file: a name under bb_robot's ``config/`` or an
absolute path; default ``bb_arm.yaml``) and ``params_file`` (a further parameter file, applied
after ``config``).  An empty argument leaves the parameter file's value, or the node's default.

The node is a lifecycle node; the launch file sets its ``autostart`` parameter, so it
configures and activates itself (no lifecycle manager needed).  See ``docs/nodes/driver.md``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "bb_robot"
EXECUTABLE = "driver"
DEFAULT_CONFIG = "bb_arm.yaml"

#: Launch argument → the node parameter it sets when it is not empty.
PARAMETER_ARGUMENTS = {
    "backend": "backend",
    "robot_name": "robot_name",
    "rate": "rate",
    "model": "model",
    "model_scope": "model_scope",
    "auto_arm": "auto_arm",
}
#: Parameters of type double / bool among them (launch arguments are strings).
DOUBLE_PARAMETERS = ("rate",)
BOOL_PARAMETERS = ("auto_arm",)

ARGUMENTS = (
    ("backend", "", "what moves the joints: sim (default), or another backend"),
    ("robot_name", "", "prefix of the sas topics <robot_name>/set/... and /get/... (default: the model's name)"),
    ("rate", "", "control loop rate in Hz (default 500)"),
    ("model", "", "URDF, xacro or SDF file to drive (empty: the robot_description topic)"),
    ("model_scope", "", "SDF: '::'-separated scoped name of the model to drive"),
    ("auto_arm", "", "true: arm when activated (default false: call ~/arm)"),
    ("namespace", "", "namespace of the node and its topics"),
    ("use_sim_time", "false", "take time from /clock"),
    ("config", DEFAULT_CONFIG, "parameter file: a name under bb_robot's config/ or an absolute path"),
    ("params_file", "", "a further parameter file, applied after config"),
)


def _file(name):
    return name if os.path.isabs(name) else os.path.join(get_package_share_directory(PACKAGE), "config", name)


def _driver_node(context, *_args, **_kwargs):
    files = [_file(LaunchConfiguration("config").perform(context))]
    extra = LaunchConfiguration("params_file").perform(context)
    if extra:
        files.append(_file(extra))
    overrides = {}
    for argument, parameter in PARAMETER_ARGUMENTS.items():
        value = LaunchConfiguration(argument).perform(context)
        if not value:
            continue
        if parameter in DOUBLE_PARAMETERS:
            overrides[parameter] = float(value)
        elif parameter in BOOL_PARAMETERS:
            overrides[parameter] = value.lower() in ("true", "1", "yes")
        else:
            overrides[parameter] = value
    overrides["use_sim_time"] = LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1", "yes")
    overrides["autostart"] = True
    return [
        Node(
            package=PACKAGE,
            executable=EXECUTABLE,
            name=EXECUTABLE,
            namespace=LaunchConfiguration("namespace"),
            parameters=[*files, overrides],
            output="screen",
        )
    ]


def generate_launch_description():
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=_driver_node)])
