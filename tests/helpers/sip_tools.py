"""Real SIP software for the tests, from Debian: baresip (an independent SIP user agent that
answers by itself and plays a known recording) and kamailio (a proxy and registrar that asks
for digest credentials). Each runs in the foreground from a configuration written into a
temporary folder, on 127.0.0.1 only, and is stopped when its test is done. Besides, a phone's
side of a call's media: a spoken turn at 8 kHz (``speech``) sent as RTP (``talk``).

Where they are not installed a test skips, except under CI (``CI`` set), where it fails: CI's
set-up installs both (`make sip-tools`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from voicebench.fixtures.audio import write_wav

BARESIP_MODULES = Path("/usr/lib/baresip/modules")
KAMAILIO_MODULES = Path("/usr/lib/x86_64-linux-gnu/kamailio/modules")
START_S = 20.0


def need(program: str) -> str:
    """The path of ``program``; a skip where it is missing, a failure under CI."""
    found = shutil.which(program) or shutil.which(program, path="/usr/sbin:/usr/bin")
    if found is None:
        message = f"{program} is not installed (make sip-tools, or apt-get install {program})"
        if os.environ.get("CI"):
            pytest.fail(message + ": CI installs it, so its absence is a failure here")
        pytest.skip(message)
    return found


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tone_wav(path: Path, seconds: float = 8.0, hz: float = 440.0) -> np.ndarray:
    """An 8 kHz recording for baresip to play: ``hz`` for 1 s, silence for 0.5 s, repeated."""
    rate = 8_000
    t = np.arange(int(seconds * rate)) / rate
    on = (t % 1.5) < 1.0
    pcm = (0.3 * 32767 * np.sin(2 * np.pi * hz * t) * on).astype(np.int16)
    write_wav(path, pcm, rate)
    return pcm


def speech() -> np.ndarray:
    """A spoken seeker turn of the built-in fixtures, at 8 kHz."""
    from voicebench.fixtures import BUILTIN_FIXTURES, load_manifest, read_wav
    from voicebench.fixtures.audio import resample, to_int16

    entry = load_manifest(BUILTIN_FIXTURES).entries[1]
    said = read_wav(BUILTIN_FIXTURES / entry.path, expect_rate=16_000)
    return to_int16(resample(said / 32768.0, 16_000, 8_000))


async def talk(rtp, pcm: np.ndarray) -> None:
    """``pcm`` as a phone sends it on ``rtp`` (an ``RtpSession``), a frame each 20 ms, then
    silence until cancelled."""
    frames = [pcm[at : at + 160] for at in range(0, pcm.size - 159, 160)]
    start = time.perf_counter()
    for k in itertools.count():
        rtp.send_frame(frames[k] if k < len(frames) else np.zeros(160, np.int16))
        await asyncio.sleep(max(0.0, start + (k + 1) * 0.02 - time.perf_counter()))


def _wait_for(log: Path, text: str, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"{what} did not start within {START_S:g} s:\n{tail}")


@dataclass(frozen=True)
class Baresip:
    uri: str
    """Where to call it directly: ``sip:USER@127.0.0.1:PORT``."""
    port: int
    log: Path

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def received_packets(self) -> int | None:
        """The RTP packets it received in its last call (its ``rtp_stats`` at hang-up)."""
        import re

        found = re.findall(r"packets:\s+(\d+)\s+(\d+)", self.said())
        return int(found[-1][1]) if found else None


@contextlib.contextmanager
def baresip(
    folder: Path,
    wav: Path,
    *,
    user: str = "bob",
    registrar: tuple[str, int] | None = None,
    password: str | None = None,
    answer: str = "auto",
    dial: str | None = None,
    certificate: Path | None = None,
) -> Iterator[Baresip]:
    """baresip answering calls to ``user`` (``answer``: auto, early or manual) by playing
    ``wav``; registered with ``registrar`` (with ``password``) when given. With ``dial``, it
    calls that URI itself as soon as it is ready (as ``user``, with ``password`` for a digest
    challenge), plays ``wav`` into the call and hangs up when it ends; its RTP statistics are
    in its log when the call is over (``received_packets``). It takes UDP and TCP on its
    port; with ``certificate`` (a PEM holding the certificate and its key), TLS on the next
    one."""
    program = need("baresip")
    folder.mkdir(parents=True, exist_ok=True)
    port, rtp = free_udp_port(), free_udp_port()
    (folder / "config").write_text(
        "\n".join(
            [
                "poll_method\tepoll",
                f"sip_listen\t127.0.0.1:{port}",
                "call_local_timeout\t120",
                "call_max_calls\t4",
                f"audio_source\taufile,{wav}",
                "audio_player\taufile,/dev/null",
                "audio_alert\taufile,/dev/null",
                f"rtp_ports\t{rtp}-{rtp + 40}",
                "rtcp_mux\tno",
                f"module_path\t{BARESIP_MODULES}",
                "module\tg711.so",
                "module\taufile.so",
                "module_tmp\taccount.so",
                "module_app\tmenu.so",
                "net_interface\t127.0.0.1",
                "rtp_stats\tyes",
                *([f"sip_certificate\t{certificate}"] if certificate else []),
                "",
            ]
        )
    )
    if registrar is None:
        secret = f";auth_pass={password}" if password else ""
        account = (
            f"<sip:{user}@127.0.0.1>{secret};regint=0;answermode={answer};audio_codecs=pcmu,pcma"
        )
    else:
        host, rport = registrar
        account = (
            f"<sip:{user}@{host}:{rport}>;auth_pass={password};answermode={answer};regint=600;"
            "audio_codecs=pcmu,pcma"
        )
    (folder / "accounts").write_text(account + "\n")
    log = folder / "baresip.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [program, "-f", str(folder), *(["-e", f"/dial {dial}"] if dial else [])],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=folder,
            start_new_session=True,
        )
    try:
        _wait_for(log, "200 OK" if registrar else "baresip is ready.", process, "baresip")
        yield Baresip(uri=f"sip:{user}@127.0.0.1:{port}", port=port, log=log)
    finally:
        # baresip unregisters on SIGTERM and may wait on a registrar already gone
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


KAMAILIO_CFG = """#!KAMAILIO
# A proxy and registrar with digest authentication against users held in memory, on
# 127.0.0.1 only: REGISTER is challenged with 401, a new INVITE with 407.
debug=2
log_stderror=yes
fork=yes
children=2
auto_aliases=no
listen=udp:127.0.0.1:{port}
alias="127.0.0.1:{port}"
mpath="{modules}/"

