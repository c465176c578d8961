"""voicebench in a user's own pytest suite (registered as a plugin when voicebench is installed).

Mark a test with the agent to replay, take the ``voicebench_run`` fixture (and
``voicebench_judging`` for quality), and state what must hold::

    import pytest
    from voicebench.pytest_plugin import expect, expect_not_below

    @pytest.mark.voicebench(agent="agents/my-agent.toml", limit=6)
    def test_my_agent(voicebench_run, voicebench_judging):
        expect(voicebench_run, max_ttfa_p90_ms=1200, max_failed_pct=0)
        expect_not_below(voicebench_judging, voicebench_run.agent, reference="human")

With ``repeat=K`` every item is replayed K times, and ``expect(..., every_repeat=True)`` asks
that each gate holds in every one of the K passes (pass^k), not only pooled.

The marker takes ``replay``'s arguments (``agent``, ``dialogues``, ``fixtures``, ``limit``,
``ids``, ``scenarios``, ``seed``, ``mode``, ``repeat``) and ``judge`` (a judge spec for
``voicebench_judging``; default ``local-smoke``). Tests with the same marker share one
replay and one judging. The folders go under ``--voicebench-dir`` (default: pytest's
temporary folder); a folder that a failed test used is kept and its path is printed with the
failure, the others are removed at the end of the session.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from voicebench import api  # its names load their modules when a test first uses them

if TYPE_CHECKING:
    from voicebench.api import GateResults, Judging, Run
from voicebench.errors import VoicebenchError

REPLAY_ARGS = (
    "agent",
    "dialogues",
    "fixtures",
    "limit",
    "ids",
    "scenarios",
    "seed",
    "mode",
    "repeat",
)
_FOLDERS = pytest.StashKey[list[Path]]()
_KEEP = pytest.StashKey[set[Path]]()
_RESULTS = pytest.StashKey[dict[tuple, Any]]()
_CALL = pytest.StashKey[pytest.TestReport]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("voicebench")
    group.addoption(
        "--voicebench-dir",
        type=Path,
        default=None,
        help="Where voicebench fixtures write their run and judging folders "
        "(default: pytest's temporary folder).",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "voicebench(agent, limit=None, ids=None, dialogues=None, scenarios=(), seed=0, "
        "mode='teacher-forced', repeat=1, judge='local-smoke'): the agent voicebench_run "
        "replays and the judge voicebench_judging uses",
    )
    config.stash[_FOLDERS] = []
    config.stash[_KEEP] = set()
    config.stash[_RESULTS] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL] = report
    return report


def _base(config: pytest.Config, factory: pytest.TempPathFactory) -> Path:
    chosen = config.getoption("--voicebench-dir")
    return Path(chosen) if chosen is not None else factory.getbasetemp() / "voicebench"


def _used(request: pytest.FixtureRequest, path: Path) -> None:
    """After the test: keep ``path`` when the test failed, and say where it is."""
    report = request.node.stash.get(_CALL, None)
    if report is not None and report.failed:
        request.config.stash[_KEEP].add(path)
        report.sections.append(("voicebench", f"kept for a look: {path}"))


@pytest.fixture
def voicebench_replay(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Run]]:
    """``voicebench.replay`` into a folder of this test's (kept if the test fails)."""
    made: list[Path] = []

    def run(agent: Any, **kwargs: Any) -> Run:
        kwargs.setdefault("out", _fresh(request, tmp_path_factory, "run"))
        made.append(Path(kwargs["out"]))
        return api.replay(agent, **kwargs)

    yield run
    for path in made:
        _used(request, path)


def _fresh(request: pytest.FixtureRequest, factory: pytest.TempPathFactory, kind: str) -> Path:
    base = _base(request.config, factory)
    base.mkdir(parents=True, exist_ok=True)
    made = request.config.stash[_FOLDERS]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)
    made.append(base / f"{kind}-{len(made)}-{name}"[:120])
    return made[-1]


