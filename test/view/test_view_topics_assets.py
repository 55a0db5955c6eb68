"""Which topics the view bridges (bb_robot.view.topics) and which files it serves (assets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bb_robot.view.assets import AssetError, AssetResolver
from bb_robot.view.topics import DEFAULT_TOPICS, STATIC_TF_DEPTH, PublisherQos, choose_topics

REPO = Path(__file__).resolve().parents[2]
RELIABLE_LATCHED = PublisherQos(reliable=True, transient_local=True)
RELIABLE = PublisherQos(reliable=True, transient_local=False)
BEST_EFFORT = PublisherQos(reliable=False, transient_local=False)


def test_only_existing_topics_in_the_order_asked_with_matching_qos() -> None:
    types = {
        "/tf": ["tf2_msgs/msg/TFMessage"],
        "/tf_static": ["tf2_msgs/msg/TFMessage"],
        "/robot_description": ["std_msgs/msg/String"],
        "/joint_states": ["sensor_msgs/msg/JointState"],
        "/diagnostics": ["diagnostic_msgs/msg/DiagnosticArray"],
        "/unrelated": ["std_msgs/msg/String"],
    }
    publishers = {
        "/tf": [RELIABLE],
        "/tf_static": [RELIABLE_LATCHED, RELIABLE_LATCHED],
        "/robot_description": [RELIABLE_LATCHED],
        "/joint_states": [RELIABLE, BEST_EFFORT],
        "/diagnostics": [],  # a subscriber only: the topic exists but nothing is published
    }
    wanted = ["/robot_description", "/tf", "/tf_static", "/joint_states", "/diagnostics", "/absent", "/tf"]
    choices, notes = choose_topics(wanted, types, publishers)
    assert notes == []
    assert [c.topic for c in choices] == ["/robot_description", "/tf", "/tf_static", "/joint_states"]
    by = {c.topic: c for c in choices}
    assert by["/tf_static"].latched and by["/tf_static"].latch_depth == STATIC_TF_DEPTH
    assert by["/robot_description"].latched and by["/robot_description"].latch_depth == 1
    assert not by["/tf"].latched and by["/tf"].latch_depth == 0 and not by["/tf"].best_effort
    assert by["/joint_states"].best_effort  # one best-effort publisher: a reliable reader would miss it


def test_mixed_durability_is_not_latched_and_several_types_are_reported() -> None:
    types = {"/x": ["std_msgs/String", "a_msgs/msg/B"]}
    choices, notes = choose_topics(["/x"], types, {"/x": [RELIABLE_LATCHED, RELIABLE]})
    assert choices[0].type_name == "a_msgs/msg/B" and not choices[0].latched
    assert notes and "'/x'" in notes[0] and "several types" in notes[0]


def _resolver(tmp_path: Path) -> tuple[AssetResolver, Path]:
    share = tmp_path / "share" / "my_robot"
    (share / "meshes").mkdir(parents=True)
    (share / "meshes" / "link.stl").write_bytes(b"solid link\nendsolid link\n")
    models = tmp_path / "models"
    (models / "arm" / "meshes").mkdir(parents=True)
    (models / "arm" / "meshes" / "base.dae").write_bytes(b"<COLLADA/>")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for clients")
    (share / "meshes" / "escape.stl").symlink_to(secret)

    def package_share(name: str) -> str:
        if name == "my_robot":
            return str(share)
        if name == "elsewhere":
            return str(tmp_path)
        raise LookupError(f"ROS package '{name}' was not found")

    return AssetResolver([str(share), str(models)], package_share=package_share), secret


def test_assets_inside_the_directories_are_served(tmp_path: Path) -> None:
    assets, _ = _resolver(tmp_path)
    assert assets.fetch("package://my_robot/meshes/link.stl").startswith(b"solid link")
    assert assets.fetch("model://arm/meshes/base.dae") == b"<COLLADA/>"
    path = tmp_path / "share" / "my_robot" / "meshes" / "link.stl"
    assert assets.fetch(f"file://{path}") == assets.fetch(str(path))


@pytest.mark.parametrize(
    "uri,why",
    [
        ("package://my_robot/meshes/escape.stl", "outside"),  # a symbolic link leading out
        ("package://my_robot/../../secret.txt", "outside"),
        ("package://elsewhere/secret.txt", "outside"),  # a package whose share is not trusted
        ("file://{tmp}/secret.txt", "outside"),
        ("/etc/passwd", "outside"),
        ("package://my_robot/meshes/missing.stl", "no such file"),
        ("package://unknown/mesh.stl", "was not found"),
        ("model://nothing/mesh.stl", "no directory 'nothing'"),
        ("meshes/link.stl", "only package://"),
        ("https://example.invalid/mesh.stl", "only package://"),
    ],
)
def test_assets_outside_or_missing_are_refused(tmp_path: Path, uri: str, why: str) -> None:
    assets, secret = _resolver(tmp_path)
    with pytest.raises(AssetError, match=why) as raised:
        assets.fetch(uri.format(tmp=tmp_path))
    assert secret.read_text() not in str(raised.value)


def test_layout_opens_the_3d_panel_the_joint_plot_and_the_diagnostics() -> None:
    layout = json.loads((REPO / "config" / "foxglove" / "bb_robot.json").read_text())
    panels = layout["configById"]
    kinds = {panel_id.split("!")[0] for panel_id in panels}
    assert {"3D", "Plot", "DiagnosticSummary"} <= kinds

    def leaves(node: object) -> set[str]:
        if isinstance(node, str):
            return {node}
        assert isinstance(node, dict)
        return leaves(node["first"]) | leaves(node["second"])

    assert leaves(layout["layout"]) == set(panels)
    shown = {"/" + t.lstrip("/") for t in DEFAULT_TOPICS}  # the default topics in the root namespace
    three_d = next(v for k, v in panels.items() if k.startswith("3D!"))
    assert set(three_d["topics"]) <= shown and "/robot_description" in three_d["topics"]
    plot = next(v for k, v in panels.items() if k.startswith("Plot!"))
    assert plot["paths"] and all(p["value"].split(".")[0] in shown for p in plot["paths"])
    diagnostics = next(v for k, v in panels.items() if k.startswith("DiagnosticSummary!"))
    assert diagnostics["topicToRender"] in shown
