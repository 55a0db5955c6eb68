"""Launch bb_robot's description node (robot_description and TF of a URDF, xacro or SDF model).

    ros2 launch bb_robot description.launch.py
    ros2 launch bb_robot description.launch.py model:=package://my_robot/urdf/arm.urdf.xacro tip_link:=tool0
    ros2 launch bb_robot description.launch.py namespace:=left frame_prefix:=left/

Arguments: ``model``, ``model_scope``, ``tip_link``, ``frame_prefix`` (each empty by default: the
parameter file's value, or the node's default, stays), ``namespace``, ``use_sim_time``, and
``config``, the parameter file (a file name in bb_robot's ``config/`` or an absolute path;
default ``bb_arm.yaml``).  A model file must lie in the node's ``model_dirs`` (by default
bb_robot's ``models/``): set ``model_dirs`` in your own parameter file to load others.
See ``docs/nodes/description.md``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "bb_robot"
EXECUTABLE = "description"
DEFAULT_CONFIG = "bb_arm.yaml"

#: Launch argument → the node parameter it sets when it is not empty.
PARAMETER_ARGUMENTS = {
    "model": "model",
    "model_scope": "model_scope",
    "tip_link": "tip_link",
    "frame_prefix": "frame_prefix",
}

ARGUMENTS = (
    ("model", "", "URDF, xacro or SDF file (path, package:// or model:// URI) inside the node's model_dirs"),
    ("model_scope", "", "SDF: '::'-separated nested model names down to the robot"),
    ("tip_link", "", "last link of the serial manipulator (~/serial_manipulator, ~/tip_pose)"),
    ("frame_prefix", "", "prefix of every published frame id, e.g. 'left/'"),
    ("namespace", "", "namespace of the node and its topics (robot_description, joint_states, ...)"),
    ("use_sim_time", "false", "take time from /clock"),
    ("config", DEFAULT_CONFIG, "parameter file: a name in bb_robot's config/ or an absolute path"),
)


def _description_node(context, *_args, **_kwargs):
    config = LaunchConfiguration("config").perform(context)
    if not os.path.isabs(config):
        config = os.path.join(get_package_share_directory(PACKAGE), "config", config)
    overrides = {}
    for argument, parameter in PARAMETER_ARGUMENTS.items():
        value = LaunchConfiguration(argument).perform(context)
        if value:
            overrides[parameter] = value
    overrides["use_sim_time"] = LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1", "yes")
    return [
        Node(
            package=PACKAGE,
            executable=EXECUTABLE,
            # Named, so that launch_ros keys the overrides by the node's full name: under the
            # '/**' it uses otherwise they would come before the file's '/**/description' section
            # and lose to it (rcl applies matching sections in the order their keys first appear).
            name=EXECUTABLE,
            namespace=LaunchConfiguration("namespace"),
            parameters=[config, overrides],
            output="screen",
        )
    ]


def generate_launch_description():
    declared = [
        DeclareLaunchArgument(name, default_value=default, description=text) for name, default, text in ARGUMENTS
    ]
    return LaunchDescription([*declared, OpaqueFunction(function=_description_node)])
