"""Run directories and judging folders written from known figures, for rating and report tests.

They go through the real writers (``RunStore``, the pydantic models), so readers see exactly
what a replay and a judging job would leave on disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from voicebench.agentspec import AgentSpec, LLMSpec, RemoteSpec
from voicebench.dialogues import BUILTIN_DIALOGUES
from voicebench.fixtures.audio import write_wav
from voicebench.host import Host
from voicebench.judging import JudgeAnswer, JudgingHeader, Reply, Verdict
from voicebench.judging.cards import JudgeCard, Tally
from voicebench.judging.mcnemar import PairedComparison
from voicebench.judging.trivial import TRIVIAL_RULES, RuleScore
from voicebench.runlog import RunHeader, RunStore, ScenarioOutcome, TurnError, TurnRecord
from voicebench.timing import TurnTiming
from voicebench.timing.sound import Sound
from voicebench.timing.stalls import Playback

MS = 1_000_000
STAMP = "2026-01-01T00:00:00+00:00"


def timing(ttfa_ms: int, ttft_ms: int = 300) -> TurnTiming:
    """Endpointing 300, ASR 100, turn end 1, LLM ``ttft_ms``, text 1, TTS up to 20 ms before
    the first audio, output 20 ms."""
    return TurnTiming(
        speech_end_ns=0,
        vad_stop_ns=300 * MS,
        transcript_ns=400 * MS,
        llm_request_ns=401 * MS,
        llm_first_token_ns=(401 + ttft_ms) * MS,
        tts_request_ns=(402 + ttft_ms) * MS,
        tts_first_audio_ns=(ttfa_ms - 20) * MS,
        audio_out_ns=ttfa_ms * MS,
    )


def run_header(name: str, items, *, api_key_env: str | None = None, **fields) -> RunHeader:
    """The header of a run of ``items`` by the scripted agent ``name`` (``fields`` set the
    rest: a converse folder's mode and seeker)."""
    return RunHeader(
        run_id=name,
        created_at=STAMP,
        voicebench_version="0.1.0",
        agent=AgentSpec(
            name=name,
            family=f"fam-{name}",
            llm=LLMSpec(provider="scripted", model=name, api_key_env=api_key_env),
        ),
        agent_spec_path="a.toml",
        dialogues_path=str(BUILTIN_DIALOGUES),
        dialogues_sha256="0" * 64,
        dialogue_ids=tuple(d.id for d in items),
        **{"fixtures_dir": "audio_fixtures", **fields},
    )


def make_run(
    root: Path,
    name: str,
    items,
    ttfa_ms: int | Sequence[int],
    *,
    ttft_ms: int = 300,
    all_turns: bool = False,
    api_key_env: str | None = None,
    user_text: str | None = None,
    reply_text: str = "",
    failures: dict[tuple[str, int], TurnError] | None = None,
    scenarios: Sequence[ScenarioOutcome | None] = (None,),
    passes_ms: Sequence[int] = (0,),
    hosts: Sequence[Host] = (),
    playbacks: Sequence[Playback | None] = (None,),
    sounds: Sequence[Sound | None] = (None,),
) -> Path:
    """A finished run of ``items``: the final seeker turn of each (every seeker turn with
    ``all_turns``), TTFA cycling through ``ttfa_ms``; the first turn is the cold one. With
    several ``passes_ms``, a repeated run: one pass per entry, its TTFAs that much later.
    ``hosts``: the machines it says it measured on; ``playbacks``: each turn's reply as it
    played (its stalls), cycling."""
    store = RunStore(root / name)
    repeats = {"repeats": len(passes_ms)} if len(passes_ms) > 1 else {}
    store.open(run_header(name, items, api_key_env=api_key_env, hosts=tuple(hosts), **repeats))
    ttfas = [ttfa_ms] if isinstance(ttfa_ms, int) else list(ttfa_ms)
    turns = [
        (d, k)
        for d in items
        for k in (d.seeker_turn_indices if all_turns else [d.final_turn_index])
    ]
    failures = failures or {}
    played = [(r, d, k) for r in range(len(passes_ms)) for d, k in turns]
    for n, (repeat, d, k) in enumerate(played):
        error = failures.get((d.id, k))
        store.append(
            TurnRecord(
                run_id=name,
                contestant=f"scripted/{name}",
                agent_name=name,
                dialogue_id=d.id,
                turn_index=k,
                final=k == d.final_turn_index,
                adversarial=d.adversarial,
                user_text=user_text if user_text is not None else d.turns[k].text,
                reply_text=reply_text,
                asr_wer=0.0 if n % 2 else 0.1,
                timing=None
                if error
                else timing(ttfas[n % len(turns) % len(ttfas)] + passes_ms[repeat], ttft_ms),
                error=error,
                repeat=repeat,
                cold=n == 0,
                started_at=STAMP,
                scenario=scenarios[n % len(scenarios)],
                playback=playbacks[n % len(playbacks)],
                sound=sounds[n % len(sounds)],
            )
        )
    return store.dir


def verdict(item: str, a: str, b: str, side: str, strength: int = 3, judge: str = "j/1") -> Verdict:
    ans = JudgeAnswer(
        winner=side,
        strength=strength,
        dimensions={"H": side, "E": side, "A": None, "R": None, "T": None},
        rationale="r",
    )
    return Verdict(
        key=f"{judge}{item}{a}{b}",
        item_id=item,
        judge=judge,
        rubric_sha256="h",
        contestant_a=a,
        contestant_b=b,
        answer=ans,
    )


def reply_samples(k: int) -> int:
    """The length of the k-th contestant's reply audio: one length each, so a test can tell
    from the audio alone whose reply it got."""
    return 8000 + 4800 * k


def make_judging(
    out: Path,
    runs: Sequence[Path],
    items,
    contestants: Sequence[str],
    verdicts: Sequence[Verdict],
    *,
    smoke: bool = False,
    heard: str = "hi",
    heard_by: dict[str, str] | None = None,
    audio: bool = False,
    families: dict[str, str] | None = None,
    judge_families: dict[str, str] | None = None,
) -> Path:
    """A judging folder over ``runs`` holding these replies and verdicts; ``heard_by`` gives
    some contestants their own text, and with ``audio`` every reply gets a WAV in the folder's
    ``audio/`` (where judging puts the replies it speaks), a tone of ``reply_samples(k)``
    samples for the k-th contestant. ``families`` gives some contestants their own family (the
    rest are ``f``), ``judge_families`` the judges' (none recorded unless given)."""
    out.mkdir(parents=True)
    (out / "judging.json").write_text(
        JudgingHeader(
            created_at=STAMP,
            run_dirs=tuple(map(str, runs)),
            judge_spec_path="j.toml",
            judges=tuple(sorted({v.judge for v in verdicts})),
            smoke=smoke,
            rubric_path="r.md",
            rubric_sha256="h",
            judge_families=judge_families or {},
        ).model_dump_json()
    )
    replies = []
    for d in items:
        for k, c in enumerate(contestants):
            clip = None
            if audio:
                clip = out / "audio" / f"{d.id}-{k}.wav"
                pcm = 8000 * np.sin(np.arange(reply_samples(k)) * (0.05 + 0.01 * k))
                write_wav(clip, pcm.astype(np.int16), 16_000)
            said = (heard_by or {}).get(c, heard)
            replies.append(
                Reply(
                    item_id=d.id,
                    contestant=c,
                    kind="human" if c.startswith("human") else "agent",
                    family=(families or {}).get(c, "f"),
                    heard=said,
                    text=said,
                    audio_path=None if clip is None else str(clip),
                )
            )
    (out / "replies.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in replies))
    (out / "verdicts.jsonl").write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    return out


def judge_card(**fields) -> JudgeCard:
    """A judge card as ``judge-check`` writes it; ``fields`` set what a test looks at (the
    rest are plausible and unused). The trivial rules are each right on 20 of the 40 pairs,
    the judge 40 points above them (their per-pair outcomes left out: a test that combines
    cards gives its own)."""
    rule = RuleScore(correct=20, accuracy=0.5, accuracy_low=0.35, accuracy_high=0.65, outcomes={})
    card = {
        "spec_name": "measured",
        "spec_path": "judge.toml",
        "spec_sha256": "0" * 64,
        "judges": ("j/1",),
        "methods": ("structured",),
        "gold_path": "gold.jsonl",
        "gold_sha256": "1" * 64,
        "split": "holdout",
        "created_at": STAMP,
        "pairs": 40,
        "decided": 40,
        "correct": 36,
        "accuracy": 0.9,
        "accuracy_low": 0.77,
        "accuracy_high": 0.96,
        "decided_rate": 1.0,
        "flips": 3,
        "flip_rate": 0.075,
        "first_slot_rate": 0.5,
        "verdicts": 80,
        "failed_verdicts": 0,
        "seconds_per_verdict": 1.5,
        "longer_worse": Tally(pairs=20, correct=18),
        "trivial_rules": dict.fromkeys(TRIVIAL_RULES, rule),
        "margin": PairedComparison(
            first="measured",
            second="longer",
            split="holdout",
            pairs=40,
            both_right=18,
            first_only=18,
            second_only=2,
            neither=2,
            difference=0.4,
            difference_low=0.22,
            difference_high=0.54,
            p_value=0.000402,
        ),
    }
    return JudgeCard(**{**card, **fields})


def judged_against_reference(
    root: Path, items, *, all_turns: bool = False, audio: bool = False
) -> tuple[Path, Path]:
    """Agent ``alpha``'s run of ``items`` in ``root``, and ``root/judged``: it against the human
    reference, with one verdict on the first item."""
    run = make_run(root, "alpha", items, 900, all_turns=all_turns)
    judged = make_judging(
        root / "judged",
        [run],
        items,
        ["alpha", "human/reference"],
        [verdict(items[0].id, "alpha", "human/reference", "A")],
        audio=audio,
    )
    return run, judged


def load_header(dialogue_ids: Sequence[str], **fields) -> str:
    """A load folder's ``load.json``: one caller for a second against a remote agent
    (``fields`` set the rest: its agent, pattern, dialogue set...)."""
    from voicebench.live.load import LoadHeader

    settings = {
        "created_at": STAMP,
        "voicebench_version": "0.1.0",
        "agent": AgentSpec(name="r", family="r", remote=RemoteSpec(url="ws://127.0.0.1:9")),
        "callers": 1,
        "ramp_s": 0,
        "duration_s": 1,
        "arrivals": "fixed",
        "seed": 0,
        "turn_timeout_s": 30,
        "dialogue_ids": tuple(dialogue_ids),
    }
    return LoadHeader(**{**settings, **fields}).model_dump_json()


def make_load(root: Path, *, seed: int = 0) -> Path:
    """A finished load folder: a step pattern to 16 callers, 2 more every 30 s, each call
    three turns 5 s apart; TTFA grows 50 ms per call in progress (p90 over 1,000 ms from 7-8
    calls on), and from 14 calls on about one turn in twelve times out."""
    from voicebench.live.load import CALLS_FILE, LOAD_FILE, TURNS_FILE, LoadHeader, load_pattern
    from voicebench.live.load_summary import CallSpan, LoadTurn

    rng = np.random.default_rng(seed)
    pattern = load_pattern(
        kind="step", callers=16, step_callers=2, step_hold_s=30, duration_s=240, ramp_s=2
    )
    windows = pattern.windows(seed)
    turns, spans = [], []
    for caller, w in enumerate(windows):
        t, call = w.arrive_s, 0
        while t < w.leave_s:
            start = t
            for k in range(3):
                c = min(16, int(t // 30) * 2 + 2)
                fail = c >= 14 and rng.random() < 0.08
                ttfa = int(600 + 50 * c + rng.normal(0, 60))
                turns.append(
                    LoadTurn(
                        caller=caller,
                        call=call,
                        concurrency=c,
                        offset_s=round(t, 3),
                        turn=TurnRecord(
                            run_id=root.name,
                            contestant="remote/x",
                            agent_name="x",
                            dialogue_id="d",
                            turn_index=2 * k + 1,
                            final=k == 2,
                            user_text="u",
                            timing=None if fail else timing(ttfa),
                            error=TurnError(kind="timeout", reason="no answer") if fail else None,
                            started_at=STAMP,
                        ),
                    )
                )
                t += 5
            spans.append(CallSpan(caller=caller, call=call, start_s=start, end_s=t, answered=True))
            call += 1
    header = LoadHeader(
        created_at=STAMP,
        voicebench_version="0.1.0",
        agent=AgentSpec(name="stepped", family="r", remote=RemoteSpec(url="ws://127.0.0.1:9")),
        callers=16,
        ramp_s=2,
        duration_s=240,
        arrivals="fixed",
        seed=seed,
        turn_timeout_s=20,
        dialogue_ids=("d",),
        pattern=pattern,
        windows=windows,
    )
    root.mkdir(parents=True, exist_ok=True)
    (root / LOAD_FILE).write_text(header.model_dump_json(indent=2))
    turns.sort(key=lambda x: x.offset_s)
    (root / TURNS_FILE).write_text("".join(x.model_dump_json() + "\n" for x in turns))
    (root / CALLS_FILE).write_text("".join(s.model_dump_json() + "\n" for s in spans))
    return root


def make_calls(
    root: Path,
    name: str,
    items,
    replies: dict[str, Sequence[str]],
    ttfa_ms: Sequence[int],
    *,
    seeker: str = "scripted/seeker",
    invalid: Sequence[str] = (),
    report: dict | None = None,
) -> Path:
    """A finished converse folder: one call per item, the caller saying the item's seeker
    turns and the agent answering ``replies[item]`` (as heard; as many as the item has seeker
    turns) after ``ttfa_ms`` (by the turn's place in the call); the calls of ``invalid``
    broke role. Each call has its audio, a tone as long as the call has turns, and the
    caller's ``report``."""
    from voicebench.calling.records import CallRecord, Exchange, greeting_of
    from voicebench.calling.seeker import CallerReport
    from voicebench.dialogues.personas import personas_for
    from voicebench.runlog import ReplayMode

    store = RunStore(root / name)
    store.open(
        run_header(
            name,
            items,
            fixtures_dir=str(root / name / "fixtures"),
            mode=ReplayMode.SIMULATED,
            seeker=seeker,
        )
    )
    cards = personas_for(items)
    said_report = report or {
        "intensity_before": 4,
        "intensity_after": 3,
        "felt_heard": 4,
        "would_call_again": True,
    }
    with (store.dir / "calls.jsonl").open("w") as calls:
        for d in items:
            lines = [d.turns[k].text for k in d.seeker_turn_indices][: len(replies[d.id])]
            exchanges = []
            for place, (line, heard) in enumerate(zip(lines, replies[d.id], strict=False)):
                k = d.seeker_turn_indices[place]
                store.append(
                    TurnRecord(
                        run_id=name,
                        contestant=f"scripted/{name}",
                        agent_name=name,
                        dialogue_id=d.id,
                        turn_index=k,
                        final=place == len(lines) - 1,
                        adversarial=d.adversarial,
                        user_text=line,
                        reply_text=heard,
                        timing=timing(ttfa_ms[place % len(ttfa_ms)]),
                        cold=place == 0 and d is items[0],
                        started_at=STAMP,
                    )
                )
                exchanges.append(Exchange(turn_index=k, said=line, heard=heard))
            clip = f"calls/{d.id}.wav"
            pcm = 8000 * np.sin(np.arange(8000 * len(lines)) * 0.05)
            write_wav(store.dir / clip, pcm.astype(np.int16), 16_000)
            valid = d.id not in invalid
            record = CallRecord(
                call_id=d.id,
                agent_name=name,
                seeker=seeker,
                persona=cards[d.id],
                greeting=greeting_of(d),
                exchanges=tuple(exchanges),
                ended_by="turns" if valid else "role",
                valid=valid,
                role_breaks=0 if valid else 2,
                report=CallerReport(**said_report) if valid else None,
                item_id=None,
                started_at=STAMP,
                finished_at=STAMP,
                audio_path=clip,
            )
            calls.write(record.model_dump_json() + "\n")
    return store.dir


class WordJudge:
    """A judge with a known taste: the reply (or whole call) with more of ``word`` in it wins
    (reply B on a tie). ``client`` is its ``client_factory`` for ``judge_runs``; ``asked``
    keeps every request."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.asked: list[list[dict]] = []

    async def client(self, spec, stack) -> WordJudge:
        return self

    async def ask(self, messages):
        from voicebench.llm import ChatText

        self.asked.append(messages)
        user = messages[-1]["content"]
        a = user.split("Reply A (as heard):\n")[1].split("\n\nReply B")[0]
        b = user.split("Reply B (as heard):\n")[1].split("\n\nWhich reply")[0]
        winner = "A" if a.count(self.word) > b.count(self.word) else "B"
        answer = {
            "winner": winner,
            "strength": 3,
            "dimensions": {"H": None, "E": winner, "A": None, "R": None, "T": None},
            "rationale": f"It says {self.word}.",
        }
        return ChatText(json.dumps(answer), 5.0)


def word_judge_spec(folder: Path) -> Path:
    """A judge spec for ``WordJudge`` (its client is given to ``judge_runs``, so the URL is
    never called): model ``openai-compatible/warm``, family ``testjudge``."""
    (folder / "rubric.md").write_text("Judge the replies.\n")
    spec = folder / "judge.toml"
    spec.write_text(
        'name = "t"\nrubric = "rubric.md"\n[[judges]]\nprovider = "openai-compatible"\n'
        'model = "warm"\nfamily = "testjudge"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    return spec
