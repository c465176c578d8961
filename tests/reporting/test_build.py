"""Building a report folder: every part present, text escaped, secrets kept out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from report_fixtures import HOSTILE, SECRET
from typer.testing import CliRunner

from voicebench.cli import app
from voicebench.errors import InputError
from voicebench.judging.models import Verdict
from voicebench.reporting import build_report, resolve_inputs

FIGURES = (
    "latency_ecdf",
    "waterfall",
    "frontier_ttft",
    "frontier_ttfa",
    "radar",
    "human_agreement",
)


def test_report_from_a_judging_folder_has_every_part(judged: Path, tmp_path: Path):
    item = json.loads((judged / "verdicts.jsonl").read_text().splitlines()[0])["item_id"]
    with (judged / "verdicts.jsonl").open("a") as fh:  # one verdict the judge never gave
        fh.write(
            Verdict(
                key="gave-up",
                item_id=item,
                judge="j/1",
                rubric_sha256="h",
                contestant_a="fast",
                contestant_b="slow",
                attempts=4,
                failure="server_error: HTTP 500 (scripted)",
            ).model_dump_json()
            + "\n"
        )
    built = build_report([judged], tmp_path / "report")
    out = built.out_dir
    for name in ("index.html", "report.md", "report.json"):
        assert (out / name).stat().st_size > 0
    for fig in FIGURES:
        assert (out / "figures" / f"{fig}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in (out / "figures" / f"{fig}.svg").read_bytes()[:500]
    data = json.loads((out / "report.json").read_text())
    assert data["schema_version"] == 1 and list(data["figures"]) == list(FIGURES)
    agents = {a["agent_name"]: a for a in data["agents"]}
    assert set(agents) == {"fast", "slow"}  # the judging folder brought its runs
    fast = agents["fast"]
    assert fast["failed"] == 1 and fast["failures"][0]["kind"] == "pipeline_error"
    assert fast["failed_by_kind"] == {"pipeline_error": 1}
    assert fast["cold_turns"] == 1 and fast["ttfa_cold"]["quantiles"][0]["value_ms"] == 1400.0
    assert [q["q"] for q in fast["ttfa"]["quantiles"]] == [50, 90, 95, 99]
    assert agents["slow"]["ttft"]["within_budget"] == 0.0
    assert fast["ttfa_censored"]["n"] == fast["turns"] and agents["slow"]["ttfa_censored"] is None
    judging = data["judging"]
    assert judging["judges"] == ["j/1"] and judging["smoke"] is False
    assert judging["failed_verdicts"] == 1 and judging["failed_by_kind"] == {"server_error": 1}
    ratings = {r["contestant"]: r for r in judging["ratings"]["ratings"]}
    assert ratings["human/reference"]["win_rate"] == 1.0
    assert ratings["slow"]["win_rate"] > ratings["fast"]["win_rate"]
    assert judging["health"][0]["flip_rate"] == 0.0
    page = (out / "index.html").read_text()
    for part in (
        "Turns within budget",
        "TTFT and TTFA distributions",
        "Stage waterfall",
        "Slowest turns: fast",
        "Failed turns: fast",
        "HEART ranking, indicative only",  # its judge unmeasured
        "Judges",
        'id="fig-frontier_ttft"',
        'id="fig-radar"',
        "data:image/svg+xml;base64,",
    ):
        assert part in page, part
    assert "http://" not in page.replace('xmlns="http://www.w3.org', "")  # nothing to fetch
    md = (out / "report.md").read_text()
    assert "| fast |" in md and "![" in md and "figures/frontier_ttft.svg" in md
    assert "1 failed (server\\_error 1)" in md and "1 failed (server_error 1)" in page
    assert "| 1 (pipeline\\_error 1) |" in md


def test_text_from_runs_is_escaped_in_page_and_markdown(judged: Path, tmp_path: Path):
    out = build_report([judged], tmp_path / "report").out_dir
    page = (out / "index.html").read_text()
    assert page.count("<script>") == 1  # only the page's own sorting script
    assert "<img src=x" not in page and "&lt;script&gt;window.__pwned" in page
    md = (out / "report.md").read_text()
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "\\| \\*bold\\*" in md  # a cell cannot end early or turn bold


def test_no_secret_reaches_any_report_file(judged: Path, tmp_path: Path):
    out = build_report([judged], tmp_path / "report").out_dir
    # The key was in a turn's error reason (as a provider might echo it) and in the environment.
    assert SECRET in (judged.parent / "fast" / "turns.jsonl").read_text()
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert "401 Incorrect API key provided: ***" in (out / "index.html").read_text()


def test_an_unmeasured_judge_gets_a_banner_and_undecided_judging_still_reports(
    judged: Path, tmp_path: Path
):
    header = json.loads((judged / "judging.json").read_text())
    (judged / "judging.json").write_text(json.dumps({**header, "smoke": True}))
    verdicts = (judged / "verdicts.jsonl").read_text().splitlines()
    # Flip every pair: the second order now names the other side.
    flipped = []
    for k, line in enumerate(verdicts):
        v = json.loads(line)
        if k % 2:
            v["answer"]["winner"] = "A" if v["answer"]["winner"] == "B" else "B"
        flipped.append(json.dumps(v))
    (judged / "verdicts.jsonl").write_text("\n".join(flipped) + "\n")
    built = build_report([judged], tmp_path / "report")
    j = built.report.judging
    assert j.smoke and j.ratings is None and "no decided pairs" in j.no_ratings
    assert j.health[0].flip_rate == 1.0
    assert built.report.figures == ("latency_ecdf", "waterfall")
    page = (built.out_dir / "index.html").read_text()
    assert j.card is None and "unmeasured judge" in j.trust_warning
    assert 'id="trust-banner"' in page and "unmeasured judge" in page
    assert "No ratings: no decided pairs" in page
    assert "unmeasured judge" in (built.out_dir / "report.md").read_text()


def test_runs_alone_give_a_latency_report(judged: Path, tmp_path: Path):
    runs = [judged.parent / "fast", judged.parent / "slow"]
    built = build_report(runs, tmp_path / "report")
    assert built.report.judging is None and built.report.figures == ("latency_ecdf", "waterfall")
    assert "No judging folder" in (built.out_dir / "index.html").read_text()


def test_a_run_with_its_own_judging_folder_is_judged(judged: Path, tmp_path: Path):
    run = judged.parent / "fast"
    shutil.copytree(judged, run / "judging")
    inputs = resolve_inputs([run])
    assert inputs.judging == run / "judging" and {p.name for p in inputs.runs} == {"fast", "slow"}
    assert inputs.call_judging is None


def test_bad_inputs_name_the_path(judged: Path, tmp_path: Path):
    with pytest.raises(InputError, match="neither a run directory") as exc:
        resolve_inputs([tmp_path / "nowhere"])
    assert str(tmp_path / "nowhere") in str(exc.value)
    other = tmp_path / "other"
    shutil.copytree(judged, other)
    with pytest.raises(InputError, match="2 judging folders of final replies"):
        resolve_inputs([judged, other])
    (judged / "judging.json").write_text("{not json")
    with pytest.raises(InputError, match=r"judging\.json: (line \d+: )?not valid JSON"):
        resolve_inputs([judged])


def test_report_command(judged: Path, tmp_path: Path):
    out = tmp_path / "r"
    result = CliRunner().invoke(
        app,
        ["report", str(judged), "--out", str(out), "--budget-ttfa-ms", "900", "--title", HOSTILE],
    )
    assert result.exit_code == 0, result.output
    assert f"report: {out}/index.html" in result.output
    data = json.loads((out / "report.json").read_text())
    assert data["budget_ttfa_ms"] == 900.0 and data["title"] == HOSTILE
    bad = CliRunner().invoke(app, ["report", str(tmp_path / "missing")])
    assert bad.exit_code == 2 and "neither a run directory" in bad.output


def test_report_reads_the_ratings_rate_wrote_and_refits_when_the_verdicts_changed(
    judged: Path, tmp_path: Path
):
    from voicebench.rating import rate_judging

    written = rate_judging(judged)
    stored = json.loads((judged / "ratings.json").read_text())
    assert stored["inputs_sha256"] == written.inputs_sha256
    # A mark no fit would make: seen in the report only if the stored table was read.
    (judged / "ratings.json").write_text(json.dumps({**stored, "created_at": "as rate wrote it"}))
    reused = build_report([judged], tmp_path / "same").report.judging.ratings
    assert reused.created_at == "as rate wrote it" and reused.ratings == written.ratings
    other_budget = build_report([judged], tmp_path / "budget", budget_ttfa_ms=900.0)
    assert other_budget.report.judging.ratings.created_at != "as rate wrote it"
    item = json.loads((judged / "verdicts.jsonl").read_text().splitlines()[0])["item_id"]
    with (judged / "verdicts.jsonl").open("a") as fh:
        fh.write(
            Verdict(
                key="late",
                item_id=item,
                judge="j/1",
                rubric_sha256="h",
                contestant_a="fast",
                contestant_b="slow",
                attempts=5,
                failure="timeout: the request timed out",
            ).model_dump_json()
            + "\n"
        )
    refit = build_report([judged], tmp_path / "changed").report.judging.ratings
    assert refit.created_at != "as rate wrote it" and refit.inputs_sha256 != written.inputs_sha256


def test_a_measured_judge_has_its_card_beside_the_leaderboard(judged: Path, tmp_path: Path):
    from synthetic_runs import judge_card

    from voicebench.judging.cards import CARD_FILE

    card = judge_card(created_at="2026-11-24T00:00:00+00:00")
    (judged / CARD_FILE).write_text(card.model_dump_json())
    built = build_report([judged], tmp_path / "report")
    j = built.report.judging
    assert j.card == card and j.trust_warning is None
    page = (built.out_dir / "index.html").read_text()
    assert "judge measured: 90% right on 40 gold pairs (holdout; 95% CI 77%-96%)" in page
    assert page.count("judge measured: 90% right") == 2  # judging health and the leaderboard
    assert 'id="trust-banner"' not in page
    # A judge that may rank: its leaderboard, and each agent's Elo at the top of the page.
    assert "<h2>Quality and latency</h2>" in page and "<h3>HEART leaderboard</h3>" in page
    assert section(page, "summary").count("HEART Elo") == 2


def section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start : page.index("</section>", start)]


def test_an_untrusted_judge_s_ranking_is_kept_after_the_latency_as_indicative_only(
    judged: Path, tmp_path: Path
):
    from synthetic_runs import judge_card

    from voicebench.judging.cards import CARD_FILE

    card = judge_card(accuracy=0.7, correct=28, accuracy_low=0.55, accuracy_high=0.82)
    assert not card.trusted
    (judged / CARD_FILE).write_text(card.model_dump_json())
    built = build_report([judged], tmp_path / "report")
    warning = built.report.judging.trust_warning
    page = (built.out_dir / "index.html").read_text()
    # Nothing ranks the agents at the top of the page: the banner, and no Elo on their cards.
    assert page.index('id="trust-banner"') < page.index('<section id="summary">')
    assert "Elo" not in section(page, "summary")
    assert "HEART leaderboard" not in page
    # The ranking is kept, after the latency sections, under the banner, as indicative only.
    quality = section(page, "quality")
    assert page.index('<section id="latency">') < page.index('<section id="quality">')
    assert quality.startswith(
        f'<section id="quality"><h2>Quality and latency, indicative only</h2>'
        f'<p class="banner">{warning}.</p>'
    )
    title = "<h3>HEART ranking, indicative only: its judge is not trusted to rank</h3>"
    assert quality.index('id="fig-frontier_ttft"') < quality.index(title)
    md = (built.out_dir / "report.md").read_text()
    assert "## Quality and latency, indicative only" in md
    assert "### HEART ranking, indicative only: its judge is not trusted to rank" in md
