"""Requests sent again over UDP until they are answered, as RFC 3261 asks of a client
transaction (17.1.1.2 and 17.1.2.2): an INVITE or a BYE lost on the way is not a lost call.

- An INVITE (the first, the one with credentials after a challenge, a re-INVITE) is sent
  again after ``T1_S``, then after twice as long each time, until any answer to it comes
  (a 100 Trying is enough: the far end has it).
- Any other request (a BYE) is sent again on the same schedule, the wait capped at ``T2_S``,
  until a final answer comes; a provisional one moves the wait to ``T2_S`` at once.

aiosipua 0.7.1 sends each request once. ``Resends`` watches every answer (``heard``) and
keeps sending one request (``until_answered``) for as long as its caller waits. The other half
of a transaction is ``acknowledge``: the ACK of a final answer to an INVITE, which aiosipua
sends for a 2xx to the INVITE under way only.

Only INVITE and BYE are sent again: a PRACK or a CANCEL lost on the way is not.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

T1_S = 0.5
"""RFC 3261's estimate of a round trip: the first wait before sending again."""
T2_S = 4.0
"""The longest wait between two sends of a request other than an INVITE."""

Key = tuple[str, str, int]
"""A transaction, as its answers name it: Call-ID, method, CSeq number."""


def key_of(message: Any) -> Key | None:
    """The transaction a request or answer belongs to; None when its CSeq is unreadable."""
    cseq = message.cseq
    if cseq is None:
        return None
    return (message.call_id or "", cseq.method.upper(), cseq.seq)


class Resends:
    """The answers heard on one SIP transport, and the requests on it sent again until
    answered. ``sent_again`` counts the datagrams sent again."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._answered: set[Key] = set()
        """Transactions that need no more sending: any answer to an INVITE, a final one to
        any other request."""
        self._trying: set[Key] = set()
        """Requests other than INVITE that had a provisional answer."""
        self.sent_again = 0

    def heard(self, response: Any) -> None:
        """An answer arrived (before anything else reads it)."""
        key = key_of(response)
        if key is None:
            return
        if key[1] == "INVITE" or response.status_code >= 200:
            self._answered.add(key)
        else:
            self._trying.add(key)

    def answered(self, request: Any) -> bool:
        return key_of(request) in self._answered

    async def until_answered(
        self,
        request: Callable[[], Any],
        to: tuple[str, int],
        *,
        limit_s: float = 64 * T1_S,
        send: bool = True,
    ) -> bool:
        """Send ``request()`` again to ``to`` on the schedule above until it is answered or
        ``limit_s`` has gone by; ``request`` is read at each send, so that an INVITE that
        was replaced (answering a challenge) is the one sent, its schedule started anew.
        Whether it was answered. Cancel it to stop sooner. Over a connection (TCP, TLS),
        ``send`` False: nothing is sent again, the answer only waited for."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + limit_s
        current, wait = key_of(request()), T1_S
        due = loop.time() + wait
        while loop.time() < give_up:
            await asyncio.sleep(max(0.0, min(due, give_up) - loop.time()))
            message = request()
            key = key_of(message)
            if key != current:  # a new request: its own schedule
                current, wait, due = key, T1_S, loop.time() + T1_S
                continue
            if key is None or key in self._answered:
                if key is not None and key[1] != "INVITE":
                    return True
                due = loop.time() + T1_S / 10  # (an INVITE may still be replaced)
                continue
            if loop.time() < due or not send:
                due = max(due, loop.time() + T1_S / 10)
                continue
            self._transport.send(message, to)
            self.sent_again += 1
            if key[1] == "INVITE":
                wait *= 2
            else:
                wait = T2_S if key in self._trying else min(2 * wait, T2_S)
            due = loop.time() + wait
        return current is not None and current in self._answered


def acknowledge(transport: Any, call: Any, response: Any) -> None:
    """The ACK of a final answer to an INVITE of ``call`` (an aiosipua ``OutgoingCall``): of
    300-699, on the INVITE's own branch (the answer's top Via) and CSeq, with the answer's
    To; of 2xx (one sent again to an INVITE since replaced), in the dialog, on a new
    branch."""
    from aiosipua.message import SipRequest

    seq = response.cseq.seq
    if response.status_code < 300:
        host, port = transport.local_addr
        ack = call.dialog.create_request("ACK", via_host=host, via_port=port)
        call.dialog.local_cseq -= 1  # (an ACK takes its INVITE's number)
        ack.headers.set_single("CSeq", f"{seq} ACK")
        transport.send(ack, call.remote_addr)
        return
    invite = call.invite
    ack = SipRequest(method="ACK", uri=invite.uri)
    via = re.sub(r";received=[^;]*|(?<=;rport)=\d+", "", response.headers.get("via")[0])
    ack.headers.append("Via", via)
    for name in ("From", "Call-ID", "Route"):
        for value in invite.headers.get(name):
            ack.headers.append(name, value)
    ack.headers.set_single("To", response.get_header("to") or "")
    ack.headers.set_single("CSeq", f"{seq} ACK")
    ack.headers.set_single("Max-Forwards", "70")
    ack.headers.set_single("Content-Length", "0")
    transport.send(ack, call.remote_addr)
