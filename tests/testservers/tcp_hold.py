#!/usr/bin/python3
"""A TCP forwarder that holds each connection until told to go.

    tcp_hold.py --target HOST:PORT --ready-file FILE --log FILE --go FILE

Listens on a free loopback port (written to --ready-file once listening).
Each accepted connection is logged ("accepted N", one line, flushed) and
then waits, reading nothing and forwarding nothing, until the file --go
exists; from then on it is forwarded both ways to --target.  Tests use it
to hold a client in the middle of connecting (e.g. cronguard inside
mysql_real_connect) for as long as they need, then let it through.
"""
import argparse
import os
import socket
import sys
import threading
import time


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, n, args, log):
    log.write("accepted %d\n" % n)
    log.flush()
    while not os.path.exists(args.go):
        time.sleep(0.05)
    host, _, port = args.target.rpartition(":")
    try:
        up = socket.create_connection((host, int(port)))
    except OSError as e:
        log.write("connect %d failed: %s\n" % (n, e))
        log.flush()
        conn.close()
        return
    threading.Thread(target=pump, args=(up, conn), daemon=True).start()
    pump(conn, up)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--go", required=True)
    args = ap.parse_args()

    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    log = open(args.log, "a")
    tmp = args.ready_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % lsock.getsockname()[1])
    os.rename(tmp, args.ready_file)
    n = 0
    while True:
        conn, _ = lsock.accept()
        n += 1
        threading.Thread(target=serve, args=(conn, n, args, log),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
