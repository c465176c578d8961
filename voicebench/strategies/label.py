"""Labelling every judged reply with the support strategies it uses, cached like verdicts.

The replies are those of a judging folder (as heard, failed ones left out), each with its
item's conversation. The classifier is a judge model from a judge spec (the first one).
Each labelling is appended to ``strategies.jsonl`` in the judging folder as soon as it is
decided, under a key of the taxonomy version, the classifier, the conversation and the reply;
a re-run asks only for keys it does not have an answer for (failed ones are asked again).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from voicebench._jsonl import (
    decide_each,
    drop_partial_line,
    latest_per_key,
    read_models,
)
from voicebench._model import Versioned
from voicebench.judging import judged_items, judged_runs, read_judging_header, read_replies
from voicebench.judging.prompt import dialogue_context
from voicebench.judging.spec import JudgeModelSpec, load_judge_spec
from voicebench.llm import AnswerFormat, ChatClient, ask_parsed, open_chat
from voicebench.strategies.taxonomy import (
    LABELS_VERSION,
    Mark,
    answer_schema,
    label_key,
    label_messages,
    parse_labels,
)

LABELS_FILE = "strategies.jsonl"
ANSWER_MAX_TOKENS = 1000
"""At least this many tokens for an answer: 15 marks with evidence do not fit in a verdict's."""


def classifier_model(judge: JudgeModelSpec) -> JudgeModelSpec:
    """``judge`` as a strategy classifier: the same model, room for the longer answer."""
    return judge.model_copy(update={"max_tokens": max(judge.max_tokens, ANSWER_MAX_TOKENS)})


class ReplyStrategies(Versioned):
    """One reply's strategy marks, or why there are none."""

    schema_version: int = 1
    key: str
    taxonomy: str = LABELS_VERSION
    item_id: str
    contestant: str
    adversarial: bool = False
    classifier: str
    """The judge model that labelled, ``provider/model``."""
    smoke: bool = False
    """Labelled by a smoke judge: the marks mean nothing."""
    marks: dict[str, Mark] | None = None
    """Every strategy's mark; None when the labelling failed."""
    evidence: dict[str, str] = Field(default_factory=dict)
    """For strategies marked present: the words of the reply the classifier quoted."""
    failure: str | None = None
    raw: str | None = None
    attempts: int = 0

    def present(self) -> set[str]:
        return {k for k, m in (self.marks or {}).items() if m == "present"}


@dataclass(frozen=True)
class LabelTask:
    item_id: str
    contestant: str
    adversarial: bool
    context: str
    reply: str
    key: str


def read_labels(folder: Path, name: str = LABELS_FILE) -> list[ReplyStrategies]:
    """The latest labelling per key (a failed one may have been asked again later)."""
    return latest_per_key(
        read_models(folder / name, ReplyStrategies), lambda r: r.marks is not None
    )


def label_tasks(folder: Path, classifier: str) -> list[LabelTask]:
    """Every usable reply of the judging folder, with its conversation."""
    header = read_judging_header(folder)
    items = judged_items(judged_runs(folder, header))
    tasks = []
    for r in read_replies(folder):
        if r.failed is not None or r.item_id not in items:
            continue
        d = items[r.item_id]
        context = dialogue_context(d)
        tasks.append(
            LabelTask(
                r.item_id,
                r.contestant,
                d.adversarial,
                context,
                r.heard,
                label_key(classifier=classifier, context=context, reply=r.heard),
            )
        )
    return tasks


async def label(
    tasks: Sequence[LabelTask],
    judge: JudgeModelSpec,
    client: ChatClient,
    out: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[ReplyStrategies, int, int], None] | None = None,
) -> list[ReplyStrategies]:
    """Label ``tasks`` with at most ``concurrency`` requests in flight, appending each."""

    async def one(t: LabelTask) -> ReplyStrategies:
        asked = await ask_parsed(
            client, label_messages(t.context, t.reply), parse_labels, judge.retry
        )
        marks = asked.value
        return ReplyStrategies(
            key=t.key,
            item_id=t.item_id,
            contestant=t.contestant,
            adversarial=t.adversarial,
            classifier=judge.id,
            smoke=judge.smoke,
            marks={k: m.mark for k, m in marks.items()} if marks else None,
            evidence={k: m.evidence for k, m in marks.items() if m.mark == "present" and m.evidence}
            if marks
            else {},
            failure=asked.failure,
            raw=asked.raw,
            attempts=asked.attempts,
        )

    return await decide_each(tasks, one, out, concurrency=concurrency, progress=progress)


@dataclass(frozen=True)
class LabelResult:
    labels: list[ReplyStrategies]
    classifier: JudgeModelSpec
    asked: int


async def label_judging(
    folder: Path,
    judge_spec: Path,
    *,
    concurrency: int = 4,
    on_status: Callable[[str], None] | None = None,
    progress: Callable[[ReplyStrategies, int, int], None] | None = None,
    client: ChatClient | None = None,
) -> LabelResult:
    """Label every usable reply of the judging folder with the spec's first judge model."""
    say = on_status or (lambda _msg: None)
    spec, _ = load_judge_spec(judge_spec)
    judge = classifier_model(spec.judges[0])
    tasks = label_tasks(folder, judge.id)
    drop_partial_line(folder / LABELS_FILE)
    cached = {r.key for r in read_labels(folder) if r.marks is not None}
    pending = [t for t in tasks if t.key not in cached]
    say(
        f"{len(tasks)} replies ({len(tasks) - len(pending)} already labelled), classifier "
        f"{judge.id}" + (" (offline smoke judge)" if judge.smoke else "")
    )
    if pending:
        async with contextlib.AsyncExitStack() as stack:
            if client is None:
                client = await open_chat(
                    judge, stack, AnswerFormat("support_strategies", answer_schema())
                )
            await label(
                pending,
                judge,
                client,
                folder / LABELS_FILE,
                concurrency=concurrency,
                progress=progress,
            )
    keys = {t.key for t in tasks}
    return LabelResult([r for r in read_labels(folder) if r.key in keys], judge, len(pending))
