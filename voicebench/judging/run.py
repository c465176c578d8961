"""A judging job: replies as heard, every pair in both orders, verdicts cached on disk.

Schedule. On each item, every pair of contestants with a usable reply is compared (all
pairs, or ``pairs_per_item`` of them drawn with a seeded RNG: then an item with n
contestants has min(n(n-1)/2, pairs_per_item) pairs). Each pair goes to every judge whose
family differs from both contestants' (a pair no judge may rate is counted as skipped),
in both orders: 2 x pairs x eligible judges requests.

Robustness. Rate limits, 5xx, timeouts and dropped connections are retried with backoff
(``Retry-After`` honoured) up to the judge's ``max_attempts``. An answer that does not parse
is asked again up to ``parse_retries`` times, then stored as a failed verdict with the raw
text. Each verdict is appended to ``verdicts.jsonl`` as soon as it is decided; a re-run
finds answered verdicts by key and asks only for the rest (failed ones are asked again).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from voicebench._folder import claimed
from voicebench._jsonl import decide_each, write_atomic
from voicebench.errors import InputError
from voicebench.judging.calls import call_replies, check_call_runs, is_call_run
from voicebench.judging.cards import CARD_FILE, JudgeCard, find_card
from voicebench.judging.clients import open_judge
from voicebench.judging.combine import JudgeHealth, judge_health, pair_results
from voicebench.judging.families import OwnFamily, own_family
from voicebench.judging.logprob import reweigh
from voicebench.judging.models import JudgedUnit, JudgingHeader, PairResult, Reply, Verdict
from voicebench.judging.prompt import (
    dialogue_context,
    judge_messages,
    parse_answer,
    verdict_key,
)
from voicebench.judging.replies import (
    REFERENCE,
    HumanVoice,
    agent_replies,
    answered_by,
    human_replies,
    load_human_replies,
)
from voicebench.judging.spec import JudgeModelSpec, Rubric, load_judge_spec
from voicebench.judging.store import (
    VERDICTS_FILE,
    JudgingStore,
    judged_items,
    labelled_verdicts,
    read_replies,
    read_verdicts,
)
from voicebench.llm import ChatClient, ask_parsed


@dataclass(frozen=True)
class Matchup:
    """One ordered pair, shown to one judge."""

    item_id: str
    context: str
    judge: JudgeModelSpec
    a: Reply
    b: Reply
    key: str


@dataclass(frozen=True)
class JudgingResult:
    out_dir: Path
    replies: list[Reply]
    verdicts: list[Verdict]
    pairs: list[PairResult]
    health: list[JudgeHealth]
    skipped_pairs: int
    """Pairs no judge could rate (every judge shares a family with a contestant)."""
    smoke: bool
    asked: int
    """Requests decided in this invocation (the rest came from the cache)."""
    spec_path: str = ""
    card: JudgeCard | None = None
    """The judge's card (``voicebench judge-check``), copied into the folder; None if unmeasured."""
    own_family: tuple[OwnFamily, ...] = ()
    """Each contestant a judge of its own family rated anyway (``rates_own_family``)."""


def schedule(
    replies: Sequence[Reply],
    contexts: Mapping[str, str],
    judges: Sequence[JudgeModelSpec],
    rubric: Rubric,
    *,
    pairs_per_item: int | None = None,
    seed: int = 0,
    anchor: str | None = None,
) -> tuple[list[Matchup], int]:
    """Every comparison to make, and how many pairs no judge could rate. ``contexts`` holds
    what the judge is shown before the two replies, by item id (an item without one is not
    judged). With ``anchor``, only the pairs with that contestant in them (every other one
    against it: a load's bands against its lowest, say)."""
    rng = random.Random(seed)
    by_item: dict[str, list[Reply]] = {}
    for r in replies:
        if r.failed is None and r.item_id in contexts:
            by_item.setdefault(r.item_id, []).append(r)
    out: list[Matchup] = []
    skipped = 0
    for item_id in sorted(by_item):
        usable = sorted(by_item[item_id], key=lambda r: r.contestant)
        pairs = list(combinations(usable, 2))
        if anchor is not None:
            pairs = [p for p in pairs if anchor in (p[0].contestant, p[1].contestant)]
        if pairs_per_item is not None and len(pairs) > pairs_per_item:
            pairs = sorted(
                rng.sample(pairs, pairs_per_item), key=lambda p: (p[0].contestant, p[1].contestant)
            )
        context = contexts[item_id]
        for x, y in pairs:
            eligible = [
                j for j in judges if j.rates_own_family or j.family not in (x.family, y.family)
            ]
            if not eligible:
                skipped += 1
            for judge in eligible:
                out += both_orders(item_id, context, judge, x, y, rubric)
    return out, skipped


