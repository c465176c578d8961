"""Judging commands: ``judge``, ``rate`` and ``strategies``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api import TTFA_BUDGET_MS, TTFT_BUDGET_MS
from voicebench.api.views import (
    DEFAULT_SPLIT,
    SMOKE_WARNING,
    JudgeCard,
    ReplyStrategies,
    card_line,
    trust_warning,
)
from voicebench.cli.common import (
    DEFAULT_GOLD,
    DEFAULT_JUDGE,
    ConcurrencyOpt,
    JudgeOpt,
    Steps,
    TTFABudgetOpt,
    TTFTBudgetOpt,
    VerboseOpt,
    commands,
    judge_spec,
    notable,
    on_interrupt,
    out,
    plain,
    quiet_libraries,
    say,
    shipped_default,
    show,
)
from voicebench.cli.present.judging import card_notes, card_tables, show_judging, verdict_line
from voicebench.cli.present.load import show_load_quality
from voicebench.cli.present.rating import show_rating
from voicebench.cli.present.strategies import diversity_table, most_used

app = commands()


@app.command()
def judge(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories whose final turns to judge, converse folders whose whole "
            "calls to judge, or one load folder whose replies to judge by concurrency."
        ),
    ],
    judge_spec: JudgeOpt = DEFAULT_JUDGE,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Judging folder (default reports/judgments/SPEC-HASH of the runs); "
            "an existing one is resumed.",
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 4,
    human_replies: Annotated[
        list[Path] | None,
        typer.Option("--human-replies", help="JSONL of extra human replies (repeatable)."),
    ] = None,
    pairs_per_item: Annotated[
        int | None,
        typer.Option(
            min=1, help="Judge at most this many pairs per item, drawn with --seed (default all)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for --pairs-per-item.")] = 0,
    against: Annotated[
        Path | None,
        typer.Option(
            help="With a load folder: a run of the same items to judge its bands against "
            "(default: its lowest band)."
        ),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Pairwise HEART judging of what the listener heard: every contestant's final-turn reply
    (and the human reference) on each item, both orders, verdicts cached and resumable. Given
    converse folders, each agent's whole call with the same caller instead, as the caller
    heard it. Given a load folder (voicebench load), each call's final reply, by band of
    calls in progress, against the lowest band or --against (default out: LOAD_DIR/judging);
    voicebench report LOAD_DIR then draws quality by concurrency."""
    quiet_libraries(verbose)
    target = out_dir or api.judging_folder(run_dirs, judge_spec)
    on_interrupt(f"decided verdicts are kept in {target}: run the same command again to resume")
    say(card_line(api.judge_card(judge_spec), str(judge_spec)))
    with Steps("verdicts") as s:
        judging = api.judge(
            run_dirs,
            judge=judge_spec,
            out=target,
            on_status=s.status,
            progress=lambda v, n, t: s.advance(n, t, verdict_line(v, n, t)),
            concurrency=concurrency,
            human_replies=human_replies or [],
            pairs_per_item=pairs_per_item,
            seed=seed,
            against=against,
        )
    assert judging.result is not None  # the call that judged says what it found
    show_judging(judging.result)
    if len(run_dirs) == 1 and api.is_load(run_dirs[0]):
        show_load_quality(api.load_quality(judging))
        show(f"the load's report with quality by band: voicebench report {run_dirs[0]}")


