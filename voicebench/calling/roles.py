"""Whether a seeker's line keeps the caller's role, and the line as the caller says it: a
line breaks role when it is empty, speaks as the supporter, narrates, refuses to play the
caller, or is longer than the card allows even when cut to its first sentences
(``cut_to_length``: a caller who says a sentence too many has not left the role)."""

from __future__ import annotations

import re

from voicebench.dialogues.personas import Persona

END_MARK = "[END]"
"""What the seeker adds to its line when it ends the call (taken off before it is spoken)."""

_OWN_LABEL = re.compile(r"^\s*\**\s*(caller|seeker|me)\s*\**\s*:\s*", re.I)
_LABEL = re.compile(r"^\s*\**\s*(supporter|counsel+or|assistant|listener)\s*\**\s*:", re.I)
_DIRECTION = re.compile(r"\*[^*]+\*|\([^)]*\)|\[(?!END\])[^\]]*\]")
_ANSWER_ON = re.compile(
    r"(\n|(?<=[.!?\]\"])\s)\s*\**\s*(supporter|counsel+or|assistant|listener)\s*\**\s*:", re.I
)
"""Where the model went on to write the supporter's answer: a label on a new line, or after
the end of a sentence (or of the end mark) on the same one."""
_REFUSAL = re.compile(
    r"\b((can'?t|cannot|unable to) (assist|help)( you)? with (that|this)|"
    r"(can'?t|cannot|won'?t|will not|unable to) continue (this|the) (conversation|chat|role)|"
    r"(can'?t|cannot|won'?t|will not) (pretend|role-?play|play (this|that|the) (role|part))|"
    r"i'?m (just |only )?an? (ai|assistant|chatbot|bot)\b)",
    re.I,
)
_SUPPORTER = re.compile(
    r"\b(how can i (help|support) you|i'?m here (for you|to (help|listen))|as an ai|"
    r"i'?m (so )?sorry to hear|it'?s important to (know|remember)|i can (try to )?help you|"
    r"language model|it sounds like you|thank you for (calling|reaching out|sharing))\b",
    re.I,
)
_GOODBYE = re.compile(r"\b(good ?bye|bye)\b", re.I)


def role_break(line: str, card: Persona) -> str | None:
    """Why ``line`` breaks the seeker's role, or None when it keeps it (a ``Caller:`` label in
    front is only taken off). Saying an earlier line again is not a break: a caller who is
    not being heard repeats themselves, and such a call is the judges' to mark down."""
    text = spoken(line)
    if not text:  # the end mark alone: the caller hangs up without a word
        return None if END_MARK in line else "an empty line"
    if _LABEL.match(text):
        return "speaking as the supporter"
    if _DIRECTION.search(line):
        return "narration or stage directions"
    if _REFUSAL.search(text):
        return "a refusal to play the caller"
    if _SUPPORTER.search(text):
        return "speaking as the supporter"
    words = len(text.split())
    if words > card.max_words:
        return f"{words} words, more than the card's {card.max_words}"
    return None


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')]*\s+")


def cut_to_length(line: str, card: Persona) -> str:
    """``line`` with whole sentences taken off its end until what is spoken fits the card's
    word cap (the end mark kept); as it is when it fits already, or when its first sentence
    alone does not."""
    text = spoken(line)
    if len(text.split()) <= card.max_words:
        return line
    kept = ""
    for end in [m.start() for m in _SENTENCE_END.finditer(text)]:
        head = text[:end].rstrip()
        if len(head.split()) > card.max_words:
            break
        kept = head
    if not kept:
        return line
    return f"{kept} {END_MARK}" if END_MARK in line else kept


def spoken(line: str) -> str:
    """The line as the seeker says it: a ``Caller:`` label, the end mark, stray quotes and
    any supporter's answer written after it taken off."""
    text = _ANSWER_ON.split(line, maxsplit=1)[0]  # the model went on to write the answer
    text = _OWN_LABEL.sub("", text.replace(END_MARK, "").strip(), count=1)
    return text.strip().strip('"').strip()


def says_goodbye(line: str) -> bool:
    """Whether the seeker ends the call with this line."""
    return END_MARK in line or bool(_GOODBYE.search(line))