def both_orders(
    item_id: str, context: str, judge: JudgeModelSpec, x: Reply, y: Reply, rubric: Rubric
) -> list[Matchup]:
    """One pair shown to one judge: ``x`` as reply A, then ``y`` as reply A."""
    return [
        Matchup(
            item_id,
            context,
            judge,
            a,
            b,
            verdict_key(
                rubric_sha256=rubric.sha256,
                judge=judge.cache_id,
                context=context,
                reply_a=a.heard,
                reply_b=b.heard,
                order=order,
            ),
        )
        for a, b, order in ((x, y, "AB"), (y, x, "BA"))
    ]


async def decide(client: ChatClient, c: Matchup, rubric: Rubric) -> Verdict:
    """Ask one judge about one ordered pair, with retries; never raises for a judge's failure."""
    messages = judge_messages(rubric.text, c.context, c.a.heard, c.b.heard)
    asked = await ask_parsed(client, messages, parse_answer, c.judge.retry)
    return Verdict(
        key=c.key,
        item_id=c.item_id,
        judge=c.judge.id,
        smoke=c.judge.smoke,
        rubric_sha256=rubric.sha256,
        contestant_a=c.a.contestant,
        contestant_b=c.b.contestant,
        answer=asked.value,
        failure=asked.failure,
        raw=asked.raw,
        attempts=asked.attempts,
        latency_ms=None if asked.latency_ms is None else round(asked.latency_ms, 1),
    )


async def run_comparisons(
    comparisons: Sequence[Matchup],
    rubric: Rubric,
    out_dir: Path,
    *,
    concurrency: int,
    clients: dict[str, ChatClient],
    progress: Callable[[Verdict, int, int], None] | None = None,
    limits: Mapping[str, asyncio.Semaphore] | None = None,
) -> list[Verdict]:
    """Decide ``comparisons`` with at most ``concurrency`` requests in flight, and at most what
    ``limits[provider]`` allows to one provider (shared by judgings that run at once); each
    verdict is appended to the verdict file as soon as it is decided."""

    # A model loaded here reuses its last prompt's prefix: its comparisons go one by one.
    serial = {c.judge.id: asyncio.Lock() for c in comparisons if c.judge.loaded_in_process}

    async def one(c: Matchup) -> Verdict:
        bound = (limits or {}).get(c.judge.provider) or contextlib.nullcontext()
        async with bound, serial.get(c.judge.id) or contextlib.nullcontext():
            return await decide(clients[c.judge.id], c, rubric)

    return await decide_each(
        comparisons,
        one,
        out_dir / VERDICTS_FILE,
        concurrency=concurrency,
        progress=progress,
    )


async def decide_pending(
    pending: Sequence[Matchup],
    rubric: Rubric,
    out_dir: Path,
    *,
    concurrency: int,
    say: Callable[[str], None],
    progress: Callable[[Verdict, int, int], None] | None = None,
    client_factory: Callable | None = None,
    limits: Mapping[str, asyncio.Semaphore] | None = None,
) -> list[Verdict]:
    """Start a client for every judge ``pending`` needs (released at the end) and decide the
    comparisons into ``out_dir``'s verdict file."""
    if not pending:
        return []
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, ChatClient] = {}
        for judge in {c.judge.id: c.judge for c in pending}.values():
            what = judge.variant or judge.method
            smoke = ", offline smoke judge" if judge.smoke else ""
            say(f"starting judge {judge.id} ({what}{smoke})")
            clients[judge.id] = await (client_factory or open_judge)(judge, stack)
        return await run_comparisons(
            pending,
            rubric,
            out_dir,
            concurrency=concurrency,
            clients=clients,
            progress=progress,
            limits=limits,
        )