@app.command()
def rate(
    judging_dirs: Annotated[
        list[Path], typer.Argument(help="Judging folders (from voicebench judge).")
    ],
    rounds: Annotated[int, typer.Option(min=0, help="Bootstrap rounds (0: skip).")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    budget_ttfa_ms: TTFABudgetOpt = TTFA_BUDGET_MS,
    budget_ttft_ms: TTFTBudgetOpt = TTFT_BUDGET_MS,
    human_judgments: Annotated[
        Path | None,
        typer.Option(
            help="More human judgments (CSV or JSONL, 5-point scale) besides the judging "
            "folder's human/ files (from voicebench annotate)."
        ),
    ] = None,
) -> None:
    """Fit strength-weighted Bradley-Terry ratings (Elo with bootstrap and asymptotic 95% CIs),
    win rates per dimension, latency goodput and latency-adjusted Elo; write ratings.json and
    print the leaderboard."""
    for d in judging_dirs:
        show_rating(
            api.rate(
                d,
                rounds=rounds,
                seed=seed,
                budget_ttfa_ms=budget_ttfa_ms,
                budget_ttft_ms=budget_ttft_ms,
                human_judgments=human_judgments,
            )
        )


def _label_line(r: ReplyStrategies, n: int, total: int) -> str | None:
    if notable(n, total, r.marks is None):
        what = (
            f"[red]failed: {plain(r.failure or '')}[/]"
            if r.marks is None
            else ", ".join(sorted(r.present())) or "none present"
        )
        return f"[{n}/{total}] {r.item_id} {r.contestant}: {what}"
    return None


@app.command()
def strategies(
    judging_dir: Annotated[Path, typer.Argument(help="Judging folder (from voicebench judge).")],
    judge_spec: Annotated[
        Path,
        typer.Option(
            "--judge",
            "-j",
            envvar="VOICEBENCH_JUDGE",
            parser=judge_spec,
            help="Judge spec (a file or a shipped name) whose first judge labels the replies.",
            show_default=shipped_default(DEFAULT_JUDGE),
        ),
    ] = DEFAULT_JUDGE,
    concurrency: ConcurrencyOpt = 4,
    verbose: VerboseOpt = False,
) -> None:
    """Label every judged reply with the 15 HEART support strategies (present, absent or
    uncertain, with evidence; cached in JUDGING_DIR/strategies.jsonl) and print each
    contestant's strategy diversity. `voicebench report` adds a heatmap and the table."""
    quiet_libraries(verbose)
    labels = api.strategies_file(judging_dir)
    on_interrupt(f"finished labels are kept in {labels}: run the same command again to resume")
    with Steps("replies") as s:
        summary = api.label_strategies(
            judging_dir,
            judge=judge_spec,
            concurrency=concurrency,
            on_status=s.status,
            progress=lambda r, n, t: s.advance(n, t, _label_line(r, n, t)),
        )
    if summary.smoke:
        say(f"{SMOKE_WARNING}: these labels are not meaningful", style="yellow")
    out.print(diversity_table(summary))
    for line in most_used(summary):
        show(line)
    show(f"labels: {labels}")


def show_card(card: JudgeCard, path: Path | None = None) -> None:
    for table in card_tables(card):
        out.print(table)
    for note in card_notes(card):
        show(note, style="yellow")
    warning = trust_warning(card)
    if warning:
        show(warning, style="yellow")
    if path is not None:
        show(f"judge card: {path}")


@app.command("judge-check")
def judge_check(
    judge_spec: JudgeOpt = DEFAULT_JUDGE,
    gold: Annotated[
        Path,
        typer.Option(
            "--gold",
            "-g",
            help="Gold pairs: a JSONL file, or a shipped set by name: 'real' (replies agents "
            "and people really gave) or 'written' (pairs written to carry a defect).",
            show_default=shipped_default(DEFAULT_GOLD),
        ),
    ] = DEFAULT_GOLD,
    split: Annotated[
        str,
        typer.Option(
            help="Which gold pairs: holdout (never tuned on, as leaderboards quote), dev (for "
            "tuning a judge) or all; a figure that counts dev pairs says so."
        ),
    ] = DEFAULT_SPLIT,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Folder for the verdicts (default reports/judge-check/SPEC-HASHES); "
            "an existing one is resumed.",
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 1,
    refresh: Annotated[
        bool, typer.Option(help="Measure again even when a card for these hashes exists.")
    ] = False,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="A second judge spec, measured on the same pairs (its card reused when there "
            "is one): the two compared pair by pair, with McNemar's exact test and the "
            "difference in accuracy with its 95% interval.",
        ),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Measure a judge on a gold set (its held-out pairs unless --split says otherwise; a
    figure that counts dev pairs is marked so): every pair in both orders through the judging
    code, then its card (accuracy with a Wilson 95% interval, decided and flip rates, accuracy
    per category and dimension, seconds per verdict), written as
    SPEC-SPECHASH-GOLDHASH-SPLIT.json and reused while neither file changes: a shipped judge's
    card to reports/judge-cards/ under the current folder (in a checkout of voicebench,
    judges/cards/), a spec file of your own's to cards/ beside it. With
    --against, a second judge on the same pairs and the paired comparison of the two."""
    quiet_libraries(verbose)
    on_interrupt("decided verdicts are kept: run the same command again to resume")
    with Steps("verdicts") as s:
        result = api.judge_check(
            judge_spec,
            gold=gold,
            split=split,
            out=out_dir,
            concurrency=concurrency,
            refresh=refresh,
            against=against,
            on_status=s.status,
            progress=lambda v, n, t: s.advance(n, t, verdict_line(v, n, t)),
        )
    if result.reused:
        show(f"card reused (same spec and gold file; --refresh measures again): {result.path}")
    show_card(result.card, result.path)
    if result.against is not None and result.paired is not None:
        show(f"against {result.against.card.spec_name}: {result.against.path}")
        show(result.paired.line())


@app.command("judge-train")
def judge_train(
    gold: Annotated[
        list[Path],
        typer.Option(
            "--gold",
            "-g",
            help="Read pairs to fit on (repeatable): a JSONL file, or 'real' or 'written'. "
            "Only each file's dev pairs are used; its held-out ones measure the result.",
        ),
    ],
    out_spec: Annotated[
        Path,
        typer.Option("--out", "-o", help="The judge spec to write (.toml); its head beside it."),
    ],
    verbose: VerboseOpt = False,
) -> None:
    """Fit a learned scorer on read pairs: each reply scored alone from a packaged sentence
    encoder's embeddings of the conversation and the reply, through a linear head fitted
    pairwise on the gold files' dev pairs, its L2 strength chosen by cross-validation over
    conversations. Writes the judge spec and its head (.npz) beside it; measure it with
    `voicebench judge-check --judge SPEC --gold FILE`, on the held-out pairs it never saw."""
    quiet_libraries(verbose)
    with Steps("pairs") as s:
        trained = api.judge_train(gold, out=out_spec, progress=s.advance)
    head = trained.head
    show(
        f"fitted on {head.pairs} dev pairs: {head.weights.size} weights, L2 strength "
        f"{head.strength:g}, cross-validated accuracy {head.cv_accuracy:.1%} (folds by "
        "conversation)"
    )
    show(f"judge spec: {trained.spec}")
    show(f"head: {trained.head_path}")
    show(f"measure it: voicebench judge-check --judge {trained.spec} --gold FILE")
