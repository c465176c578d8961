"""The ``voicebench`` command line: a thin layer over ``voicebench.api``, one module per
command group, each loaded when one of its commands is asked for.

- ``run``: ``synth``, ``run``, ``demo``, ``summary`` (replay);
- ``converse``: ``converse`` (simulated seekers calling the agent);
- ``judge``: ``judge``, ``rate``, ``strategies``, ``judge-check``, ``judge-train`` (quality);
- ``annotate``: ``annotate`` (people rating replies by ear);
- ``report``: ``report``;
- ``live``: ``serve``, ``serve-speech``, ``load`` (agents over WebSocket, OpenAI's speech API);
- ``gates``: ``check``, ``compare`` (CI gates and run-to-run comparison);
- ``campaign``: ``campaign`` (a matrix of agents, settings, sets, scenarios and judges);
- ``dialogues``: the ``dialogues`` group (import, adversarial, check).

Each command parses its options, calls ``voicebench.api`` and shows what it returns
(``present/``). Shared options, the consoles and the one place errors become a line and an
exit code live in ``common``. A new command goes in the module of its group (its ``app``),
named in ``COMMANDS`` below.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

import typer

from voicebench.api.shared import __version__
from voicebench.cli.common import VoicebenchGroup, quiet_libraries, show

COMMANDS: dict[str, str] = {
    "synth": "run",
    "run": "run",
    "demo": "run",
    "summary": "run",
    "converse": "converse",
    "judge": "judge",
    "rate": "judge",
    "strategies": "judge",
    "judge-check": "judge",
    "judge-train": "judge",
    "annotate": "annotate",
    "report": "report",
    "serve": "live",
    "serve-speech": "live",
    "load": "live",
    "check": "gates",
    "compare": "gates",
    "campaign": "campaign",
    "dialogues": "dialogues",
    "recordings": "recordings",
}
"""Every command, in the order --help lists them, and the module (under ``voicebench.cli``)
whose ``app`` holds it."""
GROUPS = {"dialogues", "recordings"}
"""Commands that are their module's whole app: a group of commands of their own."""


@functools.cache
def _group(module: str) -> Any:
    app = importlib.import_module(f"voicebench.cli.{module}").app
    return typer.main.get_group(app)


class Commands(VoicebenchGroup):
    """The main group: its commands are loaded from their module when first asked for, so
    ``voicebench --version`` and a command's own start load nothing they do not use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        group = _group(module)
        if cmd_name in GROUPS:
            group.name = cmd_name
            return group
        return group.get_command(ctx, cmd_name)


app = typer.Typer(
    cls=Commands,
    help="Live voice-agent latency and empathy evaluation on HEART support dialogues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstrings are reflowed paragraphs in --help
)


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


__all__ = ["COMMANDS", "app", "main"]
