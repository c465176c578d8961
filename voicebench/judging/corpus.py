"""Gold pairs from a corpus of real emotional-support conversations, labelled by the corpus.

ESConv (Liu et al., ACL 2021; CC BY-NC 4.0) holds conversations between help-seekers and
trained peer supporters, and the seekers' own 1-5 ratings of the replies as they went. Two
kinds of pair are built from it, each a conversation ending on a seeker turn and two replies
that real supporters wrote:

- ``corpus-next``: the supporter's real next reply, against the reply a supporter wrote at a
  similar point of another conversation (chance is 50%). A judge that tells them apart reads
  whether a reply answers *this* person, which is what attunement is.
- ``corpus-rated``: a real next reply the seeker then rated 4 or 5, against a reply rated 1 or 2
  by its own seeker in another conversation.

Items are chosen by the rule ``voicebench dialogues import esconv`` uses (response potential,
pleasantries and unsafe conversations left out; one item per conversation); replies of fewer
than ``MIN_WORDS`` words are not used, and the other reply is drawn from those whose length is
within a factor of two of the real one, so that length says nothing. The conversation shown
is its last ``MAX_TURNS`` turns. Every choice is fixed by hashes of the ids, so the same files
give the same pairs, byte for byte. Each pair names its ``conversation``, and its split is
that conversation's: no conversation is in both dev and holdout.

Inputs: ESConv JSON (``ESConv.json``, ``FailedESConv.json``: ``voicebench.dialogues.esconv``
documents the format) or the sliding-window TSV files of the corpus's code release
(``codes/dataset/*WithStrategy_short.tsv``): one line per supporter utterance, the utterance
and up to four before it, joined by `` EOS ``, each ``FLAG ROLE INDEX TEXT`` with ROLE ``0``
for the seeker and ``1`` for the supporter, INDEX the utterance's place in its conversation
and a supporter's TEXT led by its strategy in brackets. A conversation's lines are
consecutive; its utterances are read back from the windows, and a window whose last INDEX is
not past the previous one starts the next conversation. These files carry no ratings and no
labels, so they give ``corpus-next`` pairs only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from voicebench._model import read_utf8
from voicebench.dialogues.esconv import MIN_SCORE, Conversation, esconv_conversations
from voicebench.dialogues.esconv_cues import is_pleasantry, is_unsafe, potential
from voicebench.dialogues.models import Role
from voicebench.errors import InputError
from voicebench.judging.gold import GoldPair, GoldTurn

ESCONV_PAIRS_SHA256 = "86467fd90f4353508148f08e86d5e739dc05aff08ff1f14c7485f1494fe7aea3"
"""The pairs ``benchmarks/import_esconv_pairs.py`` makes from the corpus at commit f262d06 with
its defaults: cards measured on that file count as measured on real replies."""
MIN_WORDS = 8
MAX_TURNS = 7
GOOD_RATING = 4
BAD_RATING = 2
_STRATEGY = re.compile(r"^\[[^\]]*\]\s*")
_UNKNOWN = "not recorded"


def _hash(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()[:12], 16)


def read_windows_tsv(path: str | Path) -> list[dict]:
    """The conversations of an ESConv sliding-window TSV file, as ESConv JSON records."""
    path = Path(path)
    conversations: list[dict[int, tuple[int, str]]] = []
    last = -1
    for n, line in enumerate(read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        window: list[tuple[int, int, str]] = []
        for k, segment in enumerate(line.split(" EOS ")):
            parts = segment.strip().split(" ", 3)
            if len(parts) < 4 or parts[1] not in ("0", "1") or not parts[2].isdigit():
                raise InputError(
                    "expected FLAG ROLE INDEX TEXT",
                    file=path,
                    record=f"line {n}",
                    field=f"utterance {k}",
                )
            text = _STRATEGY.sub("", parts[3]).strip() if parts[1] == "1" else parts[3].strip()
            window.append((int(parts[2]), int(parts[1]), text))
        end = window[-1][0]
        if end <= last or not conversations:
            conversations.append({})
        last = end
        for index, role, text in window:
            if text:
                conversations[-1].setdefault(index, (role, text))
    if not conversations:
        raise InputError("no conversations in file", file=path)
    return [
        {
            "problem_type": _UNKNOWN,
            "emotion_type": _UNKNOWN,
            "situation": _UNKNOWN,
            "dialog": [
                {"speaker": "supporter" if role else "seeker", "content": text}
                for _, (role, text) in sorted(utterances.items())
            ],
        }
        for utterances in conversations
    ]


def read_conversations(path: str | Path) -> list[Conversation]:
    """ESConv JSON or sliding-window TSV, by the file's ending."""
    path = Path(path)
    if path.suffix == ".tsv":
        return esconv_conversations(path, read_windows_tsv(path))
    return esconv_conversations(path)


