"""SIP over a connection: what each message sent over TCP or TLS says of its transport."""

from __future__ import annotations

from aiosipua.message import SipMessage

from voicebench.remote.sip_stream import _name_transport

HEAD = (
    "Call-ID: c1\r\nFrom: <sip:v@10.0.0.2>;tag=a\r\nTo: <sip:bot@10.0.0.9>\r\n"
    "Contact: <sip:v@10.0.0.2:5070>\r\nContent-Length: 0\r\n\r\n"
)


def test_a_request_names_the_transport_in_its_via_and_contact():
    request = SipMessage.parse(
        (
            "INVITE sip:bot@10.0.0.9 SIP/2.0\r\n"
            "Via: SIP/2.0/UDP 10.0.0.2:5070;branch=z9hG4bK1;rport\r\n"
            "CSeq: 1 INVITE\r\n" + HEAD
        ).encode()
    )
    _name_transport(request, "TCP", via=True, sips=False)
    assert request.headers.get("via") == ["SIP/2.0/TCP 10.0.0.2:5070;branch=z9hG4bK1;rport"]
    assert request.get_header("contact") == "<sip:v@10.0.0.2:5070;transport=tcp>"


def test_an_answer_keeps_the_far_end_s_via_and_a_sips_call_s_contact_is_sips():
    """An answer's Via is the far end's, left as it came; over TLS to a ``sips:`` URI the
    Contact is ``sips:`` (RFC 3261 8.1.1.8), with no transport parameter."""
    answer = SipMessage.parse(
        (
            "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.0.9:5060;branch=z9hG4bK2\r\n"
            "CSeq: 2 INVITE\r\n" + HEAD
        ).encode()
    )
    _name_transport(answer, "TLS", via=False, sips=True)
    assert answer.headers.get("via") == ["SIP/2.0/UDP 10.0.0.9:5060;branch=z9hG4bK2"]
    assert answer.get_header("contact") == "<sips:v@10.0.0.2:5070>"
