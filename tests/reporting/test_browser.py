"""The report page in real headless Chromium: it renders, shows every part, runs no foreign
script and raises no error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from chromium import Browser, find_chromium
from PIL import Image
from report_fixtures import SAID

from voicebench.reporting import build_report
from voicebench.reporting.replies import OPUS_RATES
from voicebench.strategies import LABELS, ReplyStrategies

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed, so the report page was not opened in a browser "
    "(`make test` installs it with apt-get; or: apt-get install chromium)",
)

REPLY_FACTS = """JSON.stringify(Array.from(document.querySelectorAll('#replies details.item'))
  .map(d => ({
    item: d.querySelector('summary b').textContent,
    rows: Array.from(d.querySelectorAll('tr.reply')).map(r => ({
      contestant: r.cells[0].textContent,
      heard: r.cells[1].textContent,
      audio: r.querySelector('audio') ? r.querySelector('audio').getAttribute('src') : null,
      link: r.querySelector('a.audio-link') ? r.querySelector('a.audio-link').getAttribute('href')
                                            : null})),
    verdicts: d.querySelectorAll('ul.verdicts li').length,
    people: Array.from(d.querySelectorAll('ul.people li')).map(li => li.textContent)})))"""
PLAY_FIRST_REPLY = """(() => { const a = document.querySelector('#replies audio');
  return a.play()
    .then(() => new Promise(done => setTimeout(() => done(a.currentTime), 400))); })()"""

PAGE_FACTS = """JSON.stringify({
  images: Array.from(document.images).map(i => ({id: i.closest('figure').id,
                                                 ok: i.complete && i.naturalWidth > 0})),
  tables: Array.from(document.querySelectorAll('table[id]')).map(t => t.id),
  rows: Object.fromEntries(Array.from(document.querySelectorAll('table[id]'))
                           .map(t => [t.id, t.tBodies[0].rows.length])),
  scripts: document.scripts.length,
  pwned: window.__pwned === undefined ? null : window.__pwned,
  text: document.body.innerText,
  height: document.documentElement.scrollHeight
})"""


def _label_strategies(judged: Path) -> None:
    """Strategy labels for every reply, as `voicebench strategies` leaves them."""
    lines = []
    for n, line in enumerate((judged / "replies.jsonl").read_text().splitlines()):
        r = json.loads(line)
        used = {LABELS[n % len(LABELS)], "emotional_validation"}
        lines.append(
            ReplyStrategies(
                key=f"k{n}",
                item_id=r["item_id"],
                contestant=r["contestant"],
                classifier="j/1",
                adversarial=r["item_id"].startswith("adv-"),
                marks={k: "present" if k in used else "absent" for k in LABELS},
            ).model_dump_json()
        )
    (judged / "strategies.jsonl").write_text("\n".join(lines) + "\n")


async def test_report_page_in_headless_chromium(judged: Path, tmp_path: Path):
    _label_strategies(judged)
    out = build_report([judged], tmp_path / "report").out_dir
    async with Browser(CHROMIUM) as browser:
        await browser.open(out / "index.html")
        facts = json.loads(await browser.evaluate(PAGE_FACTS))
        # Sorting by Elo (third column) puts the lowest first: the page's own script runs.
        await browser.evaluate("document.querySelector('#leaderboard th:nth-child(3)').click()")
        first = await browser.evaluate(
            "document.querySelector('#leaderboard tbody tr').cells[1].textContent"
        )
        replies = json.loads(await browser.evaluate(REPLY_FACTS))
        played_s = await browser.evaluate(PLAY_FIRST_REPLY)
        shot = tmp_path / "page.png"
        await browser.screenshot(shot)
        errors = browser.errors()

    assert errors == [], errors
    figures = {i["id"]: i["ok"] for i in facts["images"]}
    assert figures == {
        f"fig-{n}": True
        for n in (
            "latency_ecdf",
            "waterfall",
            "frontier_ttft",
            "frontier_ttfa",
            "radar",
            "strategy_heatmap",
            "human_agreement",
        )
    }
    assert {"budget", "distributions", "waterfall", "leaderboard", "judges", "strategies"} <= set(
        facts["tables"]
    )
    assert facts["rows"]["strategies"] == 3 * 3  # 3 contestants: all, regular, adversarial
    assert facts["rows"]["leaderboard"] == 3 and facts["rows"]["distributions"] == 11
    # Hostile text from the run shows as text and never runs.
    assert facts["scripts"] == 1 and facts["pwned"] is None
    assert "<script>window.__pwned = 1</script>" in facts["text"]
    assert first == "fast"  # lowest Elo
    # Replies: every item, every contestant's reply as heard, with audio that plays.
    assert len(replies) == 4 and played_s > 0
    for item in replies:
        assert {r["contestant"] for r in item["rows"]} == set(SAID)
        for r in item["rows"]:
            assert r["heard"].endswith(f"{r['contestant']} says: {SAID[r['contestant']]}")
            assert r["audio"] == r["link"] and r["audio"].startswith("audio/")
            wav = out / r["audio"]
            assert wav.is_file() and wav.read_bytes()[:4] == b"RIFF"
        assert item["verdicts"] == 6
        assert len(item["people"]) == 2 and "comment" in item["people"][0]
    # People: their ladder and agreement tables, and the pairs where they and the judge differ.
    assert {"human-ladder", "human-agreement", "rater-consistency"} <= set(facts["tables"])
    assert "People as judges" in facts["text"]
    image = Image.open(shot)
    assert image.width >= 1200 and image.height >= facts["height"] - 1 > 2000
    pixels = np.asarray(image.convert("RGB"))[::7, ::7].reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 50  # figures drawn, not a blank page


async def test_a_report_with_opus_audio_plays_it_and_keeps_its_length(judged: Path, tmp_path: Path):
    wav = build_report([judged], tmp_path / "wav").report.replies[0].replies[0]
    built = build_report([judged], tmp_path / "opus", audio_format="opus")
    ogg = built.report.replies[0].replies[0]
    assert ogg.contestant == wav.contestant and ogg.audio and ogg.audio.endswith(".ogg")
    async with Browser(CHROMIUM) as browser:
        await browser.open(built.out_dir / "index.html")
        played_s = await browser.evaluate(PLAY_FIRST_REPLY)
        link = await browser.evaluate("document.querySelector('a.audio-link').textContent")
        errors = browser.errors()
    assert errors == [] and played_s > 0 and link == "Ogg Opus"
    # The same sound, resampled for Opus (its rates stop at 48 kHz), in a smaller file.
    source, coded = tmp_path / "wav" / (wav.audio or ""), built.out_dir / ogg.audio
    a, b = sf.info(source), sf.info(coded)
    assert b.format == "OGG" and b.subtype == "OPUS" and b.samplerate in OPUS_RATES
    assert abs(a.duration - b.duration) < 0.03 and coded.stat().st_size < source.stat().st_size
