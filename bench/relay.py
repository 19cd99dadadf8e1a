"""A network link with a round-trip time, for ssh's ProxyCommand: relay.py HOST PORT RTT_MS

Copies stdin to a TCP connection to HOST:PORT and that connection to stdout. Every chunk read on one side
is written on the other half the round-trip time after it was read, in the order it was read: each
direction is a reader thread that stamps each chunk with its due time and a writer thread that waits for
it, so chunks in flight overlap as on a real link and only latency is added, no bandwidth limit. The
connection itself is opened after one round trip, as a TCP handshake (SYN, SYN-ACK) takes before the
client can send. Standard library only, and run with `python3 -S`: a fresh ssh starts one of these.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable


def pump(read: Callable[[], bytes], write: Callable[[bytes], None], end: Callable[[], None],
         delay: float) -> threading.Thread:
    """Copy from `read` to `write`, each chunk `delay` seconds late; `end` once the source ended. Returns
    the writer thread (it finishes after `end`)."""
    held: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def reader() -> None:
        while True:
            try:
                chunk = read()
            except OSError:
                chunk = b""
            held.put((time.monotonic() + delay, chunk))
            if not chunk:
                return

    def writer() -> None:
        while True:
            due, chunk = held.get()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not chunk:
                end()
                return
            try:
                write(chunk)
            except OSError:
                end()
                return

    threading.Thread(target=reader, daemon=True).start()
    out = threading.Thread(target=writer, daemon=True)
    out.start()
    return out


def route(config: str, rtt_ms: float) -> None:
    """Send every `Host` of an SSH config file, and of the files it includes, through this relay at
    `rtt_ms`: a ProxyCommand line after each `HostName`, written over what an earlier call wrote (the first
    call keeps the original beside it, as `<file>.direct`)."""
    import glob

    line = f"    ProxyCommand {sys.executable} -S {os.path.abspath(__file__)} %h %p {rtt_ms:g}\n"
    with open(config + ".direct" if os.path.exists(config + ".direct") else config) as f:
        included = [p for row in f if row.startswith("Include ") for p in glob.glob(row.split(None, 1)[1].strip())]
    for path in [config, *(p for p in included if not p.endswith(".direct"))]:
        original = path + ".direct"
        if not os.path.exists(original):
            os.rename(path, original)
        with open(original) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("".join(row + (line if row.strip().startswith("HostName ") else "")
                            for row in text.splitlines(keepends=True)))


def main() -> int:
    host, port, rtt = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000.0
    time.sleep(rtt)  # the handshake: connect() returns one round trip after SYN
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()

    def to_stdout(data: bytes) -> None:
        while data:
            data = data[os.write(stdout, data):]

    def shut_write() -> None:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close_stdout() -> None:
        os.close(stdout)

    pump(lambda: os.read(stdin, 1 << 16), sock.sendall, shut_write, rtt / 2)
    pump(lambda: sock.recv(1 << 16), to_stdout, close_stdout, rtt / 2).join()
    return 0  # the server closed: ssh has read everything it sent


if __name__ == "__main__":
    sys.exit(main())
