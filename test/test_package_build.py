"""bb_robot as ROS 2 tools see it: its manifest, colcon's build of it, and tf2_msgs in the venv."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ET.parse(REPO_ROOT / "package.xml").getroot()
# The tests run with the venv's interpreter: its prefix is the ament prefix scripts/setup made.
VENV = Path(sys.prefix)
COLCON = shutil.which("colcon", path=str(VENV / "bin")) or shutil.which("colcon")
needs_colcon = pytest.mark.skipif(COLCON is None, reason="colcon is not installed (scripts/setup installs it)")

# Type hashes of tf2_msgs as a real ROS 2 (Jazzy or newer) graph announces them.
TF2_MSGS_HASHES = {
    "msg/TFMessage": "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
    "msg/TF2Error": "RIHS01_db2485e7d6a0ec75bf087e058ee45df682acc3a621ca7780503d10aac141809a",
}


def declared(tag: str) -> set[str]:
    return {element.text.strip() for element in MANIFEST.iter(tag) if element.text}


def test_manifest_names_the_package_and_its_build_type() -> None:
    import bb_robot

    assert MANIFEST.get("format") == "3"
    assert MANIFEST.findtext("name") == "bb_robot"
    assert MANIFEST.findtext("version") == bb_robot.__version__
    assert MANIFEST.findtext("export/build_type") == "ament_python"
    assert MANIFEST.findtext("license") == "Apache-2.0"


# Import names whose rosdep key is not the import name or python3-<import name>.
ROSDEP_KEY_OF_IMPORT = {"google": "python3-protobuf", "zmq": "python3-zmq", "yaml": "python3-yaml"}
# Optional imports, not exec_depends: imported only where they are used (lazily), with an error saying
# what to install when they are missing; installed from PyPI (requirements/runtime.txt).
OPTIONAL_IMPORTS = {
    "mujoco": "backend: mujoco and the MJCF check; pip install mujoco (docs/nodes/mujoco.md)",
    "foxglove": "the view node; pip install foxglove-sdk (docs/view.md)",
    "numba": "compiled kinematics (bb_robot.model.compiled); without it Python and numpy give the same results",
}


def test_manifest_declares_every_module_the_package_imports() -> None:
    """Each third-party import of bb_robot/ is an exec_depend, by ROS name or as python3-<name>."""
    exec_depends = declared("exec_depend") | declared("depend")
    undeclared: dict[str, list[str]] = {}
    for source in sorted((REPO_ROOT / "bb_robot").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in {"bb_robot", "__future__"} or top in OPTIONAL_IMPORTS:
                    continue
                if not {top, f"python3-{top}", ROSDEP_KEY_OF_IMPORT.get(top, top)} & exec_depends:
                    undeclared.setdefault(top, []).append(str(source.relative_to(REPO_ROOT)))
    assert not undeclared, f"imports missing from package.xml's exec_depend: {undeclared}"


@pytest.fixture(scope="module")
def colcon_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """colcon's install of bb_robot (install/bb_robot), built into a throwaway directory."""
    assert COLCON is not None
    base = tmp_path_factory.mktemp("colcon")
    env = dict(os.environ, AMENT_PREFIX_PATH=str(VENV))
    command = [
        COLCON, "--log-base", str(base / "log"),
        "build", "--base-paths", str(REPO_ROOT), "--packages-select", "bb_robot",
        "--build-base", str(base / "build"), "--install-base", str(base / "install"),
    ]  # fmt: skip
    result = subprocess.run(command, cwd=base, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, f"colcon build failed:\n{result.stdout}\n{result.stderr}"
    return base / "install" / "bb_robot"


@needs_colcon
@pytest.mark.parametrize(
    "relative",
    [
        "share/bb_robot/package.xml",
        "share/ament_index/resource_index/packages/bb_robot",
        "share/bb_robot/config/bb_arm.yaml",
        "share/bb_robot/models/bb_arm.urdf",
        "share/bb_robot/launch/description.launch.py",
    ],
)
def test_colcon_installs_share_file(colcon_install: Path, relative: str) -> None:
    assert (colcon_install / relative).is_file()


@needs_colcon
@pytest.mark.parametrize("name", ["bb-robot", "description"])
def test_colcon_installs_the_command_where_ros2_run_looks(colcon_install: Path, name: str) -> None:
    command = colcon_install / "lib" / "bb_robot" / name
    assert command.is_file()
    assert os.access(command, os.X_OK)


@needs_colcon
def test_colcon_installed_command_runs(colcon_install: Path) -> None:
    # What `source install/setup.bash` adds: the install's site-packages and ament prefix.
    (site_packages,) = colcon_install.glob("lib/python3*/site-packages")
    env = dict(
        os.environ,
        PYTHONPATH=str(site_packages),
        AMENT_PREFIX_PATH=f"{colcon_install}{os.pathsep}{VENV}",
    )
    where = subprocess.run(
        [sys.executable, "-c", "import bb_robot; print(bb_robot.__file__)"],
        env=env, cwd=colcon_install, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(site_packages)
    command = colcon_install / "lib" / "bb_robot" / "bb-robot"
    result = subprocess.run(
        [str(command), "--help"],
        env=env, cwd=colcon_install, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"bb-robot --help failed:\n{result.stdout}\n{result.stderr}"


def test_tf2_msgs_tfmessage_is_a_sequence_of_transforms() -> None:
    from tf2_msgs.msg import TFMessage

    assert TFMessage.get_fields_and_field_types() == {"transforms": "sequence<geometry_msgs/TransformStamped>"}


def test_tf2_msgs_round_trips_through_serialization() -> None:
    from geometry_msgs.msg import TransformStamped
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TF2Error, TFMessage

    transform = TransformStamped()
    transform.header.frame_id = "base_link"
    transform.child_frame_id = "tool0"
    transform.transform.translation.x = 0.25
    transform.transform.rotation.w = 1.0
    message = TFMessage(transforms=[transform])
    assert deserialize_message(serialize_message(message), TFMessage) == message
    assert TF2Error.TRANSFORM_ERROR == 6


@pytest.mark.parametrize("interface", sorted(TF2_MSGS_HASHES))
def test_tf2_msgs_type_hash_matches_ros(interface: str) -> None:
    from ament_index_python.packages import get_package_share_directory

    description = Path(get_package_share_directory("tf2_msgs")) / f"{interface}.json"
    hashes = json.loads(description.read_text(encoding="utf-8"))["type_hashes"]
    own = next(h for h in hashes if h["type_name"] == f"tf2_msgs/{interface}")
    assert own["hash_string"] == TF2_MSGS_HASHES[interface]
