#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The DDP hook's cost per bucket against incnn_allreduce called from C.

    PYTHONPATH=build/python /usr/bin/python3 selftests/python/bench_hook.py \
        [--ranks 2] [--mb 25] [--iters 10] [--rounds 3] [--json]

Not part of make check. Both sides on loopback, codec none, the same
procedure per iteration (incnn-allreduce's): restore the input, a barrier
through incnn's store, then time one call; the figure is the mean over
the timed iterations of the slowest rank's mean.
  C:      build/rel/bin/incnn-allreduce -n RANKS -b MB -e MB --codec none
  hook:   it.allreduce_hook(state, bucket).wait() on a 25 MB fp32 bucket
          (divide, queue, worker thread, ctypes call, future), RANKS
          processes started by incnn.launch with a gloo process group
  ctypes: the worker-free path, incnn_allreduce through ctypes directly
Rounds alternate C and Python runs; overhead = hook / C - 1 of the
medians.
"""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def rank_main(mb: float, iters: int, warmup: int, out: str) -> None:
    import torch
    import torch.distributed as dist
    import incnn.torch as it

    class Bucket:                       # what the hook uses of GradBucket
        def __init__(self, t: torch.Tensor):
            self.t = t

        def buffer(self) -> torch.Tensor:
            return self.t

    dist.init_process_group("gloo")
    state = it.State(codec="none")
    n = int(mb * 1048576) // 4
    src = torch.randn(n, generator=torch.Generator().manual_seed(
        dist.get_rank())) * 1e-3
    buf = torch.empty_like(src)
    res = {}
    for what in ("hook", "ctypes"):
        total = 0.0
        for i in range(warmup + iters):
            buf.copy_(src)
            state.barrier()
            t0 = time.perf_counter()
            if what == "hook":
                it.allreduce_hook(state, Bucket(buf)).wait()
            else:
                state._comm.allreduce(buf.data_ptr(), n)
            if i >= warmup:
                total += time.perf_counter() - t0
        worst = torch.tensor([total / iters], dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        res[what] = worst.item() * 1e6
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(res, f)
    state.close()
    dist.destroy_process_group()


def free_port() -> int:
    while True:
        p = random.randrange(20000, 60000)
        try:
            for q in (p, p + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", q))
            return p
        except OSError:
            pass


def run_c(a: argparse.Namespace) -> float:
    tool = os.path.join(os.environ.get("INCNN_BUILD", os.path.join(
        SRC, "build")), "rel", "bin", "incnn-allreduce")
    size = str(int(a.mb * 1048576))
    r = subprocess.run([tool, "-n", str(a.ranks), "-b", size, "-e", size,
                        "-i", str(a.iters), "-w", str(a.warmup),
                        "--codec", "none", "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["results"][0]["time_us"]


def run_py(a: argparse.Namespace) -> Dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        subprocess.run([sys.executable, "-m", "incnn.launch",
                        "--nproc-per-node", str(a.ranks), "--master-port",
                        str(free_port()), os.path.abspath(__file__),
                        "--rank-main", "--mb", str(a.mb), "--iters",
                        str(a.iters), "--warmup", str(a.warmup), "--out",
                        out], check=True)
        with open(out) as f:
            return json.load(f)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--mb", type=float, default=25.0)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--rank-main", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.rank_main:
        rank_main(a.mb, a.iters, a.warmup, a.out)
        return
    c: List[float] = []
    hook: List[float] = []
    ct: List[float] = []
    for r in range(a.rounds):
        c.append(run_c(a))
        py = run_py(a)
        hook.append(py["hook"])
        ct.append(py["ctypes"])
        if not a.json:
            print(f"# round {r + 1}: C {c[-1] / 1e3:.2f} ms, hook "
                  f"{hook[-1] / 1e3:.2f} ms, ctypes {ct[-1] / 1e3:.2f} ms",
                  flush=True)
    mc, mh, mt = (statistics.median(x) for x in (c, hook, ct))
    res = {"ranks": a.ranks, "bucket_mb": a.mb, "iters": a.iters,
           "rounds": a.rounds, "c_ms": mc / 1e3, "hook_ms": mh / 1e3,
           "ctypes_ms": mt / 1e3, "hook_overhead": mh / mc - 1,
           "ctypes_overhead": mt / mc - 1}
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{a.ranks} ranks, {a.mb:g} MB bucket, codec none, median of "
              f"{a.rounds} rounds x {a.iters} iterations:")
        print(f"  C incnn_allreduce  {mc / 1e3:8.2f} ms")
        print(f"  hook               {mh / 1e3:8.2f} ms  "
              f"({100 * (mh / mc - 1):+.1f} %)")
        print(f"  ctypes direct      {mt / 1e3:8.2f} ms  "
              f"({100 * (mt / mc - 1):+.1f} %)")


if __name__ == "__main__":
    main()
