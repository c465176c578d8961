"""A local judge model in this process, reading the next token's log-probabilities only.

The log-probability judges (``voicebench.judging.logprob``) need one thing of a model: how
likely each of two answers (A or B, Yes or No) is as the next token. Over HTTP, the llama.cpp
server can only return log-probabilities when it computes the logits of every position of
every prompt, and keeps them (the whole vocabulary, per token): most of the time a judge's
prompt takes goes there. ``NextTokenModel`` loads the GGUF file with llama.cpp in this
process, computes the logits of the last position only, and keeps the previous prompt's
evaluated tokens, so a prompt that starts as the last one did (the same rubric and
conversation, the same reply asked another question) is evaluated from where they differ.

Its answers are the server's: the same chat template from the model file, the same greedy
answer tokens, the first of up to three that is one of the options read from its top 20.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

TOP = 20
"""Log-probabilities read per answer position, as the server's ``top_logprobs``."""
ANSWER_TOKENS = 3


class PromptTooLong(ValueError):
    """The prompt and its answer do not fit the model's context."""


class NoChatTemplate(Exception):
    """The model file carries no chat template of its own (the server then guesses one)."""


class NextTokenModel:
    """``NextTokenModel(path, n_ctx=4096).choice_margin(messages, ("A", "B"))``; one prompt
    at a time (calls from several threads wait for each other)."""

    def __init__(self, path: Path, *, n_ctx: int, n_threads: int | None = None) -> None:
        from llama_cpp import Llama, llama_chat_format

        threads = n_threads or os.cpu_count() or 1
        self._llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            logits_all=False,
            verbose=False,
        )
        metadata = self._llm.metadata
        template = metadata.get("tokenizer.chat_template")
        if not template or llama_chat_format.guess_chat_format_from_gguf_metadata(metadata):
            raise NoChatTemplate(str(path))
        eos, bos = self._llm.token_eos(), self._llm.token_bos()
        self._format = llama_chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=self._llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=self._llm._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )
        self._eos = eos
        self._lock = threading.Lock()

    def _tokens(self, messages: list[dict[str, str]]) -> list[int]:
        result = self._format(messages=messages)  # type: ignore[arg-type]
        return self._llm.tokenize(
            result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
        )

    def _feed(self, tokens: list[int], score_from: int | None = None) -> list[float]:
        """Evaluate ``tokens`` after the longest prefix already evaluated (at least the last
        token is evaluated again: its logits are the ones read). With ``score_from``, also
        return log P(token j | the tokens before it) for every j from there: the logits of
        just those positions are computed, the rest of the prompt's are not."""
        llm = self._llm
        done = llm.input_ids[: llm.n_tokens]
        same = 0
        for a, b in zip(done, tokens, strict=False):
            if a != b:
                break
            same += 1
        same = min(same, len(tokens) - 1, len(tokens) if score_from is None else score_from - 1)
        llm._ctx.kv_cache_seq_rm(-1, same, -1)
        llm.n_tokens = same
        scored: list[float] = []
        for start in range(same, len(tokens), llm.n_batch):
            chunk = tokens[start : start + llm.n_batch]
            llm._batch.set_batch(batch=chunk, n_past=start, logits_all=False)
            read = []  # (index in the batch, the token whose probability its logits give)
            for k, pos in enumerate(range(start, start + len(chunk))):
                if score_from is not None and score_from - 1 <= pos < len(tokens) - 1:
                    llm._batch.batch.logits[k] = True
                    read.append((k, tokens[pos + 1]))
            llm._ctx.decode(llm._batch)
            llm.input_ids[start : start + len(chunk)] = chunk
            llm.n_tokens += len(chunk)
            scored += [float(self._logprobs(k)[token]) for k, token in read]
        return scored

    def _logprobs(self, at: int = -1) -> np.ndarray:
        """The next-token log-probabilities after the last decode's token ``at`` (one whose
        logits were computed; -1: the last, the prompt's end)."""
        logits = np.ctypeslib.as_array(
            self._llm._ctx.get_logits_ith(at), shape=(self._llm.n_vocab(),)
        ).astype(np.float64)
        top = logits.max()
        return logits - (top + np.log(np.exp(logits - top).sum()))

    def _text(self, token: int) -> str:
        return self._llm.detokenize([token]).decode("utf-8", errors="ignore")

    def top_answers(
        self, messages: list[dict[str, str]], until: Callable[[str], bool]
    ) -> list[list[tuple[str, float]]]:
        """For each greedy answer token, up to ``ANSWER_TOKENS`` of them and until one whose
        text satisfies ``until``: the ``TOP`` most likely tokens there with their
        log-probabilities, the one answered (the most likely) first."""
        tokens = self._tokens(messages)
        room = min(self._llm.n_ctx(), len(self._llm.input_ids))
        if len(tokens) + ANSWER_TOKENS > room:
            raise PromptTooLong(
                f"the prompt is {len(tokens)} tokens, over the judge's n_ctx of {room} with "
                "its answer"
            )
        with self._lock:
            self._feed(tokens)
            positions = []
            for _ in range(ANSWER_TOKENS):
                lp = self._logprobs()
                top = np.argpartition(-lp, TOP)[:TOP]
                top = top[np.argsort(-lp[top], kind="stable")]
                positions.append([(self._text(int(t)), float(lp[t])) for t in top])
                chosen = int(top[0])
                if until(positions[-1][0][0]) or chosen == self._eos:
                    break
                self._llm.eval([chosen])
            return positions

    def span_logprob(self, messages: list[dict[str, str]], span: str) -> float:
        """log P(``span`` | the prompt before it): the summed log-probabilities of its tokens
        where it last occurs in ``messages``' prompt. The prompt is evaluated up to the span's
        end, so a question asked after it next reuses all of that."""
        return sum(self.span_logprobs(messages, span))

    def span_logprobs(self, messages: list[dict[str, str]], span: str) -> list[float]:
        """``span_logprob``'s terms: log P(token | the tokens before it), one per token of
        the span."""
        result = self._format(messages=messages)  # type: ignore[arg-type]
        prompt, added = result.prompt, result.added_special
        at = prompt.rfind(span)
        if at < 0:
            raise ValueError(f"{span[:40]!r} is not in the prompt")

        def tokens(text: str) -> list[int]:
            return self._llm.tokenize(text.encode("utf-8"), add_bos=not added, special=True)

        before, through = tokens(prompt[:at]), tokens(prompt[: at + len(span)])
        first = next(
            (i for i, (a, b) in enumerate(zip(before, through, strict=False)) if a != b),
            len(before),
        )
        if len(through) + ANSWER_TOKENS > min(self._llm.n_ctx(), len(self._llm.input_ids)):
            raise PromptTooLong(f"the prompt is {len(through)} tokens, over the judge's n_ctx")
        with self._lock:
            return self._feed(through, score_from=max(first, 1))

    def close(self) -> None:
        self._llm.close()
