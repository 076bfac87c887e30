# SPDX-License-Identifier: GPL-2.0 OR MIT
"""One rank of selftests/net/lgc.sh (LGC through the kernel module).

    lgc_vm.py OUTDIR STEPS T1 T2 CODEC

One process (importing torch takes over a minute under TCG) trains the
tiny CNN of lgc_worker.py four times, from the same start, STEPS steps
each (LGC: alpha 1 %, t1 T1, t2 T2, Adam for the autoencoder, measure on):

  baseline  the plain incnn hook, codec none, unmarked (momentum 0.9)
  none      LGC, codes unmarked (tos 0) and exact (codec "none")
  emulated  LGC, codes unmarked through the library's userspace CODEC
            (tos 0: the module never sees them)
  marked    LGC, codes on marked sockets (codec "auto": the module's rule
            for ToS 0x28 decides, the module's codec compresses them)

Rank r writes OUTDIR/rank<r>.json: per variant the parameters' digest
(after the last step, and after every step: "digests"), stats(), the
wire codec, the losses, the test accuracy and the mean
seconds per iteration of each stage. Environment: the torchrun variables;
the variants' incnn States use MASTER_PORT + 1 .. + 4.
"""

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lgc_worker import BATCH, data, digest, model  # noqa: E402

import incnn.torch as it  # noqa: E402

ALPHA = 0.01


def variant(name: str, codec: Optional[str], port: int, steps: int,
            t1: int, t2: int, x: Any, y: Any, tx: Any, ty: Any
            ) -> Dict[str, Any]:
    net = model()
    dist._DEFAULT_FIRST_BUCKET_BYTES = 20000    # type: ignore[attr-defined]
    ddp = DDP(net, bucket_cap_mb=0.02)
    if codec is None:
        st: Any = it.State(codec="none", port=port, timeout=120, tos=0)
        ddp.register_comm_hook(st, it.allreduce_hook)
        mom, wire = 0.9, st.wire_codec
    else:
        st = it.LGCState(net, alpha=ALPHA, t1=t1, t2=t2, ae_optim="adam",
                         codec=codec, port=port, timeout=120, measure=True,
                         tos=None if name == "marked" else 0)
        ddp.register_comm_hook(st, it.lgc_hook)
        mom, wire = 0.0, st.state.wire_codec
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=mom)
    times: Dict[str, List[float]] = {"1": [], "2": [], "3": []}
    losses, digests = [], []
    nb = x.shape[0] // BATCH
    for step in range(steps):
        stage = "1" if codec is None else str(st.stage)
        i = step % nb
        t0 = time.monotonic()
        loss = nn.functional.cross_entropy(
            ddp(x[i * BATCH:(i + 1) * BATCH]), y[i * BATCH:(i + 1) * BATCH])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step:                # step 0: DDP's first bucket rebuild
            times[stage].append(time.monotonic() - t0)
        losses.append(float(loss))
        digests.append(digest(torch.cat([p.detach().reshape(-1)
                                         for p in net.parameters()])))
    with torch.no_grad():
        acc = float((net(tx).argmax(1) == ty).float().mean())
    out = {"params": digest(torch.cat([p.detach().reshape(-1)
                                       for p in net.parameters()])),
           "loss": losses, "acc": acc, "wire_codec": wire,
           "digests": digests,
           "sec_per_it": {k: sum(v) / len(v) for k, v in times.items()
                          if v}}
    if codec is not None:
        out["stats"] = st.stats()
        out["ae_rel_error"] = st.ae_rel_error[-5:]
    st.close()
    return out


def main() -> None:
    outdir, steps, t1, t2 = sys.argv[1], *map(int, sys.argv[2:5])
    emul = sys.argv[5]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    x, y = data(rank, world, world * BATCH * 32, 1)
    tx, ty = data(0, 1, 1000, 2)
    port = int(os.environ["MASTER_PORT"])
    res: Dict[str, Any] = {}
    t0 = time.monotonic()
    for i, (name, codec) in enumerate((("baseline", None), ("none", "none"),
                                       ("emulated", emul),
                                       ("marked", "auto"))):
        res[name] = variant(name, codec, port + 1 + i, steps, t1, t2,
                            x, y, tx, ty)
        # progress, in $TMP/rank<r>.err (printed if the job fails)
        print(f"rank {rank}: {name} done at {time.monotonic() - t0:.0f} s "
              f"(s/it {res[name]['sec_per_it']})", file=sys.stderr,
              flush=True)
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