def _marker(request: pytest.FixtureRequest) -> dict[str, Any]:
    mark = request.node.get_closest_marker("voicebench")
    if mark is None or ("agent" not in mark.kwargs and not mark.args):
        raise pytest.UsageError(
            f"{request.node.nodeid}: voicebench_run needs @pytest.mark.voicebench(agent=...)"
        )
    kwargs = dict(mark.kwargs)
    if mark.args:
        kwargs.setdefault("agent", mark.args[0])
    unknown = set(kwargs) - {*REPLAY_ARGS, "judge"}
    if unknown:
        raise pytest.UsageError(
            f"{request.node.nodeid}: unknown voicebench marker argument(s): "
            f"{', '.join(sorted(unknown))}"
        )
    return kwargs


def _readable(request: pytest.FixtureRequest, make: Callable[[], Any]) -> Any:
    """``make()``, a voicebench error (a misspelt agent, a bad spec) failing the test in one
    line that names the test, not in a traceback through the fixture."""
    try:
        return make()
    except VoicebenchError as exc:
        error = str(exc)  # failed below, outside this block: nothing chained to it
    pytest.fail(f"{request.node.nodeid}: voicebench marker: {error}", pytrace=False)


def _key(kwargs: dict[str, Any]) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in kwargs.items()))


@pytest.fixture
def voicebench_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Run]:
    """The run the test's ``voicebench`` marker asks for, replayed once per session."""
    args = {k: v for k, v in _marker(request).items() if k in REPLAY_ARGS}
    cache = request.config.stash[_RESULTS]
    key = ("run", _key(args))
    if key not in cache:
        agent = args.pop("agent")
        out = _fresh(request, tmp_path_factory, "run")
        cache[key] = _readable(request, lambda: api.replay(agent, out=out, **args))
    run: Run = cache[key]
    yield run
    _used(request, run.path)


@pytest.fixture
def voicebench_judging(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    voicebench_run: Run,
) -> Iterator[Judging]:
    """The marker's run judged against the dialogues' human replies, once per session."""
    spec = _marker(request).get("judge", "local-smoke")
    cache = request.config.stash[_RESULTS]
    key = ("judging", str(voicebench_run.path), repr(spec))
    if key not in cache:
        out = _fresh(request, tmp_path_factory, "judging")
        cache[key] = _readable(request, lambda: api.judge([voicebench_run], judge=spec, out=out))
    judging: Judging = cache[key]
    yield judging
    _used(request, judging.path)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    keep = config.stash[_KEEP]
    for path in config.stash[_FOLDERS]:
        if path not in keep:
            shutil.rmtree(path, ignore_errors=True)


def expect(
    target: Run | Judging | str | Path,
    *,
    strict: bool = False,
    every_repeat: bool = False,
    contestant: str | None = None,
    **gates: float,
) -> GateResults:
    """Fail the test unless every gate holds (``voicebench.check``'s gates, e.g.
    ``max_ttfa_p90_ms=1200``), naming each failed figure with its value and interval; with
    ``every_repeat``, in every pass of a run replayed with ``repeat=K`` (pass^k)."""
    from voicebench.gates.check import failure_text

    results = api.check(
        target, strict=strict, every_repeat=every_repeat, contestant=contestant, **gates
    )
    if not results.passed:
        lines = [failure_text(r) for r in results.results if not r.passed]
        pytest.fail(f"voicebench gates failed in {results.path}:\n  " + "\n  ".join(lines), False)
    return results


def expect_not_below(judging: Judging, contestant: str, *, reference: str = "human") -> None:
    """Fail the test when ``contestant``'s HEART Elo is clearly below ``reference``'s: the
    95% interval of their difference lies wholly below zero. Pairs the judge left undecided
    (the verdict flipped with the order) are no evidence either way; a judge that answered
    nothing at all fails the test."""
    from voicebench.rating import NothingToRateError

    verdicts = judging.verdicts
    if not any(v.answer is not None for v in verdicts):
        pytest.fail(
            f"the judge answered none of its {len(verdicts)} requests in {judging.path}", False
        )
    names = judging.contestants
    if reference not in names:  # "human" for "human/reference"
        reference = next((c for c in names if c.startswith(reference + "/")), reference)
    try:
        diff = judging.elo_difference(reference, contestant)
    except NothingToRateError:
        return  # every pair undecided: nothing says the contestant is below
    if diff.clearly_below:
        pytest.fail(
            f"{contestant}'s Elo is clearly below {reference}'s in {judging.path}: "
            f"{diff.value:+.0f} (95% CI {diff.low:+.0f} to {diff.high:+.0f})",
            False,
        )
