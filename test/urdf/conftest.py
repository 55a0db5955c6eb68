"""Fixtures of the URDF parser tests: the shared corpus and the URDFs of example-robot-data.

``corpus_urdf`` and ``erd_urdf`` are parametrised (one test per file) by
:func:`pytest_generate_tests`; when the corpus or the package is absent they yield one
skipped case that says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.robot_files import CORPUS_DIR, example_robot_data_urdfs

# Synthetic files the parser itself must reject (file -> the error class name).
SYNTHETIC_REJECTS = {
    "empty_file.urdf": "EmptyDocumentError",
    "truncated.urdf": "XmlSyntaxError",
    "unclosed_tag.urdf": "XmlSyntaxError",
    "non_numeric.urdf": "InvalidValueError",
    "nan_inf.urdf": "InvalidValueError",
    "zero_axis.urdf": "InvalidValueError",
    "unknown_joint_type.urdf": "UnknownJointTypeError",
    "duplicate_link.urdf": "DuplicateNameError",
    "billion_laughs.urdf": "UnsafeXmlError",
    "xxe_external_entity.urdf": "UnsafeXmlError",
}

# Synthetic files that are structurally wrong for the model builder but parse fine.
SYNTHETIC_STRUCTURAL = (
    "cycle.urdf",
    "two_roots.urdf",
    "missing_link.urdf",
    "mimic_cycle.urdf",
    "mimic_chain.urdf",
    "long_chain_1000.urdf",
    "x_axis_arm.urdf",
)


def corpus_urdfs() -> list[Path]:
    """Every ``*.urdf`` under the corpus except the synthetic ones the parser rejects."""
    if not CORPUS_DIR.is_dir():
        return []
    return sorted(
        path
        for path in CORPUS_DIR.rglob("*.urdf")
        if not (path.parent.name == "synthetic" and path.name in SYNTHETIC_REJECTS)
    )


def _params(paths: list[Path], root_of: str, reason: str) -> list[object]:
    if not paths:
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]
    params: list[object] = []
    for path in paths:
        text = str(path)
        label = text.split(root_of, 1)[1] if root_of in text else path.name
        params.append(pytest.param(path, id=label))
    return params


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "synthetic_reject" in metafunc.fixturenames:
        metafunc.parametrize(
            "synthetic_reject",
            [pytest.param(item, id=item[0]) for item in sorted(SYNTHETIC_REJECTS.items())],
        )
    if "synthetic_structural" in metafunc.fixturenames:
        metafunc.parametrize("synthetic_structural", SYNTHETIC_STRUCTURAL)
    if "corpus_urdf" in metafunc.fixturenames:
        metafunc.parametrize(
            "corpus_urdf",
            _params(corpus_urdfs(), "corpus/", f"the shared corpus is not at {CORPUS_DIR}"),
        )
    if "erd_urdf" in metafunc.fixturenames:
        metafunc.parametrize(
            "erd_urdf",
            _params(
                example_robot_data_urdfs(),
                "example-robot-data/",
                "PyPI example-robot-data is not installed (pip install example-robot-data)",
            ),
        )


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus (``../shared/corpus`` beside the repository); skip if absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS_DIR}")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def synthetic_dir(corpus_dir: Path) -> Path:
    return corpus_dir / "synthetic"


@pytest.fixture
def quiet_urdf_parser_py() -> Iterator[object]:
    """``urdf_parser_py.urdf`` with its stderr chatter (unknown attributes) silenced."""
    urdf = pytest.importorskip("urdf_parser_py.urdf", reason="PyPI urdf-parser-py is not installed")
    core = pytest.importorskip("urdf_parser_py.xml_reflection.core")
    saved = core.on_error
    core.on_error = lambda _message: None
    try:
        yield urdf
    finally:
        core.on_error = saved