loadmodule "kex.so"
loadmodule "corex.so"
loadmodule "tm.so"
loadmodule "tmx.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "sanity.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "auth.so"
loadmodule "htable.so"

modparam("usrloc", "db_mode", 0)
modparam("rr", "append_fromtag", 1)
modparam("auth", "nonce_expire", 300)
modparam("htable", "htable", "users=>size=4;")

event_route[htable:mod-init] {{
{users}
}}

request_route {{
    xlog("L_INFO", "REQ $rm $ru from $si:$sp ($fu)\\n");
    if (!mf_process_maxfwd_header("10")) {{ sl_send_reply("483", "Too Many Hops"); exit; }}
    if (!sanity_check("17895", "7")) {{ exit; }}
    if (has_totag()) {{
        if (loose_route()) {{
            if (is_method("INVITE")) record_route();
            t_relay();
            exit;
        }}
        if (is_method("ACK")) {{
            if (t_check_trans()) {{ t_relay(); }}
            exit;
        }}
        sl_send_reply("404", "Not here");
        exit;
    }}
    if (is_method("CANCEL")) {{
        if (t_check_trans()) t_relay();
        exit;
    }}
    t_check_trans();
    if (is_method("REGISTER")) {{
        if (!pv_www_authenticate("$fd", "$sht(users=>$fU)", "0")) {{
            www_challenge("$fd", "0");
            exit;
        }}
        consume_credentials();
        if (!save("location")) sl_reply_error();
        exit;
    }}
    if (is_method("INVITE|MESSAGE|OPTIONS|SUBSCRIBE")) {{
        if (!pv_proxy_authenticate("$fd", "$sht(users=>$fU)", "0")) {{
            proxy_challenge("$fd", "0");
            exit;
        }}
        consume_credentials();
    }}
    if (is_method("INVITE|SUBSCRIBE")) record_route();
    if (!(uri==myself)) {{
        t_relay();  # (to a URI elsewhere: as an outbound proxy)
        exit;
    }}
    if (!lookup("location")) {{
        sl_send_reply("404", "Not Found");
        exit;
    }}
    t_relay();
    exit;
}}
"""


@dataclass(frozen=True)
class Kamailio:
    address: tuple[str, int]
    log: Path

    def said(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def kamailio(folder: Path, users: dict[str, str]) -> Iterator[Kamailio]:
    """kamailio on a free port of 127.0.0.1, knowing ``users`` (name -> password)."""
    program = need("kamailio")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run").mkdir(exist_ok=True)
    port = free_udp_port()
    lines = "\n".join(f'    $sht(users=>{u}) = "{p}";' for u, p in users.items())
    cfg = folder / "kamailio.cfg"
    cfg.write_text(KAMAILIO_CFG.format(port=port, modules=KAMAILIO_MODULES, users=lines))
    log = folder / "kamailio.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                program,
                "-DD",
                "-E",
                "-f",
                str(cfg),
                "-Y",
                str(folder / "run"),
                "-P",
                str(folder / "run" / "kamailio.pid"),
                "-m",
                "32",
                "-M",
                "4",
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(log, "SO_RCVBUF is finally", process, "kamailio")
        yield Kamailio(address=("127.0.0.1", port), log=log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def digest_answer(password: str, nonce: str, uri: str) -> str:
    """An ``Authorization`` header answering ``serve --protocol sip``'s challenge (``nonce``)
    to an INVITE of ``uri`` with ``password``, as a SIP phone computes it (RFC 2617, qop auth)."""
    from voicebench.live.serve_sip import REALM

    def md5(t: str) -> str:
        return hashlib.md5(t.encode()).hexdigest()

    ha1, ha2 = md5(f"anyone:{REALM}:{password}"), md5(f"INVITE:{uri}")
    response = md5(f"{ha1}:{nonce}:00000001:c0ffee:auth:{ha2}")
    return (
        f'Digest username="anyone", realm="{REALM}", nonce="{nonce}", uri="{uri}", '
        f'response="{response}", qop=auth, nc=00000001, cnonce="c0ffee", algorithm=MD5'
    )


class LossyRelay(asyncio.DatagramProtocol):
    """A lossy UDP path for SIP, as an outbound proxy would sit: ``async with LossyRelay(to,
    drop={"INVITE": 1})`` listens on ``relay.address``, hands each datagram from the caller on
    to ``to`` and each from ``to`` back to the caller, but drops the first ``drop[METHOD]``
    requests of each method named. ``seen`` counts the requests of each method that came."""

    def __init__(self, to: tuple[str, int], drop: dict[str, int]) -> None:
        self.to, self.drop = to, dict(drop)
        self.seen: dict[str, int] = {}
        self.address: tuple[str, int] = ("127.0.0.1", 0)
        self._caller: tuple[str, int] | None = None
        self._transport: asyncio.DatagramTransport | None = None

    async def __aenter__(self) -> LossyRelay:
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.create_datagram_endpoint(
            lambda: self, local_addr=("127.0.0.1", 0)
        )
        self.address = self._transport.get_extra_info("sockname")[:2]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._transport is not None:
            self._transport.close()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self._transport is not None
        if addr == self.to:
            if self._caller is not None:
                self._transport.sendto(data, self._caller)
            return
        self._caller = addr
        method = data.split(b" ", 1)[0].decode("ascii", "replace")
        if not method.startswith("SIP/"):
            self.seen[method] = self.seen.get(method, 0) + 1
            if self.drop.get(method, 0) > 0:
                self.drop[method] -= 1
                return
        self._transport.sendto(data, self.to)


def self_signed(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A certificate for ``host`` (an IP address), signed by its own key, good for a day:
    ``(cert.pem, both.pem)``, the second holding the key too (as baresip takes it)."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    pem = cert.public_bytes(serialization.Encoding.PEM)
    secret = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    (folder / "cert.pem").write_bytes(pem)
    (folder / "both.pem").write_bytes(pem + secret)
    return folder / "cert.pem", folder / "both.pem"
