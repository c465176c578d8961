"""``voicebench annotate``: the rating page, one rater per server, on 127.0.0.1 by default.

Routes::

    GET  /?token=T      check the access token, open a session, go to the next unanswered task
    GET  /task/ID       one task: the conversation, the seeker's last turn and replies A and B
    GET  /audio/ID      one clip (WAV), by its opaque id
    POST /answer        one answer (JSON, below), with the session's X-Session-Token header
    GET  /done          the end of the plan

An answer: ``{"task": ID, "choice": 1-5, "dimensions": {"E": "A", ...}, "comment": "...",
"played": ["seeker", "a", "b"], "seconds": 41.5}``; ``choice`` 1 is "A much better", 3 "about
the same", 5 "B much better". It is checked, then appended to ``human/RATER.jsonl`` and
fsynced before the reply, so a killed server loses nothing answered. Each task is answered
once: a second answer (a replayed request) gets 409 and writes nothing.

Safety, for a page others may open:

- Access: every request needs the access token, drawn at start and printed with the URL (also
  on 127.0.0.1, which other users of the machine can reach). The URL's ``?token=`` is traded for
  an HttpOnly, SameSite=Strict cookie.
- Writes: ``POST /answer`` needs the token of a session the server opened (sent by the page in a
  header, and equal to the session cookie), so another site cannot post on the rater's behalf.
- Files: audio and tasks are looked up by opaque ids in tables built at start; no part of a
  request is ever joined to a path. Anything else is 404.
- Page: text is escaped by jinja2's autoescape; the Content-Security-Policy allows the page's
  own inline script and style (by hash), audio and requests to this server, nothing else.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from aiohttp import web
from markupsafe import Markup
from pydantic import Field, ValidationError

from voicebench._folder import lock
from voicebench._jsonl import append_record, drop_partial_line, read_models
from voicebench._model import FrozenModel, first_error
from voicebench.annotate.content import Library, load_library
from voicebench.annotate.tasks import (
    DEFAULT_PER_RATER,
    AnnotationTask,
    RaterPlan,
    check_rater,
    rater_plan,
)
from voicebench.errors import InputError, RunError
from voicebench.judging import DIMENSION_NAMES, DIMENSIONS
from voicebench.rating import HUMAN_DIR
from voicebench.rating.agreement import RATING_LABELS, HumanJudgment
from voicebench.reporting.render import asset, environment, script_hash

PACKAGE = "voicebench.annotate"
LOOPBACK = "127.0.0.1"
SESSION_HEADER = "X-Session-Token"
MAX_BODY = 64 * 1024
SCALE = tuple(
    (key, rating, RATING_LABELS[rating]) for key, rating in enumerate((2, 1, 0, -1, -2), start=1)
)
"""(key, rating toward A, label): HEART's five-point human scale, key 1 "A much better"."""
RATING_OF = {key: rating for key, rating, _ in SCALE}


class Answer(FrozenModel):
    """What the page sends for one task."""

    task: str = Field(pattern=r"^[0-9a-f]{16}$")
    choice: int = Field(ge=1, le=5)
    dimensions: dict[Literal["H", "E", "A", "R", "T"], Literal["A", "B"]] = Field(
        default_factory=dict
    )
    comment: str = Field(default="", max_length=2000)
    played: tuple[Literal["seeker", "a", "b"], ...] = Field(default=(), max_length=3)
    seconds: float | None = Field(default=None, ge=0, le=86_400)


