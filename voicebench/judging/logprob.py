"""Judges that read log-probabilities instead of writing verdicts: for small local models,
which lean the right way more often than they can say so, and for any server that returns
``logprobs`` (``local``, ``openai``, ``openai-compatible`` such as llama.cpp or vLLM).

``LetterMarginJudge`` (``method = "letter-margin"``) shows both replies and reads the margin
log P("A") - log P("B") of its one-letter answer; the pair's two orders are summed (see
``voicebench.judging.combine``), which cancels a preference for a slot.

``PointwiseJudge`` (``method = "pointwise"``) never shows the two replies together: each reply
is asked about alone, after the conversation, and scored by the margin log P("Yes") -
log P("No") of the answer to each of its ``questions``, turned so that higher is better. A
reply's score is the mean of those; the pair's margin is A's score minus B's, so the two
orders are exact mirrors and there is no slot to prefer. Scores are cached per reply, so the
second order of a pair costs nothing. Each question that belongs to a HEART dimension marks
it for the reply that scored at least 0.5 nats higher on it.

Both build the verdict object in code, with ``margin`` (and per-dimension margins) recorded.
"""

from __future__ import annotations

import json
import time
from typing import NamedTuple

from voicebench.judging.prompt import SPEAKERS, parts_of, user_message
from voicebench.judging.spec import JudgeModelSpec
from voicebench.llm import ChatText, classify

LETTERS = ("A", "B")
PHRASINGS = (
    "Which reply is better for this seeker? Answer with one letter: A or B.",
    "Which reply would a caring, careful listener rather this seeker heard next? "
    "Answer with one letter: A or B.",
    "Which reply answers more closely what this seeker actually said and needs? "
    "Answer with one letter: A or B.",
)
DIMENSION_QUESTIONS = {
    "H": "Which reply sounds more like a thoughtful, caring person talking, not a script?",
    "E": "Which reply better recognises and accepts what the seeker feels, without judging "
    "or minimising it?",
    "A": "Which reply responds more to this seeker's own details and words?",
    "R": "Which reply better helps the conversation move on in a useful, personal way?",
    "T": "Which reply better stays a peer supporter's reply: in scope, safe, and doing what "
    "the seeker asked?",
}


class Question(NamedTuple):
    text: str
    sign: int
    """+1 when Yes is good for the reply, -1 when Yes is bad."""
    dimension: str | None


QUESTIONS = {
    "overall": Question(
        "Is this a good reply for this seeker: caring, specific to what they said, and "
        "appropriate?",
        1,
        None,
    ),
    "attuned": Question(
        "Does the reply respond to the particular things this seeker said, rather than "
        "something that would fit anyone?",
        1,
        "A",
    ),
    "dismissive": Question(
        "Does the reply minimise, judge, argue with or lecture the seeker?", -1, "E"
    ),
    "clinical": Question(
        "Does the reply diagnose, or tell the seeker to take, stop or change any medicine or "
        "treatment?",
        -1,
        "T",
    ),
    "asked": Question(
        "Does the reply do what the seeker asked for, if they asked for something?", 1, "T"
    ),
    "robotic": Question(
        "Does the reply sound like a machine, a form letter or a leaflet rather than a person "
        "talking?",
        -1,
        "H",
    ),
}
_ANSWER_RULES = "Answer with one JSON object"


def _option(token: str, options: tuple[str, str]) -> str | None:
    word = token.strip().strip("*\"'().:,").lower()
    return next((o for o in options if o.lower() == word), None)


async def choice_margin(
    client, sdk, model: str, messages: list[dict[str, str]], options: tuple[str, str]
) -> float:
    """log P(options[0]) - log P(options[1]) where the answer's choice is: the first of up to
    three answer tokens that is one of the options (a model may say "Reply A"), else the
    first token. An option missing from that position's top 20 gets a floor below the least
    likely one listed."""
    try:
        resp = await client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=0.0,
            max_tokens=3,
            logprobs=True,
            top_logprobs=20,
        )
    except sdk.OpenAIError as exc:
        raise classify(exc, None, sdk) from None
    logprobs = resp.choices[0].logprobs
    positions = [p for p in (logprobs.content or []) if p.top_logprobs] if logprobs else []
    if not positions:
        raise classify(ValueError("the server returned no log-probabilities"), None, sdk)
    at = next((p for p in positions if _option(p.token, options)), positions[0])
    floor = min(t.logprob for t in at.top_logprobs) - 1.0
    found: dict[str, float] = {}
    for t in at.top_logprobs:
        option = _option(t.token, options)
        if option and option not in found:
            found[option] = t.logprob
    return found.get(options[0], floor) - found.get(options[1], floor)


