"""The command line follows the loading path's format rule: the root element decides."""

from __future__ import annotations

from pathlib import Path

from helpers.cli_helpers import RunCli

ROBOT = (
    '<robot name="arm"><link name="a"/><link name="b"/>'
    '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
)
SDF = (
    "<sdf version='1.9'><model name='m'><link name='a'/><link name='b'/>"
    "<joint name='j' type='revolute'><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>"
    "</model></sdf>"
)


def test_the_root_element_decides_whatever_the_extension(run_cli: RunCli, tmp_path: Path) -> None:
    robot_in_sdf = tmp_path / "arm.sdf"
    robot_in_sdf.write_text(ROBOT)
    sdf_in_urdf = tmp_path / "m.urdf"
    sdf_in_urdf.write_text(SDF)
    urdf = run_cli("check", "--json", robot_in_sdf)
    assert urdf.returncode == 0, urdf
    assert urdf.json() == {"ok": True, "format": "urdf", "robot": "arm", "warnings": [], "errors": []}
    sdf = run_cli("check", "--json", sdf_in_urdf)
    assert sdf.returncode == 0, sdf
    assert sdf.json()["format"] == "sdf" and sdf.json()["robot"] == "m"
    # --scope is for SDF: a usage error (exit 2) naming the file, even when its name ends in .sdf
    scoped = run_cli("show", robot_in_sdf, "--scope", "m")
    assert scoped.returncode == 2
    assert f"--scope selects a model of an SDF file; {robot_in_sdf} is URDF" in scoped.stderr


def test_a_file_without_a_root_is_read_by_its_extension(run_cli: RunCli, tmp_path: Path) -> None:
    empty = tmp_path / "empty.world"
    empty.write_text("")
    result = run_cli("check", "--json", empty)
    assert result.returncode == 1
    data = result.json()
    assert data["format"] == "sdf" and str(empty) in data["errors"][0]["message"]
