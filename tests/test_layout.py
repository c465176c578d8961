"""The house rules: imports run one way, the test doubles stay out of the library, and no file
grows past what a person reads in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "voicebench"
MAX_LINES = 400
STAGES = (
    "dialogues",
    "fixtures",
    "scenarios",
    "replaying",
    "runlog",
    "timing",
    "judging",
    "rating",
    "strategies",
    "reporting",
    "annotate",
    "live",
    "gates",
    "campaign",
    "cli",
    "demo",
    "testing",
)


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def files(under: Path) -> list[Path]:
    return sorted(under.rglob("*.py"))


def test_dialogues_import_no_later_stage():
    for path in files(PACKAGE / "dialogues"):
        bad = {
            m
            for m in imports(path)
            if m.startswith(("voicebench.judging", "voicebench.replaying", "voicebench.testing"))
        }
        assert not bad, f"{path}: {bad}"


def test_only_the_test_doubles_import_the_test_doubles():
    for path in files(PACKAGE):
        if (PACKAGE / "testing") in path.parents:
            continue
        bad = {m for m in imports(path) if m.startswith("voicebench.testing")}
        assert not bad, f"{path}: {bad}"


def test_the_llm_layer_imports_no_stage():
    for path in files(PACKAGE / "llm"):
        bad = {
            m for m in imports(path) if m.startswith("voicebench.") and m.split(".")[1] in STAGES
        }
        assert not bad, f"{path}: {bad}"


def test_no_file_is_longer_than_a_sitting():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in files(PACKAGE)
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
