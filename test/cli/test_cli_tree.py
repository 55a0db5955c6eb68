"""``bb-robot tree``: a valid picture (SVG, PNG, PDF) or DOT text with one node per link and one edge
per joint, labelled with the joint's type and axis.

The link and joint counts come from the URDF's text.  SVG is parsed as XML and its graphviz groups
(``<g class="node">``, ``<g class="edge">``) counted; the DOT text is counted by its statements.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.cli_helpers import RunCli, resource_args

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed (scripts/setup)")

URDFS = [
    "franka_description/fr3_hand.urdf",
    "moveit_resources/panda_description/urdf/panda.urdf",
    "ur_description_ros2/ur5e.urdf",
    "synthetic/mimic_chain.urdf",
]


def urdf_counts(path: Path) -> tuple[int, int]:
    """Links and joints of a URDF, from its text (an undefined 'world' parent becomes a link too)."""
    root = ET.parse(path).getroot()
    links = {link.get("name") for link in root.findall("link")}
    parents = {j.find("parent").get("link") for j in root.findall("joint")}  # type: ignore[union-attr]
    return len(links | ({"world"} & parents)), len(root.findall("joint"))


def svg_groups(path: Path) -> tuple[list[ET.Element], list[ET.Element]]:
    svg = ET.parse(path).getroot()
    assert svg.tag == f"{SVG}svg"
    groups = list(svg.iter(f"{SVG}g"))
    return [g for g in groups if g.get("class") == "node"], [g for g in groups if g.get("class") == "edge"]


def svg_text(group: ET.Element) -> list[str]:
    return [t.text or "" for t in group.iter(f"{SVG}text")]


@needs_dot
@pytest.mark.parametrize("relative", URDFS)
def test_svg_has_a_node_per_link_and_an_edge_per_joint(
    run_cli: RunCli, corpus_dir: Path, tmp_path: Path, relative: str
) -> None:
    path = corpus_dir / relative
    out = tmp_path / "tree.svg"
    result = run_cli("tree", path, "-o", out)
    assert result.returncode == 0, result
    nodes, edges = svg_groups(out)
    links, joints = urdf_counts(path)
    assert (len(nodes), len(edges)) == (links, joints)
    node_names = {svg_text(n)[0] for n in nodes}
    root = ET.parse(path).getroot()
    assert {link.get("name") for link in root.findall("link")} <= node_names
    labels = {svg_text(e)[0]: svg_text(e)[1:] for e in edges}
    for joint in root.findall("joint"):
        label = labels[joint.get("name") or ""]
        assert label[0] == joint.get("type")
        if joint.get("type") in ("revolute", "continuous", "prismatic"):
            assert label[1].startswith("axis ")
        if joint.find("mimic") is not None:
            assert label[-1] == f"mimics {joint.find('mimic').get('joint')}"  # type: ignore[union-attr]


@needs_dot
@pytest.mark.parametrize(("suffix", "signature"), [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF-")])
def test_png_and_pdf_are_valid_images(
    run_cli: RunCli, corpus_dir: Path, tmp_path: Path, suffix: str, signature: bytes
) -> None:
    out = tmp_path / f"tree{suffix}"
    result = run_cli("tree", corpus_dir / "franka_description/fr3_hand.urdf", "-o", out)
    assert result.returncode == 0, result
    data = out.read_bytes()
    assert data.startswith(signature)
    if suffix == ".png":  # IHDR: a non-empty picture, then the image end chunk
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width > 100 and height > 100
        assert data.endswith(b"IEND\xaeB`\x82")
    else:
        assert data.rstrip().endswith(b"%%EOF")


def test_dot_text_on_stdout_and_in_a_file(run_cli: RunCli, corpus_dir: Path, tmp_path: Path) -> None:
    path = corpus_dir / "moveit_resources/panda_description/urdf/panda.urdf"
    links, joints = urdf_counts(path)
    printed = run_cli("tree", path)
    assert printed.returncode == 0, printed
    text = printed.stdout
    assert text.startswith('digraph "panda" {') and text.rstrip().endswith("}")
    assert len(re.findall(r"^  L\d+ \[label=", text, re.M)) == links
    assert len(re.findall(r"^  L\d+ -> L\d+ \[", text, re.M)) == joints
    out = tmp_path / "tree.gv"
    assert run_cli("tree", path, "-o", out).returncode == 0
    assert out.read_text() == text


@needs_dot
def test_an_sdf_world_with_frames(
    run_cli: RunCli, corpus_dir: Path, corpus_resource_paths: tuple[Path, ...], tmp_path: Path
) -> None:
    out = tmp_path / "ur3e.svg"
    world = corpus_dir / "sas_robot_driver_gazebo/sdf/ur3e_world.sdf"
    result = run_cli("tree", world, "-o", out, "--json", *resource_args(corpus_resource_paths))
    assert result.returncode == 0, result
    data = result.json()
    assert set(data) == {"robot", "root", "output", "format", "nodes", "edges"}
    assert (data["output"], data["format"], data["root"]) == (str(out), "svg", "base_link")
    nodes, edges = svg_groups(out)
    assert len(nodes) == len(data["nodes"]) and len(edges) == len(data["edges"])
    names = {svg_text(n)[0] for n in nodes}
    assert {"base_link", "wrist_3_link", "tool0"} <= names  # links and <frame>s
    assert {(e["joint"], e["type"]) for e in data["edges"]} >= {("shoulder_pan_joint", "revolute")}
    assert len(data["edges"]) == len(data["nodes"]) - 1


@needs_dot
def test_names_dot_would_misread_are_drawn_as_written(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "odd.urdf"
    path.write_text(
        '<robot name="a &quot;robot&quot;"><link name="base \\N &quot;x&quot;"/><link name="-> {b}; c"/>'
        '<joint name="j\\l" type="fixed"><parent link="base \\N &quot;x&quot;"/><child link="-> {b}; c"/></joint>'
        "</robot>"
    )
    out = tmp_path / "odd.svg"
    result = run_cli("tree", path, "-o", out)
    assert result.returncode == 0, result
    nodes, edges = svg_groups(out)
    assert sorted(svg_text(n)[0] for n in nodes) == ["-> {b}; c", 'base \\N "x"']
    assert [svg_text(e) for e in edges] == [["j\\l", "fixed"]]


def test_an_unknown_picture_format_is_a_usage_error(run_cli: RunCli, corpus_dir: Path, tmp_path: Path) -> None:
    result = run_cli("tree", corpus_dir / "synthetic/mimic_chain.urdf", "-o", tmp_path / "tree.jpg")
    assert result.returncode == 2
    assert ".svg, .png, .pdf or .dot" in result.stderr
    assert not (tmp_path / "tree.jpg").exists()


def test_without_dot_a_picture_is_refused_with_what_to_do(run_cli: RunCli, corpus_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    result = run_cli(
        "tree", corpus_dir / "synthetic/mimic_chain.urdf", "-o", tmp_path / "t.svg", env={"PATH": str(empty)}
    )
    assert result.returncode == 1
    assert "graphviz" in result.stderr and "tree.dot" in result.stderr
    assert "Traceback" not in result.stderr


def test_writing_over_the_input_is_refused(run_cli: RunCli, corpus_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "robot.dot"  # a URDF with an unusual name
    original = (corpus_dir / "synthetic/mimic_chain.urdf").read_bytes()
    path.write_bytes(original)
    result = run_cli("tree", path, "-o", path)
    assert result.returncode == 2 and "is the input file" in result.stderr
    assert path.read_bytes() == original
