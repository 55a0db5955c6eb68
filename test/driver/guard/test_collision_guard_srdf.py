"""The driver verifies the SRDF it loads: a disabled pair that can touch is checked anyway and named in a
warning with the file and a witness; ``collision.trust_srdf`` keeps it disabled and still warns once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bb_robot.collision.srdf import STAMP
from bb_robot.driver.guard.build import build_guard
from bb_robot.driver.guard.collision_guard import GuardSettings
from bb_robot.driver.model import driven_joints
from bb_robot.loading import load_file

MODELS = Path(__file__).resolve().parents[3] / "models"
PAIR = ("base_link", "wrist_3_link")  # the bundled arm's wrist reaches its base: the matrix checks the pair


@pytest.fixture
def doctored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled arm's SRDF with one more pair disabled, one that can touch."""
    monkeypatch.setenv("BB_ROBOT_CACHE_DIR", str(tmp_path / "cache"))
    text = STAMP.sub("", (MODELS / "bb_arm.srdf").read_text(encoding="utf-8"))
    line = f'  <disable_collisions link1="{PAIR[0]}" link2="{PAIR[1]}" reason="Never"/>\n'
    path = tmp_path / "doctored.srdf"
    path.write_text(text.replace("</robot>", line + "</robot>"), encoding="utf-8")
    return path


def guard_and_log(srdf: Path, trust: bool) -> tuple[frozenset[tuple[str, str]], list[tuple[str, str]]]:
    loaded = load_file(str(MODELS / "bb_arm.urdf"))
    logs: list[tuple[str, str]] = []
    guard = build_guard(
        loaded,
        driven_joints(loaded.robot),
        GuardSettings(),
        500.0,
        srdf=str(srdf),
        log=lambda level, text: logs.append((level, text)),
        trust_srdf=trust,
    )
    assert guard is not None
    return guard.model.disabled, [entry for entry in logs if entry[0] == "warning"]


def test_a_disabled_pair_that_can_touch_is_checked_anyway_with_a_warning(doctored: Path) -> None:
    disabled, warnings = guard_and_log(doctored, trust=False)
    assert PAIR not in disabled
    assert len(warnings) == 1
    text = warnings[0][1]
    assert str(doctored) in text and f"'{PAIR[0]}' and '{PAIR[1]}'" in text
    assert "(witness " in text and "_joint=" in text and " mm)" in text
    assert "checked anyway" in text
    # the rest of the file applies
    assert ("base_link", "shoulder_link") in disabled


def test_trust_srdf_keeps_the_pair_disabled_and_warns_once(doctored: Path) -> None:
    guard_and_log(doctored, trust=False)  # the verification is cached from here on
    disabled, warnings = guard_and_log(doctored, trust=True)
    assert PAIR in disabled
    assert [text for _, text in warnings if PAIR[1] in text and "kept disabled" in text] == [warnings[0][1]]
    assert len(warnings) == 1


def test_the_bundled_srdf_is_trusted_without_a_warning() -> None:
    disabled, warnings = guard_and_log(MODELS / "bb_arm.srdf", trust=False)
    assert warnings == []
    assert ("base_link", "upper_arm_link") in disabled
