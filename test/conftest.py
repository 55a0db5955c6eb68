"""Fixtures shared by bb_robot's tests, and strict skipping under ``CI=true``.

Under ``CI=true`` (``.ci/run`` exports it; read here, so plain ``python -m pytest`` behaves like
``scripts/test``) a test that would skip fails instead, naming what is missing, unless its reason
is one of ``CI_ACCEPTED_SKIPS`` (``test/helpers/strict_ci.py``): what cannot be installed on these
machines, and expectations written down per file (a peer that refuses a file, a file rejected on purpose).  Everything
``scripts/setup`` installs, and the shared corpus, must be there.  ``docs/testing.md`` lists the
accepted reasons and their counts.

``corpus_dir`` is the shared corpus of robot descriptions, ``corpus_resource_paths`` its SDF include
directories, and ``libsdformat`` libsdformat 12 as a reference (the C++ helper of
``sdf/libsdformat/``, through ``helpers/libsdformat_reference.py``); they live here so that tests
outside ``test/sdf`` (the command line's) can use them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.libsdformat_reference import CORPUS_RESOURCE_DIRS, HelperUnavailable, Libsdformat
from helpers.robot_files import CORPUS_DIR

REPO_ROOT = Path(__file__).resolve().parents[1]
# CI and the developers' machines lay the shared corpus of robot descriptions beside the clone.


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The root of the bb_robot repository (where package.xml is)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus of robot descriptions; tests that need it skip where it is absent."""
    if not CORPUS_DIR.is_dir():
        pytest.skip(f"no shared corpus at {CORPUS_DIR}")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def corpus_resource_paths(corpus_dir: Path) -> tuple[Path, ...]:
    """The corpus's include resource directories, as its README lists them."""
    return tuple(corpus_dir / name for name in CORPUS_RESOURCE_DIRS)


@pytest.fixture(scope="session")
def libsdformat(tmp_path_factory: pytest.TempPathFactory) -> Libsdformat:
    """libsdformat 12 through the C++ helper: ``libsdformat(path, resource_paths=(), *, timeout=20.0)``.

    Returns the helper's JSON as a dict; raises ``LibsdformatError`` (``.errors``: libsdformat's error
    list; ``.timed_out``) when libsdformat rejects the file or does not answer in time.
    ``libsdformat.time_load(path, resource_paths, runs)`` gives seconds per load.  Skips the test with
    the reason when the helper cannot be built (no ``g++``, ``pkg-config`` or ``libsdformat-dev``: run
    ``scripts/setup``).
    """
    venv = REPO_ROOT / ".venv"
    cache = venv / "cache" / "libsdformat" if venv.is_dir() else tmp_path_factory.mktemp("libsdformat")
    try:
        return Libsdformat.build(cache)
    except HelperUnavailable as unavailable:
        pytest.skip(f"libsdformat 12 reference unavailable: {unavailable}")


def pytest_addoption(parser: pytest.Parser) -> None:
    from helpers.test_parts import PARTS

    parser.addoption(
        "--part",
        choices=PARTS,
        default="all",
        help="run only the tests that may run side by side (parallel: scripts/test spreads them over the "
        "cores with pytest-xdist), only those that run real processes one at a time (serial), or all "
        "(test/helpers/test_parts.py)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of the Jazzy profile (``helpers.ros_distro.JAZZY_PROFILE_GLOBS``, and of the
    parametrized ones there the cases ``JAZZY_PROFILE_CASES`` names) ``jazzy_profile``,
    and keep only the tests of ``--part`` (``helpers.test_parts``)."""
    from helpers.ros_distro import in_jazzy_profile
    from helpers.test_parts import is_serial

    test_dir = REPO_ROOT / "test"
    for item in items:
        callspec = getattr(item, "callspec", None)
        function = getattr(item, "originalname", item.name)
        if in_jazzy_profile(Path(str(item.path)), test_dir, function, callspec.id if callspec else None):
            item.add_marker(pytest.mark.jazzy_profile)
    part = config.getoption("--part")
    if part == "all":
        return
    keep, drop = [], []
    for item in items:
        module = item.module if isinstance(item, pytest.Function) else None
        serial = is_serial(Path(str(item.path)), test_dir, module)
        (keep if serial == (part == "serial") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# ----------------------------------------------------------------------------------- strict CI
# The hooks that make an unaccepted skip fail under CI=true.
pytest_plugins = ["helpers.strict_ci"]
