"""A report with whole calls beside replayed replies: the calls' outcomes with intervals, the
call-level Elo beside the reply-level Elo, each call to read and play, in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from report_fixtures import HOSTILE
from synthetic_runs import WordJudge, make_calls, word_judge_spec

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.judging import judge_runs, read_judging_header
from voicebench.reporting import build_report

CHROMIUM = find_chromium()
WARM = "I can hear how much this is weighing on you. What feels hardest right now?"
COLD = f"Okay. {HOSTILE}"

CALL_FACTS = """JSON.stringify({
  tables: Array.from(document.querySelectorAll('#calls table[id]')).map(t => t.id),
  elo: Array.from(document.querySelectorAll('#call-elo tbody tr'))
            .map(r => Array.from(r.cells).map(c => c.textContent)),
  outcomes: Array.from(document.querySelectorAll('#call-outcomes tbody tr'))
            .map(r => Array.from(r.cells).map(c => c.textContent)),
  calls: Array.from(document.querySelectorAll('#calls details.item')).map(d => ({
    opening: Array.from(d.querySelectorAll('ol.turns li')).map(li => li.textContent),
    rows: Array.from(d.querySelectorAll('tr.reply')).map(r => ({
      contestant: r.cells[0].textContent,
      turns: Array.from(r.querySelectorAll('ol.call li')).map(li => li.textContent),
      end: r.querySelector('p.call-end') ? r.querySelector('p.call-end').textContent : null,
      audio: r.querySelector('audio') ? r.querySelector('audio').getAttribute('src') : null})),
    verdicts: d.querySelectorAll('ul.verdicts li').length})),
  pwned: window.__pwned === undefined ? null : window.__pwned
})"""
PLAY_FIRST_CALL = """(() => { const a = document.querySelector('#calls audio');
  return a.play()
    .then(() => new Promise(done => setTimeout(() => done(a.currentTime), 400))); })()"""


@pytest.fixture
async def calls_judged(judged: Path, tmp_path: Path) -> Path:
    """The calls of the replayed agents 'fast' and 'slow' with the same callers, judged."""
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    items = [d for d in dialogues if not d.adversarial][:2]
    runs = [
        make_calls(tmp_path / "calls", "slow", items, {d.id: [COLD, COLD] for d in items}, [600]),
        make_calls(
            tmp_path / "calls",
            "fast",
            items,
            {d.id: [WARM, WARM] for d in items},
            [900, 1300],
            report={
                "intensity_before": 4,
                "intensity_after": 2,
                "felt_heard": 5,
                "would_call_again": True,
            },
        ),
    ]
    out = tmp_path / "calls-judged"
    judge = WordJudge("hear")  # prefers the call in which the supporter says 'hear'
    await judge_runs(runs, word_judge_spec(tmp_path), out, client_factory=judge.client)
    return out


def test_the_report_holds_the_calls_outcomes_and_both_elo(
    judged: Path, calls_judged: Path, tmp_path: Path
):
    built = build_report([judged, calls_judged], tmp_path / "report")
    report = built.report
    assert report.judging is not None and report.judging.judging_dir == str(judged)
    assert report.call_judging is not None and read_judging_header(calls_judged).unit == "call"
    # The converse folders' turns are in the latency section under their own names.
    assert {a.agent_name for a in report.agents} == {"fast", "slow", "fast (calls)", "slow (calls)"}
    outcomes = {o.agent_name: o for o in report.calls}
    fast = outcomes["fast (calls)"]
    assert fast.calls == fast.valid == fast.reports == 2 and fast.invalid == 0
    assert fast.intensity_change is not None and fast.intensity_change.value == -2
    assert [p.ttfa_p50_ms for p in fast.by_place] == [900, 1300]
    # The judge prefers 'fast' over whole calls, while over final replies 'slow' wins
    # (report_fixtures' verdicts): the two views can disagree, and both are shown.
    calls = {r.contestant: r.elo for r in report.call_judging.ratings.ratings}
    replies = {r.contestant: r.elo for r in report.judging.ratings.ratings}
    assert calls["fast"] > calls["slow"] and replies["slow"] > replies["fast"]
    # Each call can be read turn by turn and played.
    (first, _) = report.call_replies
    row = next(r for r in first.replies if r.contestant == "fast")
    assert row.call is not None and [t.ttfa_ms for t in row.call.turns] == [900, 1300]
    assert row.audio and (built.out_dir / row.audio).read_bytes()[:4] == b"RIFF"
    assert first.conversation[0][0] == "Caller"
    md = (built.out_dir / "report.md").read_text()
    assert "## Whole calls" in md and f"Agent (after 1,300 ms): {WARM}" in md
    # The seeker is named beside the judge.
    assert "Callers played by scripted/seeker; whole calls judged by openai-compatible/warm" in md


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_the_calls_section_in_headless_chromium(
    judged: Path, calls_judged: Path, tmp_path: Path
):
    out = build_report([judged, calls_judged], tmp_path / "report").out_dir
    async with Browser(CHROMIUM) as browser:
        await browser.open(out / "index.html")
        facts = json.loads(await browser.evaluate(CALL_FACTS))
        played_s = await browser.evaluate(PLAY_FIRST_CALL)
        errors = browser.errors()
    assert errors == [], errors
    assert facts["pwned"] is None
    assert facts["tables"] == ["call-outcomes", "call-places", "call-elo"]
    # Both Elo views, side by side, for both agents; the human reference has no call.
    elo = {row[0]: row[1:] for row in facts["elo"]}
    assert list(elo) == ["fast", "slow", "human/reference"]  # by call Elo
    assert all("-" not in elo[name] for name in ("fast", "slow"))
    assert elo["human/reference"][:2] == ["-", "-"] and "-" not in elo["human/reference"][2:]
    outcomes = {row[0]: row for row in facts["outcomes"]}
    assert set(outcomes) == {"fast (calls)", "slow (calls)"}
    assert outcomes["fast (calls)"][9].startswith("-2.0")  # the intensity change, its interval
    assert len(facts["calls"]) == 2 and played_s > 0
    for call in facts["calls"]:
        assert call["opening"][0].startswith("Caller:") and call["verdicts"] == 2
        rows = {r["contestant"]: r for r in call["rows"]}
        assert set(rows) == {"fast", "slow"}
        assert len(rows["fast"]["turns"]) == 2 and "(after 900 ms)" in rows["fast"]["turns"][0]
        assert HOSTILE in rows["slow"]["turns"][0]  # shown as text, never run
        assert "intensity 4 \u2192 2" in rows["fast"]["end"]
        assert rows["fast"]["audio"].startswith("audio/")


async def test_the_call_judges_key_reaches_no_report_file(tmp_path: Path, monkeypatch):
    """A key named only by the judging of calls (a name no credential pattern matches) is
    scrubbed like the reply judges' keys, though a call's transcript echoes it."""
    key = "vbcall-7e6d5c4b3a291807"
    monkeypatch.setenv("VB_CALL_JUDGE_CRED", key)
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:1]
    runs = [
        make_calls(tmp_path, name, items, {d.id: [f"{said} {key}"] for d in items}, [600])
        for name, said in (("fast", WARM), ("slow", COLD))
    ]
    spec = word_judge_spec(tmp_path)
    spec.write_text(spec.read_text() + 'api_key_env = "VB_CALL_JUDGE_CRED"\n')
    judged = tmp_path / "calls-judged"
    await judge_runs(runs, spec, judged, client_factory=WordJudge("hear").client)
    out = build_report([judged], tmp_path / "report").out_dir
    assert key in (judged / "replies.jsonl").read_text()
    for path in out.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