@dataclass
class Rating:
    """One rater's session state: the plan, what is answered, the tokens."""

    judging_dir: Path
    plan: RaterPlan
    library: Library
    access_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    sessions: set[str] = field(default_factory=set)
    answered: dict[str, HumanJudgment] = field(default_factory=dict)
    port: int = 0

    @property
    def path(self) -> Path:
        return self.judging_dir / HUMAN_DIR / f"{self.plan.rater}.jsonl"

    def load_answers(self) -> None:
        """The rater's earlier answers; a line cut short by a kill is dropped."""
        drop_partial_line(self.path)
        self.answered = {h.task: h for h in read_models(self.path, HumanJudgment) if h.task}

    def next_task(self) -> AnnotationTask | None:
        return next((t for t in self.plan.tasks if t.id not in self.answered), None)

    def record(self, answer: Answer, task: AnnotationTask) -> HumanJudgment:
        judgment = HumanJudgment(
            item_id=task.item_id,
            contestant_a=task.shown_a,
            contestant_b=task.shown_b,
            rating=RATING_OF[answer.choice],
            rater=self.plan.rater,
            task=task.id,
            repeat=task.repeat,
            dimensions=dict(answer.dimensions),
            comment=answer.comment.strip(),
            played=answer.played,
            seconds=None if answer.seconds is None else round(answer.seconds, 1),
            answered_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_record(self.path, judgment)
        self.answered[task.id] = judgment
        return judgment

    @property
    def access_cookie(self) -> str:
        return f"vb_access_{self.port}"  # cookies ignore the port: two servers, two names

    @property
    def session_cookie(self) -> str:
        return f"vb_session_{self.port}"


def redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location})


