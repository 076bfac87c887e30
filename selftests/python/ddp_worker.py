# SPDX-License-Identifier: GPL-2.0 OR MIT
"""One rank of the incnn.torch selftests (run by test_incnn_torch.py).

    ddp_worker.py train OUTDIR     DDP runs: default hook, incnn none,
                                   incnn ebq:2^-10, fp64 fallback,
                                   non-contiguous and fp16 allreduce
    ddp_worker.py kill OUTDIR      the last rank SIGKILLs itself at step 2
    ddp_worker.py stall OUTDIR     the last rank sleeps 30 s at step 2
    ddp_worker.py bucket OUTDIR    every lossy codec with scale and error
                                   feedback: DDP runs, keyed allreduces
                                   (the driver checks them against a
                                   torch reference), the zeroed-bucket
                                   warning
    ddp_worker.py vm OUTDIR CODEC  (selftests/net/torch.sh) the same DDP
                                   steps and a plain allreduce through
                                   codec "auto" (the module's rule,
                                   marked sockets) and through the
                                   userspace emulation of CODEC
                                   (unmarked sockets): equal bit for bit?

Rank r writes OUTDIR/rank<r>.pt (tensors) and OUTDIR/rank<r>.json
(checks done locally: {"name": [ok, message]}); the driver compares the
ranks. Environment: the torchrun variables (MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE). incnn uses MASTER_PORT + 1 and + 2.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
import sys
import time
import warnings
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import incnn.torch as it

STEPS = 40          # the training run (test 3)
SNAP = 5            # parameters compared after this many steps (test 1)
BATCH = 32


def make_data(rank: int, world: int) -> List[Any]:
    g = torch.Generator().manual_seed(1234)
    teacher = torch.randn(16, 4, generator=g)
    x = torch.randn(world * BATCH * 8, 16, generator=g)
    y = (x @ teacher + 0.5 * torch.randn(x.shape[0], 4, generator=g)) \
        .argmax(1)
    xs, ys = x[rank::world], y[rank::world]
    return [(xs[i:i + BATCH], ys[i:i + BATCH])
            for i in range(0, xs.shape[0], BATCH)]


def make_model(dtype: torch.dtype = torch.float32) -> nn.Module:
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64),
                         nn.ReLU(), nn.Linear(64, 4)).to(dtype)


def flat(ts: Any) -> torch.Tensor:
    return torch.cat([t.detach().reshape(-1).clone() for t in ts])


def train(data: List[Any], state: Optional[it.State], steps: int,
          dtype: torch.dtype = torch.float32,
          on_step: Any = None) -> Dict[str, Any]:
    """DDP with small buckets (several per step; rebuilt after step 1)."""
    ddp = DDP(make_model(dtype), bucket_cap_mb=0.01)
    if state is not None:
        ddp.register_comm_hook(state, it.allreduce_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    out: Dict[str, Any] = {"loss": []}
    for step in range(steps):
        if on_step:
            on_step(step)
        x, y = data[step % len(data)]
        loss = nn.functional.cross_entropy(ddp(x.to(dtype)), y)
        opt.zero_grad()
        loss.backward()
        if step == 0:
            out["grad0"] = flat(p.grad for p in ddp.parameters())
        opt.step()
        out["loss"].append(loss.item())
        if step + 1 == SNAP:
            out["snap"] = flat(ddp.parameters())
    out["params"] = flat(ddp.parameters())
    return out


def check(checks: Dict[str, Any], name: str, ok: bool, msg: str = "") -> None:
    checks[name] = [bool(ok), msg]


def scenario_train(outdir: str, rank: int, world: int) -> None:
    checks: Dict[str, Any] = {}
    data = make_data(rank, world)
    s_none = it.State(codec="none", timeout=20)
    s_ebq = it.State(codec="ebq:2^-10", timeout=20,
                     scale="off", error_feedback=False)
    check(checks, "wire codec reported", s_none.wire_codec == "none" and
          s_ebq.wire_codec == "ebq:2^-10",
          f"{s_none.wire_codec} {s_ebq.wire_codec}")
    res = {"default": train(data, None, STEPS),
           "none": train(data, s_none, STEPS),
           "ebq": train(data, s_ebq, STEPS)}

    division_rule(checks, rank, world, s_none, s_ebq)

    # fp64 buckets: process group fallback, one warning, same as default
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f64 = train(data, s_none, 3, torch.float64)
    ref64 = train(data, None, 3, torch.float64)
    nwarn = sum("not sent through incnn" in str(x.message) for x in w)
    check(checks, "fp64 bucket falls back, warns once",
          nwarn == 1 and torch.equal(f64["params"], ref64["params"]),
          f"{nwarn} warnings, equal {torch.equal(f64['params'], ref64['params'])}")

    # non-contiguous fp32 and an fp16 tensor through it.allreduce
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = base * (rank + 1)
    view = t.t()
    r = it.allreduce(view, s_none)
    want = base * (world * (world + 1) // 2)
    check(checks, "non-contiguous allreduce in place",
          r is view and not view.is_contiguous() and torch.equal(t, want),
          f"{t.tolist()}")
    h = (base * (rank + 1)).half()
    it.allreduce(h, s_none)
    check(checks, "fp16 allreduce falls back", torch.equal(h, want.half()))

    s_none.close()
    try:
        it.allreduce(torch.ones(4), s_none)
        check(checks, "use after close raises", False, "no error")
    except RuntimeError as e:
        check(checks, "use after close raises", "closed" in str(e), str(e))
    destroy = dist.destroy_process_group
    dist.destroy_process_group()
    open_after = not s_ebq._closed
    s_ebq.close()
    check(checks, "destroy_process_group is torch's, close() after it",
          open_after and s_ebq._closed and destroy is
          dist.distributed_c10d.destroy_process_group and
          destroy.__module__ == "torch.distributed.distributed_c10d",
          f"open after destroy {open_after}, {destroy!r}")
    torch.save(res, os.path.join(outdir, f"rank{rank}.pt"))
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(checks, f)


class Bucket:
    """What the hook uses of dist.GradBucket."""

    def __init__(self, t: torch.Tensor):
        self.t = t

    def buffer(self) -> torch.Tensor:
        return self.t


def division_rule(checks: Dict[str, Any], rank: int, world: int,
                  s_none: it.State, s_ebq: it.State) -> None:
    """Where the hook divides by the world size: before the sum with
    codec none (fused in C, bit for bit torch's div_ then the sum), after
    it with a lossy codec (the sum, then div_)."""
    g = torch.Generator().manual_seed(rank + 11)
    n = 100003                      # odd: uneven ring blocks
    x = torch.randn(n, generator=g) * torch.logspace(-6, 0, n)

    def hook(state: it.State) -> torch.Tensor:
        b = x.clone()
        it.allreduce_hook(state, Bucket(b)).wait()  # type: ignore[arg-type]
        return b

    def ref(state: it.State, after: bool) -> torch.Tensor:
        b = x.clone()
        if not after:
            b.div_(world)
        it.allreduce(b, state)
        return b.div_(world) if after else b
    check(checks, "divide_after: none False, ebq True",
          not s_none.divide_after and s_ebq.divide_after,
          f"{s_none.divide_after} {s_ebq.divide_after}")
    h = hook(s_none)
    check(checks, "none: hook == div_(N) then the sum, bit for bit",
          torch.equal(h, ref(s_none, False)),
          f"{int((h != ref(s_none, False)).sum())} values differ")
    h = hook(s_ebq)
    check(checks, "ebq: hook == the sum then div_(N), bit for bit",
          torch.equal(h, ref(s_ebq, True)) and
          not torch.equal(h, ref(s_ebq, False)),
          f"{int((h != ref(s_ebq, True)).sum())} values differ")


def scenario_fail(outdir: str, rank: int, world: int, how: str) -> None:
    state = it.State(codec="none", timeout=3)
    data = make_data(rank, world)
    t0 = [0.0]

    def on_step(step: int) -> None:
        if step == 2:
            t0[0] = time.monotonic()
            if rank == world - 1:
                if how == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(30)

    result: Dict[str, Any] = {}
    try:
        train(data, state, 5, on_step=on_step)
        result = {"raised": False}
    except Exception as e:      # noqa: BLE001 - reported to the driver
        result = {"raised": True, "type": type(e).__name__,
                  "msg": str(e), "after": time.monotonic() - t0[0]}
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    os._exit(0)     # the process group has a dead peer: do not tear down


def lossy_codecs() -> List[str]:
    """Every lossy float codec of the library's table, by name."""
    from incnn import _lib
    lib = _lib.lib
    lib.incnn_codec_get.restype = ctypes.POINTER(_lib.CodecHead)
    lib.incnn_codec_get.argtypes = [ctypes.c_uint]
    names = []
    for cid in range(1, 64):
        c = lib.incnn_codec_get(cid)
        if c and c.contents.lossy and c.contents.floats:
            names.append(c.contents.name.decode())
    return names


KEYED_CALLS = 4
KEYED_N = 30011


def keyed_input(rank: int, t: int) -> torch.Tensor:
    """Rank @rank's input of keyed call @t (the driver makes the same)."""
    g = torch.Generator().manual_seed(1000 * t + rank)
    return torch.randn(KEYED_N, generator=g) * \
        torch.logspace(-7, -2, KEYED_N)


def scenario_bucket(outdir: str, rank: int, world: int) -> None:
    port = int(os.environ["MASTER_PORT"])
    data = make_data(rank, world)
    res: Dict[str, Any] = {"codecs": lossy_codecs()}
    for i, name in enumerate(res["codecs"]):
        st = it.State(codec=name, port=port + 2 + i, timeout=20,
                      scale="auto", error_feedback=True)
        out = train(data, st, 6)
        keyed = []
        for t in range(KEYED_CALLS):
            keyed.append(it.allreduce(keyed_input(rank, t), st, key=5))
        stats = st.bucket_stats()
        # the DDP buckets' 2^e, one per parameter tensor (scale "auto")
        exps = [st._comm.bucket_exps(k) for _, k, _ in st._layouts.values()]
        res[name] = {"params": out["params"], "loss": out["loss"],
                     "keyed": keyed, "stats": stats, "exps": exps,
                     "nparams": sum(p.numel() for p in make_model()
                                    .parameters()),
                     "codec": st._comm.codec()}
        st.close()
        # the same with one 2^e per bucket
        st = it.State(codec=name, port=port + 20 + i, timeout=20,
                      scale="bucket", error_feedback=True)
        res[name]["params_bucket"] = train(data, st, 6)["params"]
        res[name]["exps_bucket"] = [st._comm.bucket_exps(k)
                                    for _, k, _ in st._layouts.values()]
        st.close()
    # a bound far above the values, no scale, no EF: one warning
    st = it.State(codec="ebq:2^-4", port=port + 40, timeout=20,
                  scale="off", error_feedback=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for t in range(12):
            it.allreduce(keyed_input(rank, t), st, key=9)
        st.close()
    msgs = [str(x.message) for x in w if "into zeros" in str(x.message)]
    res["warn"] = {"msgs": msgs, "flattened": st.flattened_buckets}
    torch.save(res, os.path.join(outdir, f"rank{rank}.pt"))


def digest(t: torch.Tensor) -> str:
    return hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]


def scenario_vm(outdir: str, rank: int, world: int, codec: str) -> None:
    port = int(os.environ["MASTER_PORT"])
    s_mod = it.State(codec="auto", timeout=120)
    s_emu = it.State(codec=codec, port=port + 2, timeout=120, tos=0)
    data = make_data(rank, world)
    mod, emu = train(data, s_mod, 3), train(data, s_emu, 3)
    g = torch.Generator().manual_seed(rank + 7)
    x = torch.randn(1 << 18, generator=g) * 1e-2
    xm, xe = it.allreduce(x.clone(), s_mod), it.allreduce(x.clone(), s_emu)
    ref = x.clone()
    dist.all_reduce(ref)            # gloo, exact up to rounding
    res = {"mod_codec": s_mod.wire_codec, "emu_codec": s_emu.wire_codec,
           "grad0": [digest(mod["grad0"]), digest(emu["grad0"])],
           "params": [digest(mod["params"]), digest(emu["params"])],
           "allreduce": [digest(xm), digest(xe)],
           "max_err": float((xe - ref).abs().max())}
    s_mod.close()
    s_emu.close()
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)


def main() -> None:
    what, outdir = sys.argv[1], sys.argv[2]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if what == "train":
        scenario_train(outdir, rank, world)
    elif what == "bucket":
        scenario_bucket(outdir, rank, world)
    elif what == "vm":
        scenario_vm(outdir, rank, world, sys.argv[3])
    else:
        scenario_fail(outdir, rank, world, what)


if __name__ == "__main__":
    main()
