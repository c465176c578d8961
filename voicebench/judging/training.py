"""Fitting a scorer's head (``voicebench judge-train``) on read pairs: the dev pairs of each
gold file, never its held-out ones.

A pair's features are reply A's minus reply B's (``voicebench.judging.scorer``); the head is a
Bradley-Terry model of those score differences, P(A is better) = sigmoid(w . (f(A) - f(B))),
fitted with an L2 penalty (``voicebench.judging.fitting``). The features are scaled to unit
spread on the pairs first, so the penalty weighs them alike, and the scale is folded into the
weights. The strength is chosen by cross-validation with the folds by conversation, so a
conversation's pairs are never both fitted and decided.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from voicebench import builtin
from voicebench.errors import InputError
from voicebench.judging import fitting
from voicebench.judging.gold import GoldPair, gold_sha256, load_gold
from voicebench.judging.scorer import (
    ENCODER,
    Conversation,
    Encoder,
    Head,
    reply_features,
)

DEFAULT_GROUPS = ("reply", "measured")
"""The feature groups a head is fitted on unless told: with ``takes_up`` as well, the
cross-validated accuracy on the shipped dev pairs fell from 71.8% to 70.2% (too many weights
for the pairs)."""
STRENGTHS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
"""L2 strengths tried (on features scaled to unit spread)."""
MIN_PAIRS = 20


def conversation_of(pair: GoldPair) -> Conversation:
    return Conversation(
        seeker=tuple(t.text.strip() for t in pair.turns if t.role == "seeker"),
        supporter=tuple(t.text.strip() for t in pair.turns if t.role == "supporter"),
    )


def pair_features(encoder: Encoder, pair: GoldPair, groups: Sequence[str]) -> np.ndarray:
    """Reply A's features minus reply B's."""
    conversation = conversation_of(pair)
    return reply_features(encoder, conversation, pair.reply_a, groups) - reply_features(
        encoder, conversation, pair.reply_b, groups
    )


def fit_head(
    pairs: Sequence[GoldPair],
    encoder: Encoder,
    *,
    groups: Sequence[str] = DEFAULT_GROUPS,
    strengths: tuple[float, ...] = STRENGTHS,
    gold: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> Head:
    """A head fitted on ``pairs`` (``gold``: the sha256 of the files they came from)."""
    if len(pairs) < MIN_PAIRS:
        raise InputError(f"{len(pairs)} dev pairs to fit on: at least {MIN_PAIRS} are needed")
    rows = []
    for k, pair in enumerate(pairs, start=1):
        rows.append(pair_features(encoder, pair, groups))
        if progress is not None:
            progress(k, len(pairs))
    x = np.array(rows)
    y = np.array([1.0 if p.better == "a" else -1.0 for p in pairs])
    spread = x.std(axis=0)
    spread[spread == 0] = 1.0
    scaled = x / spread
    conversations = [p.conversation or p.id for p in pairs]
    strength, scores = fitting.choose(scaled, y, strengths, groups=conversations)
    weights = fitting.fit(scaled, y, strength) / spread
    return Head(
        weights=weights,
        groups=tuple(groups),
        encoder=ENCODER,
        strength=strength,
        cv_accuracy=scores[strength],
        pairs=len(pairs),
        gold_sha256=tuple(gold),
    )


def dev_pairs(paths: Sequence[Path]) -> tuple[list[GoldPair], list[str]]:
    """The dev pairs of every gold file, and the files' sha256."""
    pairs: list[GoldPair] = []
    digests = []
    for path in paths:
        pairs += load_gold(path).select("dev")
        digests.append(gold_sha256(path))
    return pairs, digests


SPEC = """\
# A learned scorer: each reply scored alone from all-MiniLM-L6-v2's embeddings of the
# conversation and the reply, through a linear head fitted by `voicebench judge-train` on the
# dev pairs ({pairs}; cross-validated accuracy {cv:.1%}, folds by conversation) of
{gold}
# The head is {head}, beside this spec.
name = "{name}"
rubric = "{rubric}"

[[judges]]
provider = "local"
model = "{encoder}"
family = "minilm"
method = "scorer"
head = "{head}"
"""


def _shown(path: Path) -> str:
    """A gold file as the spec's comment names it: a shipped one as judges/NAME."""
    if path.resolve().parent == builtin.JUDGES.resolve():
        return f"judges/{path.name}"
    return str(path)


def write_spec(out: Path, head: Head, gold: Sequence[Path], rubric: str) -> Path:
    """The spec ``out`` and its head beside it (``out`` with ``.npz``); the head's path."""
    head_path = out.with_suffix(".npz")
    out.parent.mkdir(parents=True, exist_ok=True)
    head.save(head_path)
    out.write_text(
        SPEC.format(
            gold="\n".join(f"#   {_shown(p)}" for p in gold),
            pairs=head.pairs,
            cv=head.cv_accuracy,
            head=head_path.name,
            name=out.stem,
            rubric=rubric,
            encoder=ENCODER,
        ),
        encoding="utf-8",
    )
    return head_path


def summary(head: Head) -> str:
    """What was fitted, as one JSON line."""
    return json.dumps(
        {
            "pairs": head.pairs,
            "strength": head.strength,
            "cv_accuracy": round(head.cv_accuracy, 4),
            "features": int(head.weights.size),
        }
    )
