"""People as judges: ``annotate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.cli.common import commands, say, show

app = commands()


@app.command()
def annotate(
    judging_dir: Annotated[Path, typer.Argument(help="Judging folder (from voicebench judge).")],
    rater: Annotated[
        str,
        typer.Option(
            "--rater", "-r", envvar="VOICEBENCH_RATER", help="Who is rating (names their file)."
        ),
    ],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8767,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on; other than 127.0.0.1 only when others rate."),
    ] = "127.0.0.1",
    per_rater: Annotated[
        int, typer.Option(min=1, help="Pairs in a new rater's plan (about 5% more come back).")
    ] = 40,
    seed: Annotated[
        int | None,
        typer.Option(min=0, help="Seed of every rater's draws (stored by the first rater)."),
    ] = None,
) -> None:
    """Serve a blinded listening page for one rater: each task is a conversation and two
    replies as audio, A and B, rated on HEART's five-point scale (keys 1-5); on a judging of
    whole calls, the caller and two whole calls. Answers are appended to
    JUDGING_DIR/human/RATER.jsonl as they are given; rate and report read them."""
    state, new = api.rating_session(judging_dir, rater, per_rater=per_rater, seed=seed)
    total, done = len(state.plan.tasks), len(state.answered)
    repeats = sum(t.repeat for t in state.plan.tasks)
    say(
        (f"new plan for {rater}: " if new else f"{rater}'s plan: ")
        + f"{total} tasks ({repeats} repeats), {done} answered; {len(state.library.clips)} "
        f"clips"
        + (
            f"; {len(state.library.missing_audio)} replies without audio are shown as text"
            if state.library.missing_audio
            else ""
        )
    )

    for (item_id, contestant), why in sorted(state.library.refused.items()):
        say(f"{item_id} {contestant}: audio not served, {why}")

    def ready(url: str) -> None:
        show(f"rating page for {rater}: {url}")
        say(f"answers go to {state.path}; Ctrl-C stops")

    api.serve_rating_page(state, host=host, port=port, on_ready=ready)
    say(f"stopped: {len(state.answered)} of {total} answered")
