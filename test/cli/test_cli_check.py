"""``bb-robot check``: the documented JSON shape, an error with the right line for every hostile
file of the corpus, and the tree of valid ones.

The expected lines are found here from the file's text (the line holding the element a user has
to change), not from bb_robot's parser.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.cli_helpers import RunCli, resource_args
from helpers.robot_files import CORPUS_DIR, corpus_urdfs, robot_label

CHECK_KEYS = {"ok", "format", "robot", "warnings", "errors"}
ERROR_KEYS = {"message", "line", "element"}
SYNTHETIC = CORPUS_DIR / "synthetic"


def line_of(path: Path, text: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line of ``path`` that contains ``text``."""
    hits = [n for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if text in line]
    assert len(hits) >= occurrence, f"{text!r} occurs {len(hits)} times in {path}"
    return hits[occurrence - 1]


# file, (text on the expected line, occurrence) or None (no line: the whole file), element, words
BAD_FILES: list[tuple[str, tuple[str, int] | None, str | None, str]] = [
    ("billion_laughs.urdf", ("<!DOCTYPE", 1), None, "DOCTYPE"),
    ("cycle.urdf", ('name="ca"', 1), "joint", "kinematic loop"),  # the joint that closes the loop
    ("duplicate_link.urdf", ('<link name="a"/>', 2), "link", "duplicate link name 'a'"),
    ("empty_file.urdf", None, None, "empty"),
    ("mimic_cycle.urdf", ('<mimic joint="j1"/>', 1), "mimic", "loop"),
    ("missing_link.urdf", ('<child link="ghost"/>', 1), "joint", "'ghost'"),
    ("nan_inf.urdf", ('xyz="nan', 1), "origin", "not a finite number"),
    ("non_numeric.urdf", ("one two three", 1), "origin", "not a number"),
    ("truncated.urdf", ('name="j"', 1), None, "malformed XML"),
    ("two_roots.urdf", ('<link name="c"/>', 1), "link", "no parent joint"),  # the second root
    ("unclosed_tag.urdf", ("</robot>", 1), None, "<link> opened at line 3"),
    ("unknown_joint_type.urdf", ('type="helical"', 1), "joint", "helical"),
    ("xxe_external_entity.urdf", ("<!DOCTYPE", 1), None, "DOCTYPE"),
    ("zero_axis.urdf", ('<axis xyz="0 0 0"/>', 1), "axis", "zero length"),
    ("sdf_include_missing.sdf", ("does_not_exist", 1), "include", "--resource-path"),
]


