"""SIP's transports: UDP, and TCP and TLS (``[remote.sip] transport``, a ``sips:`` URI) on
aiosipua's TCP transport, with what a call over a connection needs besides; and this
machine's address and port as the far end is to reach them.

- aiosipua writes ``SIP/2.0/UDP`` into every Via it builds and no transport into the Contact;
  each request sent here names the connection's transport in its Via, and each request and
  answer in its Contact (``;transport=tcp``, ``;transport=tls``; a ``sips:`` Contact when the
  call is to a ``sips:`` URI), so that the far end answers and calls back over it rather than
  over UDP.
- TLS: the connection is opened with an ``ssl.SSLContext``; the far end's certificate is
  checked against the system's authorities or ``tls_ca_file``, for the name of the host
  connected to (the outbound proxy's, when there is one). Nothing listens for TLS.
- A caller keeps one connection, to the agent or its proxy. A request the agent sends back
  over it whose Via names another port than the connection's is answered over the
  connection all the same.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

TRANSPORT_NAMES = {"tcp": "TCP", "tls": "TLS"}


def local_address_for(host: str, port: int) -> str:
    """This machine's address on the way to ``host:port`` (the kernel's route; no packet is
    sent), what the Via, the Contact and the SDP must name for the far end to reach back."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((host, port))
        return probe.getsockname()[0]


class _QuietAssert(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "_UdpProtocol.connection_made" not in record.getMessage()


_QUIET = _QuietAssert()


def quiet_aiosipua() -> None:
    """Keep aiosipua's harmless start-up error on 3.11 (module docstring) out of the output."""
    logging.getLogger("asyncio").addFilter(_QUIET)  # (a filter is added once)


def name_bound_port(transport: Any) -> int:
    """The port an aiosipua UDP transport started on ``(host, 0)`` was bound to, written into
    its ``local_addr``: its messages' Via and Contact name that address, which must be the
    bound port and not 0."""
    assert transport._udp_transport is not None, "the transport has not started"
    host, port = transport._udp_transport.get_extra_info("sockname")[:2]
    transport.local_addr = (host, port)
    return int(port)


def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """A client's context: the far end's certificate checked against ``ca_file`` (a PEM of
    authorities; None: the system's) and its host name."""
    return ssl.create_default_context(cafile=ca_file)


def sip_transport(
    kind: str, host: str, *, tls: ssl.SSLContext | None = None, sips: bool = False
) -> Any:
    """An aiosipua transport for ``kind`` (``udp``, ``tcp`` or ``tls``), on ``host`` and a free
    port (started by the user agent that takes it). Over TCP it also listens on its port, for
    an agent that opens a connection of its own; over TLS it does not (there is no certificate
    to listen with): the agent's requests come back over the connection voicebench opened,
    whose port its Via and Contact name. ``sips``: the call is to a ``sips:`` URI, and its
    Contact is one too (RFC 3261 8.1.1.8)."""
    from aiosipua.message import SipRequest
    from aiosipua.transport import TcpSipTransport, UdpSipTransport

    if kind == "udp":
        return UdpSipTransport(local_addr=(host, 0))

    name = TRANSPORT_NAMES[kind]

    class StreamTransport(TcpSipTransport):
        async def start(self) -> None:
            if tls is not None:
                return
            self._server = await asyncio.start_server(
                self._handle_connection, host=self.local_addr[0], port=self.local_addr[1]
            )
            self.local_addr = self._server.sockets[0].getsockname()[:2]

        async def connect(self, remote_addr: tuple[str, int], server_hostname: str = "") -> Any:
            reader, writer = await asyncio.open_connection(
                remote_addr[0],
                remote_addr[1],
                ssl=tls,
                server_hostname=(server_hostname or remote_addr[0]) if tls else None,
            )
            self._connections[remote_addr] = (reader, writer)
            self._spawn(self._handle_incoming(reader, writer, remote_addr))
            if tls is not None:  # (no listener: the connection's own end is ours)
                self.local_addr = writer.get_extra_info("sockname")[:2]
            return reader, writer

        def send(self, message: Any, addr: tuple[str, int]) -> None:
            _name_transport(message, name, via=isinstance(message, SipRequest), sips=sips)
            if addr not in self._connections and len(self._connections) == 1:
                addr = next(iter(self._connections))  # (the caller's one connection)
            super().send(message, addr)

    return StreamTransport(local_addr=(host, 0))


def _name_transport(message: Any, name: str, *, via: bool, sips: bool) -> None:
    """The message's Contact names ``name``'s transport (a ``sips:`` one its scheme), and a
    request's own Via (the top one) too: an answer's Vias are the far end's."""
    vias = message.headers.get("via") if via else ()
    if vias and vias[0].startswith("SIP/2.0/UDP"):
        rest = vias[1:]
        message.headers.remove("Via")
        message.headers.append("Via", "SIP/2.0/" + name + vias[0][len("SIP/2.0/UDP") :])
        for line in rest:
            message.headers.append("Via", line)
    contact = message.get_header("contact")
    if not contact or ">" not in contact or "transport=" in contact.lower():
        return
    uri, _, rest = contact.partition(">")
    if sips and uri.startswith("<sip:"):
        uri = "<sips:" + uri[len("<sip:") :]
    else:
        uri += f";transport={name.lower()}"
    message.headers.set_single("Contact", f"{uri}>{rest}")
