"""Build script of the bb_robot ament_python package.

Used by colcon (``colcon build``) on a ROS 2 install and by ``pip install .`` in the venv that
scripts/setup makes. Besides the Python package it installs what ROS tools look up under
``share/``: the ament index marker, package.xml and every file under launch/, config/ and models/.
"""

from pathlib import Path
from xml.etree import ElementTree

from setuptools import find_packages, setup

PACKAGE = "bb_robot"
SHARE_DIRS = ("launch", "config", "models")
HERE = Path(__file__).resolve().parent


def package_version() -> str:
    """The version that package.xml declares, so there is one place to change it."""
    version = ElementTree.parse(HERE / "package.xml").getroot().findtext("version")
    if not version:
        raise SystemExit("package.xml declares no <version>")
    return version.strip()


def share_files() -> list[tuple[str, list[str]]]:
    """data_files entries: each file under SHARE_DIRS goes to share/<package>/<same path>."""
    entries = [
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ]
    for top in SHARE_DIRS:
        by_dir: dict[str, list[str]] = {}
        for path in sorted((HERE / top).rglob("*")):
            relative = path.relative_to(HERE)
            hidden = any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
            if path.is_file() and not hidden:
                by_dir.setdefault(relative.parent.as_posix(), []).append(relative.as_posix())
        entries += [(f"share/{PACKAGE}/{folder}", files) for folder, files in by_dir.items()]
    return entries


setup(
    name=PACKAGE,
    version=package_version(),
    description="Robot descriptions (URDF, xacro, SDF) turned into running ROS 2 robots.",
    license="Apache-2.0",
    maintainer="bb_robot maintainers",
    maintainer_email="maintainers@bb-robot.dev",
    python_requires=">=3.10",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=share_files(),
    install_requires=["numpy", "xacro"],
    zip_safe=True,
    entry_points={
        "console_scripts": [
            f"bb-robot = {PACKAGE}.cli:main",
            # `ros2 run bb_robot description`: the node that publishes robot_description and TF.
            f"description = {PACKAGE}.nodes.description:main",
            # `ros2 run bb_robot driver`: joint commands in, a backend moved, joint states out.
            f"driver = {PACKAGE}.nodes.driver:main",
            # `ros2 run bb_robot view`: the running robot served to Foxglove, and MCAP recordings.
            f"view = {PACKAGE}.nodes.view:main",
            # `ros2 run bb_robot move_group`: MoveIt's move_group interface on bb_robot's planner.
            f"move_group = {PACKAGE}.nodes.move_group:main",
            # `ros2 run bb_robot fleet --arms N`: N drivers and description nodes in one process.
            f"fleet = {PACKAGE}.nodes.fleet:main",
            # `ros2 run bb_robot servo_bridge`: simulated servos for the driver's actuators backend.
            f"servo_bridge = {PACKAGE}.examples.servo_bridge:main",
            # `ros2 run bb_robot bus`: servos on a Feetech or Dynamixel bus behind the actuators backend's topics.
            f"bus = {PACKAGE}.nodes.bus:main",
        ]
    },
)
