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
          (queue, worker thread: divide, ctypes call; future), RANKS
          processes started by incnn.launch with a gloo process group
  ctypes: the worker-free path, incnn_allreduce through ctypes directly
  div_ctypes:  torch's div_(N), then incnn_allreduce through ctypes
  divc_ctypes: incnn_allreduce_div(N) through ctypes (the division fused
          into the ring's passes)
  hook_unfused: the hook as it was before incnn_allreduce_div (the
          worker thread calls div_(N), then incnn_allreduce)
  hook_ebq: the hook with codec ebq:2^-10 emulated, scale "off", no
          error feedback (the keyed call, quantised in userspace)
  hook_ebq_se / hook_inc_se: ebq:2^-10 / inceptionn:2^-10 with scale
          "auto" and error feedback (the defaults); the goal: at most
          1.25x the hook with codec none, measured in the same run (also
          given in CPU time of all ranks, steadier on a loaded machine)
Rounds alternate C and Python runs. Two overhead figures: the hook
against the C tool (separate processes, so load drift counts), and the
hook against the same incnn_allreduce call made through ctypes without
the hook, interleaved iteration by iteration in the same processes (the
cleaner one on a loaded machine). The hook's own work is the division
by the world size (as PyTorch's default hook; fused into the ring by
incnn_allreduce_div), the queue, the thread hand-off and the future.
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
    from incnn import _lib

    class Bucket:                       # what the hook uses of GradBucket
        def __init__(self, t: torch.Tensor):
            self.t = t

        def buffer(self) -> torch.Tensor:
            return self.t

    dist.init_process_group("gloo")
    state = it.State(codec="none")
    lossy = {
        "hook_ebq": it.State(codec="ebq:2^-10", scale="off",
                             error_feedback=False),
        "hook_ebq_se": it.State(codec="ebq:2^-10", scale="auto",
                                error_feedback=True),
        "hook_inc_se": it.State(codec="inceptionn:2^-10", scale="auto",
                                error_feedback=True),
    }
    world = dist.get_world_size()
    n = int(mb * 1048576) // 4
    src = torch.randn(n, generator=torch.Generator().manual_seed(
        dist.get_rank())) * 1e-3
    buf = torch.empty_like(src)
    kinds = ("hook", "ctypes", "div_ctypes", "divc_ctypes", "hook_unfused",
             "hook_ebq", "hook_ebq_se", "hook_inc_se")
    have_div = _lib.HAVE_DIV
    times = torch.zeros(len(kinds), iters, dtype=torch.float64)
    cpu = torch.zeros(len(kinds), iters, dtype=torch.float64)
    for i in range(warmup + iters):
        # interleaved, alternating the order: the machine's load drifts
        order = list(range(len(kinds)))
        for k in order if i % 2 else order[::-1]:
            buf.copy_(src)
            state.barrier()
            _lib.HAVE_DIV = have_div and kinds[k] != "hook_unfused"
            t0, c0 = time.perf_counter(), time.process_time()
            if kinds[k] in lossy:
                it.allreduce_hook(lossy[kinds[k]], Bucket(buf)).wait()
            elif kinds[k].startswith("hook"):
                it.allreduce_hook(state, Bucket(buf)).wait()
            elif kinds[k] == "divc_ctypes":
                state._comm.allreduce_div(buf.data_ptr(), n, float(world))
            else:
                if kinds[k] == "div_ctypes":
                    buf.div_(world)
                state._comm.allreduce(buf.data_ptr(), n)
            if i >= warmup:
                times[k, i - warmup] = time.perf_counter() - t0
                cpu[k, i - warmup] = time.process_time() - c0
    dist.all_reduce(times, op=dist.ReduceOp.MAX)    # the slowest rank
    dist.all_reduce(cpu)                            # all ranks' CPU time
    res = {}
    for k, what in enumerate(kinds):
        res[what] = times[k].mean().item() * 1e6
        res[what + "_median"] = times[k].median().item() * 1e6
        res[what + "_cpu"] = cpu[k].mean().item() * 1e6
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump(res, f)
    state.close()
    for st in lossy.values():
        st.close()
    dist.destroy_process_group()


def free_port() -> int:
    while True:
        p = random.randrange(20000, 60000)
        try:
            for q in range(p, p + 5):
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
    py: List[Dict[str, float]] = []
    for r in range(a.rounds):
        c.append(run_c(a))
        py.append(run_py(a))
        if not a.json:
            print(f"# round {r + 1}: C {c[-1] / 1e3:.2f} ms, hook "
                  f"{py[-1]['hook'] / 1e3:.2f} ms (unfused "
                  f"{py[-1]['hook_unfused'] / 1e3:.2f}), ctypes "
                  f"{py[-1]['ctypes'] / 1e3:.2f} ms (per-iteration "
                  f"medians {py[-1]['hook_median'] / 1e3:.2f}, "
                  f"{py[-1]['ctypes_median'] / 1e3:.2f})", flush=True)
    med = {k: statistics.median(p[k] for p in py) / 1e3 for k in py[0]}
    mc = statistics.median(c) / 1e3
    # the hook against C: the tool's figure (separate runs); against the
    # same call through ctypes in the same processes, interleaved
    res = {"ranks": a.ranks, "bucket_mb": a.mb, "iters": a.iters,
           "rounds": a.rounds, "c_ms": mc, "hook_ms": med["hook"],
           "ctypes_ms": med["ctypes"],
           "hook_vs_c": med["hook"] / mc - 1,
           "hook_vs_ctypes": med["hook"] / med["ctypes"] - 1,
           "hook_vs_ctypes_median": med["hook_median"] /
           med["ctypes_median"] - 1,
           "div_ctypes_ms": med["div_ctypes"],
           "divc_ctypes_ms": med["divc_ctypes"],
           "hook_unfused_ms": med["hook_unfused"],
           "hook_unfused_vs_ctypes": med["hook_unfused"] / med["ctypes"] - 1,
           "hook_unfused_vs_c": med["hook_unfused"] / mc - 1,
           "hook_vs_divc_ctypes": med["hook"] / med["divc_ctypes"] - 1,
           "hook_cpu_ms": med["hook_cpu"], "ctypes_cpu_ms": med["ctypes_cpu"],
           "hook_cpu_vs_ctypes": med["hook_cpu"] / med["ctypes_cpu"] - 1,
           "hook_ebq_ms": med["hook_ebq"],
           "hook_ebq_se_ms": med["hook_ebq_se"],
           "hook_inc_se_ms": med["hook_inc_se"],
           "ebq_se_vs_none": med["hook_ebq_se"] / med["hook"],
           "inc_se_vs_none": med["hook_inc_se"] / med["hook"],
           "ebq_vs_none": med["hook_ebq"] / med["hook"]}
    # CPU time (all threads, all ranks): steadier than wall time on a
    # loaded machine
    for k in ("hook_ebq", "hook_ebq_se", "hook_inc_se"):
        res[k + "_cpu_ms"] = med[k + "_cpu"]
        res[k + "_cpu_vs_none"] = med[k + "_cpu"] / med["hook_cpu"]
    if a.json:
        print(json.dumps(res))
        return
    print(f"{a.ranks} ranks, {a.mb:g} MB fp32 bucket, codec none, loopback; "
          f"median over {a.rounds} rounds of the {a.iters}-iteration mean "
          "(slowest rank):")
    print(f"  incnn-allreduce (C)       {mc:8.2f} ms")
    print(f"  incnn_allreduce (ctypes)  {med['ctypes']:8.2f} ms")
    print(f"  div_(N) + ctypes call     {med['div_ctypes']:8.2f} ms")
    print(f"  incnn_allreduce_div       {med['divc_ctypes']:8.2f} ms")
    print(f"  allreduce_hook (unfused)  {med['hook_unfused']:8.2f} ms")
    print(f"  allreduce_hook            {med['hook']:8.2f} ms")
    print(f"overhead of the hook: {100 * res['hook_vs_c']:+.1f} % vs the C "
          f"tool, {100 * res['hook_vs_ctypes']:+.1f} % vs the same call "
          f"without the hook (interleaved; per-iteration medians "
          f"{100 * res['hook_vs_ctypes_median']:+.1f} %); the unfused hook "
          f"{100 * res['hook_unfused_vs_ctypes']:+.1f} % ("
          f"{100 * res['hook_unfused_vs_c']:+.1f} % vs the C tool); the "
          f"division by div_ {100 * (med['div_ctypes'] / med['ctypes'] - 1):+.1f} %, "
          f"fused {100 * (med['divc_ctypes'] / med['ctypes'] - 1):+.1f} %; "
          f"the queue, thread and future "
          f"{100 * res['hook_vs_divc_ctypes']:+.1f} %")
    print(f"  hook ebq:2^-10 off/no EF  {med['hook_ebq']:8.2f} ms "
          f"({res['ebq_vs_none']:.3f}x none)")
    print(f"  hook ebq:2^-10 auto + EF  {med['hook_ebq_se']:8.2f} ms "
          f"({res['ebq_se_vs_none']:.3f}x none)")
    print(f"  hook inceptionn auto + EF {med['hook_inc_se']:8.2f} ms "
          f"({res['inc_se_vs_none']:.3f}x none)")
    print(f"CPU time per bucket, all ranks: ctypes {med['ctypes_cpu']:.2f} ms, "
          f"div_ + ctypes {med['div_ctypes_cpu']:.2f} ms, fused "
          f"{med['divc_ctypes_cpu']:.2f} ms, hook unfused "
          f"{med['hook_unfused_cpu']:.2f} ms, hook "
          f"{med['hook_cpu']:.2f} ms ({100 * res['hook_cpu_vs_ctypes']:+.1f} %)")
    print("  lossy hooks: " + ", ".join(
        f"{what} {med[k + '_cpu']:.2f} ms ({res[k + '_cpu_vs_none']:.3f}x)"
        for k, what in (("hook_ebq", "ebq off/no EF"),
                        ("hook_ebq_se", "ebq auto + EF"),
                        ("hook_inc_se", "inceptionn auto + EF"))))


if __name__ == "__main__":
    main()
