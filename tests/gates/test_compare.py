"""`voicebench compare` on runs written from known figures: the verdicts and their intervals,
the stage that moved named first, --fail-on-regression, and the page in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from synthetic_runs import make_run
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.gates import compare_runs
from voicebench.runlog import TurnError
from voicebench.timing.stalls import Playback, Stall

ITEMS = load_dialogues(BUILTIN_DIALOGUES)[:12]
CHROMIUM = find_chromium()


def runs(tmp_path: Path, base_ttft: int = 300, new_ttft: int = 400, **new) -> tuple[Path, Path]:
    # TTFA moves with the TTFT: the synthetic stages are fixed apart from the LLM's.
    base = make_run(tmp_path, "base", ITEMS, [1000, 1050, 1100], ttft_ms=base_ttft)
    shift = new_ttft - base_ttft
    later = make_run(
        tmp_path, "new", ITEMS, [1000 + shift, 1050 + shift, 1100 + shift], ttft_ms=new_ttft, **new
    )
    return base, later


def test_a_slower_llm_is_named_first_and_nothing_else_moves(tmp_path: Path):
    c = compare_runs(*runs(tmp_path))
    first = c.changes[0]
    assert first.key == "stage_llm_ttft_p50_ms" and first.verdict == "slower"
    assert first.change == pytest.approx(100.0) and first.low > 0
    assert c.headline.startswith("LLM TTFT got slower: +100.0 ms")
    by = {x.key: x for x in c.changes}
    assert by["ttft_p50_ms"].verdict == "slower" and by["ttfa_p50_ms"].verdict == "slower"
    stages = [x for x in c.changes if x.kind == "stage" and x is not first]
    assert stages and all(x.verdict == "no clear change" for x in stages)
    assert by["failed_pct"].verdict == "no clear change"
    assert [x.key for x in c.regressions] == ["stage_llm_ttft_p50_ms", "ttft_p50_ms", "ttfa_p50_ms"]
    # 12 dialogues a side: enough for a median's interval, too few for a p90's (30) or p99's
    assert [x.key for x in c.too_few] == [
        "ttft_p90_ms",
        "ttft_p99_ms",
        "ttfa_p90_ms",
        "ttfa_p99_ms",
    ]
    assert all(x.low is None and x.change is not None for x in c.too_few)


def test_failures_count_as_worse_and_a_small_change_is_no_news(tmp_path: Path):
    fail = TurnError(kind="timeout", reason="nothing audible within 60 s")
    failures = {(d.id, d.final_turn_index): fail for d in ITEMS[:8]}
    c = compare_runs(*runs(tmp_path, 300, 305, failures=failures))
    by = {x.key: x for x in c.changes}
    assert by["failed_pct"].verdict == "worse" and by["failed_pct"].change == pytest.approx(66.67)
    # the 4 turns left of the new run are too few for the stages' or the TTFA's verdicts
    assert by["stage_llm_ttft_p50_ms"].verdict == "too few to tell"
    assert by["stage_llm_ttft_p50_ms"].new_n == 4  # the turns with the stage
    assert c.too_few_to_tell and c.headline.startswith(
        "too few turns to tell (n=12 and 4 with a TTFA): a verdict needs 10 turns in 6"
    )
    # 5 ms is under the 10 ms that counts, however sure it is.
    small = {x.key: x for x in compare_runs(*runs(tmp_path / "small", 300, 305)).changes}
    assert small["stage_llm_ttft_p50_ms"].low > 0
    assert small["stage_llm_ttft_p50_ms"].verdict == "no clear change"


def test_the_command_prints_first_what_moved_and_fails_on_a_regression(tmp_path: Path):
    base, new = runs(tmp_path)
    result = CliRunner().invoke(app, ["compare", str(base), str(new), "--fail-on-regression"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("LLM TTFT got slower: +100.0 ms")
    assert "regressions: LLM TTFT (median), TTFT p50" in " ".join(result.output.split())
    back = CliRunner().invoke(app, ["compare", str(new), str(base), "--fail-on-regression"])
    assert back.exit_code == 0 and back.output.startswith("LLM TTFT got faster: -100.0 ms")
    bad = CliRunner().invoke(app, ["compare", str(base), str(tmp_path)])
    assert bad.exit_code == 2 and "not a run folder" in bad.output


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_the_comparison_page_in_headless_chromium(tmp_path: Path):
    base, new = runs(tmp_path)
    out = tmp_path / "compare"
    result = CliRunner().invoke(app, ["compare", str(base), str(new), "--out", str(out)])
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "compare.json").read_text())
    assert saved["changes"][0]["key"] == "stage_llm_ttft_p50_ms"
    assert CHROMIUM is not None
    async with Browser(CHROMIUM) as browser:
        await browser.open(out / "index.html")
        facts = json.loads(
            await browser.evaluate(
                """JSON.stringify({
  images: Array.from(document.images).map(i => ({id: i.id, ok: i.complete && i.naturalWidth > 0})),
  rows: document.querySelectorAll('#changes tbody tr').length,
  slower: Array.from(document.querySelectorAll('#changes tr.slower td:first-child'))
          .map(td => td.textContent),
  headline: document.querySelector('#headline').textContent})"""
            )
        )
        errors = browser.errors()
    assert errors == []
    assert facts["images"] == [{"id": "ecdf", "ok": True}, {"id": "waterfall", "ok": True}]
    assert facts["rows"] == len(saved["changes"])
    assert facts["slower"][0] == "LLM TTFT (median)"
    assert facts["headline"].startswith("LLM TTFT got slower")


def test_two_agents_judged_together_compare_their_elo(tmp_path: Path):
    from synthetic_runs import make_judging, verdict

    items = [d for d in ITEMS if not d.adversarial][:6]
    base = make_run(tmp_path, "warm", items, 900)
    new = make_run(tmp_path, "terse", items, 900)
    verdicts = []
    for d in items:  # the warm agent wins every pair, in both orders
        verdicts += [verdict(d.id, "warm", "terse", "A", 4), verdict(d.id, "terse", "warm", "B", 4)]
    judged = make_judging(tmp_path / "judged", [base, new], items, ("warm", "terse"), verdicts)
    c = compare_runs(base, new, judging=judged)
    elo = next(x for x in c.changes if x.key == "elo")
    assert elo.change < 0 and elo.high < 0 and elo.verdict == "worse"
    result = CliRunner().invoke(app, ["compare", str(base), str(base), "--judging", str(judged)])
    assert result.exit_code == 2 and "judge them as two contestants" in result.output


def test_a_slower_stop_on_barge_in_is_reported(tmp_path: Path):
    from voicebench.runlog import ScenarioOutcome

    def barge(stop_ms: float) -> list[ScenarioOutcome]:
        return [
            ScenarioOutcome(
                name="barge-in",
                params={"delay_ms": 600.0},
                agent_speaking=True,
                at_ms=600.0,
                stop_ms=stop_ms + jitter,
                yielded=True,
                talk_over_s=0.2,
                answered=True,
            )
            for jitter in (-10.0, 0.0, 10.0)
        ]

    base = make_run(tmp_path, "base", ITEMS, 1000, all_turns=True, scenarios=barge(150))
    new = make_run(tmp_path, "new", ITEMS, 1000, all_turns=True, scenarios=barge(400))
    by = {x.key: x for x in compare_runs(base, new).changes}
    stop = by["stop_latency_p50_ms"]
    assert stop.verdict == "slower" and stop.change == pytest.approx(250.0) and stop.low > 0
    assert by["yielded_pct"].verdict == "no clear change"


def _calls(root: Path, name: str, cold_ttft_ms: int, warm_ttft_ms: int, restarts: bool) -> Path:
    """Two turns of each of 12 dialogues; with ``restarts`` the agent starts again for each
    dialogue (as after a caller hangs up), so each first turn is cold, LLM TTFT
    ``cold_ttft_ms``; otherwise only the run's first turn is."""
    from synthetic_runs import STAMP, run_header, timing

    from voicebench.runlog import RunStore, TurnRecord

    store = RunStore(root / name)
    store.open(run_header(name, ITEMS))
    n = 0
    for d in ITEMS:
        for k in d.seeker_turn_indices[:2]:
            cold = n == 0 or (restarts and k == d.seeker_turn_indices[0])
            ttft = cold_ttft_ms if cold else warm_ttft_ms
            store.append(
                TurnRecord(
                    run_id=name,
                    contestant=f"scripted/{name}",
                    agent_name=name,
                    dialogue_id=d.id,
                    turn_index=k,
                    final=k == d.final_turn_index,
                    user_text=d.turns[k].text,
                    reply_text="",
                    timing=timing(ttft + 700, ttft),
                    cold=cold,
                    started_at=STAMP,
                )
            )
            n += 1
    return store.dir


