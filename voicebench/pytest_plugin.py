"""voicebench in a user's own pytest suite (registered as a plugin when voicebench is installed).

Mark a test with the agent to replay, take the ``voicebench_run`` fixture (and
``voicebench_judging`` for quality), and state what must hold::

    import pytest
    from voicebench.pytest_plugin import expect, expect_not_below

    @pytest.mark.voicebench(agent="agents/my-agent.toml", limit=6)
    def test_my_agent(voicebench_run, voicebench_judging):
        expect(voicebench_run, max_ttfa_p90_ms=1200, max_failed_pct=0)
        expect_not_below(voicebench_judging, voicebench_run.agent, reference="human")

``expect_not_below`` fails only on an Elo difference clearly below zero, and skips the test,
saying why, when it cannot tell: too few judged items, or an untrusted judge.

With ``repeat=K`` every item is replayed K times, and ``expect(..., every_repeat=True)`` asks
that each gate holds in every one of the K passes (pass^k), not only pooled.

The marker takes ``replay``'s arguments (``agent``, ``dialogues``, ``fixtures``, ``limit``,
``ids``, ``scenarios``, ``seed``, ``mode``, ``repeat``) and ``judge`` (a judge spec for
``voicebench_judging``; default ``local-smoke``). Tests with the same marker share one
replay and one judging, in folders named after what they hold: ``run-AGENT-HASH`` (the hash
of the marker's replay arguments) and ``judging-JUDGE-HASH`` (of the run's folder and the
judge), the same whichever test asks first. The folders go under ``--voicebench-dir``
(default: pytest's temporary folder); a folder that a failed test used is kept and its path is
printed with the failure, the others are removed at the end of the session, and a kept one is
resumed by the next session with the same marker.
"""

from __future__ import annotations

import hashlib
import json
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
    """A folder of this test's own."""
    made = request.config.stash[_FOLDERS]
    return _folder(request, factory, f"{kind}-{len(made)}-{request.node.name}")


def _shared(
    request: pytest.FixtureRequest,
    factory: pytest.TempPathFactory,
    kind: str,
    what: Any,
    settings: dict[str, Any],
) -> Path:
    """The folder of a replay or a judging that tests share: ``KIND-WHAT-HASH``, ``what``
    (an agent or judge spec) by its name and the hash of ``settings``, so the same marker
    names the same folder in any test order and in the next session."""
    digest = hashlib.sha256(json.dumps(_stable(settings), sort_keys=True).encode()).hexdigest()
    return _folder(request, factory, f"{kind}-{_name_of(what)}-{digest[:12]}")


def _folder(request: pytest.FixtureRequest, factory: pytest.TempPathFactory, name: str) -> Path:
    base = _base(request.config, factory)
    base.mkdir(parents=True, exist_ok=True)
    path = base / re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:120]
    request.config.stash[_FOLDERS].append(path)
    return path


def _name_of(spec: Any) -> str:
    """A spec's name: a path's stem, a shipped name as it is, a loaded spec's ``name``."""
    if isinstance(spec, str | Path):
        return Path(spec).stem or "spec"
    return str(getattr(spec, "name", type(spec).__name__))


def _stable(value: Any) -> Any:
    """``value`` as JSON that reads the same in every process (a set sorted, a path as text,
    a loaded spec by its fields)."""
    if isinstance(value, dict):
        return {str(k): _stable(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((_stable(v) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    dump = getattr(value, "model_dump", None)
    return _stable(dump(mode="json")) if callable(dump) else repr(value)


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
        out = _shared(request, tmp_path_factory, "run", args["agent"], args)
        agent = args.pop("agent")
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
        settings = {"run": voicebench_run.path.name, "judge": spec}
        out = _shared(request, tmp_path_factory, "judging", spec, settings)
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
    95% interval of their difference lies wholly below zero, decided as ``voicebench check``
    decides a gate (``gates.check.evaluate``). Pairs the judge left undecided (the verdict
    flipped with the order) are no evidence either way; a judge that answered nothing at all
    fails the test, as does a contestant with no reply judged (its final turns failed). When
    the difference rests on too few judged items for an interval (6, as a median's), or the
    judge is below the trust bar or unmeasured (its card, as the report's banner reads it),
    the test is skipped saying so ("too few to tell", "untrusted judge"), as ``voicebench
    check`` exits 4: it neither passes nor fails."""
    from voicebench.bootstrap import TOO_FEW, clusters_needed
    from voicebench.gates.check import Gate, evaluate
    from voicebench.gates.figures import elo_difference_figure
    from voicebench.judging.cards import card_of_judging
    from voicebench.judging.trust import trust_warning

    verdicts = judging.verdicts
    names = judging.contestants
    if not verdicts:
        why = (
            f"{contestant} has no final reply in it (a final turn that failed is not judged)"
            if contestant not in names
            else "no pair of replies was judged"
        )
        pytest.fail(f"nothing was judged in {judging.path}: {why}", False)
    if not any(v.answer is not None for v in verdicts):
        pytest.fail(
            f"the judge answered none of its {len(verdicts)} requests in {judging.path}", False
        )
    if reference not in names:  # "human" for "human/reference"
        reference = next((c for c in names if c.startswith(reference + "/")), reference)
    diff = elo_difference_figure(judging.path, reference, contestant)
    result = evaluate(Gate(name="min_elo_difference", bound=0.0), {diff.key: diff})
    what = f"{contestant}'s Elo against {reference}'s in {judging.path}"
    shown = f"{diff.value:+.0f}" + (
        "" if diff.too_few else f" (95% CI {diff.low:+.0f} to {diff.high:+.0f})"
    )
    unsure = []
    if result.too_few:
        unsure.append(
            f"{TOO_FEW}: {shown} on {diff.clusters} judged item"
            + ("" if diff.clusters == 1 else "s")
            + f", an interval needs {clusters_needed()}"
        )
    untrusted = trust_warning(card_of_judging(judging.path))
    if untrusted is not None:
        unsure.append(f"untrusted judge: {untrusted}")
    if unsure:
        pytest.skip(f"{what}: " + "; ".join(unsure))
    if not result.passed and result.decided:
        pytest.fail(f"{what} is clearly below: {shown}", False)
