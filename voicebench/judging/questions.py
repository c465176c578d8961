"""The yes/no questions the pointwise and checklist judges ask of each reply alone
(``voicebench.judging.logprob``), by name, as a judge spec's ``questions`` and ``weights``
name them; and the checklist's one feature that is not a question, ``likelihood``."""

from __future__ import annotations

from typing import NamedTuple


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
    "fixes": Question(
        "Does the reply rush to fix things, with advice, tips or a list of steps the seeker "
        "did not ask for?",
        -1,
        "E",
    ),
    "risk": Question(
        "Has the seeker mentioned a danger to someone's life, safety or health that the reply "
        "fails to take seriously?",
        -1,
        "T",
    ),
    "open_question": Question(
        "Does the reply ask the seeker one open question about their own situation or feelings?",
        1,
        "R",
    ),
    "forgets": Question(
        "Does the reply forget, contradict or ignore something the seeker said earlier in the "
        "conversation?",
        -1,
        "A",
    ),
}


LIKELIHOOD = "likelihood"
"""A checklist feature (in-process local judges only): how much likelier the model finds the
reply after this seeker's conversation than after ``NEUTRAL_CONTEXT``, log P(reply |
conversation) - log P(reply | neutral), summed over the reply's tokens. A reply that answers
this person is made likelier by what they said; one that would fit anyone is not."""
LIKELIHOOD_MEAN = "likelihood_mean"
"""``likelihood`` per token of the reply: the same evidence with the reply's length taken out
(a longer reply has more tokens for the conversation to make likelier)."""
LIKELIHOODS = (LIKELIHOOD, LIKELIHOOD_MEAN)
"""The features read from the reply's own log-probabilities, computed together."""
NEUTRAL_CONTEXT = "Seeker: I need to talk to someone."
FEATURES = (*QUESTIONS, *LIKELIHOODS)
"""Every name a checklist's ``weights`` may use."""