@dataclass(frozen=True)
class _Reply:
    source: str
    conversation: int
    turn: int
    """The index of the seeker turn it answers, in the merged turns."""
    text: str
    rating: int | None

    @property
    def key(self) -> str:
        return f"esconv-{self.source}-{self.conversation}"

    @property
    def words(self) -> int:
        return len(self.text.split())


def _rating(conv: Conversation, k: int) -> int | None:
    """The seeker's rating right after the supporter turn at ``k``."""
    nxt = conv.turns[k + 1] if k + 1 < len(conv.turns) else None
    return nxt.feedback if nxt is not None and nxt.role is Role.SEEKER else None


def _answerable(conv: Conversation, k: int) -> bool:
    turn = conv.turns[k]
    if turn.role is not Role.SEEKER or k == 0 or k + 1 >= len(conv.turns):
        return False
    texts = [conv.situation, *(t.text for t in conv.turns[: k + 2])]
    return (
        not is_pleasantry(turn.text)
        and not is_unsafe(texts)
        and len(conv.turns[k + 1].text.split()) >= MIN_WORDS
        and potential(turn.text) >= MIN_SCORE
    )


def _replies(source: str, conversations: list[Conversation]) -> list[_Reply]:
    """Every supporter reply that answers an answerable seeker turn."""
    return [
        _Reply(source, conv.index, k, conv.turns[k + 1].text, _rating(conv, k + 1))
        for conv in conversations
        for k in range(len(conv.turns))
        if _answerable(conv, k)
    ]


def _other(real: _Reply, pool: list[_Reply]) -> _Reply | None:
    """A reply from another conversation of about the same length, drawn by hash."""
    fits = [
        r
        for r in pool
        if r.conversation != real.conversation and real.words / 2 <= r.words <= real.words * 2
    ]
    if not fits:
        return None
    return min(fits, key=lambda r: _hash(real.key, str(real.turn), r.key, str(r.turn)))


def _pair(conv: Conversation, real: _Reply, other: _Reply, category: str, why: str) -> GoldPair:
    turns = conv.turns[: real.turn + 1][-MAX_TURNS:]
    pair_id = f"{real.key}-t{real.turn}"
    better = "a" if _hash(pair_id, "order") % 2 else "b"
    a, b = (real.text, other.text) if better == "a" else (other.text, real.text)
    return GoldPair(
        id=pair_id,
        conversation=real.key,
        turns=tuple(GoldTurn(role=t.role.value, text=t.text) for t in turns),
        reply_a=a,
        reply_b=b,
        better=better,
        category=category,
        dimensions="A",
        why=why,
    )


def corpus_pairs(sources: Iterable[tuple[str, list[Conversation]]]) -> list[GoldPair]:
    """One pair per conversation that has an item: ``corpus-rated`` where its real reply was
    rated well and a badly rated reply of about its length exists, else ``corpus-next``."""
    pairs: list[GoldPair] = []
    for source, conversations in sources:
        replies = _replies(source, conversations)
        bad = [r for r in replies if r.rating is not None and r.rating <= BAD_RATING]
        by_conv: dict[int, list[_Reply]] = {}
        for r in replies:
            by_conv.setdefault(r.conversation, []).append(r)
        for conv in conversations:
            own = by_conv.get(conv.index, [])
            good = [r for r in own if r.rating is not None and r.rating >= GOOD_RATING]
            rated = [(r, o) for r in good if (o := _other(r, bad)) is not None]
            if rated:
                real, other = max(
                    rated, key=lambda ro: (potential(conv.turns[ro[0].turn].text), -ro[0].turn)
                )
                why = (
                    f"the supporter's real reply, rated {real.rating} of 5 by this seeker; the "
                    f"other was rated {other.rating} of 5 by the seeker of another conversation"
                )
                pairs.append(_pair(conv, real, other, "corpus-rated", why))
                continue
            if not own:
                continue
            best = max(own, key=lambda r: (potential(conv.turns[r.turn].text), -r.turn))
            drawn = _other(best, replies)
            if drawn is None:
                continue
            why = (
                "the supporter's real next reply in this conversation; the other was written in "
                "another conversation"
            )
            pairs.append(_pair(conv, best, drawn, "corpus-next", why))
    return pairs
