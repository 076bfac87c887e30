# SPDX-License-Identifier: GPL-2.0 OR MIT
"""python3 -m incnn.launch: start the local ranks of a distributed job.

    python3 -m incnn.launch --nproc-per-node N [--nnodes M --node-rank R
        --master-addr A --master-port P] script.py args...
    python3 -m incnn.launch --nproc-per-node N -m module args...

Sets the torchrun environment for every rank: MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK (= node rank).
(Debian 12's torchrun fails in its elastic agent on Python 3.11; this
launcher has no agent: a static job, no restarts.)

Each rank runs in its own session; SIGINT, SIGTERM, SIGHUP and SIGQUIT
sent to the launcher are forwarded to every rank. When a rank exits
non-zero (or is killed), the launcher terminates the others (SIGTERM,
then SIGKILL after --kill-timeout seconds) and exits with that rank's
status (128 + signal number for a signal). Every rank exiting 0: 0.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from typing import List, Optional

from ._addr import normalize_addr

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python3 -m incnn.launch",
        description="Start the local ranks of a PyTorch/incnn job with the "
                    "torchrun environment.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int,
                   default=1, metavar="N", help="ranks on this node")
    p.add_argument("--nnodes", type=int, default=1, metavar="M",
                   help="number of nodes (default 1)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   metavar="R", help="this node's index, 0..M-1")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1",
                   metavar="A", help="node 0's address: IPv4, IPv6 ([fd00::1] "
                   "or fd00::1; link-local with a scope, fe80::1%%eth0) or a "
                   "host name (default 127.0.0.1)")
    p.add_argument("--master-port", "--master_port", type=int,
                   default=29500, metavar="P",
                   help="rendezvous port (default 29500; incnn uses P+1)")
    p.add_argument("--kill-timeout", type=float, default=5.0, metavar="S",
                   help="seconds between SIGTERM and SIGKILL (default 5)")
    p.add_argument("-m", "--module", action="store_true",
                   help="the program is a module name (python3 -m)")
    p.add_argument("script", help="the training script (or module)")
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="its arguments")
    a = p.parse_args(argv)
    if a.nproc_per_node < 1 or a.nnodes < 1:
        p.error("--nproc-per-node and --nnodes must be at least 1")
    if not 0 <= a.node_rank < a.nnodes:
        p.error(f"--node-rank {a.node_rank}: must be 0..{a.nnodes - 1}")
    if not 1 <= a.master_port <= 65534:
        p.error(f"--master-port {a.master_port}: must be 1..65534")
    try:
        a.master_addr = normalize_addr(a.master_addr)
    except ValueError as e:
        p.error(f"--master-addr: {e}")
    return a


def rank_env(a: argparse.Namespace, local_rank: int) -> dict:
    env = dict(os.environ)
    env.update({
        "MASTER_ADDR": a.master_addr,
        "MASTER_PORT": str(a.master_port),
        "WORLD_SIZE": str(a.nnodes * a.nproc_per_node),
        "RANK": str(a.node_rank * a.nproc_per_node + local_rank),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(a.nproc_per_node),
        "GROUP_RANK": str(a.node_rank),
    })
    return env


def status_of(rc: int) -> int:
    """A Popen returncode as a shell exit status."""
    return 128 - rc if rc < 0 else rc


class Ranks:
    def __init__(self, procs: List[subprocess.Popen], kill_timeout: float):
        self.procs = procs
        self.kill_timeout = kill_timeout

    def signal(self, sig: int) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass

    def stop(self) -> None:
        """SIGTERM every running rank, SIGKILL what is left later."""
        self.signal(signal.SIGTERM)
        deadline = time.monotonic() + self.kill_timeout
        while time.monotonic() < deadline and \
                any(p.poll() is None for p in self.procs):
            time.sleep(0.05)
        self.signal(signal.SIGKILL)
        for p in self.procs:
            p.wait()

    def wait(self) -> int:
        """Until all exit 0 (0) or one fails (its status, others stopped)."""
        while True:
            running = False
            for r, p in enumerate(self.procs):
                rc = p.poll()
                if rc is None:
                    running = True
                elif rc != 0:
                    how = f"killed by signal {-rc}" if rc < 0 else \
                        f"exited with status {rc}"
                    print(f"incnn.launch: local rank {r} (pid {p.pid}) {how}"
                          "; stopping the other ranks", file=sys.stderr,
                          flush=True)
                    self.stop()
                    return status_of(rc)
            if not running:
                return 0
            time.sleep(0.05)


def main(argv: Optional[List[str]] = None) -> int:
    a = parse_args(sys.argv[1:] if argv is None else argv)
    cmd = [sys.executable, "-u"] + (["-m"] if a.module else []) + \
        [a.script] + a.args
    procs: List[subprocess.Popen] = []
    ranks = Ranks(procs, a.kill_timeout)
    got: List[int] = []

    def forward(sig: int, _frame: object) -> None:
        got.append(sig)
        ranks.signal(sig)

    for sig in FORWARDED:
        signal.signal(sig, forward)
    try:
        for lr in range(a.nproc_per_node):
            procs.append(subprocess.Popen(cmd, env=rank_env(a, lr),
                                          start_new_session=True))
    except OSError as e:
        print(f"incnn.launch: cannot start {a.script}: {e}", file=sys.stderr)
        ranks.stop()
        return 1
    rc = ranks.wait()
    if got and rc == 0:
        rc = 128 + got[0]
    return rc


if __name__ == "__main__":
    sys.exit(main())
