"""How well a call's turns are timed and transcribed from its recording alone (``voicebench
recordings analyze``), against a known truth.

Two tables.

1. **Known truth, by condition.** Calls are built from real speech: the built-in fixtures'
   utterances (Piper), each placed on a channel at a set time, so every end of speech, first
   answer, barge-in and stop is known to the sample, by the rules voicebench times its own
   calls by (``truth_of``). Each call has 3-5 turns; each answer comes
   0.2-2.0 s after the caller's end of speech, and about a third of the turns are barge-ins:
   the caller cuts in 0.5-2.0 s into the answer and the agent stops 0.1-0.8 s after the
   caller's first sound. The same calls are then written as each condition writes them: a
   16 kHz WAV, a phone platform's 8 kHz mu-law WAV, Opus, 44.1 kHz FLAC, and with white noise
   at 20 and 10 dB SNR. The truth is taken on the speech as each format carries it (an 8 kHz
   line drops what is above 4 kHz, so a word ending in /s/ ends sooner on it); the table's last
   column says how far that moves it from the wideband truth. The utterances and timings are
   not those the analyzer's settings were set on (``tests/helpers/known_calls.py``), and the
   default seed is not the one its edges were checked against while it was written (100): the
   default calls are held out. Both channels are transcribed as ``recordings analyze``
   transcribes them (``folder.hear_call``, Whisper tiny.en), and each found turn's words are
   set against the text its utterance was synthesized from: the caller's, and the agent's
   answer where it was said whole (not cut by a barge-in). Word error rate is
   ``voicebench.text.wer``, averaged over turns as a run's summary averages it; an utterance
   read twice (its spans overlapping) shows as insertions.

2. **voicebench's own recordings.** Runs of the scripted agent (the real pipeline: Silero VAD,
   Whisper, the scripted LLM server on 127.0.0.1, Piper) write each dialogue as a two-channel
   recording (``calls/``); each is analyzed, and each turn's response latency read off it is
   set against the TTFA the run measured, and its words against the turn's text (the caller's)
   and the LLM's reply (the agent's, unless the next turn barged into it). Conditions: a plain
   replay, the barge-in scenario and the noise scenario (10 dB). ``--run DIR`` analyzes run
   folders already made instead (any agent's). Beside them, the same turns' stalls as the run
   measured them (``TurnRecord.playback``; none in a run made before) and the gaps read off the
   recording, which cannot tell a stall from a pause the agent meant.

    python benchmarks/recordings.py                       # both tables (about 17 minutes)
    python benchmarks/recordings.py --calls 6 --limit 1   # a smaller run of both
    python benchmarks/recordings.py --calls 40 --skip-runs
    python benchmarks/recordings.py --skip-known --run reports/runs/local-... --run calls/
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest, read_wav  # noqa: E402
from voicebench.fixtures.audio import SPEECH_THRESHOLD, speech_bounds  # noqa: E402
from voicebench.recordings import FRAME_S, MIN_GAP_S, RecordedTurn, read_recording  # noqa: E402
from voicebench.recordings.folder import HeardCall, hear_call  # noqa: E402
from voicebench.testing.known_calls import KnownCall, with_noise, write  # noqa: E402
from voicebench.text import wer  # noqa: E402

RATE = 16_000
CONDITIONS = (
    ("16 kHz WAV", 16_000, "PCM_16", None),
    ("8 kHz mu-law WAV", 8_000, "ULAW", None),
    ("Opus", 16_000, "OPUS", None),
    ("44.1 kHz FLAC", 44_100, "PCM_16", None),
    ("noise 20 dB", 16_000, "PCM_16", 20.0),
    ("noise 10 dB", 16_000, "PCM_16", 10.0),
)
RUNS = (
    ("replay", ()),
    ("replay, barge-in", ("barge-in",)),
    ("replay, noise 10 dB", ("noise:snr_db=10",)),
)


Line = tuple[np.ndarray, str]
"""An utterance's speech (16 kHz) and the text it was synthesized from."""


def utterances() -> list[Line]:
    """The built-in fixtures' utterances, each trimmed to its speech, with their text."""
    out = []
    for entry in load_manifest(BUILTIN_FIXTURES).entries:
        pcm = read_wav(BUILTIN_FIXTURES / entry.path, expect_rate=RATE)
        bounds = speech_bounds(pcm)
        if bounds is not None and bounds[1] - bounds[0] > RATE:  # a word or two is no turn
            out.append((pcm[bounds[0] : bounds[1]], entry.text))
    return out


