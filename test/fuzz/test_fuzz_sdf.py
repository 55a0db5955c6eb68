"""Fuzzing the SDF reader and converter with mutations of real models and worlds.

Allowed outcomes: a loaded model, or a documented error with a message:
:class:`~bb_robot.sdf.errors.SdfError` (file, XML, include, frame, scope problems),
:class:`~bb_robot.model.errors.InvalidRobot`, or the serial model's
:class:`~bb_robot.model.errors.SerialChainError`.
"""

from __future__ import annotations

from helpers.fuzz_outcomes import OUTCOMES
from helpers.xml_mutations import CORPUS_DIR, mutated, seed_files
from hypothesis import given

from bb_robot.model.errors import InvalidRobot, SerialChainError
from bb_robot.sdf import SdfError, load_from_model, read_string

SEEDS = seed_files((".sdf",), corpus_subdirs=("synthetic", "gz_sim", "sdformat"))
RESOURCES = tuple(p for p in (CORPUS_DIR / "synthetic" / "resources", CORPUS_DIR / "gz_sim") if p.is_dir())


@given(mutated(SEEDS))
def test_mutated_sdf_loads_or_fails_with_a_documented_error(case: tuple[str, bytes]) -> None:
    label, data = case

    def load() -> object:
        document = read_string(data, resource_paths=RESOURCES, environ={}, source="fuzz.sdf")
        return load_from_model(document)

    OUTCOMES.run("sdf", load, (SdfError, InvalidRobot, SerialChainError), f"a mutation of {label}")
