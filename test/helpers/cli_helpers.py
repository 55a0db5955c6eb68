"""Helpers of the command-line tests (the fixtures that use them are in ``conftest.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CliResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        def refuse(constant: str) -> Any:
            raise AssertionError(f"non-strict JSON constant {constant} in the output of {self.args}")

        return json.loads(self.stdout, parse_constant=refuse)

    def __str__(self) -> str:
        return f"bb-robot {' '.join(self.args)} -> {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


RunCli = Callable[..., CliResult]


def resource_args(paths: tuple[Path, ...]) -> list[str]:
    """``--resource-path DIR`` for each directory."""
    return [arg for path in paths for arg in ("--resource-path", str(path))]
