"""``bb-robot collisions`` and the default-pose warning of ``bb-robot check``, run as a user runs them."""

from __future__ import annotations

from pathlib import Path

from helpers.cli_helpers import RunCli
from helpers.collision_robots import panda_files

from bb_robot.collision.srdf import read_srdf
from bb_robot.loading import load_file

REPO_ROOT = Path(__file__).resolve().parents[2]
ARM = REPO_ROOT / "models" / "bb_arm.urdf"


def test_computes_writes_and_caches(run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "arm.srdf"
    cache = tmp_path / "cache"
    result = run_cli("collisions", ARM, "--write-srdf", out, "--json", env={"BB_ROBOT_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result
    report = result.json()
    assert report["origin"] == "computed" and report["samples"] == 10_000 and report["seed"] == 0
    reasons = {(d["link1"], d["link2"]): d["reason"] for d in report["disabled"]}
    assert reasons[("gripper_base", "wrist_3_link")] == "Adjacent"
    assert read_srdf(out).disabled == reasons
    # Stored in the cache, under the description's key, and the same as the shipped SRDF.
    assert report["cached"] and Path(report["cached"]).parent == cache
    assert read_srdf(report["cached"]).disabled == reasons
    assert read_srdf(ARM.with_suffix(".srdf")).disabled == reasons
    checked = {tuple(pair) for pair in report["checked"]}
    assert checked and not checked & set(reasons)


def test_fewer_samples_are_not_cached_and_the_seed_repeats(run_cli: RunCli, tmp_path: Path) -> None:
    env = {"BB_ROBOT_CACHE_DIR": str(tmp_path / "cache")}
    first = run_cli("collisions", ARM, "--samples", "300", "--seed", "5", "--json", env=env)
    again = run_cli("collisions", ARM, "--samples", "300", "--seed", "5", "--json", env=env)
    assert first.returncode == 0, first
    assert first.json()["cached"] is None and not (tmp_path / "cache").exists()
    assert first.json()["disabled"] == again.json()["disabled"]


def test_reads_an_srdf_and_reports_it(run_cli: RunCli) -> None:
    urdf, srdf, share = panda_files()
    result = run_cli("collisions", urdf, "--srdf", srdf, "--resource-path", share)
    assert result.returncode == 0, result
    assert "read from" in result.stdout and "35 pairs disabled" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["panda_link0", "panda_link1", "Adjacent"] in rows
    assert ["panda_link5", "panda_link7", "Default"] in rows


def test_bad_input_is_one_line_naming_the_file(run_cli: RunCli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.srdf"
    bad.write_text('<robot name="x"><disable_collisions link1="base_link" link2="nope"/></robot>', encoding="utf-8")
    result = run_cli("collisions", ARM, "--srdf", bad)
    assert result.returncode == 1
    assert f"{bad}: line 1: <disable_collisions> names link 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
    assert run_cli("collisions", ARM, "--samples", "-1").returncode == 2


def test_a_missing_mesh_names_the_link_and_file(run_cli: RunCli, tmp_path: Path) -> None:
    urdf = tmp_path / "m.urdf"
    urdf.write_text(
        '<robot name="m"><link name="a"><collision><geometry><mesh filename="missing.stl"/></geometry>'
        "</collision></link></robot>",
        encoding="utf-8",
    )
    result = run_cli("collisions", urdf)
    assert result.returncode == 1
    assert "link 'a': collision mesh 'missing.stl' cannot be used: no such file" in result.stderr
    broken = tmp_path / "broken.stl"
    broken.write_text("solid nothing\nendsolid nothing\n", encoding="utf-8")
    urdf.write_text(urdf.read_text(encoding="utf-8").replace("missing.stl", "broken.stl"), encoding="utf-8")
    result = run_cli("collisions", urdf)
    assert result.returncode == 1
    assert "link 'a': collision mesh 'broken.stl" in result.stderr


def test_check_warns_of_contact_at_the_default_pose(run_cli: RunCli, tmp_path: Path) -> None:
    urdf, _, share = panda_files()
    env = {"BB_ROBOT_CACHE_DIR": str(tmp_path / "empty")}
    result = run_cli("check", urdf, "--resource-path", share, env=env)
    assert result.returncode == 0, result
    warned = {line for line in result.stderr.splitlines() if "at the default pose" in line}
    assert any("'panda_link5' and 'panda_link7'" in line for line in warned), result
    # Adjacent pairs are never warned about.
    assert not any("'panda_link0' and 'panda_link1'" in line for line in warned)
    # Beside an SRDF that disables them, nothing is warned.
    copy = tmp_path / "panda.urdf"
    copy.write_text(urdf.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "panda.srdf").write_text(urdf.parents[1].joinpath("srdf", "panda.srdf").read_text(), encoding="utf-8")
    quiet = run_cli("check", copy, "--resource-path", share, env=env)
    assert quiet.returncode == 0, quiet
    assert "at the default pose" not in quiet.stderr
    assert load_file(str(copy)).robot.name == "panda"


def test_verify_reports_the_pairs_that_touch_and_exits_1(run_cli: RunCli, tmp_path: Path) -> None:
    env = {"BB_ROBOT_CACHE_DIR": str(tmp_path / "cache")}
    assert run_cli("collisions", ARM, "--verify", env=env).returncode == 2
    shipped = run_cli("collisions", ARM, "--srdf", ARM.with_suffix(".srdf"), "--verify", "--json", env=env)
    assert shipped.returncode == 0, shipped
    assert shipped.json()["origin"] == "stamp" and shipped.json()["touching"] == 0
    doctored = tmp_path / "arm.srdf"
    text = ARM.with_suffix(".srdf").read_text(encoding="utf-8")
    doctored.write_text(
        text.replace("</robot>", '<disable_collisions link1="base_link" link2="wrist_3_link" reason="Never"/></robot>'),
        encoding="utf-8",
    )
    result = run_cli("collisions", ARM, "--srdf", doctored, "--verify", env=env)
    assert result.returncode == 1, result
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("base_link       wrist_3_link"))
    assert row[2:5] == ["Never", "touches", "witness"] and row[-1] == "mm"
