# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Ports for the multi-rank Python tests."""

import random
import socket


def free_ports(k: int) -> int:
    """A base port P with P..P+k-1 free on 127.0.0.1, below Linux's
    ephemeral range (32768-60999), where other tests' connections (the
    collective suite opens many) take their local ports."""
    for _ in range(200):
        base = random.randrange(20000, 32768 - k)
        socks = []
        try:
            for p in range(base, base + k):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")
