"""The report's Replies section: per judged item, the conversation, what every contestant said
(as heard, with its audio copied beside the page), the judges' verdicts with their reasons,
and the people's answers with their comments."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import soundfile as sf

from voicebench._folder import Outside, inside
from voicebench.calling.outcomes import call_turns
from voicebench.calling.records import ENDINGS, CallRecord, read_calls
from voicebench.fixtures.audio import resample
from voicebench.fixtures.manifest import file_sha256
from voicebench.judging import (
    REPLIES_FILE,
    current_verdicts,
    judged_items,
    judged_runs,
    read_judging_header,
    read_replies,
)
from voicebench.judging.models import Reply, locate_run
from voicebench.rating import folder_judgments
from voicebench.rating.agreement import RATING_LABELS
from voicebench.reporting.models import (
    CallFacts,
    CallMoment,
    CallTurnView,
    ItemReplies,
    PersonView,
    ReplyView,
    TurnMoment,
    VerdictView,
)
from voicebench.runlog import TurnRecord, read_header, read_turns
from voicebench.timing.sound import with_heard_words
from voicebench.timing.stalls import Stall

AUDIO_DIR = "audio"
AudioFormat = Literal["wav", "opus"]
"""How a report keeps the replies' audio: ``wav`` copies the recording as it is; ``opus``
re-encodes it as Opus in Ogg (about a tenth of the size, which browsers play), for a report
to share or commit."""
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
"""The sample rates Opus encodes; any other is resampled to the next one up."""
_EXTENSION = {"wav": "wav", "opus": "ogg"}


def _audio_name(item_id: str, contestant: str, audio_format: AudioFormat) -> str:
    """A file name from the item and a hash of the contestant: no name from a run becomes
    a path."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", item_id)[:60]
    digest = hashlib.sha256(contestant.encode()).hexdigest()[:10]
    return f"{safe}-{digest}.{_EXTENSION[audio_format]}"


def copy_audio(source: Path, target: Path, audio_format: AudioFormat) -> None:
    """``source`` (a WAV) to ``target`` as it is, or encoded as Opus."""
    if audio_format == "wav":
        shutil.copyfile(source, target)
        return
    samples, rate = sf.read(source, dtype="float32")
    to_rate = next((r for r in OPUS_RATES if r >= rate), OPUS_RATES[-1])
    if to_rate != rate:
        samples = resample(samples, rate, to_rate)
    sf.write(target, samples, to_rate, format="OGG", subtype="OPUS")


LEAD_S = 3.0
"""How long before the caller's end of speech a turn starts playing on the page."""


class CallCopies:
    """Calls' recordings copied beside the page, each once, in the report's audio format."""

    def __init__(self, out_dir: Path, audio_format: AudioFormat) -> None:
        self.out_dir, self.audio_format = out_dir, audio_format
        self._copied: dict[Path, str] = {}

    def source(self, run_dir: Path, turn: TurnRecord) -> Path | None:
        """The turn's call recording in its run folder (None: none, or one outside it)."""
        if turn.call is None or turn.timing is None:
            return None
        try:
            source = inside(run_dir, turn.call.path)
        except Outside:
            return None
        return source if source.is_file() else None

    def audio(self, source: Path) -> str:
        """The copy's path, relative to the report folder."""
        if source not in self._copied:
            # named by its content: the same wherever the run folder has moved to
            name = f"call-{file_sha256(source)[:12]}"
            audio = f"{AUDIO_DIR}/{name}.{_EXTENSION[self.audio_format]}"
            (self.out_dir / AUDIO_DIR).mkdir(parents=True, exist_ok=True)
            copy_audio(source, self.out_dir / audio, self.audio_format)
            self._copied[source] = audio
        return self._copied[source]


