"""What every command shares: the consoles, the default paths, options declared once, the one
place that turns a ``VoicebenchError`` into one line and an exit code, and progress display."""

from __future__ import annotations

import enum
import errno
import logging
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from loguru import logger
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperGroup

from voicebench.api import shared
from voicebench.api.shared import (
    InputError,
    MissingFileError,
    SecretDestinationWarning,
    VoicebenchError,
)

# Off a terminal rich would fall back to 80 columns and wrap the tables; logs are wide enough.
out = Console(width=None if sys.stdout.isatty() else 110)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 110)

DEFAULT_DIALOGUES = shared.DIALOGUES
DEFAULT_FIXTURES = shared.FIXTURES
DEFAULT_AGENT = shared.DEFAULT_AGENT
DEFAULT_JUDGE = shared.SMOKE_JUDGE
DEFAULT_GOLD = shared.PAIRS_GOLD


def shipped_default(path: Path) -> str:
    """A shipped default as --help shows it (``shared.shipped_name``), never this install's
    own folder (a long site-packages path)."""
    return shared.shipped_name(path)


def commands() -> typer.Typer:
    """A command module's own app, its commands' help laid out as the main app's is (the main
    app loads the module when one of them is asked for)."""
    return typer.Typer(
        add_completion=False, pretty_exceptions_enable=False, rich_markup_mode="markdown"
    )


DialoguesOpt = Annotated[
    Path,
    typer.Option(
        "--dialogues",
        "-d",
        envvar="VOICEBENCH_DIALOGUES",
        help="Dialogue set (JSONL), or a shipped set by name: `builtin` (30 items, the "
        "default) or `more` (180 more, their audio made on first use).",
        callback=lambda value: shared.dialogue_set(value),
        show_default=shipped_default(DEFAULT_DIALOGUES),
    ),
]
FixturesOpt = Annotated[
    Path,
    typer.Option(
        "--fixtures",
        envvar="VOICEBENCH_FIXTURES",
        help="Audio fixture folder (manifest.json + audio/).",
        show_default=shipped_default(DEFAULT_FIXTURES),
    ),
]


def agent_spec(value: str | Path) -> Path:
    """An ``--agent`` value: a TOML path, the name of a shipped agent spec, or a SIP URI to
    call (kept as it is: ``api.runs`` reads it)."""
    if str(value).startswith(shared.SIP_SCHEMES):
        return Path(str(value))
    return shared.spec_path("agents", value)


def judge_spec(value: str | Path) -> Path:
    """A ``--judge`` value: a TOML path, or the name of a shipped judge spec."""
    return shared.spec_path("judges", value)


AGENT_HELP = (
    f"Agent spec: a TOML file, or a shipped one by name ({', '.join(shared.shipped('agents'))});"
    " or sip:USER@HOST[:PORT], an agent to call over SIP (sips: over TLS)."
)
JUDGE_HELP = (
    f"Judge spec: a TOML file, or a shipped one by name ({', '.join(shared.shipped('judges'))})."
)
AgentOpt = Annotated[
    Path,
    typer.Option("--agent", "-a", envvar="VOICEBENCH_AGENT", parser=agent_spec, help=AGENT_HELP),
]
JudgeOpt = Annotated[
    Path,
    typer.Option(
        "--judge",
        "-j",
        envvar="VOICEBENCH_JUDGE",
        parser=judge_spec,
        help=JUDGE_HELP,
        show_default=shipped_default(DEFAULT_JUDGE),
    ),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show library logs.")]
FailOnErrorOpt = Annotated[
    bool,
    typer.Option(
        "--fail-on-error",
        help="Exit 1 when any turn failed (without it, only when no turn succeeded).",
    ),
]
FAILED_TURNS_EXIT = 1
"""A run's exit when no turn succeeded, or (``--fail-on-error``) when any failed."""
TURNS_EXIT_HELP = (
    "Exit 0 when {some}; 1 when {none}, with --fail-on-error when any turn failed, or when the "
    "disk is full (finished turns are kept: the same command resumes once space is freed); 2 "
    "for bad input; 3 for a missing extra; 130 when interrupted (finished turns are kept). "
    "Failed turns are recorded and counted either way."
)
"""The exit codes of a command that plays turns, its ``some`` and ``none`` filled in."""
ConcurrencyOpt = Annotated[int, typer.Option(min=1, max=256, help="Requests in flight at once.")]
TTFTBudgetOpt = Annotated[
    float, typer.Option(min=0, help="TTFT budget (ms): a turn at or under it is within budget.")
]
TTFABudgetOpt = Annotated[
    float, typer.Option(min=0, help="TTFA budget (ms): a turn at or under it is within budget.")
]
ScenarioOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scenario",
        help="Play a scenario (repeatable; each turn plays one): noise[:kind=pink,snr_db=10], "
        "phone-line[:loss_pct=1-5,jitter_ms=20], barge-in[:delay_ms=300-1500], "
        "backchannel[:words=uh-huh/yeah,delay_ms=300-1500] or pause[:pause_ms=600-1200]. "
        "See docs/scenarios.md.",
    ),
]


