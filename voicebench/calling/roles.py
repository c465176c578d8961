"""Whether a seeker's line keeps the caller's role, and the line as the caller says it: a
line breaks role when it is empty, speaks as the supporter, narrates, refuses to play the
caller, says one of its earlier lines again, or is longer than the card allows even when cut to
its first sentences (``cut_to_length``: a caller who says a sentence too many has not left the
role).

Speaking as the supporter is read from a supporter's words (``_SUPPORTER``): inviting the other
to tell more, asking how they feel or cope, reassuring them ("you're not alone", "there's
always someone who cares about you"), naming their feelings back ("that must be so hard"),
advising as a helper does ("have you tried"). Quoted words are not the line's own ("you'll say
'that sounds hard' like everyone else"). The patterns keep every seeker turn of the built-in
dialogues and of the gold pairs in role (``tests/calling/test_roles.py``).

Saying an earlier line again is a model looping, not a caller being emphatic: a line of at
least ``REPEAT_MIN_WORDS`` words of which ``REPEAT_SHARE`` or more is made of runs of
``REPEAT_RUN`` words the caller already said (in any earlier line) breaks role. A caller who
says a phrase twice, or "I don't know" three times, keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voicebench.dialogues.personas import Persona
from voicebench.text import normalize_words

AS_SUPPORTER = "speaking as the supporter"
SAID_AGAIN = "saying an earlier line again"
"""Two of ``role_break``'s reasons, which the seeker benchmark counts apart."""
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
_HARD = (
    r"((so|really|very|incredibly|truly|such a|quite) )?(hard|difficult|tough|painful|heavy|"
    r"exhausting|draining|overwhelming|stressful|frustrating|scary|frightening|lonely|"
    r"isolating|upsetting|discouraging|worrying|confusing|awful|rough|brutal|a lot)"
)
_SUPPORTER = re.compile(
    r"\b("
    # a helper's own words
    r"how can i (help|support) you|i'?m here (for you|to (help|listen))|as an ai|"
    r"i'?m (so |really |very )?sorry to hear|it'?s important to (know|remember)|"
    r"i can (try to )?help you|language model|it sounds like you|"
    r"(thank you|thanks) for (calling|reaching out|sharing|stopping by|coming (in|by))|"
    r"(hi|hello|hey)( there)?,? welcome|"
    # inviting the other to tell
    r"(can|could|would) you tell me (a (little|bit) )?more|tell me (a (little|bit) )?more about|"
    r"would you like to (talk|share|tell me)|do you want to talk about|"
    r"what'?s (been )?(going on|happening|on your mind)|"
    r"what has been (going on|happening|on your mind)|"
    r"what brings you|what would you like to talk about|"
    r"how are you (doing|feeling|holding up|coping|today)|"
    r"how have you been (doing|feeling|holding up|coping|sleeping)|"
    r"how (has|was|is) your (day|week)|how'?s your (day|week)|"
    r"how (is|has) (that|this|it) (been )?affect(ing|ed)? you|"
    r"how long have you (felt|been feeling)|"
    r"how (does|did|do) (that|this|it|those \w+) (make|leave) you( feel)?|"
    r"how do you feel (about|when)|"
    # reassuring them, naming their feelings back
    r"i want you to know|you'?re (definitely |really )?not alone|"
    r"you are (definitely |really )?not alone|"
    r"you don'?t have to \w+ (this|it|all of this|everything) alone|"
    r"(there'?s|there is) always someone|(someone|people) who cares? about you|"
    r"i'?m (really |so )?glad you (reached out|called|came|are here|'re here|told me|shared)|"
    r"it'?s (completely |totally |perfectly |so |really )?(okay|ok|normal|understandable|"
    r"natural|valid) to feel|your feelings are valid|"
    r"(it|that) makes (complete |total |so much |a lot of )?sense (that )?you|"
    r"your (fear|anger|worry|feelings?|reaction) makes (complete |total )?sense|"
    r"(it'?s|is) (so |completely |totally )understandable|it'?s clear (how much )?you|"
    r"no wonder you|it'?s (really )?brave of you|"
    r"(it|that) takes (real |a lot of )?(courage|strength|honesty)|takes real strength|"
    r"you'?re allowed to (feel|think|be)|i can (see|understand|imagine) (why|how) you|"
    rf"that (must|would) (be|feel|have been) {_HARD}|that sounds (like )?{_HARD}|"
    # advising as a helper does
    r"have you (been able to|talked to (anyone|someone|them|her|him)|tried|considered|"
    r"thought about)|some people find|it might help to|would it help (to|if)|"
    r"would (that|it) (feel possible|be worth trying)|"
    r"is there (someone|anyone|a friend|one \w+) you (could|can|feel|trust)"
    r")\b",
    re.I,
)
_QUOTED = re.compile(
    r"\"[^\"]*\"|(?<!\w)'[^']+'(?!\w)|\u201c[^\u201d]*\u201d|\u2018[^\u2019]*\u2019"
)
"""Words in quotation marks: someone else's, not the line's own."""
REPEAT_MIN_WORDS = 5
"""A shorter line ("I don't know", "Thank you so much") is said again by people too."""
REPEAT_RUN = 4
"""Words in a row that count as said before."""
REPEAT_SHARE = 0.7
"""The share of a line's words, in such runs, that makes it a repeat: a loop that changes its
first words ("I'm so sorry, but I just can't stop drinking. It's like a habit." after "I know,
but ...") is still one."""
_GOODBYE = re.compile(r"\b(good ?bye|bye)\b", re.I)


def role_break(line: str, card: Persona, earlier: Sequence[str] = ()) -> str | None:
    """Why ``line`` breaks the seeker's role, or None when it keeps it (a ``Caller:`` label in
    front is only taken off); ``earlier``: the caller's lines so far in the call."""
    text = spoken(line)
    if not text:  # the end mark alone: the caller hangs up without a word
        return None if END_MARK in line else "an empty line"
    if _LABEL.match(text):
        return AS_SUPPORTER
    if _DIRECTION.search(line):
        return "narration or stage directions"
    if _REFUSAL.search(text):
        return "a refusal to play the caller"
    if speaks_as_supporter(text):
        return AS_SUPPORTER
    if repeats_earlier(text, earlier):
        return SAID_AGAIN
    words = len(text.split())
    if words > card.max_words:
        return f"{words} words, more than the card's {card.max_words}"
    return None


def speaks_as_supporter(text: str) -> bool:
    """Whether ``text`` says what a supporter says to a caller (quoted words aside)."""
    return bool(_SUPPORTER.search(_QUOTED.sub(" ", text)))


def repeats_earlier(text: str, earlier: Sequence[str]) -> bool:
    """Whether ``text`` says again, whole or nearly, what ``earlier`` lines said: at least
    ``REPEAT_SHARE`` of its words fall in runs of ``REPEAT_RUN`` words found in one of them."""
    words = normalize_words(spoken(text))
    if len(words) < REPEAT_MIN_WORDS:
        return False
    said = set()
    for line in earlier:
        before = normalize_words(spoken(line))
        said |= {tuple(before[i : i + REPEAT_RUN]) for i in range(len(before) - REPEAT_RUN + 1)}
    covered = [False] * len(words)
    for i in range(len(words) - REPEAT_RUN + 1):
        if tuple(words[i : i + REPEAT_RUN]) in said:
            covered[i : i + REPEAT_RUN] = [True] * REPEAT_RUN
    return sum(covered) >= REPEAT_SHARE * len(words)


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