@pytest.mark.parametrize(("name", "expected_line", "element", "words"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_json_of_a_bad_file_has_an_error_at_the_right_line(
    run_cli: RunCli,
    corpus_dir: Path,
    corpus_resource_paths: tuple[Path, ...],
    name: str,
    expected_line: tuple[str, int] | None,
    element: str | None,
    words: str,
) -> None:
    path = corpus_dir / "synthetic" / name
    extra = resource_args(corpus_resource_paths) if name.endswith(".sdf") else []
    result = run_cli("check", "--json", path, *extra)
    assert result.returncode == 1, result
    data = result.json()
    assert set(data) == CHECK_KEYS
    assert data["ok"] is False
    assert data["format"] == ("sdf" if name.endswith(".sdf") else "urdf")
    assert data["errors"], result
    for error in data["errors"]:
        assert set(error) == ERROR_KEYS
        assert isinstance(error["message"], str) and str(path) in error["message"]
    line = line_of(path, *expected_line) if expected_line is not None else None
    matching = [e for e in data["errors"] if e["line"] == line and words in e["message"]]
    assert matching, f"no error at line {line} mentioning {words!r}: {data['errors']}"
    assert matching[0]["element"] == element
    if line is not None:
        assert f"{path}:{line}" in matching[0]["message"]


def test_every_problem_of_a_tree_is_reported_with_its_line(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/cycle.urdf"
    data = run_cli("check", "--json", path).json()
    assert data["robot"] == "synthetic"
    # No root (every link has a parent: the <robot> element) and the loop (the joint closing it).
    assert [(e["line"], e["element"]) for e in data["errors"]] == [
        (line_of(path, "<robot"), "robot"),
        (line_of(path, 'name="ca"'), "joint"),
    ]


def test_include_cycle_names_the_include_that_closes_it(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    path = corpus_dir / "synthetic/sdf_include_cycle.sdf"
    result = run_cli("check", "--json", path, *resource_args(corpus_resource_paths), timeout=60)
    assert result.returncode == 1, result
    (error,) = result.json()["errors"]
    included = (corpus_dir / "synthetic/resources/self_include/model.sdf").resolve()  # the loader resolves paths
    assert error["element"] == "include"
    assert error["line"] == line_of(included, "<include>")
    assert f"{included}:{error['line']}" in error["message"] and "includes itself" in error["message"]


def test_two_candidate_models_without_scope_list_both(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...]
) -> None:
    path = corpus_dir / "synthetic/sdf_world_two_ur3e_includes.sdf"
    result = run_cli("check", "--json", path, *resource_args(corpus_resource_paths))
    assert result.returncode == 1
    (error,) = result.json()["errors"]
    assert "'left_arm'" in error["message"] and "'right_arm'" in error["message"]
    assert "--scope" in error["message"]
    chosen = run_cli("check", "--json", path, "--scope", "left_arm", *resource_args(corpus_resource_paths))
    assert chosen.returncode == 0, chosen
    assert chosen.json()["ok"] is True


@pytest.mark.parametrize("path", corpus_urdfs(("long_chain_1000.urdf", "mimic_chain.urdf")), ids=robot_label)
def test_json_of_a_valid_urdf(run_cli: RunCli, path: Path) -> None:
    result = run_cli("check", "--json", path)
    assert result.returncode == 0, result
    data = result.json()
    assert set(data) == CHECK_KEYS
    assert data["ok"] is True and data["errors"] == [] and data["format"] == "urdf"
    assert data["robot"] == ET.parse(path).getroot().get("name")
    assert all(isinstance(w, str) for w in data["warnings"])


@pytest.mark.parametrize(
    ("relative", "robot"),
    [
        ("sas_robot_driver_gazebo/sdf/ur3e_world.sdf", "ur3e"),
        ("sas_robot_driver_gazebo/sdf/iiwa14.sdf", None),
        ("sdformat/test/sdf/model_joint_axis_expressed_in.sdf", "model_joint_axis_expressed_in"),
        ("sdformat/test/sdf/nested_model.sdf", None),
        ("gz_sim/examples/worlds/world_joint.sdf", None),
    ],
)
def test_json_of_a_valid_sdf(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...], relative: str, robot: str | None
) -> None:
    result = run_cli("check", "--json", corpus_dir / relative, *resource_args(corpus_resource_paths))
    assert result.returncode == 0, result
    data = result.json()
    assert data["ok"] is True and data["format"] == "sdf" and data["errors"] == []
    assert isinstance(data["robot"], str)
    if robot is not None:
        assert data["robot"] == robot


def test_a_model_file_without_movable_joints_is_checked_as_its_root_model(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("check", "--json", corpus_dir / "gz_sim/test/worlds/models/sphere/model.sdf")
    assert result.returncode == 0, result
    data = result.json()
    assert data["ok"] is True
    assert any("no model has a movable joint" in w for w in data["warnings"])
    world = run_cli("check", "--json", corpus_dir / "sdformat/test/sdf/world_complete.sdf")
    assert world.returncode == 1
    assert "no model has both links and a joint" in world.json()["errors"][0]["message"]


def test_text_report_prints_the_tree_like_check_urdf(run_cli: RunCli, corpus_dir: Path) -> None:
    result = run_cli("check", corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf")
    assert result.returncode == 0, result
    out = result.stdout
    assert "robot 'panda' (URDF" in out
    assert "root link 'panda_link0' has 1 child" in out
    assert "└─ panda_joint1 [revolute; axis 0 0 1] → panda_link1" in out
    assert "panda_finger_joint2 [prismatic; axis 0 -1 0; mimics panda_finger_joint1]" in out
    assert out.rstrip().endswith("OK: no errors, 0 warnings")


def test_text_report_of_a_bad_file_prints_file_line_and_exits_1(run_cli: RunCli, corpus_dir: Path) -> None:
    path = corpus_dir / "synthetic/missing_link.urdf"
    result = run_cli("check", path)
    assert result.returncode == 1
    assert f"error: {path}:{line_of(path, 'ghost')}: joint 'ab' names child link 'ghost'" in result.stderr
    assert "invalid, 1 error" in result.stdout
    assert "Traceback" not in result.stderr


def test_warnings_are_listed(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "fixed_mimic.urdf"
    path.write_text(
        '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '<joint name="f" type="fixed"><parent link="b"/><child link="c"/><mimic joint="j"/></joint></robot>'
    )
    data = run_cli("check", "--json", path).json()
    assert data["ok"] is True
    assert any("ignored the <mimic> of fixed joint" in w for w in data["warnings"])
    text = run_cli("check", path)
    assert "warning: ignored the <mimic>" in text.stderr
    assert "OK: no errors, 1 warning" in text.stdout


def test_xacro_is_expanded_with_arguments(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(
        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="length" default="0.5"/>'
        '<link name="base"/><link name="tip"/>'
        '<joint name="j" type="prismatic"><parent link="base"/><child link="tip"/>'
        '<origin xyz="0 0 $(arg length)"/><axis xyz="0 0 1"/>'
        '<limit lower="0" upper="1" effort="1" velocity="1"/></joint></robot>'
    )
    data = run_cli("check", "--json", path).json()
    assert data == {"ok": True, "format": "urdf", "robot": "arm", "warnings": [], "errors": []}
    fk = run_cli("fk", "--json", path, "--xacro-arg", "length:=0.25").json()
    assert fk["frames"]["tip"]["xyz"] == [0.0, 0.0, 0.25]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d: d / "missing.urdf", "no such file"),
        (lambda d: d, "is a directory"),
    ],
    ids=["missing", "directory"],
)
def test_unreadable_inputs_give_json_with_the_reason(run_cli: RunCli, tmp_path: Path, make: object, words: str) -> None:
    assert callable(make)
    path = make(tmp_path)
    result = run_cli("check", "--json", path)
    assert result.returncode == 1
    data = result.json()
    assert data["ok"] is False and data["robot"] is None
    (error,) = data["errors"]
    assert error["message"].startswith(f"{path}: ") and words in error["message"]
    assert (error["line"], error["element"]) == (None, None)


def test_an_sdf_kinematic_loop_is_located_at_the_joint_closing_it(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "loop.sdf"
    path.write_text(
        '<?xml version="1.0"?>\n<sdf version="1.9">\n  <model name="looped">\n'
        '    <link name="a"/>\n    <link name="b"/>\n    <link name="c"/>\n'
        + "".join(
            f'    <joint name="{p}{c}" type="revolute"><parent>{p}</parent><child>{c}</child>'
            "<axis><xyz>0 0 1</xyz></axis></joint>\n"
            for p, c in ("ab", "bc", "ca")
        )
        + "  </model>\n</sdf>\n"
    )
    result = run_cli("check", "--json", path)
    assert result.returncode == 1
    data = result.json()
    assert data["robot"] == "looped"
    assert [(e["line"], e["element"]) for e in data["errors"]] == [
        (line_of(path, "<model"), "model"),
        (line_of(path, 'name="ca"'), "joint"),
    ]
