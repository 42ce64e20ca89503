#!/usr/bin/python3
"""Throwaway SMTP server for cronguard's tests (Debian python3-aiosmtpd).

Usage:
    /usr/bin/python3 smtp_server.py --dir DIR [--port N] [--host 127.0.0.1]
        [--log FILE] [--ready-file FILE] [--auth USER:PASS]
        [--tls starttls|require-starttls|smtps --tls-dir DIR]
    /usr/bin/python3 smtp_server.py --make-certs DIR

--port 0 (the default) binds a free port.  Once listening, the port number is
written atomically to --ready-file and "smtp_server ready port=N" is printed
on stdout.  Runs until SIGTERM/SIGINT.

TLS.  --tls starttls offers STARTTLS (RFC 3207) and still accepts mail in
clear; require-starttls refuses MAIL before STARTTLS (530); smtps speaks TLS
from the first byte (implicit TLS, RFC 8314).  The certificate comes from
--tls-dir: DIR/server.pem and DIR/server.key, made on first use (see
--make-certs) with the openssl command line: a throwaway CA (DIR/ca.pem,
the file a client trusts) and a server certificate it signed for
CN=localhost, subjectAltName DNS:localhost, IP:127.0.0.1, valid two days.
--make-certs DIR only makes them (e.g. a second, wrong CA) and exits.

Storage.  Every accepted message becomes two files in DIR, written via a
temporary name and rename(2), so a reader never sees half a message:

    DIR/msg-000001.json   the envelope, written first:
        {"seq": 1, "conn": 3, "mail_from": "a@x", "rcpt_tos": ["b@x"],
         "peer": "127.0.0.1:40000", "time": 1700000000.123, "size": 1234,
         "tls": "TLSv1.3"}     (the TLS version the message came over,
                                null in clear)
    DIR/msg-000001.eml    the raw message exactly as received after DATA
                          (dot-unstuffed, CRLF line ends), no header added

Count messages with DIR/*.eml; an .eml file always has its .json beside it.
Numbering continues after a restart on the same DIR.

Event log (--log, JSON lines, flushed per line), one line per event:
    {"event": "connect", "conn": N, "peer": "...", "time": T}
    {"event": "starttls", "conn": N, "time": T}   (TLS is up on conn N)
    {"event": "message", "conn": N, "seq": S, "rcpt_tos": [...], "time": T}
    {"event": "fault", "conn": N, "code": 451, "rcpt": "...", "time": T}
    {"event": "auth", "conn": N, "mechanism": "PLAIN", "ok": B, "time": T}
                                                  (with --auth: a login)
    {"event": "disconnect", "conn": N, "messages": K, "time": T}
Connections are numbered from 1 per server process (a restart starts
again at 1 but logs "start" first: {"event": "start", "port": P}).

Fault injection by recipient local part (case-insensitive):
    tempfail@...        451 4.3.0 on RCPT TO (transient)
    reject@...          550 5.1.1 on RCPT TO (permanent)
    reject-latin1@...   550 5.1.1 on RCPT TO, its text in Latin-1, not UTF-8
                        ("Empf\xe4nger unbekannt")
    tempfail-data@...   accepted at RCPT, 451 4.3.0 after DATA
    tempfail-rate-P@... accepted at RCPT; P percent of DATA (at random) 451
    reject-data@...     accepted at RCPT, 554 5.6.0 after DATA
    slow-N@...          accepted, waits N milliseconds before answering DATA
A local part may carry a tag after "+", e.g. tempfail+t0500@example.com.
Other recipients are accepted.  Rejected recipients are not stored; a
message whose DATA is refused is not stored.

AUTH.  With --auth USER:PASS the server offers AUTH PLAIN and LOGIN (in
clear too) and refuses MAIL without it (530); other credentials get
"535 5.7.8 Authentication credentials invalid".  Without --auth it offers
no AUTH at all (a client that logs in anyway gets 503).
"""