def turn_moment(turn: TurnRecord) -> TurnMoment:
    """Where a turn with a call recording (``turn.call``) lies in it."""
    t, ref = turn.timing, turn.call
    assert t is not None and ref is not None
    said_end = ref.seconds(t.speech_end_ns)
    return TurnMoment(
        turn_index=turn.turn_index,
        from_s=round(max(0.0, said_end - LEAD_S), 2),
        said_end_s=round(said_end, 3),
        first_audio_s=None if t.audio_out_ns is None else round(ref.seconds(t.audio_out_ns), 3),
        ttfa_ms=t.ttfa_ms,
        failed=None if turn.error is None else turn.error.kind,
    )


class _Moments:
    """Each reply's place in its call's recording: the run's turns read once per run."""

    def __init__(self, judging_dir: Path, copies: CallCopies) -> None:
        self.judging_dir, self.copies = judging_dir, copies
        self._turns: dict[str, dict[str, TurnRecord]] = {}

    def turn(self, reply: Reply) -> TurnRecord | None:
        """The run's record of the turn that gave ``reply``, found by its audio."""
        if reply.run_dir is None or reply.audio_path is None:
            return None
        if reply.run_dir not in self._turns:
            run = locate_run(reply.run_dir, self.judging_dir)
            try:
                self._turns[reply.run_dir] = {
                    t.audio_path: t for t in read_turns(run) if t.audio_path
                }
            except (OSError, ValueError):
                self._turns[reply.run_dir] = {}
        return self._turns[reply.run_dir].get(reply.audio_path)

    def of(self, reply: Reply) -> CallMoment | None:
        turn = self.turn(reply)
        if turn is None or reply.run_dir is None:
            return None
        source = self.copies.source(locate_run(reply.run_dir, self.judging_dir), turn)
        if source is None:
            return None
        return CallMoment(audio=self.copies.audio(source), turn=turn_moment(turn))


def heard_turns(run_dir: Path, judging_dir: Path | None) -> list[TurnRecord]:
    """The run's turns, each reply that judging transcribed back with its speaking rate
    counted from the words heard (``timing.sound.with_heard_words``)."""
    records = read_turns(run_dir)
    if judging_dir is None or not (judging_dir / REPLIES_FILE).is_file():
        return records
    run = run_dir.resolve()
    heard = {
        reply.audio_path: reply.heard
        for reply in read_replies(judging_dir)
        if reply.run_dir is not None
        and reply.audio_path is not None
        and locate_run(reply.run_dir, judging_dir).resolve() == run
    }
    return [
        t.model_copy(update={"sound": with_heard_words(t.sound, heard[t.audio_path])})
        if t.audio_path in heard
        else t
        for t in records
    ]


def _stalls(turn: TurnRecord | None) -> tuple[Stall, ...]:
    played = None if turn is None else turn.playback
    return () if played is None else played.stalls


def _played_ms(turn: TurnRecord | None) -> float | None:
    played = None if turn is None else turn.playback
    return None if played is None else played.audio_ms


