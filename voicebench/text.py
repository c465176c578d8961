"""Text normalisation and word error rate, shared by the ASR check and later transcript diffs,
and whether a transcript stops mid-sentence (the turn rule's cue)."""

from __future__ import annotations

import difflib
import re

_NUMBER_WORDS = {
    "0": "zero",
    "1": "one",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "10": "ten",
}
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def normalize_words(text: str) -> list[str]:
    """Lower-case words without punctuation; small digits spelled out; curly quotes folded."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    words = _TOKEN.findall(text)
    return [_NUMBER_WORDS.get(w, w) for w in words]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, reference word count) after normalisation."""
    ref, hyp = normalize_words(reference), normalize_words(hypothesis)
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1], len(ref)


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate of ``hypothesis`` against ``reference`` (1.0 for an empty hypothesis)."""
    errors, n = word_errors(reference, hypothesis)
    if n == 0:
        return 0.0 if not normalize_words(hypothesis) else 1.0
    return errors / n


def word_diff(reference: str, hypothesis: str) -> str:
    """Normalised word-level difference: ``-word`` for each dropped, ``+word`` for each added
    (a substitution is both); empty when the two agree."""
    ref, hyp = normalize_words(reference), normalize_words(hypothesis)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=ref, b=hyp, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            out += [f"-{w}" for w in ref[i1:i2]]
        if op in ("insert", "replace"):
            out += [f"+{w}" for w in hyp[j1:j2]]
    return " ".join(out)


SENTENCE_END = ".?!"
NEVER_LAST = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "but",
        "or",
        "nor",
        "because",
        "of",
        "to",
        "with",
        "from",
        "than",
        "if",
        "my",
        "your",
        "our",
        "their",
        "his",
        "its",
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
    ]
)
"""Words an English sentence does not end on: articles, conjunctions, some prepositions,
possessives and a bare subject."""


def unfinished(text: str) -> bool:
    """Whether a transcript stops mid-sentence: it does not end with a full stop, question or
    exclamation mark (an ellipsis trails off), or its last word is one no sentence ends on."""
    text = text.strip().rstrip("\"')\u201d\u2019")
    if not text:
        return False
    if text[-1] not in SENTENCE_END or text.endswith(("...", "\u2026")):
        return True
    words = normalize_words(text)
    return bool(words) and words[-1] in NEVER_LAST
