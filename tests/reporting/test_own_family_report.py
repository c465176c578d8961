"""A judge that rated an agent of its own family: the report marks that agent's row and sets
the judge's card on that family's replies beside it, in the page, the Markdown and
report.json."""

from __future__ import annotations

import json
from pathlib import Path

from synthetic_runs import judge_card

from voicebench.judging import OwnFamily
from voicebench.judging.cards import CARD_FILE
from voicebench.judging.families import FamilyTally
from voicebench.reporting import build_report

LINE = (
    "\u2020 j/1 (qwen) rated fast, its own family: on the 20 pairs with a qwen reply (holdout) "
    "it is right on 55% (95% CI 34%-74%), 'the longer reply' on 65% of them; against 90% on "
    "all 40 pairs"
)


def _own_family(judged: Path) -> None:
    """``fast`` written by a qwen model and the judge a qwen model; the judge's card measured
    on qwen replies."""
    families = {"fast": "qwen", "slow": "smollm", "human/reference": "human"}
    replies = []
    for line in (judged / "replies.jsonl").read_text().splitlines():
        reply = json.loads(line)
        replies.append(json.dumps({**reply, "family": families[reply["contestant"]]}))
    (judged / "replies.jsonl").write_text("\n".join(replies) + "\n")
    header = json.loads((judged / "judging.json").read_text())
    (judged / "judging.json").write_text(json.dumps({**header, "judge_families": {"j/1": "qwen"}}))
    on_qwen = {"qwen": FamilyTally(pairs=20, correct=11, rules={"longer": 13, "asks": 9})}
    card = judge_card(by_family=on_qwen)
    (judged / CARD_FILE).write_text(card.model_dump_json())


def test_the_report_sets_the_judge_s_card_on_its_family_beside_that_agent(
    judged: Path, tmp_path: Path
):
    _own_family(judged)
    built = build_report([judged], tmp_path / "report")
    j = built.report.judging
    assert j is not None and j.own_family == (
        OwnFamily(judge="j/1", family="qwen", contestant="fast"),
    )
    data = json.loads((built.out_dir / "report.json").read_text())
    assert data["judging"]["own_family"] == [
        {"judge": "j/1", "family": "qwen", "contestant": "fast"}
    ]
    assert data["judging"]["card"]["by_family"]["qwen"] == {
        "pairs": 20,
        "correct": 11,
        "rules": {"longer": 13, "asks": 9},
    }
    page = (built.out_dir / "index.html").read_text()
    assert "<td>fast \u2020</td>" in page and "<td>slow</td>" in page  # the ranking's rows
    # the line: on the agent's card at the top, under the ranking, and in the judging health
    assert page.count(LINE.replace("'", "&#39;")) == 3, page
    assert "may favour" not in page
    md = (built.out_dir / "report.md").read_text()
    assert "| fast \u2020 |" in md and md.count(LINE) == 3
