"""A judging job end to end: replies transcribed from real speech, every pair in both orders
through the real scheduling, caching and combining code, with an in-process judge client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from judging_fixtures import ITEMS, make_run

from voicebench.errors import InputError
from voicebench.judging import OwnFamily, judge_runs, own_family_of, read_replies, read_verdicts
from voicebench.llm import ChatText

pytestmark = pytest.mark.slow

ALPHA = {
    ITEMS[0]: "Losing that job after ten years would shake anyone. What scares you most "
    "about the next few weeks?",
    ITEMS[1]: "It sounds like the heaviness has been sitting on you for a long time. "
    "What does a hard morning look like for you?",
}
BETA = {ITEMS[0]: "Okay. You should update your resume.", ITEMS[1]: None}  # item 2: turn failed


class PreferringJudge:
    """Prefers the reply with more words from ``favourite``: a judge with a known taste."""

    def __init__(self, favourite: set[str]):
        self.favourite = favourite
        self.history: list[list[dict]] = []

    async def ask(self, messages):
        self.history.append(messages)
        user = messages[-1]["content"]
        a = user.split("Reply A (as heard):\n")[1].split("\n\nReply B")[0].lower()
        b = user.split("Reply B (as heard):\n")[1].split("\n\nWhich reply")[0].lower()
        score = lambda t: sum(w.strip(".,?!") in self.favourite for w in t.split())  # noqa: E731
        winner = "A" if (score(a), a) > (score(b), b) else "B"  # ties broken by text, not slot
        answer = {
            "winner": winner,
            "strength": 4,
            "dimensions": {"H": winner, "E": winner, "A": None, "R": None, "T": None},
            "rationale": "It is more specific.",
        }
        return ChatText(f"```json\n{json.dumps(answer)}\n```", 5.0)


def judge_spec(tmp_path: Path, family: str = "testjudge") -> Path:
    rubric = tmp_path / "rubric.md"
    rubric.write_text("Judge the replies.\n")
    spec = tmp_path / "judge.toml"
    spec.write_text(
        f'name = "t"\nrubric = "rubric.md"\n[[judges]]\nprovider = "openai-compatible"\n'
        f'model = "pref"\nfamily = "{family}"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    return spec


@pytest.fixture(scope="module")
def runs(tmp_path_factory, voice, dialogues):
    root = tmp_path_factory.mktemp("runs")
    return [
        make_run(root, "alpha", "fam-a", ALPHA, voice, dialogues),
        make_run(root, "beta", "fam-b", BETA, voice, dialogues),
    ]


async def test_judging_two_agents_and_the_human_reference_then_resuming(tmp_path, runs):
    judge = PreferringJudge({"scares", "heaviness", "morning", "ten", "years"})
    factory = lambda spec, stack: _ready(judge)  # noqa: E731
    out = tmp_path / "judged"
    result = await judge_runs(runs, judge_spec(tmp_path), out, client_factory=factory)

    replies = {(r.contestant, r.item_id): r for r in read_replies(out)}
    assert set(replies) == {(c, i) for c in ("alpha", "beta", "human/reference") for i in ITEMS}
    heard = replies[("alpha", ITEMS[0])]
    assert heard.heard_wer is not None and heard.heard_wer < 0.2, heard
    assert "scares" in heard.heard.lower()
    assert replies[("beta", ITEMS[1])].failed.startswith("turn failed: timeout")
    assert replies[("human/reference", ITEMS[0])].kind == "human"

    # Item 1: 3 contestants -> 3 pairs; item 2: beta failed -> 1 pair. Both orders each.
    assert len(result.verdicts) == 8 == len(judge.history)
    assert all(v.answer is not None for v in result.verdicts)
    by_pair = {(p.item_id, p.first, p.second): p for p in result.pairs}
    assert by_pair[(ITEMS[0], "alpha", "beta")].winner == "alpha"
    assert by_pair[(ITEMS[0], "alpha", "beta")].dimensions["E"] == "alpha"
    assert by_pair[(ITEMS[0], "alpha", "beta")].strength == 4.0
    assert by_pair[(ITEMS[1], "alpha", "human/reference")].winner == "alpha"
    (health,) = result.health
    assert health.flips == 0 and health.failed == 0

    # Judges see what was heard, never the LLM's text.
    shown = judge.history[0][-1]["content"]
    assert "Conversation so far:" in shown and "Seeker:" in shown

    # A second run asks nothing; a run killed mid-write resumes with only the rest.
    again = await judge_runs(runs, judge_spec(tmp_path), out, client_factory=factory)
    assert again.asked == 0 and len(judge.history) == 8 and again.pairs == result.pairs
    lines = (out / "verdicts.jsonl").read_text().splitlines(keepends=True)
    (out / "verdicts.jsonl").write_text("".join(lines[:5]) + lines[5][:40])
    resumed = await judge_runs(runs, judge_spec(tmp_path), out, client_factory=factory)
    assert resumed.asked == 3 and len(judge.history) == 11
    assert len(read_verdicts(out)) == 8 and resumed.pairs == result.pairs


async def test_a_folder_judged_again_with_another_spec_counts_only_that_spec(tmp_path, runs):
    """The earlier spec's verdicts stay in the folder (they are its cache) but rating,
    reports and ``Judging.verdicts`` read the judging as it last ran."""
    from voicebench.judging import current_verdicts
    from voicebench.rating.wins import item_wins

    out = tmp_path / "judged"
    likes_alpha = PreferringJudge({"scares", "heaviness", "morning", "ten", "years"})
    await judge_runs(
        runs, judge_spec(tmp_path), out, client_factory=lambda s, t: _ready(likes_alpha)
    )
    spec = judge_spec(tmp_path)
    spec.write_text(spec.read_text().replace('model = "pref"', 'model = "other"'))
    likes_beta = PreferringJudge({"okay", "update", "resume"})
    result = await judge_runs(runs, spec, out, client_factory=lambda s, t: _ready(likes_beta))
    assert len(read_verdicts(out)) == 16  # both specs' verdicts are kept
    current = current_verdicts(out)
    assert {v.key for v in current} == {v.key for v in result.verdicts} and len(current) == 8
    assert {v.judge for v in current} == {"openai-compatible/other"}
    (alpha_beta,) = [p for p in item_wins(out).pairs if {p.first, p.second} == {"alpha", "beta"}]
    assert alpha_beta.winner == "beta"


async def test_a_judge_never_rates_its_own_family(tmp_path, runs):
    judge = PreferringJudge(set())
    result = await judge_runs(
        runs,
        judge_spec(tmp_path, family="fam-a"),
        tmp_path / "j",
        client_factory=lambda s, st: _ready(judge),
    )
    assert {(p.first, p.second) for p in result.pairs} == {("beta", "human/reference")}
    assert result.skipped_pairs == 3  # alpha-beta, alpha-human on item 1; alpha-human on item 2
    assert result.own_family == () and own_family_of(tmp_path / "j") == ()
    # exempt from the rule, it rates alpha too, and the result and the folder say so
    spec = judge_spec(tmp_path, family="fam-a")
    spec.write_text(spec.read_text() + "rates_own_family = true\n")
    exempt = await judge_runs(
        runs, spec, tmp_path / "k", client_factory=lambda s, st: _ready(judge)
    )
    assert exempt.skipped_pairs == 0 and len(exempt.pairs) == 4
    own = (OwnFamily(judge="openai-compatible/pref", family="fam-a", contestant="alpha"),)
    assert exempt.own_family == own and own_family_of(tmp_path / "k") == own


async def test_extra_human_replies_join_and_bad_ones_name_line_and_field(tmp_path, runs):
    extra = tmp_path / "humans.jsonl"
    extra.write_text(
        json.dumps(
            {
                "item_id": ITEMS[0],
                "name": "sam",
                "reply": "That is a lot to carry. What would help tonight?",
            }
        )
        + "\n"
    )
    judge = PreferringJudge(set())
    result = await judge_runs(
        runs,
        judge_spec(tmp_path),
        tmp_path / "j",
        human_files=[extra],
        client_factory=lambda s, st: _ready(judge),
    )
    assert ("human/sam", ITEMS[0]) in {(r.contestant, r.item_id) for r in result.replies}
    assert len(result.pairs) == 6 + 1  # 4 contestants on item 1, 2 on item 2

    bad = tmp_path / "bad.jsonl"
    bad.write_text(extra.read_text() + json.dumps({"item_id": "nope", "name": "x", "reply": "hi"}))
    with pytest.raises(InputError, match=r"bad.jsonl: line 2: item_id: no judged item"):
        await judge_runs(
            runs,
            judge_spec(tmp_path),
            tmp_path / "k",
            human_files=[bad],
            client_factory=lambda s, st: _ready(judge),
        )


class CountingJudge(PreferringJudge):
    """Also counts its requests in flight."""

    def __init__(self, favourite: set[str]):
        super().__init__(favourite)
        self.now = self.most = 0

    async def ask(self, messages):
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.01)
            return await super().ask(messages)
        finally:
            self.now -= 1


async def test_one_contestant_over_several_runs_with_a_bound_per_provider(
    tmp_path, voice, dialogues, runs
):
    # alpha answered its two items in two runs (a campaign's dialogue sets); one item twice is
    # refused.
    first, second = tmp_path / "one", tmp_path / "two"
    split = [
        make_run(first, "alpha", "fam-a", ALPHA, voice, dialogues[:1]),
        make_run(second, "alpha", "fam-a", ALPHA, voice, dialogues[1:]),
        runs[1],
    ]
    judge = CountingJudge({"scares", "heaviness", "morning", "ten", "years"})
    result = await judge_runs(
        split,
        judge_spec(tmp_path),
        tmp_path / "j",
        concurrency=8,
        client_factory=lambda s, st: _ready(judge),
        limits={"openai-compatible": asyncio.Semaphore(1)},
    )
    assert {(r.contestant, r.item_id) for r in result.replies} >= {("alpha", i) for i in ITEMS}
    assert len(result.verdicts) == 8 and judge.most == 1
    twice = [*split, make_run(tmp_path / "three", "alpha", "fam-a", ALPHA, voice, dialogues)]
    with pytest.raises(InputError, match=r"'alpha' answers 'reg-job-crisis-01' here and in"):
        await judge_runs(twice, judge_spec(tmp_path), tmp_path / "k")


async def _ready(client):
    return client


async def test_a_judge_loaded_in_process_answers_one_comparison_at_a_time(tmp_path, runs):
    """Its model reuses the last prompt's evaluated prefix: comparisons interleaved by
    concurrent requests would each be evaluated from the start."""
    (tmp_path / "rubric.md").write_text("Judge the replies.\n")
    local = tmp_path / "local.toml"
    local.write_text(
        'name = "l"\nrubric = "rubric.md"\n[[judges]]\nprovider = "local"\n'
        'model = "smollm2-135m"\nfamily = "testjudge"\nmethod = "checklist"\n'
        "weights = { attuned = 1.0 }\n"
    )
    words = {"scares", "heaviness", "morning", "ten", "years"}
    served, loaded = CountingJudge(words), CountingJudge(words)
    await judge_runs(
        runs,
        judge_spec(tmp_path),
        tmp_path / "served",
        concurrency=8,
        client_factory=lambda s, st: _ready(served),
    )
    await judge_runs(
        runs, local, tmp_path / "loaded", concurrency=8, client_factory=lambda s, st: _ready(loaded)
    )
    assert served.most > 1 and loaded.most == 1
