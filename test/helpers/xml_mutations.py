"""Hypothesis strategies that turn real robot files into hostile variants of themselves.

A case is a seed file (one of ``models/`` or the shared corpus) with one to four mutations: an
element deleted, repeated or moved, an attribute removed or given an odd value (bad numbers,
NaN, inf, huge, empty, odd names, very long text), a tag renamed, text replaced, or the bytes cut
or spliced.  Most cases stay well-formed XML, so they reach the model builder, not only the XML
reader; the byte mutations exercise the reader.
"""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from helpers.robot_files import CORPUS_DIR

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = REPO_ROOT / "models"

# Values that sit just outside the grammar: numbers that are not, numbers that overflow, lists of
# the wrong length, names that are empty or strange.
ODD_VALUES = (
    "",
    " ",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e309",
    "-1e309",
    "1e-320",
    "0x10",
    "1,2,3",
    "1 2",
    "1 2 3 4",
    "1 2 nan",
    "0 0 0",
    "-0",
    "abc",
    "true",
    "9" * 400,
    "a" * 5000,
    "../../etc/passwd",
    "package://",
    "model://",
    "file:///nonexistent/mesh.stl",
    "link with spaces",
    "émoji🤖",
    "\x7f",
    "world",
    "base_link",
)

numbers = st.floats(allow_nan=True, allow_infinity=True, width=64).map(repr)
odd_text = st.one_of(st.sampled_from(ODD_VALUES), numbers, st.text(max_size=40))


@dataclass(frozen=True)
class Seed:
    """A real file to mutate: its path and its parsed tree (parsed once per session)."""

    path: Path
    text: bytes

    @property
    def label(self) -> str:
        return self.path.name


def seed_files(suffixes: tuple[str, ...], *, corpus_subdirs: tuple[str, ...] = ()) -> list[Seed]:
    """The files of ``models/`` with one of ``suffixes``, and those of the corpus subdirectories.

    Args:
        suffixes: file name endings to take, e.g. ``(".urdf",)``.
        corpus_subdirs: folders of the shared corpus to take files from too (absent corpus: none).

    Returns:
        The seeds, sorted by path, each at most 400 kB (bigger files slow every case down).
    """
    paths = [p for p in sorted(MODELS_DIR.iterdir()) if p.name.endswith(suffixes)]
    for sub in corpus_subdirs:
        folder = CORPUS_DIR / sub
        if folder.is_dir():
            paths += sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(suffixes))
    return [Seed(p, p.read_bytes()) for p in paths if p.stat().st_size <= 400_000]


def _elements(root: ET.Element) -> list[tuple[ET.Element | None, ET.Element]]:
    """Every element with its parent (``None`` for the root), in document order."""
    found: list[tuple[ET.Element | None, ET.Element]] = [(None, root)]
    for parent in root.iter():
        found.extend((parent, child) for child in parent)
    return found


@st.composite
def _mutate_tree(draw: st.DrawFn, root: ET.Element) -> None:
    elements = _elements(root)
    parent, element = elements[draw(st.integers(0, len(elements) - 1))]
    kind = draw(
        st.sampled_from(("delete", "repeat", "move", "attribute", "drop_attribute", "rename", "text", "add_attribute"))
    )
    if kind == "delete" and parent is not None:
        parent.remove(element)
    elif kind == "repeat" and parent is not None:
        parent.append(copy.deepcopy(element))
    elif kind == "move" and parent is not None:
        _, target = elements[draw(st.integers(0, len(elements) - 1))]
        if target is not element and element not in list(target.iter()):
            parent.remove(element)
            target.append(element)
    elif kind == "attribute" and element.attrib:
        name = draw(st.sampled_from(sorted(element.attrib)))
        element.set(name, draw(odd_text))
    elif kind == "drop_attribute" and element.attrib:
        del element.attrib[draw(st.sampled_from(sorted(element.attrib)))]
    elif kind == "rename":
        element.tag = draw(st.sampled_from(("link", "joint", "origin", "axis", "limit", "model", "pose", "x", "")))
        if not element.tag:
            element.tag = "unknown"
    elif kind == "text":
        element.text = draw(odd_text)
    elif kind == "add_attribute":
        element.set(
            draw(st.sampled_from(("name", "type", "xyz", "rpy", "value", "relative_to", "canonical_link"))),
            draw(odd_text),
        )


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Seed]) -> tuple[str, bytes]:
    """A hostile variant of one of ``seeds``: ``(seed label, document bytes)``."""
    seed = draw(st.sampled_from(seeds))
    data = seed.text
    if draw(st.integers(0, 9)) < 8:  # mostly structural: the case reaches the model builder
        try:
            root = ET.fromstring(data)
        except ET.ParseError:
            root = None
        if root is not None:
            for _ in range(draw(st.integers(1, 4))):
                draw(_mutate_tree(root))
            data = ET.tostring(root, encoding="utf-8")
    else:  # bytes: cut, spliced or with junk inserted
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(("cut", "insert", "replace")))
        junk = draw(st.binary(max_size=16) | st.sampled_from((b"<", b">", b"&", b"]]>", b"<!DOCTYPE x>", b"\x00")))
        if kind == "cut":
            data = data[:at]
        elif kind == "insert":
            data = data[:at] + junk + data[at:]
        else:
            data = data[:at] + junk + data[at + len(junk) :]
    return seed.label, data
