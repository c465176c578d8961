"""More than one digest challenge on one INVITE: a proxy asks for credentials (407), and then
the agent behind it asks too (401). aiosipua 0.7.1 answers the first challenge only, and its
retried INVITE carries only that answer. Here each later challenge is answered with the same
credentials, unless the same kind of answer (``Authorization``, ``Proxy-Authorization``) was
given for its realm already: that answer was refused, and the call fails on it as before. The
INVITE is sent again with every answer given so far; a proxy that has checked its own takes
it off before relaying, so the agent sees only what it asked for. The earlier answers go as
they were (their nonce count is not stepped): a proxy that counts nonce uses refuses them."""

from __future__ import annotations

from typing import Any

MAX_CHALLENGES = 3
"""Challenges answered on one INVITE at most (a proxy chain of two, and the agent)."""
ANSWERS = ("Authorization", "Proxy-Authorization")


def realm_of(header: str) -> str:
    from aiosipua.headers import parse_auth

    return parse_auth(header).params.get("realm", "")


def answer_another(uac: Any, call: Any, response: Any, status: int) -> bool:
    """Answer a 401 or 407 to ``call``'s INVITE (an aiosipua ``OutgoingCall``) after its first
    challenge was answered: the INVITE sent again with every answer so far and this one.
    Whether it was (False: leave the answer to aiosipua, which ends the call)."""
    from aiosipua.auth import answer_challenge
    from aiosipua.uac_responses import apply_session_headers

    if call._auth is None or not 1 <= call._auth_attempts < MAX_CHALLENGES:
        return False
    challenge = response.get_header("WWW-Authenticate" if status == 401 else "Proxy-Authenticate")
    if not challenge:
        return False
    given = [(name, value) for name in ANSWERS for value in call.invite.headers.get(name)]
    kind = "Authorization" if status == 401 else "Proxy-Authorization"
    if (kind, realm_of(challenge)) in {(name, realm_of(value)) for name, value in given}:
        return False  # (it refused the answer given: a proxy and an agent may share a realm)
    answer = answer_challenge(call._auth, response, status, "INVITE", call.invite.uri)
    if answer is None:
        return False
    invite = uac._build_invite(call.dialog, sdp_offer=call.sdp_offer, user_agent=call.user_agent)
    apply_session_headers(call, invite)
    for name, value in [*given, answer]:
        invite.headers.append(name, value)
    uac.transactions.create_client(invite)
    uac.transport.send(invite, call.remote_addr)
    call.invite = invite
    call._auth_attempts += 1
    return True
