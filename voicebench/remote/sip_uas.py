"""What an answering SIP user agent owes a proxy in between and aiosipua 0.7.1 leaves out.

A proxy that puts itself on a call's route adds a ``Record-Route`` to the INVITE, and the
answering side copies it into every answer that makes or confirms the dialog (RFC 3261
12.1.1): the caller takes its route set from there, and its ACK, PRACK and BYE reach the
agent through the proxy. aiosipua copies it into no answer, so behind a proxy the caller's
in-dialog requests went to the proxy with no route and were refused there.
"""

from __future__ import annotations

from typing import Any


def record_routes(message: Any) -> list[str]:
    """The ``Record-Route`` entries of a SIP message, in order, from however many headers."""
    routes = (r.strip() for h in message.headers.get("record-route") for r in h.split(","))
    return [r for r in routes if r]


def keep_record_route(call: Any) -> None:
    """Make ``call`` (an aiosipua ``IncomingCall``) copy its INVITE's ``Record-Route`` into
    each answer of 101-299 it sends from now on (its 180, 183 and 200, resent ones too)."""
    routes = record_routes(call.invite)
    if not routes:
        return
    send = call._send_response

    def sending(status: int, reason: str, **options: Any) -> Any:
        if 100 < status < 300:
            extra = dict(options.pop("extra_headers", None) or {})
            options["extra_headers"] = {**extra, "Record-Route": ", ".join(routes)}
        return send(status, reason, **options)

    call._send_response = sending