def item_replies(
    judging_dir: Path,
    out_dir: Path,
    *,
    human_judgments: Path | None = None,
    audio_format: AudioFormat = "wav",
) -> tuple[ItemReplies, ...]:
    """Every judged item's replies, verdicts and people's answers; reply audio is copied to
    ``out_dir/audio/`` in ``audio_format``."""
    header = read_judging_header(judging_dir)
    items = judged_items(judged_runs(judging_dir, header))
    replies = defaultdict(list)
    for r in read_replies(judging_dir):
        replies[r.item_id].append(r)
    verdicts = defaultdict(list)
    for v in current_verdicts(judging_dir):
        verdicts[v.item_id].append(v)
    people = defaultdict(list)
    for h in folder_judgments(judging_dir, human_judgments):
        people[h.item_id].append(h)
    moments = _Moments(judging_dir, CallCopies(out_dir, audio_format))
    out = []
    for item_id in sorted(replies):
        views = []
        for r in sorted(replies[item_id], key=lambda r: r.contestant):
            audio, refused = None, None
            try:
                source = r.audio_file(judging_dir)
            except Outside as exc:
                source, refused = None, f"its recorded audio path was refused: {exc}"
            if source is not None and source.is_file():
                audio = f"{AUDIO_DIR}/{_audio_name(item_id, r.contestant, audio_format)}"
                (out_dir / AUDIO_DIR).mkdir(parents=True, exist_ok=True)
                copy_audio(source, out_dir / audio, audio_format)
            views.append(
                ReplyView(
                    contestant=r.contestant,
                    kind=r.kind.value,
                    heard=r.heard,
                    text=r.text,
                    audio=audio,
                    audio_refused=refused,
                    failed=r.failed,
                    moment=moments.of(r),
                    stalls=_stalls(turn := moments.turn(r)),
                    played_ms=_played_ms(turn),
                    sound=None if turn is None else with_heard_words(turn.sound, r.heard),
                )
            )
        dialogue = items.get(item_id)
        out.append(
            ItemReplies(
                item_id=item_id,
                adversarial=bool(dialogue and dialogue.adversarial),
                conversation=tuple(
                    (t.speaker, t.text) for t in (dialogue.turns if dialogue else ())
                ),
                replies=tuple(views),
                verdicts=tuple(
                    VerdictView(
                        judge=v.judge,
                        contestant_a=v.contestant_a,
                        contestant_b=v.contestant_b,
                        winner=v.winner,
                        strength=v.answer.strength if v.answer else None,
                        rationale=v.answer.rationale if v.answer else "",
                        failure=v.failure,
                    )
                    for v in sorted(
                        verdicts[item_id], key=lambda v: (v.contestant_a, v.contestant_b, v.judge)
                    )
                ),
                people=tuple(
                    PersonView(
                        rater=h.rater or "-",
                        contestant_a=h.contestant_a,
                        contestant_b=h.contestant_b,
                        rating=h.rating,
                        label=RATING_LABELS[h.rating],
                        comment=h.comment,
                        repeat=h.repeat,
                    )
                    for h in people[item_id]
                ),
            )
        )
    return tuple(out)


def call_facts(call: CallRecord, records: Sequence[TurnRecord]) -> CallFacts:
    """A call's turns with their timing, how it ended, and the caller's report."""
    turns = []
    for e, r in zip(call.exchanges, call_turns(call, records), strict=True):
        t = r.timing if r is not None else None
        failed = f"{r.error.kind}: {r.error.reason}" if r is not None and r.error else None
        turns.append(
            CallTurnView(
                said=e.said,
                heard=e.heard,
                ttfa_ms=t.ttfa_ms if t else None,
                ttft_ms=t.ttft_ms if t else None,
                failed=failed,
            )
        )
    rep = call.report
    return CallFacts(
        ended_by=ENDINGS[call.ended_by],
        turns=tuple(turns),
        intensity_before=rep.intensity_before if rep else None,
        intensity_after=rep.intensity_after if rep else None,
        felt_heard=rep.felt_heard if rep else None,
        would_call_again=rep.would_call_again if rep else None,
    )


def call_views(
    judging_dir: Path, out_dir: Path, audio_format: AudioFormat = "wav"
) -> tuple[ItemReplies, ...]:
    """Every judged call, by persona: who the caller was and how the call opened, then each
    agent's call as heard with its audio (copied like a reply's), its turns' timing, how it
    ended and the caller's report, and the verdicts."""
    found: dict[tuple[str, str], tuple[CallRecord, list[TurnRecord]]] = {}
    for run_dir in judged_runs(judging_dir):
        name, records = read_header(run_dir).agent.name, read_turns(run_dir)
        for call in read_calls(run_dir):
            found[(name, call.call_id)] = (call, records)
    out = []
    for item in item_replies(judging_dir, out_dir, audio_format=audio_format):
        views, opening = [], item.conversation
        for r in item.replies:
            if (r.contestant, item.item_id) in found:
                call, records = found[(r.contestant, item.item_id)]
                r = r.model_copy(update={"call": call_facts(call, records)})
                opening = (
                    ("Caller", call.persona.summary),
                    ("Supporter", call.greeting),
                )
            views.append(r)
        out.append(item.model_copy(update={"replies": tuple(views), "conversation": opening}))
    return tuple(out)