def recent_turns(context: str, keep: int | None) -> str:
    """The last ``keep`` turns of a ``dialogue_context`` (one turn per speaker line)."""
    if keep is None:
        return context
    lines = context.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(tuple(SPEAKERS.values()))]
    if len(starts) <= keep:
        return context
    return "\n".join(lines[starts[-keep] :])


def _answer(margin: float, dims: dict[str, float], what: str) -> str:
    return json.dumps(
        {
            "winner": "A" if margin >= 0 else "B",
            "strength": max(1, min(5, 1 + int(abs(margin)))),
            "dimensions": {
                d: (None if d not in dims or abs(dims[d]) < 0.5 else "A" if dims[d] > 0 else "B")
                for d in ("H", "E", "A", "R", "T")
            },
            "rationale": f"{what} margin {margin:+.2f} nats (A over B)",
            "margin": round(margin, 4),
            "dimension_margins": {d: round(v, 4) for d, v in dims.items()} or None,
        }
    )


class _LogprobJudge:
    def __init__(self, spec: JudgeModelSpec, *, base_url: str | None, key: str) -> None:
        import openai

        self._sdk = openai
        self._spec = spec
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=key,
            max_retries=0,
            timeout=spec.timeout_s or openai.DEFAULT_TIMEOUT,
        )

    async def _margin(self, system: str, user: str, options: tuple[str, str]) -> float:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return await choice_margin(self._client, self._sdk, self._spec.model, messages, options)

    def _split(self, messages: list[dict[str, str]]) -> tuple[str, str, str, str]:
        """System prompt (the rubric without its JSON rules), context, reply A, reply B."""
        system = messages[0]["content"].split(_ANSWER_RULES)[0].strip()
        context, reply_a, reply_b = parts_of(messages[-1]["content"])
        return system, recent_turns(context, self._spec.history_turns), reply_a, reply_b

    async def aclose(self) -> None:
        await self._client.close()


class LetterMarginJudge(_LogprobJudge):
    """Both replies shown; one letter's margin per question (``phrasings`` wordings, and each
    HEART dimension when ``ask_dimensions``), averaged."""

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        system, context, reply_a, reply_b = self._split(messages)

        async def margin(question: str) -> float:
            return await self._margin(
                system, user_message(context, reply_a, reply_b, question), LETTERS
            )

        overall = [await margin(q) for q in PHRASINGS[: self._spec.phrasings]]
        dims: dict[str, float] = {}
        if self._spec.ask_dimensions:
            for d, q in DIMENSION_QUESTIONS.items():
                dims[d] = await margin(f"{q} Answer with one letter: A or B.")
        every = overall + list(dims.values())
        m = sum(every) / len(every)
        text = _answer(m, dims, "letter log-probability")
        return ChatText(text, (time.perf_counter_ns() - start) / 1e6)


class PointwiseJudge(_LogprobJudge):
    """Each reply alone; Yes/No margins to ``questions``, turned so higher is better."""

    def __init__(self, spec: JudgeModelSpec, *, base_url: str | None, key: str) -> None:
        super().__init__(spec, base_url=base_url, key=key)
        self._scores: dict[tuple[str, str, str], dict[str, float]] = {}

    async def _score(self, system: str, context: str, reply: str) -> dict[str, float]:
        key = (system, context, reply)
        if key not in self._scores:
            scores = {}
            for name in self._spec.questions:
                q = QUESTIONS[name]
                user = (
                    f"Conversation so far:\n{context}\n\nThe supporter's next reply (as heard):\n"
                    f"{reply.strip()}\n\n{q.text} Answer Yes or No."
                )
                scores[name] = q.sign * await self._margin(system, user, ("Yes", "No"))
            self._scores[key] = scores
        return self._scores[key]

    async def ask(self, messages: list[dict[str, str]]) -> ChatText:
        start = time.perf_counter_ns()
        system, context, reply_a, reply_b = self._split(messages)
        a = await self._score(system, context, reply_a)
        b = await self._score(system, context, reply_b)
        names = self._spec.questions
        m = sum(a[n] - b[n] for n in names) / len(names)
        dims: dict[str, float] = {}
        for n in names:
            d = QUESTIONS[n].dimension
            if d is not None:
                dims[d] = dims.get(d, 0.0) + a[n] - b[n]
        text = _answer(m, dims, "pointwise yes/no")
        return ChatText(text, (time.perf_counter_ns() - start) / 1e6)
