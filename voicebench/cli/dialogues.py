"""Dialogue-set commands: ``dialogues import esconv``, ``dialogues import recording``,
``dialogues adversarial`` and ``dialogues check``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from voicebench import api
from voicebench.api.views import Outcome
from voicebench.cli.common import (
    CallerOpt,
    Steps,
    VoicebenchGroup,
    agent_spec,
    on_interrupt,
    plain,
    quiet_libraries,
    show,
)

app = typer.Typer(
    cls=VoicebenchGroup,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Dialogue sets: import, make adversarial items, check.",
)
import_app = typer.Typer(
    cls=VoicebenchGroup,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Import dialogue items from a corpus.",
)
app.add_typer(import_app, name="import")


@import_app.command("esconv")
def import_esconv(
    file: Annotated[Path, typer.Argument(help="ESConv JSON file.")],
    dest: Annotated[Path, typer.Option("--out", "-o", help="Dialogue set to write (JSONL).")],
    max_per_conversation: Annotated[int, typer.Option(min=1, max=10)] = 2,
) -> None:
    """Make HEART-style items from ESConv conversations (nothing is written on bad input)."""
    items = api.import_esconv(file, dest, max_per_conversation=max_per_conversation)
    conversations = len({d.source for d in items})
    show(f"{len(items)} items from {conversations} conversations written to {dest}")


@import_app.command("recording")
def import_recording(
    recordings: Annotated[
        list[Path],
        typer.Argument(
            help="Two-channel call recordings (WAV, mu-law WAV, FLAC, Opus), or folders."
        ),
    ],
    dest: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write items.jsonl and fixtures/ to.")
    ],
    caller: CallerOpt = "left",
) -> None:
    """Make a real call a test: each recording becomes a dialogue item (the caller's words as
    seeker turns, the agent's as supporter turns, its last reply the reference) and each caller
    utterance a fixture cut from the recording, its end of speech as recorded. Items already in
    the folder from other recordings are kept."""
    quiet_libraries(False)
    with Steps("recordings") as s:
        items = api.import_recordings(
            recordings,
            out=dest,
            caller=caller,
            progress=s.file_done,
        )
    turns = sum(len(d.seeker_turn_indices) for d in items)
    show(f"{len(items)} item(s), {turns} caller turn(s) cut into {dest}/fixtures")
    show(
        f"replay them: voicebench run --agent AGENT --dialogues {dest}/items.jsonl "
        f"--fixtures {dest}/fixtures"
    )


# As the command is also known: `voicebench dialogues import-recording CALL.wav`.
app.command("import-recording", hidden=True)(import_recording)


def _outcome_line(outcome: Outcome, n: int, total: int) -> str:
    if outcome.item is not None:
        return f"[{n}/{total}] {outcome.source_id} -> {outcome.item.id} ok"
    reason = outcome.rejected.reason if outcome.rejected is not None else "no answer"
    return f"[{n}/{total}] {outcome.source_id} [red]rejected[/]: {plain(reason)}"


@app.command("adversarial")
def adversarial(
    file: Annotated[Path, typer.Argument(help="Dialogue set to rewrite (JSONL).")],
    profile: Annotated[
        str,
        typer.Option(
            help="Escalation of the seeker's hostility: always-10, linear-ramp, mid-spike or "
            "mid-ramp."
        ),
    ],
    llm: Annotated[
        Path,
        typer.Option(
            "--llm",
            parser=agent_spec,
            help="Agent spec whose [llm] rewrites the seeker turns: a TOML file, or a shipped "
            "one by name.",
        ),
    ],
    dest: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Set to append the new items to (default FILE-PROFILE.jsonl); "
            "items already there are skipped, so re-running resumes.",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Rewrite only the first N items.")
    ] = None,
    attempts: Annotated[
        int, typer.Option(min=1, max=10, help="Requests per item before it is rejected.")
    ] = 3,
) -> None:
    """Make adversarial items: an LLM rewrites only the seeker turns so that hostility follows
    the profile's 0-10 schedule (shown first); each answer is checked, asked again, or the item
    rejected with its reason (in OUT.rejected.jsonl)."""
    quiet_libraries(False)
    plan = api.adversarial_plan(file, profile, llm, out=dest, limit=limit)
    show(f"{plan.profile.value}: target hostility (0-10) per seeker turn")
    for n, schedule in plan.schedules.items():
        show(f"  {n} seeker turns: {' '.join(map(str, schedule))}")
    on_interrupt(f"finished items are kept in {plan.out}: run the same command again to resume")
    with Steps("items") as s:
        outcomes = api.adversarial(
            plan,
            attempts=attempts,
            progress=lambda o, n, t: s.advance(n, t, _outcome_line(o, n, t)),
        )
    made = sum(o.item is not None for o in outcomes)
    left = len(plan.items) - len(outcomes)
    show(
        f"{made} adversarial items written to {plan.out}; {len(outcomes) - made} rejected"
        + (f" (reasons in {api.rejected_file(plan)})" if len(outcomes) > made else "")
        + (f"; {left} were already done" if left else "")
    )


@app.command("check")
def check(file: Annotated[Path, typer.Argument(help="Dialogue set (JSONL).")]) -> None:
    """Validate a dialogue set and print what it holds."""
    items = api.read_dialogues(file)
    adversarial = [d for d in items if d.adversarial]
    turns = sum(len(d.seeker_turn_indices) for d in items)
    show(f"{file}: {len(items)} items ({len(adversarial)} adversarial), {turns} seeker turns")
    for problem, n in sorted(Counter(d.problem_type for d in items).items()):
        show(f"  {problem}: {n}")
