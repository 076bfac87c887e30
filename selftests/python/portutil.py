# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Ports for the multi-rank Python tests."""

import random
import socket


def free_ports(k: int, host: str = "127.0.0.1") -> int:
    """A base port P with P..P+k-1 free on @host (127.0.0.1, or ::1),
    below Linux's ephemeral range (32768-60999), where other tests'
    connections (the collective suite opens many) take their local
    ports."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(200):
        base = random.randrange(20000, 32768 - k)
        socks = []
        try:
            for p in range(base, base + k):
                s = socket.socket(family)
                socks.append(s)
                s.bind((host, p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")
