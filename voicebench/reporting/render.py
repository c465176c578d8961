"""The report as a self-contained page and as Markdown, both rendered from the section model
(``sections.py``) by jinja2 templates shipped in ``templates/``.

The page inlines its figures (SVG data URIs), its style and one small script (click a column
heading to sort a table); the replies' audio files lie beside it in ``audio/``. Its
Content-Security-Policy allows images from data URIs, inline style, audio from its own folder
and that one script by hash, nothing else: no request leaves the page. Autoescape is
on for the page, so every piece of text from a run (replies, dialogue text, error reasons,
names) is escaped; the Markdown escapes the same text with its own filter.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from voicebench.reporting.models import Report
from voicebench.reporting.sections import sections

_MD_SAFE = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`*_[]#|~"}}
)


def md(value: object) -> str:
    """Text safe in Markdown, also in a table cell: no markup, no HTML, one line."""
    return " ".join(str(value).split()).translate(_MD_SAFE)


def asset(name: str, package: str = "voicebench.reporting") -> str:
    """A file shipped in a package's ``templates/`` (a style sheet, a script)."""
    return resources.files(package).joinpath("templates", name).read_text("utf-8")


@cache
def environment(package: str = "voicebench.reporting") -> jinja2.Environment:
    """The jinja2 environment of a package's ``templates/``: pages (``*.html.j2``) autoescaped,
    undefined names an error. Every page voicebench writes or serves comes from one."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=lambda name: name is not None and name.endswith(".html.j2"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    return env


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return f"'sha256-{digest}'"


def _render(template: str, report: Report, **extra: object) -> str:
    """One template over the report's sections."""
    j = report.judging
    return (
        environment()
        .get_template(template)
        .render(
            report=report,
            sections=sections(report),
            trust_warning=None if j is None else j.trust_warning,
            **extra,
        )
    )


def figure_uri(folder: Path, name: str) -> str:
    """A figure's SVG as a data URI, for a self-contained page."""
    svg = (folder / f"{name}.svg").read_bytes()
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def render_html(report: Report, figure_dir: Path) -> str:
    script = asset("sort.js").strip()
    csp = (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; media-src 'self'; "
        f"script-src {script_hash(script)}"
    )
    return _render(
        "report.html.j2",
        report,
        csp=Markup(csp),
        # Built here or read from this package's own files, never from run data: as they are.
        style=Markup(asset("report.css")),
        script=Markup(script),
        figure_uris={n: figure_uri(figure_dir, n) for n in report.figures},
    )


def render_markdown(report: Report) -> str:
    text = _render("report.md.j2", report)
    return re.sub(r"\n{3,}", "\n\n", text)  # blocks are separated by one blank line