def plain(text: str) -> str:
    """Text from outside voicebench (an agent's, a provider's or a file's words, a path) made
    safe to put in a progress line that uses rich markup: printed as it is, brackets and all
    (``say`` and ``show`` never read markup, so need none of this)."""
    return escape(text)


def say(message: str, *, style: str | None = None) -> None:
    """A status line on stderr as written (never read as markup: a path, a name or a reason
    with ``[`` in it prints as it is), in ``style`` if given, never broken inside (a path in
    it stays one piece to copy)."""
    err.print(message, style=style, markup=False, highlight=False, soft_wrap=True)


def show(message: str, *, style: str | None = None) -> None:
    """A result line on stdout, as ``say`` prints one."""
    out.print(message, style=style, markup=False, highlight=False, soft_wrap=True)


def quiet_libraries(verbose: bool) -> None:
    """pipecat logs every frame decision at INFO/DEBUG; show its warnings only when asked.
    LiveKit's logs (the standard logging module) are shown only when asked, errors too: a
    failing plugin logs its traceback on every turn, and the turn's failure is already recorded
    and shown as one line, its kind and reason."""
    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if verbose else "ERROR")
    logging.getLogger("livekit").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    if not verbose:
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="pipecat")


def notable(done: int, total: int, failed: bool) -> bool:
    """Whether a step of a long job gets its own line: every twentieth, the last, every
    failure."""
    return failed or done == total or done % max(1, total // 20) == 0


_interrupt_notes: list[str] = []


def on_interrupt(kept: str) -> None:
    """What Ctrl-C during the current command should say is kept (and how to resume)."""
    _interrupt_notes.append(kept)


def _as_options(ctx: typer.Context, exc: VoicebenchError) -> str:
    """An error in the command line's words: a bad value of a call's parameter is named as the
    option that gave it (``pattern`` as ``--pattern``)."""
    field = getattr(exc, "field", None)
    name = ctx.invoked_subcommand
    command = ctx.command.get_command(ctx, name) if name else None  # type: ignore[attr-defined]
    if not isinstance(exc, InputError) or exc.file is not None or command is None:
        return str(exc)
    options = {p.name: p.opts[0] for p in command.params if p.param_type_name == "option"}
    if field not in options:
        return str(exc)
    return ": ".join(part for part in (exc.record, options[field], exc.message) if part)


def exit_on_failed_turns(runs: Sequence[tuple[str, int, int]], *, fail_on_error: bool) -> None:
    """Exit ``FAILED_TURNS_EXIT`` after saying why, when a run (name, turns, failed turns)
    had no turn that succeeded, or with ``fail_on_error`` any that failed."""
    why = []
    for name, turns, failed in runs:
        if failed >= turns:
            why.append(f"{name}: no turn succeeded: {failed} of {turns} failed")
        elif fail_on_error and failed:
            why.append(f"{name}: {failed} of {turns} turns failed (--fail-on-error)")
    for line in why:
        err.print(f"[bold red]error:[/] {plain(line)}", highlight=False, soft_wrap=True)
    if why:
        raise typer.Exit(FAILED_TURNS_EXIT)


DISK_FULL_EXIT = 1
"""A command stopped by a full disk (what it finished is kept; the same command resumes)."""


def disk_full(exc: BaseException) -> OSError | None:
    """The "no space left on device" behind ``exc`` (a task group's among them), if any."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next((f for e in exc.exceptions if (f := disk_full(e)) is not None), None)
    return None


class VoicebenchGroup(TyperGroup):
    """The one place errors become one line: a ``VoicebenchError`` prints ``error: ...`` and
    exits with its code; Ctrl-C says what was kept and exits 130; a full disk says what was
    kept and how to go on once space is freed, and exits ``DISK_FULL_EXIT``."""

    def invoke(self, ctx: Any) -> Any:
        _interrupt_notes.clear()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default", SecretDestinationWarning)
                shown = warnings.showwarning

                def show_note(message: Any, category: type[Warning], *args: Any, **kw: Any) -> None:
                    if issubclass(category, SecretDestinationWarning):
                        say(f"note: {message}", style="yellow")
                    else:
                        shown(message, category, *args, **kw)

                warnings.showwarning = show_note
                return super().invoke(ctx)
        except VoicebenchError as exc:
            text = _as_options(ctx, exc)
            if isinstance(exc, MissingFileError) and exc.file is not None:
                text += shared.shipped_hint(exc.file)
            err.print(f"[bold red]error:[/] {plain(text)}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            note = _interrupt_notes[-1] if _interrupt_notes else None
            say(f"interrupted; {note}" if note else "interrupted")
            raise typer.Exit(130) from None
        except (OSError, ExceptionGroup) as exc:
            full = disk_full(exc)
            if full is None:
                raise
            where = f" writing {full.filename}" if full.filename else ""
            then = _interrupt_notes[-1] if _interrupt_notes else "run the same command again"
            text = f"no space left on device{where}; free some space, then: {then}"
            err.print(f"[bold red]error:[/] {plain(text)}", highlight=False, soft_wrap=True)
            raise typer.Exit(DISK_FULL_EXIT) from None


def clock(seconds: float) -> str:
    """Elapsed time as M:SS, or H:MM:SS from an hour."""
    m, sec = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


class Steps:
    """Progress of a long job, one line per finished step: on a terminal the lines scroll
    above a rich progress bar; elsewhere (a pipe, a CI log) they are plain lines."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._bar: Progress | None = None
        self._task: Any = None
        self._started = time.monotonic()

    def __enter__(self) -> Steps:
        if err.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
                # stdout stays stdout: results printed meanwhile must not move to stderr
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.what, total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Take the bar off the screen while results are printed, then put it back."""
        if self._bar is None:
            yield
            return
        self._bar.stop()
        try:
            yield
        finally:
            self._bar.start()

    def elapsed(self) -> str:
        """The time since the job began, as the status lines show it."""
        return clock(time.monotonic() - self._started)

    def line(self, message: str) -> None:
        """A line for the log (above the bar on a terminal) in rich markup: made by the
        command line, text from outside it escaped with ``plain``."""
        console = self._bar.console if self._bar is not None else err
        console.print(message, highlight=False, soft_wrap=True)

    def status(self, message: str) -> None:
        """A line the library said (``on_status``), printed as written (never read as
        markup) after the time since the job began, so each step shows when it started."""
        console = self._bar.console if self._bar is not None else err
        console.print(
            f"[{self.elapsed()}] {message}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    def advance(self, done: int, total: int, message: str | None = None) -> None:
        """``done`` of ``total`` steps finished; ``message`` (if any) is logged."""
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)
        if message is not None:
            self.line(message)

    def file_done(self, done: int, total: int, path: Path) -> None:
        """``done`` of ``total`` files finished, the last ``path`` (its name shown as text)."""
        self.advance(done, total, f"{done}/{total} {plain(path.name)}")


CallerOpt = Annotated[
    str,
    typer.Option(
        help="The caller's channel in a recording: left or right (the agent is the other), or "
        "auto: as the file says in a recording voicebench made, else guessed (an agent stops "
        "when talked over; else it speaks first), saying why."
    ),
]


class AudioChoice(enum.StrEnum):
    """How a report keeps the replies' audio and the calls' recordings (``--audio``)."""

    wav = "wav"
    opus = "opus"


def audio_format(choice: AudioChoice) -> Literal["wav", "opus"]:
    return "opus" if choice is AudioChoice.opus else "wav"