import argparse
import asyncio
import fcntl
import json
import os
import random
import re
import signal
import ssl
import subprocess
import sys
import time

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Store:
    def __init__(self, directory, logpath):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.seq = 0
        for name in os.listdir(directory):
            m = re.fullmatch(r"msg-(\d+)\.(eml|json)", name)
            if m:
                self.seq = max(self.seq, int(m.group(1)))
        self.log = open(logpath, "a", buffering=1) if logpath else None
        self.conns = 0

    def event(self, **kw):
        if self.log is None:
            return
        kw["time"] = round(time.time(), 6)
        self.log.write(json.dumps(kw) + "\n")

    def _write(self, name, data):
        tmp = os.path.join(self.dir, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.rename(tmp, os.path.join(self.dir, name))

    def save(self, session, envelope):
        conn, peer = session.cg_conn, session.cg_peer
        self.seq += 1
        seq = self.seq
        content = envelope.original_content or b""
        meta = {
            "seq": seq,
            "conn": conn,
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "peer": peer,
            "time": round(time.time(), 6),
            "size": len(content),
            "tls": session.cg_tls,
        }
        self._write("msg-%06d.json" % seq,
                    (json.dumps(meta) + "\n").encode())
        self._write("msg-%06d.eml" % seq, content)
        self.event(event="message", conn=conn, seq=seq,
                   rcpt_tos=meta["rcpt_tos"])
        return seq


def local_part(address):
    local = address.split("@", 1)[0].lower()
    return local.split("+", 1)[0]


class Handler:
    def __init__(self, store):
        self.store = store

    async def handle_RCPT(self, server, session, envelope, address,
                          rcpt_options):
        local = local_part(address)
        if local == "tempfail":
            self.store.event(event="fault", conn=session.cg_conn, code=451,
                             rcpt=address)
            return "451 4.3.0 Temporary failure injected for " + address
        if local == "reject":
            self.store.event(event="fault", conn=session.cg_conn, code=550,
                             rcpt=address)
            return "550 5.1.1 Recipient rejected (injected): " + address
        if local == "reject-latin1":
            self.store.event(event="fault", conn=session.cg_conn, code=550,
                             rcpt=address)
            # bytes: aiosmtpd would encode a str as UTF-8
            return ("550 5.1.1 Empf\u00e4nger unbekannt: " +
                    address).encode("latin-1")
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        locals_ = [local_part(a) for a in envelope.rcpt_tos]
        for local in locals_:
            m = re.fullmatch(r"slow-(\d+)", local)
            if m:
                await asyncio.sleep(int(m.group(1)) / 1000.0)
        rate = max([int(m.group(1)) for m in
                    (re.fullmatch(r"tempfail-rate-(\d+)", x) for x in locals_)
                    if m] or [0])
        if "tempfail-data" in locals_ or random.random() * 100 < rate:
            self.store.event(event="fault", conn=session.cg_conn, code=451,
                             rcpt="tempfail-data")
            return "451 4.3.0 Temporary failure after DATA (injected)"
        if "reject-data" in locals_:
            self.store.event(event="fault", conn=session.cg_conn, code=554,
                             rcpt="reject-data")
            return "554 5.6.0 Message rejected after DATA (injected)"
        seq = self.store.save(session, envelope)
        session.cg_messages += 1
        return "250 2.0.0 OK queued as %06d" % seq


class CountingSMTP(SMTP):
    """SMTP session that numbers its connection and logs connect/close."""

    store = None

    def connection_made(self, transport):
        st = CountingSMTP.store
        # After STARTTLS aiosmtpd calls connection_made again with the TLS
        # transport and a fresh session: the same connection, not a new one.
        old = self.session if self._original_transport is not None else None
        super().connection_made(transport)
        if old is not None and hasattr(old, "cg_conn"):
            self.session.cg_conn = old.cg_conn
            self.session.cg_peer = old.cg_peer
            self.session.cg_messages = old.cg_messages
            self.session.cg_tls = tls_version(transport)
            st.event(event="starttls", conn=old.cg_conn)
            return
        st.conns += 1
        peer = transport.get_extra_info("peername")
        self.session.cg_conn = st.conns
        self.session.cg_peer = "%s:%s" % (peer[0], peer[1]) if peer else "?"
        self.session.cg_messages = 0
        self.session.cg_tls = tls_version(transport)
        st.event(event="connect", conn=st.conns, peer=self.session.cg_peer)

    def connection_lost(self, error):
        st = CountingSMTP.store
        sess = self.session
        if sess is not None and hasattr(sess, "cg_conn"):
            st.event(event="disconnect", conn=sess.cg_conn,
                     messages=sess.cg_messages)
        super().connection_lost(error)


def tls_version(transport):
    obj = transport.get_extra_info("ssl_object")
    return obj.version() if obj is not None else None


def openssl(*args):
    subprocess.run(("openssl",) + args, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_certs(directory):
    """A throwaway CA and a server certificate for localhost/127.0.0.1,
    made with the openssl command line (P-256 keys, two days)."""
    os.makedirs(directory, exist_ok=True)
    d = lambda name: os.path.join(directory, name)
    # Servers started together share the directory: one makes the files.
    with open(d(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(d("server.pem")):
            make_certs_locked(d)


def make_certs_locked(d):
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", d("ca.key"), "-out",
            d("ca.pem.tmp"), "-days", "2",
            "-subj", "/CN=cronguard test CA %d" % os.getpid(),
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", "-new", *ec, "-keyout", d("server.key"), "-out",
            d("server.csr"), "-subj", "/CN=localhost")
    with open(d("server.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", d("server.csr"), "-CA", d("ca.pem.tmp"),
            "-CAkey", d("ca.key"), "-set_serial", str(int(time.time())),
            "-days", "2", "-extfile", d("server.ext"),
            "-out", d("server.pem.tmp"))
    os.rename(d("ca.pem.tmp"), d("ca.pem"))
    os.rename(d("server.pem.tmp"), d("server.pem"))


def server_tls_context(directory):
    make_certs(directory)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(os.path.join(directory, "server.pem"),
                        os.path.join(directory, "server.key"))
    return ctx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--dir")
    ap.add_argument("--log")
    ap.add_argument("--ready-file")
    ap.add_argument("--auth", help="USER:PASS; offer AUTH PLAIN/LOGIN "
                    "without TLS and require it")
    ap.add_argument("--tls", choices=("starttls", "require-starttls",
                                      "smtps"))
    ap.add_argument("--tls-dir", help="certificates (made if missing)")
    ap.add_argument("--make-certs", metavar="DIR",
                    help="only make a CA and server certificate in DIR")
    args = ap.parse_args()
    if args.make_certs:
        make_certs(args.make_certs)
        return 0
    if args.dir is None:
        ap.error("--dir is required")
    if args.tls and not args.tls_dir:
        ap.error("--tls needs --tls-dir")

    store = Store(args.dir, args.log)
    CountingSMTP.store = store
    handler = Handler(store)

    kwargs = {"enable_SMTPUTF8": True, "data_size_limit": 50 * 1024 * 1024,
              "hostname": "cronguard-test-smtp", "timeout": 60}
    if args.auth:
        user, _, password = args.auth.partition(":")

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = (isinstance(auth_data, LoginPassword)
                  and auth_data.login.decode() == user
                  and auth_data.password.decode() == password)
            store.event(event="auth", conn=getattr(session, "cg_conn", None),
                        mechanism=mechanism, ok=ok)
            # handled defaults to True, which tells aiosmtpd the reply was
            # already sent: a refusal would then get no answer at all.
            # handled=False makes it answer 535 5.7.8.
            return AuthResult(success=ok, handled=False)
        kwargs.update(authenticator=authenticator, auth_required=True,
                      auth_require_tls=False)

    server_ssl = None
    if args.tls in ("starttls", "require-starttls"):
        kwargs.update(tls_context=server_tls_context(args.tls_dir),
                      require_starttls=args.tls == "require-starttls")
    elif args.tls == "smtps":
        server_ssl = server_tls_context(args.tls_dir)

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)

    def factory():
        return CountingSMTP(handler, loop=loop, **kwargs)

    server = loop.run_until_complete(
        loop.create_server(factory, host=args.host, port=args.port,
                           reuse_address=True, backlog=256,
                           ssl=server_ssl))
    port = server.sockets[0].getsockname()[1]
    store.event(event="start", port=port)

    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stop.done() or stop.set_result(1))

    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.ready_file)
    print("smtp_server ready port=%d dir=%s" % (port, args.dir), flush=True)

    loop.run_until_complete(stop)
    server.close()
    loop.run_until_complete(server.wait_closed())
    store.event(event="stop", port=port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
