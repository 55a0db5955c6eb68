"""bb_robot.loading: the one loading path (format rule, dispatch, one loaded-model value).

The format rule is checked on files whose name says one thing and whose root says another;
each caller (the command line, the description node's loader, the driver's, the SDF loader's
export, ``SerialManipulator.from_urdf``) is checked to reach the same model as
:func:`bb_robot.loading.load_file`, compared through the URDF writer (an independent module:
it serialises every link, joint, limit and inertial).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bb_robot.cli import common
from bb_robot.description.sources import ModelSourceError, load_model
from bb_robot.driver.model import load_model_file
from bb_robot.errors import BbRobotError
from bb_robot.loading import (
    LoadError,
    ModelFileError,
    ScopeNotApplicableError,
    detect_format,
    format_from,
    load_file,
    load_text,
    root_element,
    uses_xacro,
)
from bb_robot.model.serial import SerialManipulator
from bb_robot.sdf import load_from_file
from bb_robot.urdf.errors import NotUrdfError, XmlSyntaxError
from bb_robot.urdf.writer import robot_to_urdf

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS = REPO_ROOT / "models"
BB_ARM = MODELS / "bb_arm.urdf"
BB_WORLD = MODELS / "bb_arm_world.sdf"
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
TWO_LINKS = (
    '<robot name="two"><link name="a"/><link name="b"/>'
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
)
SDF_MODEL = (
    "<?xml version='1.0'?><sdf version='1.9'><model name='m'>"
    "<link name='a'/><link name='b'><pose>0 0 1 0 0 0</pose></link>"
    "<joint name='j' type='revolute'><parent>a</parent><child>b</child>"
    "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>"
    "</model></sdf>"
)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ------------------------------------------------------------------------------ the format rule
def test_the_root_element_decides_over_the_extension(tmp_path: Path) -> None:
    robot_in_sdf = write(tmp_path / "arm.sdf", TWO_LINKS)
    sdf_in_urdf = write(tmp_path / "arm.urdf", SDF_MODEL)
    assert detect_format(robot_in_sdf) == "urdf"
    assert detect_format(sdf_in_urdf) == "sdf"
    urdf = load_file(robot_in_sdf)
    assert urdf.kind == "urdf" and urdf.format == "urdf" and urdf.sdf is None and urdf.description == TWO_LINKS
    sdf = load_file(sdf_in_urdf)
    assert sdf.kind == "sdf" and sdf.sdf is not None and sdf.scope == "m"
    assert set(sdf.robot.joints) == {"j"} and sdf.description.startswith("<?xml")


def test_comments_and_declarations_before_the_root_are_skipped() -> None:
    head = b"<?xml version='1.0'?>\n<!-- <sdf> in a comment -->\n<!DOCTYPE x>\n<Robot name='x'/>"
    assert root_element(head) == "robot"
    assert format_from("a.world", head) == "urdf"
    assert root_element(b"") is None and root_element(b"not xml at all") is None


def test_the_extension_decides_only_without_a_robot_or_sdf_root(tmp_path: Path) -> None:
    for name, expected in [("a.sdf", "sdf"), ("a.world", "sdf"), ("a.urdf.xacro", "xacro"), ("a.urdf", "urdf")]:
        for head in (b"", b"junk", b"<model name='m'/>"):
            assert format_from(name, head) == expected, (name, head)
    # the loader of that format says what is wrong, naming the file
    empty_world = write(tmp_path / "empty.world", "")
    with pytest.raises(BbRobotError, match="empty.world"):
        load_file(empty_world)
    other_root = write(tmp_path / "other.urdf", "<model name='m'/>")
    with pytest.raises(NotUrdfError, match="other.urdf"):
        load_file(other_root)


def test_xacro_by_name_or_by_an_element_in_its_namespace(tmp_path: Path) -> None:
    xacro_text = f'<robot name="x" {XACRO_NS}><xacro:property name="n" value="base"/><link name="${{n}}"/></robot>'
    by_namespace = write(tmp_path / "robot.urdf", xacro_text)
    assert uses_xacro(xacro_text.encode()) and detect_format(by_namespace) == "xacro"
    loaded = load_file(by_namespace)
    assert loaded.kind == "xacro" and loaded.robot.root_link == "base" and "${" not in loaded.description
    # declared but unused (what xacro leaves in its output): URDF, published as written
    plain = f'<robot name="p" {XACRO_NS}><link name="a"/></robot>'
    declared = write(tmp_path / "declared.urdf", plain)
    assert not uses_xacro(plain.encode())
    assert load_file(declared).kind == "urdf" and load_file(declared).description == plain
    by_name = write(tmp_path / "plain.xacro", '<robot name="q"><link name="a"/></robot>')
    assert load_file(by_name).kind == "xacro"


def test_a_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.urdf"
    os.mkfifo(fifo)
    cases = [
        (tmp_path / "missing.urdf", "no such file"),
        (tmp_path, "is a directory, not a robot description file"),
        (fifo, "is not a regular file"),
    ]
    for path, problem in cases:
        with pytest.raises(ModelFileError) as caught:
            load_file(path)
        assert str(caught.value) == f"{path}: {problem}"
        assert caught.value.path == str(path) and isinstance(caught.value, BbRobotError)


# ------------------------------------------------------------------------------ errors name the file
def test_errors_name_the_file(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.sdf", "<robot name='b'><link name='a'>")
    with pytest.raises(XmlSyntaxError, match="broken.sdf"):
        load_file(broken)
    urdf = write(tmp_path / "two.urdf", TWO_LINKS)
    with pytest.raises(ScopeNotApplicableError, match=r"two.urdf: model_scope 'a::b' applies to SDF files only"):
        load_file(urdf, scope="a::b")
    sdf = write(tmp_path / "m.sdf", SDF_MODEL)
    with pytest.raises(LoadError, match=r"m.sdf: drop_world applies to URDF and xacro"):
        load_file(sdf, drop_world=True)
    with pytest.raises(LoadError, match=r"m.sdf: an SDF file, not URDF or xacro"):
        SerialManipulator.from_urdf(sdf)
    latin1 = tmp_path / "latin1.urdf"
    declared = "<?xml version='1.0' encoding='latin-1'?><robot name='é'><link name='a'/></robot>"
    latin1.write_bytes(declared.encode("latin-1"))
    loaded = load_file(latin1)  # the parser reads the declared encoding
    assert loaded.robot.name == "é"
    with pytest.raises(LoadError, match=r"latin1.urdf: not UTF-8 text"):
        _ = loaded.description  # robot_description is UTF-8 text
    with pytest.raises(ModelSourceError, match="latin1.urdf: not UTF-8 text"):
        load_model("latin1.urdf", [str(tmp_path)])
    with pytest.raises(LoadError, match="<string>: SDF text is not accepted"):
        load_text(SDF_MODEL)


# ------------------------------------------------------------------------------ every caller, one model
def test_every_caller_reaches_the_same_urdf_model(tmp_path: Path) -> None:
    reference = load_file(BB_ARM)
    expected = robot_to_urdf(reference.robot)
    robots = {
        "cli": common.load(BB_ARM).robot,
        "description": load_model(BB_ARM.name, [str(MODELS)]).robot,
        "driver": load_model_file(str(BB_ARM), []).robot,
    }
    for caller, robot in robots.items():
        assert robot_to_urdf(robot) == expected, caller
    chain = SerialManipulator.from_urdf(BB_ARM, "tcp")
    same = SerialManipulator.from_robot(reference.robot, "tcp", strict=False)
    q = np.random.default_rng(7).uniform(-1.0, 1.0, (5, chain.dof))
    assert chain.joint_names == same.joint_names
    assert np.array_equal(chain.end_effector_pose(q), same.end_effector_pose(q))
    assert np.array_equal(chain.jacobian(q), same.jacobian(q))
    assert load_model(BB_ARM.name, [str(MODELS)]).description == BB_ARM.read_text()


def test_every_caller_reaches_the_same_sdf_model() -> None:
    reference = load_file(BB_WORLD)
    assert reference.kind == "sdf" and reference.sdf is not None
    expected = robot_to_urdf(reference.robot)
    loaded = {
        "cli": common.load(BB_WORLD),
        "description": load_model(BB_WORLD.name, [str(MODELS)]),
        "driver": load_model_file(str(BB_WORLD), []),
    }
    for caller, other in loaded.items():
        assert robot_to_urdf(other.robot) == expected, caller
        assert other.scope == reference.scope and other.kind == "sdf", caller
        assert (other.placement is None) == (reference.placement is None), caller
        if other.placement is not None and reference.placement is not None:
            assert np.array_equal(other.placement.pose, reference.placement.pose), caller
    # the SDF loader's own export is the loaded model's robot_description
    result = load_from_file(BB_WORLD, build_serial=False)
    assert result.to_urdf() == reference.description == loaded["description"].description


def test_the_nodes_and_the_cli_agree_on_an_sdf_file_holding_a_robot(tmp_path: Path) -> None:
    path = write(tmp_path / "robot.sdf", TWO_LINKS)
    for loaded in (common.load(path), load_model(path.name, [str(tmp_path)]), load_model_file(str(path), [])):
        assert loaded.kind == "urdf" and loaded.sdf is None and set(loaded.robot.joints) == {"j"}


# ------------------------------------------------------------------------------ the hooks
def _fresh_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120, check=False
    )


def test_the_lower_layers_import_nothing_above_them_and_the_documented_calls_still_work() -> None:
    code = (
        "import sys\n"
        "from bb_robot.model.serial import SerialManipulator\n"
        "upper = ('bb_robot.urdf', 'bb_robot.sdf', 'bb_robot.loading')\n"
        "above = sorted(m for m in sys.modules if m.startswith(upper))\n"
        "assert not above, above\n"
        f"chain = SerialManipulator.from_urdf({str(BB_ARM)!r}, 'tcp')\n"
        "print(chain.dof)\n"
        "from bb_robot.sdf import load_from_file\n"
        f"print(load_from_file({str(BB_WORLD)!r}, build_serial=False).to_urdf().startswith('<?xml'))\n"
    )
    result = _fresh_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["6", "True"]
    sdf_alone = _fresh_python(
        "import sys\nimport bb_robot.sdf\n"
        "assert not [m for m in sys.modules if m.startswith(('bb_robot.urdf.writer', 'bb_robot.loading'))]\n"
    )
    assert sdf_alone.returncode == 0, sdf_alone.stderr


def test_a_hook_nothing_provides_is_a_named_error() -> None:
    from bb_robot.hooks import Hook, HookError

    hook: Hook[Callable[[str], int]] = Hook("nobody_provides_this")
    with pytest.raises(HookError, match="hook 'nobody_provides_this': no function is registered"):
        _ = hook.function
    hook.register(len)
    assert hook.function is len