async def judge_runs(
    run_dirs: Sequence[Path],
    judge_spec: Path,
    out_dir: Path,
    *,
    concurrency: int = 4,
    human_files: Sequence[Path] = (),
    pairs_per_item: int | None = None,
    seed: int = 0,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[Verdict, int, int], None] | None = None,
    client_factory: Callable | None = None,
    limits: Mapping[str, asyncio.Semaphore] | None = None,
    anchor: str | None = None,
) -> JudgingResult:
    """Judge the final turns of ``run_dirs`` (plus the human reference) into ``out_dir``, or,
    when they are converse folders, their whole calls (``voicebench.judging.calls``).
    A contestant (an agent name) may answer items in several runs, each item in one run only.
    ``limits`` bound the requests in flight per judge provider (see ``run_comparisons``);
    ``anchor``: judge only the pairs with that contestant in them (see ``schedule``)."""
    say = on_status or (lambda _msg: None)
    if not run_dirs:
        raise InputError("give at least one run directory to judge")
    run_dirs = [Path(p) for p in run_dirs]
    calls = [is_call_run(d) for d in run_dirs]
    if any(calls) and not all(calls):
        mixed = run_dirs[calls.index(not calls[0])]
        raise InputError(
            "judge simulated calls (voicebench converse) and replayed runs apart: a judging "
            "compares whole calls or final replies, not both",
            file=mixed / "run.json",
            field="mode",
        )
    unit: JudgedUnit = "call" if calls[0] else "reply"
    spec, rubric = load_judge_spec(judge_spec, unit=unit)
    items = judged_items(run_dirs)
    if unit == "call":
        if human_files:
            raise InputError(
                "human replies are final replies; a judging of whole calls has none",
                file=Path(human_files[0]),
            )
        contexts, answered = check_call_runs(run_dirs)
        extra: list = []
    else:
        answered = answered_by(run_dirs)
        contexts = {i: dialogue_context(d) for i, d in items.items()}
        extra = [r for f in human_files for r in load_human_replies(Path(f), set(items))]

    with claimed(out_dir, "judging"):
        store = JudgingStore(out_dir)
        header = JudgingHeader(
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            run_dirs=tuple(str(p) for p in run_dirs),
            judge_spec_path=str(judge_spec),
            judges=tuple(j.id for j in spec.judges),
            smoke=spec.smoke,
            rubric_path=rubric.path,
            rubric_sha256=rubric.sha256,
            human_replies=tuple(str(f) for f in human_files),
            unit=unit,
            judge_families={j.id: j.family for j in spec.judges},
        )
        store.open(header)

        replies = [r for r in read_replies(out_dir) if r.item_id in items]
        done = {(r.contestant, r.item_id) for r in replies}
        wanted = set(answered)
        if unit == "reply":
            wanted |= {(REFERENCE, i) for i in items}
            wanted |= {(f"human/{r.name}", r.item_id) for r in extra}
        if unit == "call" and not wanted <= done:
            for run_dir in run_dirs:
                for reply in call_replies(run_dir, done):
                    store.append_reply(reply)
                    replies.append(reply)
        elif not wanted <= done:
            say(f"transcribing {len(wanted - done)} replies as heard")
            from voicebench.pipeline.stt import Transcriber

            transcribe = Transcriber()
            for run_dir in run_dirs:
                for reply in agent_replies(run_dir, transcribe, done):
                    store.append_reply(reply)
                    replies.append(reply)
            voice = HumanVoice()
            for reply in human_replies(
                list(items.values()), extra, out_dir / "audio", transcribe, voice, done
            ):
                store.append_reply(reply)
                replies.append(reply)
        replies = [r for r in replies if (r.contestant, r.item_id) in wanted]

        comparisons, skipped = schedule(
            replies,
            contexts,
            spec.judges,
            rubric,
            pairs_per_item=pairs_per_item,
            seed=seed,
            anchor=anchor,
        )
        weights = {j.id: j.weights for j in spec.judges if j.weights is not None}
        store.write_header(
            header.model_copy(
                update={"keys": tuple(c.key for c in comparisons), "weights": weights or None}
            )
        )
        cached = {v.key: v for v in read_verdicts(out_dir) if v.answer is not None}
        pending = list({c.key: c for c in comparisons if c.key not in cached}.values())
        say(
            f"{len(comparisons)} comparisons ({len(comparisons) - len(pending)} already decided), "
            f"{len({c.judge.id for c in comparisons})} judge(s), concurrency {concurrency}"
        )
        new = await decide_pending(
            pending,
            rubric,
            out_dir,
            concurrency=concurrency,
            say=say,
            progress=progress,
            client_factory=client_factory,
            limits=limits,
        )
        verdicts = reweigh(labelled_verdicts(comparisons, out_dir), comparisons)
        pairs = pair_results(verdicts)
        store.write_pairs(pairs)
        card = find_card(judge_spec)
        if card is not None:
            write_atomic(out_dir / CARD_FILE, card.model_dump_json(indent=2) + "\n")
    return JudgingResult(
        spec_path=str(judge_spec),
        card=card,
        own_family=own_family(
            (c.judge.id, c.judge.family, r) for c in comparisons for r in (c.a, c.b)
        ),
        out_dir=out_dir,
        replies=replies,
        verdicts=verdicts,
        pairs=pairs,
        health=judge_health(verdicts),
        skipped_pairs=skipped,
        smoke=spec.smoke,
        asked=len(new),
    )