def _csp(script: str, style: str) -> str:
    return (
        "default-src 'none'; "
        f"script-src {script_hash(script)}; style-src {script_hash(style)}; "
        "media-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def build_app(state: Rating) -> web.Application:
    script = asset("annotate.js", PACKAGE).strip()
    style = asset("annotate.css", PACKAGE).strip()
    csp = _csp(script, style)
    template = environment(PACKAGE).get_template("annotate.html.j2")

    def page(**values: object) -> web.Response:
        html = template.render(
            rater=state.plan.rater,
            script=Markup(script),  # this package's own files, never run data
            style=Markup(style),
            scale=SCALE,
            dimensions=[(d, DIMENSION_NAMES[d]) for d in DIMENSIONS],
            total=len(state.plan.tasks),
            answered=len(state.answered),
            **values,
        )
        return web.Response(text=html, content_type="text/html", charset="utf-8")

    def allowed(request: web.Request) -> bool:
        given = request.cookies.get(state.access_cookie, "")
        if request.path == "/" and "token" in request.query:
            given = request.query["token"]
        return hmac.compare_digest(given.encode(), state.access_token.encode())

    def session_of(request: web.Request) -> str | None:
        s = request.cookies.get(state.session_cookie)
        return s if s in state.sessions else None

    @web.middleware
    async def guard(request: web.Request, handler: Callable) -> web.StreamResponse:
        try:
            if not allowed(request):
                raise web.HTTPForbidden(
                    text="open the URL voicebench annotate printed: it carries the access token"
                )
            response = await handler(request)
        except web.HTTPException as exc:
            response = web.Response(status=exc.status, text=exc.text or exc.reason)
        response.headers.update(SECURITY_HEADERS)
        if response.content_type == "text/html":
            response.headers["Content-Security-Policy"] = csp
        return response

    async def landing(request: web.Request) -> web.StreamResponse:
        session = secrets.token_urlsafe(24)
        state.sessions.add(session)
        nxt = state.next_task()
        response = redirect(f"/task/{nxt.id}" if nxt else "/done")
        for name, value in (
            (state.access_cookie, state.access_token),
            (state.session_cookie, session),
        ):
            response.set_cookie(name, value, httponly=True, samesite="Strict", path="/")
        return response

    async def task_page(request: web.Request) -> web.StreamResponse:
        task = state.plan.task(request.match_info["id"])
        if task is None:
            raise web.HTTPNotFound()
        session = session_of(request)
        if session is None:  # the server restarted: a new session, same task
            return redirect("/")
        n = state.plan.tasks.index(task)
        tasks = state.plan.tasks
        lib = state.library
        done = state.answered.get(task.id)
        return page(
            view="task",
            session=session,
            task=task,
            number=n + 1,
            prev_id=tasks[n - 1].id if n > 0 else "",
            next_id=tasks[n + 1].id if n + 1 < len(tasks) else "",
            item_id=task.item_id,
            conversation=lib.conversation(task.item_id),
            calls=lib.unit == "call",
            seeker_clip=lib.seeker_clip.get(task.item_id),
            replies=[
                (side, lib.reply_clip.get((task.item_id, name)), lib.replies[(task.item_id, name)])
                for side, name in (("A", task.shown_a), ("B", task.shown_b))
            ],
            given=None if done is None else RATING_LABELS[done.rating],
        )

    async def done_page(request: web.Request) -> web.StreamResponse:
        nxt = state.next_task()
        return page(view="done", session="", next_id=nxt.id if nxt else "")

    async def audio(request: web.Request) -> web.StreamResponse:
        path = state.library.clips.get(request.match_info["id"])
        if path is None:
            raise web.HTTPNotFound()
        return web.FileResponse(path, headers={"Content-Type": "audio/wav"})

    async def no_icon(request: web.Request) -> web.StreamResponse:
        return web.Response(status=204)  # browsers ask; an answer keeps their logs clean

    async def answer(request: web.Request) -> web.StreamResponse:
        session = session_of(request)
        sent = request.headers.get(SESSION_HEADER, "")
        if session is None or not hmac.compare_digest(sent.encode(), session.encode()):
            raise web.HTTPForbidden(text="no open session: reload the page")
        try:
            body = await request.json()
            given = Answer.model_validate(body)
        except ValidationError as exc:
            loc, msg = first_error(exc)
            raise web.HTTPBadRequest(text=f"{loc}: {msg}") from None
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            raise web.HTTPBadRequest(text="the body is not JSON") from None
        task = state.plan.task(given.task)
        if task is None:
            raise web.HTTPNotFound(text="no such task")
        if task.id in state.answered:
            raise web.HTTPConflict(text="this task is answered already")
        state.record(given, task)
        nxt = state.next_task()
        return web.json_response(
            {"next": f"/task/{nxt.id}" if nxt else "/done", "answered": len(state.answered)}
        )

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app.router.add_get("/", landing)
    app.router.add_get("/task/{id}", task_page)
    app.router.add_get("/done", done_page)
    app.router.add_get("/audio/{id}", audio)
    app.router.add_post("/answer", answer)
    app.router.add_get("/favicon.ico", no_icon)
    return app


def open_rating(
    judging_dir: Path,
    rater: str,
    *,
    per_rater: int = DEFAULT_PER_RATER,
    seed: int | None = None,
) -> tuple[Rating, bool]:
    """The rater's state (plan drawn or reloaded, earlier answers read) and whether the plan is
    new."""
    check_rater(rater)
    human = judging_dir / HUMAN_DIR
    for other in sorted({p.stem for p in (*human.glob("*.jsonl"), *human.glob("plans/*.json"))}):
        if other != rater and other.casefold() == rater.casefold():
            raise InputError(
                f"differs from the rater {other!r} only in case; on some systems the two "
                "would share one file: use that name or another",
                field="--rater",
            )
    library = load_library(judging_dir)
    # One server per rater: two would hand out the same tasks and both append answers.
    lock(human, rater.casefold())
    plan, new = rater_plan(
        judging_dir, rater, list(library.replies.values()), per_rater=per_rater, seed=seed
    )
    missing = [
        t
        for t in plan.tasks
        if {(t.item_id, t.first), (t.item_id, t.second)} - library.replies.keys()
    ]
    if missing:
        raise InputError(
            f"the plan names a reply the judging folder no longer has ({missing[0].item_id})",
            file=judging_dir / HUMAN_DIR / "plans" / f"{rater}.json",
        )
    state = Rating(judging_dir, plan, library)
    state.load_answers()
    return state, new


async def serve_rating(
    state: Rating,
    *,
    host: str = LOOPBACK,
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve the page until ``stop`` is set, or without one until SIGINT or SIGTERM."""
    import signal

    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(build_app(state), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise RunError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        state.port = runner.addresses[0][1]
        shown = f"[{host}]" if ":" in host else host
        if on_ready is not None:
            on_ready(f"http://{shown}:{state.port}/?token={state.access_token}")
        await stop.wait()
    finally:
        await runner.cleanup()
