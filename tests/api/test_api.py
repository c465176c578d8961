"""The Python calls: paths or objects in, typed results that carry data out, sync forms that
work inside a running event loop, and shipped specs found by name."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from synthetic_runs import make_judging, make_run, verdict

import voicebench
import voicebench.api
from voicebench import builtin
from voicebench.agentspec import load_agent_spec
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:6]


def test_every_call_is_documented_and_exported():
    import inspect
    import re

    page = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    public = [n for n in voicebench.api.__all__ if inspect.isfunction(getattr(voicebench, n))]
    for name in public:
        call = getattr(voicebench, name)
        assert call.__doc__, name
        assert f"::: {call.__module__}.{name}\n" in page, f"{name} is not on the API page"
    names = ("replay", "converse", "judge", "judge_check", "rate", "check", "compare", "report")
    for name in names:
        call = getattr(voicebench, name)
        assert callable(call), name  # not shadowed by a subpackage of the same name
        assert call.__doc__ and "Returns:" in call.__doc__, name
        assert call.__annotations__["return"], name
        # every documented argument is one parameter, as the API page renders it
        doc = inspect.getdoc(call) or ""
        args = doc.split("Args:")[1].split("\n\n")[0] if "Args:" in doc else ""
        documented = re.findall(r"^    (\S[^:]*):", args, re.M)
        assert set(documented) <= set(inspect.signature(call).parameters), (name, documented)
    assert voicebench.replay_async.__name__ == "replay_async"


def test_shipped_specs_are_found_by_name_and_a_path_of_ones_own_wins(tmp_path, monkeypatch):
    assert builtin.spec_path("agents", "local") == builtin.AGENTS / "local.toml"
    assert builtin.spec_path("judges", "local.toml") == builtin.JUDGES / "local.toml"
    assert load_agent_spec("scripted").name == "scripted-300ms"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "local").write_text('name = "mine"\nfamily = "x"\n')
    assert builtin.spec_path("agents", "local") == Path("local")
    with pytest.raises(InputError) as e:
        builtin.spec_path("agents", "nosuch")
    shipped = "shipped: anthropic, gemini-live, livekit-example, local"
    assert "nosuch" in str(e.value) and shipped in str(e.value)
    # a path with a folder in it is a path, not a name
    assert builtin.spec_path("agents", "x/local") == Path("x/local")
    # relative to a file's folder first (a campaign's), then by name
    assert (
        builtin.spec_path("agents", "scripted", base=tmp_path) == builtin.AGENTS / "scripted.toml"
    )


def test_a_run_of_no_items_is_refused_before_anything_is_written(tmp_path):
    for call in (voicebench.replay, voicebench.converse):
        with pytest.raises(InputError, match="limit must be at least 1"):
            call("scripted", limit=0, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_built_in_data_is_found_through_the_package():
    assert builtin.DIALOGUES.is_file() and (builtin.FIXTURES / "manifest.json").is_file()
    assert builtin.PAIRS_GOLD.is_file() and builtin.STRATEGY_GOLD.is_file()
    assert {"local", "scripted", "local-qwen"} <= set(builtin.shipped("agents"))
    assert {"local", "local-smoke"} <= set(builtin.shipped("judges"))
    assert builtin.CHECKOUT and not builtin.installed(builtin.DEFAULT_AGENT)


def test_run_figures_gates_and_comparison_from_paths_or_objects(tmp_path):
    fast = make_run(tmp_path, "fast", ITEMS, [700, 800, 900])
    slow = make_run(tmp_path, "slow", ITEMS, [1700, 1800, 1900])
    run = voicebench.Run.load(fast)
    assert run.agent == "fast" and len(run.records) == 6 and run.failed == []
    f = run.figures["ttfa_p50_ms"]
    assert f.low <= f.value <= f.high and f.n == 6 and f.unit == "ms" and f.clusters == 6
    assert run.figures["ttfa_p90_ms"].too_few  # 6 dialogues: a p90's interval needs 30

    passed = voicebench.check(run, max_ttfa_p50_ms=1000, max_failed_pct=0)
    assert passed and passed.passed and passed.failed == []
    failed = voicebench.check(slow, max_ttfa_p50_ms=1000)
    assert not failed and [r.gate.name for r in failed.failed] == ["max_ttfa_p50_ms"]
    by_value = voicebench.check(run, max_ttfa_p90_ms=1000)  # 6 dialogues: no interval
    assert by_value and by_value.too_few[0].gate.name == "max_ttfa_p90_ms"
    strict = voicebench.check(run, strict=True, max_ttfa_p90_ms=1000)  # abstains
    assert not strict and strict.failed == [] and strict.too_few[0].abstained
    with pytest.raises(InputError, match="unknown gate"):
        voicebench.check(run, max_ttfa_p91_ms=1)
    with pytest.raises(InputError, match="no gates given"):
        voicebench.check(run)

    change = voicebench.compare(run, slow)
    ttfa = next(c for c in change.changes if c.key == "ttfa_p50_ms")
    # 6 turns a side: the change is measured, but too few turns to call it (10 needed)
    assert ttfa.verdict == "too few to tell" and ttfa.change == pytest.approx(1000, abs=1)
    assert ttfa.low is None and change.too_few_to_tell


def test_elo_difference_carries_its_interval(tmp_path):
    items = ITEMS
    a = make_run(tmp_path, "alpha", items, 900)
    b = make_run(tmp_path, "beta", items, 900)
    # alpha beats beta on every item: clearly above, whichever items a resample draws
    verdicts = [verdict(d.id, "alpha", "beta", "A") for d in items]
    verdicts += [verdict(d.id, "beta", "alpha", "B") for d in items]
    folder = make_judging(tmp_path / "j", [a, b], items, ["alpha", "beta"], verdicts)
    judging = voicebench.Judging.load(folder)
    assert judging.result is None and sorted(judging.contestants) == ["alpha", "beta"]
    diff = judging.elo_difference("beta", "alpha", rounds=200)
    assert diff.value > 0 and diff.low > 0 and diff.clearly_above and not diff.clearly_below
    assert judging.elo_difference("alpha", "beta", rounds=200).clearly_below
    table = voicebench.rate(judging, rounds=100)
    assert max(table.ratings, key=lambda r: r.elo).contestant == "alpha"


async def test_the_sync_forms_work_inside_a_running_event_loop(tmp_path):
    run = make_run(tmp_path, "fast", ITEMS[:2], 800)

    async def figures() -> float:
        await asyncio.sleep(0)
        return voicebench.Run.load(run).figures["ttfa_p50_ms"].value

    # as in a notebook: a loop is running, and a sync call runs its work on a thread
    assert voicebench.api.run_sync(figures()) == pytest.approx(800)
    report = voicebench.report([run], out=tmp_path / "page", title="t")
    assert (report.out_dir / "index.html").is_file()


def test_judge_check_gives_the_shipped_judges_card_without_asking_it(monkeypatch):
    from voicebench.judging import load_judge_spec
    from voicebench.judging.cards import card_path, read_card, spec_sha256
    from voicebench.judging.check import DEFAULT_GOLD
    from voicebench.judging.gold import load_gold

    monkeypatch.setattr(
        "voicebench.judging.check.decide_pending",
        lambda *a, **k: pytest.fail("a shipped card is reused: nothing is asked"),
    )
    card = voicebench.judge_check("local", split="holdout").card
    path = builtin.spec_path("judges", "local")
    spec, rubric = load_judge_spec(path)
    gold = load_gold(DEFAULT_GOLD)
    shipped = card_path(path, spec, spec_sha256(spec, rubric), gold.sha256, "holdout")
    assert card == read_card(shipped)
    assert card.split == "holdout" and card.pairs == len(gold.select("holdout"))
    assert card.accuracy_low <= card.accuracy <= card.accuracy_high
    with pytest.raises(InputError, match="split: must be one of"):
        voicebench.judge_check("local", split="test")


def test_cards_of_an_installed_spec_are_read_beside_it_and_written_under_the_folder(
    tmp_path, monkeypatch
):
    from voicebench.judging import load_judge_spec
    from voicebench.judging.cards import INSTALLED_CARDS, card_path, cards_dirs, find_card
    from voicebench.judging.cards import spec_sha256 as spec_hash

    data = tmp_path / "site" / "_data"
    (data / "judges" / "cards").mkdir(parents=True)
    for name in ("local-smoke.toml", "rubric-v1.md"):
        (data / "judges" / name).write_bytes((builtin.JUDGES / name).read_bytes())
    shipped = sorted((builtin.JUDGES / "cards").glob("local-smoke-*-holdout.json"))[0]
    (data / "judges" / "cards" / shipped.name).write_bytes(shipped.read_bytes())
    monkeypatch.setattr(builtin, "DATA", data)
    monkeypatch.setattr(builtin, "CHECKOUT", False)
    monkeypatch.chdir(tmp_path)
    spec_path = data / "judges" / "local-smoke.toml"
    assert builtin.installed(spec_path) and not builtin.installed(tmp_path / "x.toml")
    assert cards_dirs(spec_path) == [INSTALLED_CARDS, data / "judges" / "cards"]
    spec, rubric = load_judge_spec(spec_path)
    digest = spec_hash(spec, rubric)
    gold = shipped.name.split("-")[-2]
    # the shipped card is found where it is; a card not shipped goes under ./reports
    assert (
        card_path(spec_path, spec, digest, gold, "holdout") == data / "judges/cards" / shipped.name
    )
    assert card_path(spec_path, spec, digest, gold, "dev").parent == INSTALLED_CARDS
    assert find_card(spec_path).split == "holdout"
