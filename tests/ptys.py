"""Reading what a program wrote to a pseudo-terminal, for the tests of the terminal
monitor: a pty holds only some kilobytes unread, so a test reads its master side on a
thread of its own while the program writes."""

from __future__ import annotations

import os
import threading


def drain(master: int) -> tuple[bytearray, threading.Thread]:
    """Start reading ``master`` until its other side is closed; what was read so far
    grows in the returned bytearray (join the thread to have all of it)."""
    received = bytearray()

    def read_all() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the slave side is closed
                return
            if not data:
                return
            received.extend(data)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    return received, reader
