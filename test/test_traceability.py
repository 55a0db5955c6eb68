"""docs/seed-traceability.md cites only tests and test files that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DOC = REPO_ROOT / "docs" / "seed-traceability.md"


def _test_functions() -> set[str]:
    names: set[str] = set()
    for path in (REPO_ROOT / "test").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def test_every_cited_test_exists() -> None:
    text = DOC.read_text()
    cited = set(re.findall(r"\btest_\w+\b(?!\.py)", text))
    assert cited, "the traceability document cites no test at all"
    missing = sorted(cited - _test_functions())
    assert not missing, f"{DOC.name} cites tests that do not exist: {', '.join(missing)}"


def test_every_cited_test_file_exists() -> None:
    text = DOC.read_text()
    paths = set(re.findall(r"\btest/[\w/]+\.py\b", text))
    missing = sorted(p for p in paths if not (REPO_ROOT / p).is_file())
    assert not missing, f"{DOC.name} cites test files that do not exist: {', '.join(missing)}"
