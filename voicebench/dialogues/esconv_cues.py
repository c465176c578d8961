"""The cues ``voicebench dialogues import esconv`` reads seeker turns by (see the rules in
``voicebench/dialogues/esconv.py``): distress, a request for help, conflict, pleasantries,
and content not safe to replay."""

from __future__ import annotations

import re

PLEASANTRY_MAX_WORDS = 25

_DISTRESS = (
    r"\bsad(?:ness)?\b",
    r"\bdepress\w*",
    r"\banxi\w*",
    r"\bstress\w*",
    r"\bscared\b",
    r"\bafraid\b",
    r"\bworr\w*",
    r"\blonel\w*",
    r"\balone\b",
    r"\bhurt\w*",
    r"\bupset\b",
    r"\bang(?:er|ry)\b",
    r"\bfrustrat\w*",
    r"\boverwhelm\w*",
    r"\bhopeless\w*",
    r"\bhelpless\w*",
    r"\bcr(?:y|ying|ied|ies)\b",
    r"\bmiserable\b",
    r"\b(?:terrible|awful)\b",
    r"\bpanic\w*",
    r"\bnervous\w*",
    r"\bheartbroken\b",
    r"\bashamed\b|\bshame\b",
    r"\bguilt\w*",
    r"\bexhausted\b",
    r"\bstruggl\w*",
    r"\bdesperate\w*",
    r"\bgrie\w*",
    r"\bembarrass\w*",
    r"\bisolat\w*",
    r"\bcan'?t (?:sleep|cope|stop thinking)\b",
)
_HELP = (
    r"\bwhat (?:should|can|do|could) i do\b",
    r"\bwhat would you do\b",
    r"\b(?:don'?t|do not) know (?:how|what|where|if|whether)\b",
    r"\bhow (?:can|do|should|could) i\b",
    r"\bshould i\b(?! do\b)",
    r"\bhelp me\b|\bneed (?:some )?help\b|\b(?:can|could|would) you help\b",
    r"\badvi[cs]e\b",
    r"\b(?:any|some) (?:ideas|suggestions|tips)\b|\bsuggest\w*",
)
_CONFLICT = (
    r"\bargu\w*",
    r"\bfight\w*|\bfought\b",
    r"\byell\w*|\bscream\w*|\bshout\w*",
    r"\bblam\w*",
    r"\bcheat\w*",
    r"\bbetray\w*",
    r"\bdivorc\w*",
    r"\b(?:broke|break|breaking) up\b|\bbreakup\b",
    r"\bfired\b|\blaid off\b|\blet go\b",
    r"\bbull(?:y|ied|ying|ies)\b",
    r"\bconflict\w*",
    r"\bcritici\w*",
    r"\bdisrespect\w*",
)
_PLEASANTRY = re.compile(
    r"\bthank\w*|\bthanks\b|\bthx\b|\bbye\b|\bgoodbye\b|\bgood ?night\b"
    r"|\bhave a (?:good|great|nice|lovely|wonderful)\b|\btake care\b|\byou'?re welcome\b"
    r"|\bnice (?:talking|chatting|to meet)\b|\bappreciate\w*|\bhello\b|\bhi\b|\bhey\b"
    r"|\bgood (?:morning|afternoon|evening)\b"
)
_UNSAFE = re.compile(
    "|".join(
        (
            # self-harm and suicide: any mention, not only a plan
            r"\bsuicid\w*",
            r"\bself[- ]?harm\w*",
            r"\bkill(?:ing)? myself\b",
            r"\b(?:hurt|harm|cut|hang)\w* myself\b",
            r"\bend(?:ing)? (?:my (?:own )?life|it all)\b",
            r"\btak(?:e|ing) my (?:own )?life\b",
            r"\boverdos\w*",
            r"\bbetter off dead\b",
            r"\b(?:want|wanna|wanted) to die\b",
            r"\b(?:don'?t|do not|no longer) want to (?:live|be alive)\b",
            # hate
            r"\bsubhuman\b",
            r"\bethnic cleansing\b",
            r"\bwhite power\b",
            r"\bheil\b",
            r"\bshould all (?:die|be killed|be shot)\b",
            r"\bkill (?:them|those people) all\b",
            # identifying information
            # (each pattern starts only where a run starts: linear even on a long text)
            r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+",
            r"(?<![\w])\+?\d(?:[\s().-]?\d){8,}",
        )
    )
)
_DISTRESS_RE = tuple(re.compile(p) for p in _DISTRESS)
_HELP_RE = tuple(re.compile(p) for p in _HELP)
_CONFLICT_RE = tuple(re.compile(p) for p in _CONFLICT)
_WORD = re.compile(r"[\w']+")


def _normalize(text: str) -> str:
    return text.lower().replace("\u2019", "'")


def _cues(patterns: tuple[re.Pattern[str], ...], text: str) -> int:
    return sum(1 for p in patterns if p.search(text))


def potential(text: str) -> int:
    """Response potential of a seeker turn (rule 4 of the module docstring)."""
    t = _normalize(text)
    words = len(_WORD.findall(t))
    return (
        min(2 * _cues(_DISTRESS_RE, t), 6)
        + min(3 * _cues(_HELP_RE, t), 6)
        + min(2 * _cues(_CONFLICT_RE, t), 4)
        + ("?" in t)
        + min(words // 15, 3)
    )


def is_pleasantry(text: str) -> bool:
    t = _normalize(text)
    return (
        _PLEASANTRY.search(t) is not None
        and not _cues(_DISTRESS_RE, t)
        and not _cues(_CONFLICT_RE, t)
        and "?" not in t
        and len(_WORD.findall(t)) <= PLEASANTRY_MAX_WORDS
    )


def is_unsafe(texts: list[str]) -> bool:
    return any(_UNSAFE.search(_normalize(t)) for t in texts)
