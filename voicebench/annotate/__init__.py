"""People rating replies by ear: a blinded listening page that writes human judgments.

It reads a judging folder (``voicebench judge``) and writes ``human/RATER.jsonl`` in it, which
``rate`` and ``report`` read (``voicebench.rating.people``).
"""

from voicebench.annotate.content import Library, load_library, seeker_audio
from voicebench.annotate.server import SCALE, Answer, Rating, build_app, open_rating, serve_rating
from voicebench.annotate.tasks import (
    DEFAULT_PER_RATER,
    AnnotationTask,
    RaterPlan,
    draw_plan,
    judged_pairs,
    rater_plan,
    repeats_for,
)

__all__ = [
    "DEFAULT_PER_RATER",
    "SCALE",
    "AnnotationTask",
    "Answer",
    "Library",
    "RaterPlan",
    "Rating",
    "build_app",
    "draw_plan",
    "judged_pairs",
    "load_library",
    "open_rating",
    "rater_plan",
    "repeats_for",
    "seeker_audio",
    "serve_rating",
]