def make_call(rng: np.random.Generator, speech: list[Line]) -> KnownCall:
    """A call of 3-5 turns; each turn's truth holds where its pieces were placed (samples):
    the caller's utterance, the agent's answer after it, and for a barge-in the talk it cut;
    and their words: the caller's, and the answer's where it was said whole."""
    call, t = KnownCall(), 0.5

    def line() -> Line:
        return speech[rng.integers(len(speech))]

    def samples(span: tuple[float, float]) -> tuple[int, int]:
        return round(span[0] * RATE), round(span[1] * RATE)

    for _ in range(int(rng.integers(3, 6))):
        (pcm, text), (answer, answer_text) = line(), line()
        said = call.place("caller", pcm, t)
        start = said[1] + float(rng.uniform(0.2, 2.0))
        if rng.random() < 1 / 3 and answer.size > 2.5 * RATE:  # the caller cuts in
            into = float(rng.uniform(0.5, min(2.0, answer.size / RATE - 0.5)))
            stop = float(rng.uniform(0.1, 0.8))
            cut = call.place("agent", answer[: round((into + stop) * RATE)], start)
            pcm, cut_in_text = line()
            cutting = call.place("caller", pcm, start + into)
            call.truth.append({"said": samples(said), "answer": samples(cut), "said_text": text})
            t = cutting[1] + float(rng.uniform(0.2, 2.0))
            answer, answer_text = line()
            placed = call.place("agent", answer, t)
            call.truth.append(
                {
                    "said": samples(cutting),
                    "answer": samples(placed),
                    "cut": samples(cut),
                    "said_text": cut_in_text,
                    "answer_text": answer_text,
                }
            )
        else:
            placed = call.place("agent", answer, start)
            call.truth.append(
                {
                    "said": samples(said),
                    "answer": samples(placed),
                    "said_text": text,
                    "answer_text": answer_text,
                }
            )
        t = placed[1] + float(rng.uniform(0.6, 1.5))
    return call


def truth_of(caller: np.ndarray, agent: np.ndarray, placed: dict) -> dict:
    """A turn's truth on two channels (16 kHz) over where each piece was placed (and 50 ms
    around, which a codec may smear it into), by the rules voicebench times its own calls by:
    the caller's first sound and end of speech as its fixtures mark them (``speech_bounds``);
    the agent's first audio, and for a barge-in the end of the talk it cut, as an audible
    sample (above the speech threshold, ``agent.realtime.Audible``)."""
    pad = RATE // 20

    def bounds(pcm: np.ndarray, where: tuple[int, int], audible: bool) -> tuple[float, float]:
        lo = max(0, where[0] - pad)
        piece = pcm[lo : where[1] + pad]
        if audible:
            above = np.flatnonzero(np.abs(piece.astype(np.int32)) > SPEECH_THRESHOLD * 32768)
            got = (int(above[0]), int(above[-1]) + 1)
        else:
            got = speech_bounds(piece)
        assert got is not None
        return (lo + got[0]) / RATE, (lo + got[1]) / RATE

    said = bounds(caller, placed["said"], audible=False)
    out = {
        "end_s": said[1],
        "response_s": bounds(agent, placed["answer"], audible=True)[0],
        "barge_in": "cut" in placed,
    }
    if "cut" in placed:
        out["stop_s"] = bounds(agent, placed["cut"], audible=True)[1] - said[0]
    return out


def heard(path: Path, transcribe) -> HeardCall:
    """The recording read as ``recordings analyze`` reads it: timed and both channels
    transcribed (the caller on the left)."""
    return hear_call(path, path.stem, "left", transcribe)


def mean_wer(pairs: list[tuple[str, str]]) -> str:
    """The mean word error rate of each transcript against its text (``voicebench.text.wer``),
    over the turns, as a run's summary averages its turns' ASR WER."""
    return f"{np.mean([wer(text, got) for text, got in pairs]):.1%}" if pairs else "-"


def match(
    got: list[RecordedTurn], truth: list[dict], within_s: float = 0.5
) -> list[tuple[dict, RecordedTurn]]:
    """Each true turn with the analyzed one whose end of speech is nearest (within 0.5 s)."""
    pairs = []
    for t in truth:
        near = min(got, key=lambda g: abs(g.end_s - t["end_s"]), default=None)
        if near is not None and abs(near.end_s - t["end_s"]) <= within_s:
            pairs.append((t, near))
    return pairs


def pct(x: list[float], q: float) -> str:
    return f"{np.percentile(np.abs(x), q) * 1000:.0f}" if x else "-"


