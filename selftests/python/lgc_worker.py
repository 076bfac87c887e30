# SPDX-License-Identifier: GPL-2.0 OR MIT
"""One rank of the LGC selftests and measurement (run by test_lgc.py).

    lgc_worker.py OUTDIR STEPS T1 T2 [baseline|ALPHA [feedback]]

A tiny CNN on synthetic 1x12x12 images (a fixed random teacher labels
them), DDP with small buckets, LGC hook (or the plain incnn hook with
"baseline"). Rank r writes OUTDIR/rank<r>.json: per iteration the stage
and a digest of the top-k indices of every bucket, a digest of the final
parameters, state.stats(), the test accuracy. Environment: the torchrun
variables; incnn uses MASTER_PORT + 1. LGC_STRIDE (code_stride, default
16), LGC_CODEC (incnn codec of the State, default "none"), LGC_OPTIM
(ae_optim, default adam), LGC_AE_LR (default 1e-3), LGC_INIT (ae_init,
default torch), LGC_NORM (ae_norm, default rms), LGC_MEASURE=1 (measure),
LGC_TRAINER (trainer, default 0), LGC_SAMPLES (wire_samples, default 0;
with an emulated codec the sockets are unmarked), LGC_BUCKET_BYTES (DDP's
bucket caps, default 20000) tune it; "digests" has
the parameters' digest after every step. LGC_CHECKS=1
(the selftests) adds, for LGC: the hook's asynchrony (at iterations T1
and T1+T2 the worker thread holds its first bucket until the hook of the
last one has returned: a synchronous hook would wait 20 s instead) and
one more step after STEPS where the worker fails the first bucket on
purpose (the error must reach backward).
"""

import hashlib
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import incnn.torch as it

BATCH = 16


def data(rank: int, world: int, n: int, seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    teacher = torch.randn(144, 10, generator=torch.Generator().manual_seed(7))
    x = torch.randn(n, 1, 12, 12, generator=g)
    y = (x.view(n, -1) @ teacher).argmax(1)
    return x[rank::world], y[rank::world]


def model() -> nn.Module:
    torch.manual_seed(1)
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3),
                         nn.ReLU(), nn.Flatten(), nn.Linear(16 * 8 * 8, 64),
                         nn.ReLU(), nn.Linear(64, 10))


def digest(t: torch.Tensor) -> str:
    return hashlib.sha256(t.detach().numpy().tobytes()).hexdigest()[:16]


def gated_hook(st: Any, gated: Any, out: Dict[str, Any]) -> Any:
    """it.lgc_hook, checked for asynchrony at the iterations in @gated:
    out["async"] gets, per gated iteration, [the worker's first bucket
    saw the last hook return within 20 s, the futures done at return,
    the threads that ran the buckets]."""
    ev: Dict[int, threading.Event] = {g: threading.Event() for g in gated}
    rec: Dict[int, List[Any]] = {g: [False, [], set()] for g in gated}
    first: Dict[int, bool] = {}
    orig = st.process

    def process(bucket: Any, iteration: Any = None) -> Any:
        if iteration in rec:
            rec[iteration][2].add(threading.current_thread().name)
            if iteration not in first:
                first[iteration] = True
                rec[iteration][0] = ev[iteration].wait(20)
        return orig(bucket, iteration)

    st.process = process            # the worker thread calls self.process

    def hook(state: Any, bucket: dist.GradBucket
             ) -> torch.futures.Future[torch.Tensor]:
        i = state.iteration
        fut = it.lgc_hook(state, bucket)
        if i in rec:
            rec[i][1].append(fut.done())
            if bucket.is_last():
                ev[i].set()
        return fut

    out["async"] = rec
    return hook


def fault_step(st: Any, ddp: Any, opt: Any, x: Any, y: Any) -> str:
    """One more step whose first bucket fails in the worker on every rank
    (before any collective): the message backward raises."""
    orig = st.process
    seen: List[int] = []

    def process(bucket: Any, iteration: Any = None) -> Any:
        seen.append(1)
        if len(seen) == 1:
            raise ValueError("lgc_worker: injected fault")
        return orig(bucket, iteration)

    st.process = process
    try:
        nn.functional.cross_entropy(ddp(x), y).backward()
    except Exception as e:              # noqa: BLE001 - reported
        return f"{type(e).__name__}: {e}"
    return "no error"


