"""A rater at the page in real headless Chromium: audio plays, three tasks are answered with the
keyboard alone, and the rater's file names the contestants that were really behind A and B
(told apart here by the length of the audio the page played)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from page_fixtures import serving, whose
from synthetic_runs import WordJudge, make_calls, word_judge_spec

from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.judging import judge_runs
from voicebench.rating import rate_judging
from voicebench.reporting import build_report

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed, so the rating page was not opened in a browser "
    "(`make test` installs it with apt-get; or: apt-get install chromium)",
)

CLIP_BYTES = """Promise.all(['a', 'b'].map(side =>
  fetch(document.getElementById('clip-' + side).src)
    .then(r => r.arrayBuffer()).then(b => b.byteLength)))"""

# The page counts a clip as played on its "play" event. A listener added after the page's own
# runs after it, so once this one has seen a clip start, the page has counted it too. (The
# media clock can move before that event is handled on a busy machine, so it is not waited on.)
WATCH_PLAYS = """window.seen = [];
['seeker', 'a', 'b'].forEach(name => document.getElementById('clip-' + name)
  .addEventListener('play', () => window.seen.push(name)))"""


async def test_rating_three_tasks_with_the_keyboard(served, judged: Path):
    state, base, token = served
    heard_sides = []
    async with Browser(CHROMIUM) as browser:
        await browser.open(f"{base}/?token={token}")
        for n, key in enumerate(("1", "4", "3")):
            task = state.plan.tasks[n]
            assert await browser.evaluate("document.body.dataset.task") == task.id
            assert await browser.evaluate("document.getElementById('progress').value") == n
            sizes = await browser.evaluate(CLIP_BYTES)
            heard_sides.append(tuple(whose(s) for s in sizes))
            await browser.evaluate(WATCH_PLAYS)
            # Space plays the seeker's turn, then A follows by itself; "b" plays B.
            await browser.press(" ")
            await browser.wait_for("window.seen.includes('seeker')")
            await browser.wait_for("window.seen.includes('a')", 20)
            await browser.press("b")
            await browser.wait_for("window.seen.includes('b')")
            if n == 1:  # a dimension mark and a comment, then back to the keys
                await browser.evaluate(
                    "document.querySelector('input[name=dim-E][value=B]').click();"
                    "document.getElementById('comment').value = 'B sounds <warmer>'"
                )
            await browser.press(key, then_load=True)
        # Left goes back to an answered task, shown as answered; right comes forward again.
        await browser.press("ArrowLeft", then_load=True)
        back = await browser.evaluate(
            "[document.body.dataset.task, document.getElementById('given').textContent,"
            " document.querySelector('button.choice').disabled]"
        )
        await browser.press("ArrowRight", then_load=True)
        now = await browser.evaluate("document.body.dataset.task")
        errors = browser.errors()

    assert errors == [], errors
    assert back == [state.plan.tasks[2].id, "Answered: About the same.", True]
    assert now == state.plan.tasks[3].id
    lines = [json.loads(x) for x in (judged / "human" / "ann.jsonl").read_text().splitlines()]
    assert [x["task"] for x in lines] == [t.id for t in state.plan.tasks[:3]]
    assert [(x["contestant_a"], x["contestant_b"]) for x in lines] == heard_sides
    assert [(t.shown_a, t.shown_b) for t in state.plan.tasks[:3]] == heard_sides
    assert [x["rating"] for x in lines] == [2, -1, 0]
    assert [x["played"] for x in lines] == [["seeker", "a", "b"]] * 3
    assert lines[1]["dimensions"] == {"E": "B"} and lines[1]["comment"] == "B sounds <warmer>"
    assert all(x["rater"] == "ann" and x["seconds"] > 0 for x in lines)


async def test_people_rate_whole_calls_and_feed_the_calls_ladder(tmp_path: Path):
    """A judging of whole calls on the same page: the caller and the opening, then the two
    calls to play and read; the answers make the people's ladder of the calls."""
    items = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:2]
    runs = [
        make_calls(
            tmp_path, name, items, {d.id: [f"{name} says: I hear you."] * 2 for d in items}, [600]
        )
        for name in ("quokka-agent", "zephyr-agent")
    ]
    judged = tmp_path / "calls-judged"
    judge = WordJudge("quokka")
    await judge_runs(runs, word_judge_spec(tmp_path), judged, client_factory=judge.client)
    async with (
        serving(judged, "bea", per_rater=2, seed=3) as (_, url),
        Browser(CHROMIUM) as browser,
    ):
        await browser.open(url)
        page = json.loads(
            await browser.evaluate(
                "JSON.stringify({h1: document.querySelector('h1').textContent,"
                " opening: [...document.querySelectorAll('#conversation li')]"
                ".map(li => li.textContent), seeker: !!document.getElementById('clip-seeker'),"
                " transcript: document.querySelector('#reply-a .transcript').textContent})"
            )
        )
        # Space plays call A (there is no seeker turn on its own: it is in the calls).
        await browser.evaluate(WATCH_PLAYS.replace("'seeker', ", ""))
        await browser.press(" ")
        await browser.wait_for("window.seen.includes('a')")
        await browser.press("2", then_load=True)
        errors = browser.errors()
    assert errors == [], errors
    assert page["h1"] == "Which call supports the caller better?"
    assert page["opening"][0].startswith("Caller:") and not page["seeker"]
    assert page["transcript"].startswith("Seeker: ") and "says: I hear you." in page["transcript"]
    (line,) = [json.loads(x) for x in (judged / "human" / "bea.jsonl").read_text().splitlines()]
    assert line["rating"] == 1 and line["played"] == ["a"]
    people = rate_judging(judged, rounds=20).people
    assert people is not None and people.judgments == 1
    assert {r.contestant for r in people.ladder} == {"quokka-agent", "zephyr-agent"}
    # The report of the calls shows the people's ladder beside the judges' call Elo.
    report = build_report([judged], tmp_path / "report")
    assert "People's ladder over whole calls" in (report.out_dir / "report.md").read_text()