def test_the_stage_rows_count_the_turns_the_ttft_rows_count(tmp_path: Path):
    """A run whose agent restarts for every dialogue: half its turns are cold and slow, its
    warm ones a little faster. TTFT and the LLM's stage say the same, over the same turns."""
    base = _calls(tmp_path, "base", 300, 300, restarts=False)
    new = _calls(tmp_path, "new", 1500, 200, restarts=True)
    c = compare_runs(base, new)
    by = {x.key: x for x in c.changes}
    ttft, llm = by["ttft_p50_ms"], by["stage_llm_ttft_p50_ms"]
    assert (c.base_cold_turns, c.new_cold_turns) == (1, 12)
    assert ttft.verdict == llm.verdict == "slower"
    assert ttft.change == pytest.approx(550.0) and llm.change == pytest.approx(550.0)
    assert (llm.base_n, llm.new_n) == (ttft.base_n, ttft.new_n) == (24, 24)
    assert c.headline.startswith("LLM TTFT got slower: +550.0 ms")
    shown = CliRunner().invoke(app, ["compare", str(base), str(new)])
    assert "new (24 turns, 12 cold) against base (24, 1 cold)" in " ".join(shown.output.split())


def test_replies_that_stall_more_are_worse_and_the_gate_on_the_longest_stall_fails(tmp_path: Path):
    clean = Playback(audio_ms=3000.0)
    stalled = Playback(audio_ms=3000.0, stalls=(Stall(at_ms=900, audio_ms=900, ms=400.0),))
    base = make_run(tmp_path, "base", ITEMS, 1000, playbacks=[clean])
    new = make_run(tmp_path, "new", ITEMS, 1000, playbacks=[clean, stalled])
    by = {x.key: x for x in compare_runs(base, new).changes}
    assert by["stalled_pct"].verdict == "worse"
    assert by["stalled_pct"].change == pytest.approx(100 * 400 / 3400 / 2, abs=0.01)
    assert by["stalled_ms"].new == pytest.approx(200.0) and by["stalled_ms"].base == 0
    for run, code in ((base, 0), (new, 1)):
        result = CliRunner().invoke(app, ["check", str(run), "--max-stall-ms", "300"])
        assert result.exit_code == code, result.output
