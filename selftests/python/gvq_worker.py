# SPDX-License-Identifier: GPL-2.0 OR MIT
"""One rank of the GradiVeQ hook selftests (run by test_gradiveq.py).

    gvq_worker.py OUTDIR STEPS [CODEC]

A small CNN (two 3x3 convolutions, two Linear layers) on synthetic 1x12x12
images labelled by a fixed random teacher, DDP with small buckets (several
per iteration), it.gradiveq_hook with d 48, k 8, warm-up 2, T_s 4, T_c
100, no loss monitor, fc on; CODEC (default none, e.g. ebq:2^-8):
GradiVeQState's codec for the uncompressed iterations. Rank r writes
OUTDIR/rank<r>.json: a digest of the final parameters, state.stats(),
the final loss, the error an fp64 bucket's future raised. Environment:
the torchrun variables; incnn uses MASTER_PORT + 1.
"""

import hashlib
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import incnn.torch as it

BATCH = 16


class _Fp64Bucket:
    """A stand-in for dist.GradBucket holding fp64 gradients."""

    def buffer(self) -> torch.Tensor:
        return torch.zeros(4, dtype=torch.float64)

    def parameters(self) -> list:
        return [torch.zeros(4, dtype=torch.float64)]

    def is_last(self) -> bool:
        return True


def main() -> None:
    outdir, steps = sys.argv[1], int(sys.argv[2])
    codec = sys.argv[3] if len(sys.argv) > 3 else "none"
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3),
                          nn.ReLU(), nn.Flatten(), nn.Linear(16 * 8 * 8, 64),
                          nn.ReLU(), nn.Linear(64, 10))
    # several buckets per iteration (PyTorch's documented knob)
    dist._DEFAULT_FIRST_BUCKET_BYTES = 4096
    ddp = DDP(model, bucket_cap_mb=0.05)
    state = it.GradiVeQState(d=48, k=8, warmup=2, ts=4, tc=100, eps=None,
                             fc=True, timeout=60, codec=codec)
    buckets = set()

    def hook(st: it.GradiVeQState, bucket: dist.GradBucket
             ) -> torch.futures.Future[torch.Tensor]:
        buckets.add(bucket.index())
        return it.gradiveq_hook(st, bucket)

    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(5)
    teacher = torch.randn(144, 10, generator=torch.Generator().manual_seed(7))
    for _ in range(steps):
        x = torch.randn(BATCH * world, 1, 12, 12, generator=g)
        y = (x.view(x.shape[0], -1) @ teacher).argmax(1)
        x, y = x[rank::world], y[rank::world]
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    res_err = ""
    try:                # an fp64 bucket: the error reaches the future
        it.gradiveq_hook(state, _Fp64Bucket()).wait()
    except Exception as e:                  # noqa: BLE001 - recorded
        res_err = f"{type(e).__name__}: {e}"
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    res = {"digest": hashlib.sha256(flat.numpy().tobytes()).hexdigest(),
           "stats": state.stats(), "loss": float(loss),
           "buckets": len(buckets), "error": res_err}
    state.close()
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