def known_truth(calls: int, seed: int, console: Console, transcribe) -> Table:
    speech = utterances()
    rng = np.random.default_rng(seed)
    made = [make_call(rng, speech) for _ in range(calls)]
    turns = sum(len(c.truth) for c in made)
    barges = sum("cut" in t for c in made for t in c.truth)
    table = Table(
        title=f"Known truth: {calls} calls, {turns} turns ({barges} barge-ins), seed {seed}",
        caption="Errors are |read off the recording - truth| in ms: median / p95, the truth "
        "as the format carries the speech. 'within a frame': the response latency within one "
        f"VAD frame ({FRAME_S * 1000:.0f} ms). The last column: how far the format itself "
        "moves the end of speech from where the wideband speech ends. WER: each found turn's "
        "transcript (Whisper tiny.en, as recordings analyze hears it) against the text its "
        "speech was made from, the mean over turns: the caller's words, and the agent's answer "
        "where it was said whole (not cut by a barge-in).",
    )
    for col in (
        "condition",
        "turns found",
        "end of speech",
        "agent's first audio",
        "response latency",
        "latency within a frame",
        "barge-ins found",
        "stop time",
        "the format's own shift of the end",
        "caller WER",
        "agent WER",
    ):
        table.add_column(col, justify="left" if col == "condition" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        for name, rate, subtype, snr in CONDITIONS:
            console.print(f"[dim]{name}...[/dim]")
            found = barge_found = 0
            ends: list[float] = []
            firsts: list[float] = []
            latencies: list[float] = []
            stops: list[float] = []
            shifts: list[float] = []
            said: list[tuple[str, str]] = []
            answers: list[tuple[str, str]] = []
            noise = np.random.default_rng(seed + 1)
            suffix = ".ogg" if subtype == "OPUS" else ".flac" if rate == 44_100 else ".wav"
            for i, call in enumerate(made):
                clean = call.stereo()
                # the truth as the format carries the speech (an 8 kHz line drops what is
                # above 4 kHz: a final /s/ ends sooner), and as it was placed
                carried = read_recording(write(Path(tmp) / f"t{i}{suffix}", clean, rate, subtype))
                wide = [truth_of(call.caller, call.agent, p) for p in call.truth]
                truth = [truth_of(carried.caller, carried.agent, p) for p in call.truth]
                shifts += [c["end_s"] - w["end_s"] for c, w in zip(truth, wide, strict=True)]
                stereo = clean
                if snr is not None:
                    stereo = np.stack([with_noise(clean[:, k], snr, noise) for k in (0, 1)], 1)
                path = write(Path(tmp) / f"call{i}{suffix}", stereo, rate, subtype)
                call_heard = heard(path, transcribe).call
                words = [
                    {**t, "said_text": p["said_text"], "answer_text": p.get("answer_text")}
                    for t, p in zip(truth, call.truth, strict=True)
                ]
                for t, g in match(list(call_heard.turns), words):
                    found += 1
                    said.append((t["said_text"], call_heard.said[g.index]))
                    if t["answer_text"] is not None:
                        answers.append((t["answer_text"], call_heard.replies[g.index]))
                    ends.append(g.end_s - t["end_s"])
                    if g.response_s is None:  # every turn here was answered
                        continue
                    firsts.append(g.response_s - t["response_s"])
                    latencies.append(g.response_s - g.end_s - (t["response_s"] - t["end_s"]))
                    if t["barge_in"] and g.barge_in:
                        barge_found += 1
                        stops.append(g.stop_s - t["stop_s"])
            within = np.mean(np.abs(latencies) <= FRAME_S) if latencies else float("nan")
            table.add_row(
                name,
                f"{found}/{turns}",
                f"{pct(ends, 50)} / {pct(ends, 95)}",
                f"{pct(firsts, 50)} / {pct(firsts, 95)}",
                f"{pct(latencies, 50)} / {pct(latencies, 95)}",
                f"{within:.1%}",
                f"{barge_found}/{barges}",
                f"{pct(stops, 50)} / {pct(stops, 95)}",
                f"{pct(shifts, 50)} / {pct(shifts, 95)}",
                mean_wer(said),
                mean_wer(answers),
            )
    return table


def own_runs(runs: list[Path], console: Console, transcribe) -> Table:
    from voicebench.runlog import read_header, read_turns

    table = Table(
        title="voicebench's own recordings: each turn's TTFA as the run measured it and as "
        "read off its call recording",
        caption="|error| in ms: median / p95 / max. WER: each turn's transcript read off the "
        "recording against the turn's text (the caller's) and the LLM's reply (the agent's, "
        "unless the next turn barged into it), the mean over turns. Stalls: the turns' as the "
        f"run measured them; gaps: their silences of {MIN_GAP_S * 1000:.0f} ms or more read off "
        "the recording, stalls or pauses the agent meant, which a recording cannot tell apart.",
    )
    for col in (
        "run",
        "agent",
        "scenario",
        "turns",
        "analyzed",
        "|error| ms",
        "within 20 ms",
        "caller WER",
        "agent WER",
        "stalls: run (n / ms)",
        "gaps: read (n / ms)",
    ):
        table.add_column(col, justify="left" if col in ("run", "agent", "scenario") else "right")
    for run in runs:
        header = read_header(run)
        turns = [r for r in read_turns(run) if r.call and r.timing and r.timing.ttfa_ms]
        errors: list[float] = []
        said: list[tuple[str, str]] = []
        answers: list[tuple[str, str]] = []
        stalls: list[tuple[int, float] | None] = []  # the run's, of each turn read
        gaps: list[tuple[int, float]] = []  # the recording's, of the same turns
        by_call: dict[str, list] = {}
        for r in turns:
            by_call.setdefault(r.call.path, []).append(r)
        for path, records in by_call.items():
            console.print(f"[dim]{run.name}: {path}[/dim]")
            got = heard(run / path, transcribe).call
            for k, r in enumerate(records):
                end_s = r.call.seconds(r.timing.speech_end_ns)
                near = min(got.turns, key=lambda g: abs(g.end_s - end_s), default=None)
                if near is None or near.latency_s is None or abs(near.end_s - end_s) > 0.5:
                    continue
                errors.append(near.latency_s * 1000 - r.timing.ttfa_ms)
                played = r.playback
                stalls.append(None if played is None else (played.stall_count, played.stalled_ms))
                gaps.append((near.gap_count, 1000 * near.gap_total_s))
                said.append((r.user_text, got.said[near.index]))
                nxt = records[k + 1] if k + 1 < len(records) else None
                if r.reply_text and not (nxt and nxt.scenario and nxt.scenario.agent_speaking):
                    answers.append((r.reply_text, got.replies[near.index]))
        err = np.abs(errors)
        table.add_row(
            run.name,
            header.agent.name,
            ", ".join(header.scenarios) or "-",
            str(len(turns)),
            str(len(errors)),
            f"{np.median(err):.1f} / {np.percentile(err, 95):.1f} / {err.max():.1f}"
            if errors
            else "-",
            f"{np.mean(err <= 20):.1%}" if errors else "-",
            mean_wer(said),
            mean_wer(answers),
            "-" if None in stalls else counted([x for x in stalls if x is not None]),
            counted(gaps),
        )
    return table


def counted(found: list[tuple[int, float]]) -> str:
    """How many, and how many ms in all, over the turns read; "-" for none read."""
    if not found:
        return "-"
    return f"{sum(n for n, _ in found)} / {sum(ms for _, ms in found):,.0f}"


def make_runs(out: Path, limit: int, console: Console) -> list[Path]:
    from voicebench import api

    made = []
    for name, scenarios in RUNS:
        folder = out / name.replace(", ", "-").replace(" ", "-")
        console.print(f"[dim]running the scripted agent: {name} ({limit} dialogues)...[/dim]")
        api.replay("scripted", limit=limit, scenarios=scenarios, seed=1, out=folder)
        made.append(folder)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20, help="Known-truth calls.")
    parser.add_argument("--seed", type=int, default=200)
    parser.add_argument("--limit", type=int, default=3, help="Dialogues per scripted run.")
    parser.add_argument("--run", type=Path, action="append", help="Run folders to analyze.")
    parser.add_argument("--out", type=Path, help="Where the scripted runs go (default: temp).")
    parser.add_argument("--skip-runs", action="store_true", help="The known-truth table only.")
    parser.add_argument("--skip-known", action="store_true", help="The runs' table only.")
    args = parser.parse_args()
    console = Console(width=220)
    from voicebench.pipeline.stt import Transcriber

    transcribe = Transcriber()  # the model recordings analyze hears both channels with
    if not args.skip_known:
        console.print(known_truth(args.calls, args.seed, console, transcribe))
    if args.skip_runs:
        return
    if args.run:
        console.print(own_runs(args.run, console, transcribe))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        console.print(own_runs(make_runs(out, args.limit, console), console, transcribe))


if __name__ == "__main__":
    main()
