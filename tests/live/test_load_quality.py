"""Quality under load: a load's final replies judged by band of calls in progress against the
lowest band (or a reference run), each band's Elo with its interval over items, where quality
breaks, and the load report drawing it beside TTFA, in real headless Chromium.

The replies are real speech (Piper), heard back by the judging's Whisper; the judge has a known
taste (``WordJudge``: the reply that says 'hear' wins), so the truth is known: the bands from 3
calls in progress on answer without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import Browser, find_chromium
from synthetic_runs import STAMP, WordJudge, load_header, timing, word_judge_spec
from typer.testing import CliRunner

from voicebench import api
from voicebench.agentspec import AgentSpec, RemoteSpec
from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.errors import InputError
from voicebench.fixtures import write_wav
from voicebench.fixtures.synth import PiperSpeaker, render_utterance
from voicebench.judging.load import judge_load, load_quality, read_load_judging
from voicebench.live.load import LOAD_FILE, TURNS_FILE, load_pattern
from voicebench.live.load_summary import LoadTurn
from voicebench.runlog import RunHeader, RunStore, TurnRecord

pytestmark = pytest.mark.slow
CHROMIUM = find_chromium()
ITEMS = [d for d in load_dialogues(BUILTIN_DIALOGUES) if not d.adversarial][:7]
GOOD = "I hear you. That sounds so hard, and I am glad you told me."
POOR = "Okay. Let us move on to the next thing."


def _speech(text: str):
    speaker = PiperSpeaker(repeatable=True)
    return render_utterance(speaker.sentences(text), speaker.sample_rate, 16_000)


def _record(run_id: str, d, audio: str, ttfa: int) -> TurnRecord:
    k = d.final_turn_index
    return TurnRecord(
        run_id=run_id,
        contestant="remote/x",
        agent_name="voice",
        dialogue_id=d.id,
        turn_index=k,
        final=True,
        user_text=d.turns[k].text,
        audio_path=audio,
        timing=timing(ttfa),
        started_at=STAMP,
    )


def make_judged_load(root: Path) -> Path:
    """A load of 4 concurrency levels, each item's final reply once per level: kind ('hear') at
    1 and 2 calls in progress, curt from 3 on; TTFA 600 ms + 150 ms a call in progress."""
    good, poor = _speech(GOOD), _speech(POOR)
    turns = []
    for c in (1, 2, 3, 4):
        for caller, d in enumerate(ITEMS):
            name = f"audio/c{caller:03d}-{c:03d}__{d.id}__t{d.final_turn_index:02d}.wav"
            write_wav(root / name, good if c < 3 else poor, 16_000)
            turns.append(
                LoadTurn(
                    caller=caller,
                    call=c,
                    concurrency=c,
                    offset_s=10.0 * c + caller,
                    turn=_record(root.name, d, name, 600 + 150 * c),
                )
            )
    header = load_header(
        [d.id for d in ITEMS],
        agent=AgentSpec(name="voice", family="r", remote=RemoteSpec(url="ws://127.0.0.1:9")),
        callers=7,
        ramp_s=1,
        duration_s=60,
        turn_timeout_s=10,
        pattern=load_pattern(callers=7, ramp_s=1, duration_s=60),
        dialogues_path=str(BUILTIN_DIALOGUES),
    )
    (root / LOAD_FILE).write_text(header)
    (root / TURNS_FILE).write_text("".join(t.model_dump_json() + "\n" for t in turns))
    return root


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
async def test_a_load_judged_by_band_and_its_report_in_headless_chromium(tmp_path: Path):
    load = make_judged_load(tmp_path / "load")
    judge = WordJudge("hear")
    result = await judge_load(load, word_judge_spec(tmp_path), client_factory=judge.client)
    judged = load / "judging"
    assert result.out_dir == judged
    bands = read_load_judging(judged)
    assert [(b.low, b.high, b.items) for b in bands.bands] == [(c, c, 7) for c in (1, 2, 3, 4)]
    assert bands.baseline == "voice at 1 calls" and bands.against is None
    # every band (and the human reference) against the lowest band only, both orders
    pairs = {(v.contestant_a, v.contestant_b) for v in result.verdicts}
    assert all("voice at 1 calls" in pair for pair in pairs)
    assert len(result.verdicts) == 2 * 7 * 4  # 3 bands and the human reference, 7 items
    quality = load_quality(judged)
    by_low = {q.low: q for q in quality.bands}
    assert by_low[1].preferred is None and by_low[1].pairs == 0  # the baseline
    # the same reply as the baseline's: every pair undecided, as good as it
    assert by_low[2].preferred == 0.5 and not by_low[2].worse and by_low[2].pairs == 7
    assert by_low[3].preferred == by_low[4].preferred == 0.0
    assert by_low[3].worse and by_low[4].worse and by_low[3].high_ci < 0.5
    assert quality.breaks_at == 3

    out = tmp_path / "report"
    shown = CliRunner().invoke(app, ["report", str(load), "--out", str(out)])
    assert shown.exit_code == 0, shown.output
    saved = json.loads((out / "quality.json").read_text())
    assert saved["breaks_at"] == 3
    assert CHROMIUM is not None
    async with Browser(CHROMIUM) as browser:
        await browser.open(out / "index.html")
        facts = json.loads(
            await browser.evaluate(
                """JSON.stringify({
  images: Array.from(document.images).map(i => ({id: i.id, ok: i.complete && i.naturalWidth > 0})),
  rows: Array.from(document.querySelectorAll('#quality tbody tr')).map(
    r => Array.from(r.cells).map(c => c.textContent)),
  worse: document.querySelectorAll('#quality tbody tr.over').length,
  breaks: document.querySelector('#quality-breaks').textContent})"""
            )
        )
        errors = browser.errors()
    assert errors == []
    assert {"id": "load_quality", "ok": True} in facts["images"]
    assert all(i["ok"] for i in facts["images"])
    assert [row[:3] for row in facts["rows"]] == [
        [str(c), f"voice at {c} calls", "7"] for c in (1, 2, 3, 4)
    ]
    assert facts["rows"][0][5] == "baseline" and facts["rows"][1][4] == "50%"
    assert facts["rows"][3][4] == "0%" and facts["worse"] == 2
    assert facts["breaks"] == (
        "Quality: from 3 concurrent calls on, every band's replies are clearly worse than the "
        "baseline's (voice at 1 calls)."
    )


async def test_a_load_judged_against_a_reference_run(tmp_path: Path):
    """``against``: the bands are judged against a run of the same items; the run's kind
    replies make every band but the kind ones worse. A load that kept no dialogue set, and
    a load given beside runs, are refused naming the folder."""
    load = make_judged_load(tmp_path / "load")
    ref = tmp_path / "ref"
    store = RunStore(ref)
    store.open(
        RunHeader(
            run_id="ref",
            created_at=STAMP,
            voicebench_version="0.1.0",
            agent=AgentSpec(name="reference", family="r", remote=RemoteSpec(url="ws://x:9")),
            agent_spec_path="a.toml",
            dialogues_path=str(BUILTIN_DIALOGUES),
            dialogues_sha256="0" * 64,
            dialogue_ids=tuple(d.id for d in ITEMS),
            fixtures_dir="audio_fixtures",
        )
    )
    good = _speech(GOOD)
    for d in ITEMS:
        write_wav(ref / "audio" / f"{d.id}.wav", good, 16_000)
        store.append(_record("ref", d, f"audio/{d.id}.wav", 700))
    out = tmp_path / "against"
    await judge_load(
        load, word_judge_spec(tmp_path), out, against=ref, client_factory=WordJudge("hear").client
    )
    quality = load_quality(out)
    assert quality.baseline == "reference" and quality.against == str(ref)
    assert [q.worse for q in quality.bands] == [False, False, True, True]
    assert quality.breaks_at == 3

    with pytest.raises(InputError, match="judge a load folder on its own"):
        api.judge([load, ref], judge=word_judge_spec(tmp_path))
    header = json.loads((load / LOAD_FILE).read_text())
    del header["dialogues_path"]
    (load / LOAD_FILE).write_text(json.dumps(header))
    with pytest.raises(InputError, match="kept no dialogue set") as raised:
        await judge_load(load, word_judge_spec(tmp_path), tmp_path / "old")
    assert raised.value.field == "dialogues_path"
