"""Support-strategy labelling through a real OpenAI client against the scripted server,
cached and resumed; diversity statistics against hand-worked figures; the report's heatmap;
scoring against the labelled replies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from synthetic_runs import make_judging, make_run, verdict
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.dialogues import BUILTIN_DIALOGUES, load_dialogues
from voicebench.judging import Reply
from voicebench.judging.spec import JudgeModelSpec
from voicebench.reporting import build_report
from voicebench.strategies import (
    LABELS,
    ReplyStrategies,
    diversity,
    label_judging,
    parse_labels,
    read_labels,
)
from voicebench.strategies.validation import (
    GOLD_SET,
    GoldReply,
    classify_gold,
    load_gold,
    score,
)
from voicebench.testing import ScriptedLLMServer


def answer(present: set[str], uncertain: set[str] = frozenset()) -> str:
    return json.dumps(
        {
            "strategies": {
                k: {
                    "mark": "present"
                    if k in present
                    else "uncertain"
                    if k in uncertain
                    else "absent",
                    "evidence": "the words" if k in present else "",
                }
                for k in LABELS
            }
        }
    )


def labelled(contestant: str, present: set[str], adversarial: bool = False) -> ReplyStrategies:
    return ReplyStrategies(
        key=f"{contestant}{sorted(present)}{adversarial}",
        item_id="i",
        contestant=contestant,
        adversarial=adversarial,
        classifier="c/1",
        marks={k: "present" if k in present else "absent" for k in LABELS},
    )


def test_diversity_matches_the_hand_worked_figures():
    labels = [
        labelled("x", {"affirmation", "clarification"}),
        labelled("x", {"affirmation"}),
        labelled("x", {"offer_hope"}, adversarial=True),
        labelled("y", set()),
    ]
    d = diversity(labels, "x")
    assert d.replies == 3 and d.coverage == 3 and d.per_reply == pytest.approx(4 / 3, abs=1e-3)
    assert d.usage_pct["affirmation"] == pytest.approx(200 / 3, abs=0.01)
    p = np.array([2, 1, 1]) / 4
    assert d.entropy_bits == pytest.approx(float(-(p * np.log2(p)).sum()), abs=1e-4)
    assert d.entropy_norm == pytest.approx(1.5 / math.log2(15), abs=1e-4)
    rates = np.array([200 / 3, 100 / 3, 100 / 3] + [0] * 12)
    assert d.usage_sd_pts == pytest.approx(rates.std(), abs=0.01)
    assert d.usage_range_pts == pytest.approx(200 / 3, abs=0.01)
    regular, adversarial = diversity(labels, "x", "regular"), diversity(labels, "x", "adversarial")
    assert (regular.replies, adversarial.replies) == (2, 1)
    assert adversarial.usage_pct["offer_hope"] == 100.0 and adversarial.entropy_bits == 0.0
    y = diversity(labels, "y")
    assert y.coverage == 0 and y.entropy_bits == 0.0 and y.usage_sd_pts == 0.0


def test_answers_must_mark_every_strategy():
    assert (
        parse_labels("```json\n" + answer({"normalize"}) + "\n```")["normalize"].mark == "present"
    )
    broken = json.loads(answer(set()))
    del broken["strategies"]["chit_chat"]
    for raw, why in (
        (json.dumps(broken), "chit_chat"),
        ("no", "no JSON object"),
        (answer(set()).replace('"absent"', '"maybe"', 1), "mark"),
        ("", "empty"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_labels(raw)


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    dialogues = load_dialogues(BUILTIN_DIALOGUES)
    items = [d for d in dialogues if not d.adversarial][:2] + [
        d for d in dialogues if d.adversarial
    ][:1]
    runs = [make_run(tmp_path, name, items, 900) for name in ("warm", "terse")]
    verdicts = [
        v
        for d in items
        for v in (verdict(d.id, "warm", "terse", "A"), verdict(d.id, "terse", "warm", "B"))
    ]
    folder = make_judging(tmp_path / "judged", runs, items, ("warm", "terse"), verdicts)
    replies = [
        Reply(item_id=d.id, contestant=c, kind="agent", family=f"fam-{c}", heard=heard, text=heard)
        for d in items
        for c, heard in (
            ("warm", f"That sounds so hard. What happened with {d.problem_type}?"),
            ("terse", "You should try harder."),
        )
    ]
    (folder / "replies.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in replies))
    return folder


def _judge_spec(tmp_path: Path, base_url: str) -> Path:
    (tmp_path / "rubric.md").write_text("Judge.\n")
    spec = tmp_path / "classifier.toml"
    spec.write_text(
        f'name = "c"\nrubric = "rubric.md"\n[[judges]]\nprovider = "openai-compatible"'
        f'\nmodel = "scripted-llm"\nfamily = "scripted"\nbase_url = "{base_url}"\n'
        f"parse_retries = 1\n"
    )
    return spec


async def test_replies_are_labelled_cached_resumed_and_reported(tmp_path: Path, judged: Path):
    warm = {"emotional_validation", "clarification"}
    with ScriptedLLMServer(ttft_ms=1, token_delay_ms=0) as llm:
        # Concurrency 1 keeps the order: warm, terse per item; the last reply fails twice.
        script = [answer(warm), answer({"suggest_options"}, {"reframe"})] * 2
        script += [answer(warm), "I would say suggest options.", "still no JSON"]
        for content in script:
            llm.enqueue(content)
        spec = _judge_spec(tmp_path, llm.base_url)
        result = await label_judging(judged, spec, concurrency=1)
        assert result.asked == 6 and len(llm.history()) == 7
        failed = [r for r in result.labels if r.marks is None]
        assert len(failed) == 1 and failed[0].failure.startswith("unparseable")
        assert failed[0].raw == "still no JSON" and failed[0].attempts == 2
        ok = {(r.item_id, r.contestant): r for r in result.labels if r.marks is not None}
        assert all(r.present() == warm for (_, c), r in ok.items() if c == "warm")
        assert all(r.evidence == {k: "the words" for k in r.present()} for r in ok.values())
        prompt = llm.history()[0]["messages"][1]["content"]
        assert "That sounds so hard" in prompt and "Seeker:" in prompt

        llm.enqueue(answer({"suggest_options"}))  # only the failed one is asked again
        again = await label_judging(judged, spec, concurrency=1)
        assert again.asked == 1 and len(llm.history()) == 8
        assert all(r.marks is not None for r in again.labels) and len(again.labels) == 6
    lines = (judged / "strategies.jsonl").read_text().splitlines()
    assert len(lines) == 7 and len(read_labels(judged)) == 6

    built = build_report([judged], tmp_path / "report")
    s = built.report.strategies
    assert s.classifier == "openai-compatible/scripted-llm" and s.labelled == 6 and s.failed == 0
    rows = {(r.contestant, r.subset): r for r in s.rows}
    assert rows[("warm", "all")].usage_pct["clarification"] == 100.0
    assert rows[("terse", "all")].coverage == 1 and rows[("warm", "adversarial")].replies == 1
    assert "strategy_heatmap" in built.report.figures
    assert (built.out_dir / "figures" / "strategy_heatmap.png").read_bytes()[:4] == b"\x89PNG"
    page = (built.out_dir / "index.html").read_text()
    assert 'id="strategies"' in page and "Support strategy diversity" in page
    assert "Emotional validation 100%" in (built.out_dir / "report.md").read_text()


def test_strategies_command_prints_the_diversity_table(tmp_path: Path, judged: Path):
    with ScriptedLLMServer(
        ttft_ms=1, token_delay_ms=0, reply=answer({"offer_hope", "normalize"})
    ) as llm:
        result = CliRunner().invoke(
            app, ["strategies", str(judged), "--judge", str(_judge_spec(tmp_path, llm.base_url))]
        )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "support strategy diversity" in said and "offer_hope 100%" in said, result.output
    assert "2/15" in said
    missing = CliRunner().invoke(app, ["strategies", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "judging.json" in missing.output


def test_the_labelled_set_covers_every_strategy():
    gold = load_gold()
    assert len(gold) >= 60
    for k in LABELS:
        assert sum(k in g.present for g in gold) >= 4, k
    assert GOLD_SET.name == "strategy-gold.jsonl"


def test_scores_are_per_strategy_f1_and_their_mean():
    gold = [
        GoldReply(id="a", seeker="s", reply="r", present=("affirmation", "clarification")),
        GoldReply(id="b", seeker="s", reply="r", present=("clarification",)),
    ]
    perfect = score(gold, {"a": {"affirmation", "clarification"}, "b": {"clarification"}}, "c")
    assert {s.label: s.f1 for s in perfect.labels}["clarification"] == 1.0
    # affirmation: tp 1; clarification: tp 1, fn 1; offer_hope: fp 1; the other 12: no
    # positives and none predicted, F1 0 (a strategy never present counts as a miss).
    s = score(gold, {"a": {"affirmation", "clarification", "offer_hope"}}, "c")
    f1 = {x.label: x.f1 for x in s.labels}
    assert f1["affirmation"] == 1.0 and f1["clarification"] == pytest.approx(2 / 3)
    assert f1["offer_hope"] == 0.0
    assert s.macro_f1 == pytest.approx((1 + 2 / 3) / 15)


async def test_a_classifier_that_agrees_with_the_labels_scores_one(tmp_path: Path):
    gold = load_gold()
    with ScriptedLLMServer(ttft_ms=1, token_delay_ms=0) as llm:
        for g in gold:
            llm.enqueue(answer(set(g.present)))
        judge = JudgeModelSpec(
            provider="openai-compatible", model="scripted-llm", family="s", base_url=llm.base_url
        )
        from voicebench.llm import OpenAIChat

        client = OpenAIChat(judge, base_url=llm.base_url, key=None, response_format=None)
        try:
            result = await classify_gold(
                gold, judge, client, tmp_path / "cache.jsonl", concurrency=1
            )
            assert result.macro_f1 == 1.0 and result.failed == 0
            again = await classify_gold(gold, judge, client, tmp_path / "cache.jsonl")
        finally:
            await client.aclose()
        assert again.macro_f1 == 1.0 and len(llm.history()) == len(gold)  # all from the cache