def main() -> None:
    outdir, steps, t1, t2 = sys.argv[1], *map(int, sys.argv[2:5])
    baseline = len(sys.argv) > 5 and sys.argv[5] == "baseline"
    alpha = float(sys.argv[5]) if len(sys.argv) > 5 and not baseline \
        else 0.01
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    x, y = data(rank, world, world * BATCH * 32, 1)
    tx, ty = data(0, 1, 1000, 2)
    net = model()
    # several buckets per iteration: DDP's first bucket is 1 MB otherwise;
    # LGC_BUCKET_BYTES=1: a bucket per tensor (the first layer's: dense)
    cap = int(os.environ.get("LGC_BUCKET_BYTES", "20000"))
    dist._DEFAULT_FIRST_BUCKET_BYTES = cap      # type: ignore[attr-defined]
    ddp = DDP(net, bucket_cap_mb=cap / 1e6)
    if baseline:
        st: Any = it.State(codec="none", timeout=60)
        ddp.register_comm_hook(st, it.allreduce_hook)
        mom = 0.9
    else:
        codec = os.environ.get("LGC_CODEC", "none")
        emulated = codec not in ("none", "auto")
        st = it.LGCState(net, alpha=alpha, t1=t1, t2=t2,
                         ae_lr=float(os.environ.get("LGC_AE_LR", "1e-3")),
                         ae_optim=os.environ.get("LGC_OPTIM", "adam"),
                         ae_init=os.environ.get("LGC_INIT", "torch"),
                         ae_norm=os.environ.get("LGC_NORM", "rms"),
                         measure=os.environ.get("LGC_MEASURE") == "1",
                         trainer=int(os.environ.get("LGC_TRAINER", "0")),
                         timeout=60,
                         codec=codec, tos=0 if emulated else None,
                         wire_samples=int(os.environ.get("LGC_SAMPLES",
                                                         "0")),
                         feedback="feedback" in sys.argv[6:],
                         code_stride=int(os.environ.get("LGC_STRIDE", "16")))
        mom = 0.0            # DGC's momentum correction replaces it
    checks = not baseline and os.environ.get("LGC_CHECKS") == "1"
    out: Dict[str, Any] = {"stages": [], "indices": [], "loss": [],
                           "digests": []}
    if checks:
        ddp.register_comm_hook(st, gated_hook(st, {t1, t1 + t2}, out))
    elif not baseline:
        ddp.register_comm_hook(st, it.lgc_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=mom)
    t0 = time.monotonic()
    nb = x.shape[0] // BATCH
    for step in range(steps):
        if not baseline:
            out["stages"].append(st.stage)
        i = step % nb
        loss = nn.functional.cross_entropy(
            ddp(x[i * BATCH:(i + 1) * BATCH]), y[i * BATCH:(i + 1) * BATCH])
        opt.zero_grad()
        loss.backward()
        opt.step()
        out["loss"].append(float(loss))
        out["digests"].append(digest(torch.cat(
            [p.detach().reshape(-1) for p in net.parameters()])))
        if not baseline:
            out["indices"].append({str(k): digest(v.to(torch.int64))
                                   for k, v in st.last_indices.items()})
            st.last_indices.clear()
    out["seconds"] = time.monotonic() - t0
    with torch.no_grad():
        out["acc"] = float((net(tx).argmax(1) == ty).float().mean())
    out["params"] = digest(torch.cat([p.detach().reshape(-1)
                                      for p in net.parameters()]))
    if not baseline:
        out["stats"] = st.stats()
        out["samples"] = {k: len(v) for k, v in st.coded_samples.items()}
        if any(st.coded_samples.values()):
            # ratio 1/2 for every stage: "sent" less half the coded bytes
            out["stats_half"] = st.stats(codec_ratio=0.5)
        out["ae_loss"] = st.ae_loss
        out["ae_rel_error"] = st.ae_rel_error
        out["ae"] = digest(torch.cat([p.detach().reshape(-1)
                                      for p in st.ae.parameters()]))
    if checks:
        out["fault"] = fault_step(st, ddp, opt, x[:BATCH], y[:BATCH])
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(out, f, default=sorted)
    st.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
