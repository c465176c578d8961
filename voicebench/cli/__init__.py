"""The ``voicebench`` command line: a thin app of commands, one module per command group.

- ``run``: ``synth``, ``run``, ``demo``, ``summary`` (replay);
- ``converse``: ``converse`` (simulated seekers calling the agent);
- ``judge``: ``judge``, ``rate``, ``strategies`` (quality);
- ``report``: ``report``;
- ``live``: ``serve``, ``load`` (agents over WebSocket);
- ``annotate``: ``annotate`` (people rating replies by ear);
- ``gates``: ``check``, ``compare`` (CI gates and run-to-run comparison);
- ``campaign``: ``campaign`` (a matrix of agents, settings, sets, scenarios and judges);
- ``dialogues``: the ``dialogues`` group (import, adversarial, check).

Each command parses its options and calls one library function. Shared options, the consoles
and the one place errors become a line and an exit code live in ``common``. A new command goes
in the module of its group (or a new module registered below).
"""

from __future__ import annotations

import os

import typer

from voicebench._version import __version__
from voicebench.cli import (
    annotate,
    campaign,
    converse,
    dialogues,
    gates,
    judge,
    live,
    report,
    run,
)
from voicebench.cli.common import VoicebenchGroup, quiet_libraries, show

app = typer.Typer(
    cls=VoicebenchGroup,
    help="Live voice-agent latency and empathy evaluation on HEART support dialogues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstrings are reflowed paragraphs in --help
)
for group in (run, converse, judge, annotate, report, live, gates, campaign):
    group.register(app)
app.add_typer(dialogues.app, name="dialogues")


def _version(value: bool) -> None:
    if value:
        show(f"voicebench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Live voice-agent latency and empathy evaluation on HEART support dialogues."""


def main() -> None:
    # Users on an air-gapped machine must never wait on a hub: the models are packaged.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Libraries that log on import (pipecat's banner) stay quiet unless a command's --verbose
    # asks for their logs.
    quiet_libraries(verbose=False)
    app()


__all__ = ["app", "main"]
