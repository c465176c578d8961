"""The house rules: imports run one way, the test doubles stay out of the library, and no file
grows past what a person reads in one sitting."""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "voicebench"
MAX_LINES = 400
ORDER = (
    # shared ground
    "_version",
    "errors",
    "_model",
    "_jsonl",
    "_folder",
    "_stamps",
    "_watch",
    "_arrivals",
    "_ray",
    "text",
    "bootstrap",
    "budgets",
    "host",
    "builtin",
    # the LLM layer, then the specs that name models
    "llm",
    "remotespec",
    "speechspec",
    "agentspec",
    # the stages, in the data's order (live serves and loads beside replaying)
    "dialogues",
    "fixtures",
    "scenarios",
    "timing",
    "runlog",
    "metrics",
    "agent",
    "recordings",
    "pipeline",
    "remote",
    "livekit",
    "replaying",
    "live",
    "calling",
    "judging",
    "rating",
    "strategies",
    "reporting",
    "annotate",
    "gates",
    "campaign",
    # the front: the demo, the Python calls, the pytest plugin, the commands
    "demo",
    "api",
    "pytest_plugin",
    "cli",
    "__init__",
    "__main__",
    # the test doubles, which nothing in the library imports
    "testing",
)
"""voicebench's top-level modules and packages (docs/layout.md): each imports only those
above it."""


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


def top_level(module: str) -> str:
    """``voicebench.a.b`` -> ``a``; ``voicebench`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_imports_follow_the_layers_in_order():
    rank = {name: i for i, name in enumerate(ORDER)}
    here = {top_level(m) for m in module_graph()}
    assert here == set(ORDER), f"to place in ORDER: {here ^ set(ORDER)}"
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in module_graph().items()
        for target in targets
        if rank[top_level(target)] > rank[top_level(module)]
    )
    assert wrong == []


def test_only_the_command_line_shows_things():
    """Library results carry data; rich tables and markup are made in ``cli/`` alone."""
    showing = sorted(
        str(p.relative_to(PACKAGE))
        for p in files(PACKAGE)
        if (PACKAGE / "cli") not in p.parents
        and any(m == "rich" or m.startswith("rich.") for m in imports(p))
    )
    assert showing == []


def test_commands_share_presentation_not_each_other():
    """A command module reaches another's tables and lines through ``cli/present/`` (and its
    options through ``cli/common.py``), never by importing the other command."""
    cli = PACKAGE / "cli"
    commands = {p.stem for p in cli.glob("*.py")} - {"__init__", "common"}
    crossing = sorted(
        f"{p.relative_to(PACKAGE)} imports {m}"
        for p in [*cli.glob("*.py"), *(cli / "present").glob("*.py")]
        for m in imports(p)
        if m.startswith("voicebench.cli.") and m.split(".")[2] in commands
    )
    assert commands >= {"run", "judge", "report", "campaign"} and crossing == []


def test_the_command_line_reaches_the_library_through_the_api_alone():
    """``cli/`` parses options, calls ``voicebench.api`` and shows what it returns: it imports
    nothing else of voicebench. Neither ``cli/`` nor ``api/`` imports inside a function: a
    module's imports are its path (the commands load lazily as one group, the API's names
    when first used)."""
    outside, deferred = [], []
    for p in [*files(PACKAGE / "cli"), *files(PACKAGE / "api")]:
        where = str(p.relative_to(PACKAGE))
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                deferred += [
                    f"{where}:{n.lineno}"
                    for n in ast.walk(node)
                    if isinstance(n, ast.Import | ast.ImportFrom)
                ]
            if not where.startswith("cli/"):
                continue
            if isinstance(node, ast.ImportFrom) and node.module == "voicebench":
                named = [f"voicebench.{a.name}" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                named = [node.module]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            outside += [
                f"{where} imports {m}"
                for m in named
                if m.split(".")[0] == "voicebench"
                and not m.startswith(("voicebench.api", "voicebench.cli"))
            ]
    assert outside == [] and deferred == []


def test_no_file_is_longer_than_a_sitting():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in files(PACKAGE)
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def module_graph() -> dict[str, set[str]]:
    """voicebench's modules and the voicebench modules each imports, at any depth (lazy and
    type-checking imports included): ``from a.b import c`` is an edge to ``a.b.c`` when that
    is a module, to ``a.b`` otherwise. A package is its ``__init__``; being inside a package
    is not an edge to it."""
    modules = {
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in files(PACKAGE)
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module:
                assert node.level == 0, f"{path}: a relative import"
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    edges.add(full if full in modules else node.module)
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def test_no_module_imports_itself_round_about():
    graph = module_graph()
    assert len(graph) > 100 and "voicebench.llm.endpoint" in graph["voicebench.llm.connect"]
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError(f"an import cycle: {' -> '.join(exc.args[1])}") from None


def test_the_budgets_and_turn_timeouts_are_written_once():
    # a parameter's or field's default (``name: float = 500.0``, ``name=1000``)
    literal = re.compile(
        r"(ttf[ta]_ms(:[^=\n]+= *|=)(Field\(default=)?(500|1000)\b)"
        r"|((turn_)?timeout_s(:[^=\n]+= *|=)(Field\(default=)?(30|60)(\.0)?\b)"
    )
    found = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in files(PACKAGE)
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert found == []
    budgets = (PACKAGE / "budgets.py").read_text()
    assert "TTFT_BUDGET_MS = 500.0" in budgets and "TTFA_BUDGET_MS = 1000.0" in budgets
    assert "TURN_TIMEOUT_S = 60.0" in budgets and "LOAD_TURN_TIMEOUT_S = 30.0" in budgets
    # the commands' options take them from there too
    import typer
    from typer.main import get_command

    from voicebench.budgets import LOAD_TURN_TIMEOUT_S, TURN_TIMEOUT_S
    from voicebench.cli import app

    group = get_command(app)
    ctx = typer.Context(group)
    for name, default in (
        ("run", TURN_TIMEOUT_S),
        ("converse", TURN_TIMEOUT_S),
        ("load", LOAD_TURN_TIMEOUT_S),
    ):
        command = group.get_command(ctx, name)  # type: ignore[attr-defined]
        (option,) = [p for p in command.params if p.name == "turn_timeout"]
        assert option.default == default, name


def test_the_tests_are_laid_out_like_the_package():
    """Each folder of tests is named after the voicebench package it tests; the helpers they
    share are in one place (``tests/helpers``, on pytest's path), the data in ``tests/data``."""
    tests = Path(__file__).resolve().parent
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - packages == {"helpers", "data"}
    shared = {p.stem for p in (tests / "helpers").glob("*.py")}
    assert {"processes", "short_set", "chromium", "synthetic_runs"} <= shared
    loose = {p.name for p in tests.glob("*.py") if p.name != "conftest.py"}
    assert not loose & {f"{name}.py" for name in shared}  # none left beside the tests
