#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Accuracy study behind incnn.torch's defaults for scale and
error_feedback (docs/training.md): make demo's CNN and HDC MLP
(scripts/demo/demo-torch.py's models, data and SGD settings) on 4 local
ranks with the codec emulated, every configuration in one job.

    PYTHONPATH=build/python python3 -m incnn.launch --nproc-per-node 4 \\
        selftests/python/scale_ef_study.py OUT.jsonl MNIST_BIN [STEPS]

Configurations (STUDY_CONFIGS: a comma list to pick): "default"
(PyTorch's allreduce hook) and "CODEC:2^-K/SCALE/EF" with SCALE auto|off
and EF ef|noef. Rank 0 appends one JSON object per (model, config):
test accuracy after STEPS steps (default 150), the last loss, the
fraction of the values that rank 0's first hop sends as zeros and the
codec's ratio on them (incnn_codec_encode of the bucket times 2^e, in
1448-byte pieces, sampled every 25 steps), ms per step.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import sys
import time
from typing import Any, Dict, List

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "scripts", "demo", "demo-torch.py")

CONFIGS = ["default"] + [
    f"{c}:2^-{k}/{s}/{e}"
    for c in ("inceptionn", "ebq") for k in (10, 8)
    for s, e in (("off", "noef"), ("auto", "noef"), ("off", "ef"),
                 ("auto", "ef"))]


def demo_module() -> Any:
    spec = importlib.util.spec_from_file_location("demo_torch", DEMO)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


class Ratio:
    """Bytes the codec makes of sampled buckets (times 2^e)."""

    def __init__(self) -> None:
        from incnn import _lib
        lib = self.lib = _lib.lib
        lib.incnn_codec_encode.restype = ctypes.c_ssize_t
        lib.incnn_codec_encode.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p,
            ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
            ctypes.c_void_p, ctypes.c_void_p]
        self.enc = ctypes.create_string_buffer(8192)
        self.scratch = ctypes.create_string_buffer(1 << 20)
        self.inb = self.outb = self.zeros = self.n = 0

    def add(self, codec: str, x: torch.Tensor) -> None:
        name, _, k = codec.partition(":")
        c = ctypes.cast(self.lib.incnn_codec_find(name.encode()),
                        ctypes.c_void_p)
        param = int(k.split("-")[1])
        x = x.contiguous()
        for i in range(0, x.numel(), 362):      # 1448-byte segments
            v = x[i:i + 362]
            n = self.lib.incnn_codec_encode(c, 0, param, v.data_ptr(),
                                            4 * v.numel(), self.enc,
                                            len(self.enc), self.scratch,
                                            None)
            self.inb += 4 * v.numel()
            self.outb += n
        self.n += x.numel()


def run(demo: Any, model_name: str, cfg: str, data: Any, steps: int,
        port: int) -> Dict[str, Any]:
    import incnn.torch as it
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, ytr, xte, yte, _ = data
    ddp = DDP(demo.make_model(model_name))
    st, ratio = None, Ratio()
    if cfg == "default":
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    else:
        codec, scale, ef = cfg.split("/")
        st = it.State(codec=codec, port=port, timeout=300, tos=0,
                      scale=scale, error_feedback=ef == "ef")
        sample = [False]

        def hook(state, bucket):    # type: ignore[no-untyped-def]
            if sample[0] and rank == 0:
                buf = bucket.buffer().detach().clone()
                index = bucket.index()

                def measure(f: Any) -> Any:
                    key = state._layouts[index][1]
                    info = state._comm.bucket_info(key)
                    e = info.exp if info is not None else 0
                    # what this rank sends first: divided by N first
                    # unless the State divides after the sum
                    div = 1 if state.divide_after else world
                    ratio.add(codec, buf / div * 2.0 ** e)
                    return f.value()
                return it.allreduce_hook(state, bucket).then(measure)
            return it.allreduce_hook(state, bucket)
        ddp.register_comm_hook(st, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(xtr.shape[0], generator=g)
    per_step = demo.BATCH * world
    t0 = time.perf_counter()
    for step in range(steps):
        if st is not None:
            sample[0] = step % 25 == 24
        off = (step * per_step) % (xtr.shape[0] - per_step + 1)
        idx = perm[off + rank * demo.BATCH: off + (rank + 1) * demo.BATCH]
        loss = F.cross_entropy(ddp(xtr[idx]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    ms = (time.perf_counter() - t0) / steps * 1e3
    out: Dict[str, Any] = {"model": model_name, "config": cfg,
                           "steps": steps, "ms_per_step": round(ms, 1),
                           "final_loss": round(float(loss), 4)}
    if st is not None:
        stats = st.bucket_stats()
        out.update(ef_bytes=stats["ef_bytes"],
                   flattened_buckets=stats["flattened"],
                   codec_ratio=round(ratio.outb / ratio.inb, 4)
                   if ratio.inb else None)
        st.close()
    with torch.no_grad():
        model = ddp.module.eval()
        out["test_accuracy"] = round(
            float((model(xte).argmax(1) == yte).float().mean()) * 100, 2)
    return out


def main() -> None:
    out, data_path = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    demo = demo_module()
    data = demo.load_mnist(data_path)
    names = os.environ.get("STUDY_CONFIGS")
    cfgs: List[str] = names.split(",") if names else CONFIGS
    models = os.environ.get("STUDY_MODELS", "hdc-mlp,cnn").split(",")
    port = int(os.environ["MASTER_PORT"]) + 1
    for m in models:
        for i, c in enumerate(cfgs):
            res = run(demo, m, c, data, steps, port + i)
            if dist.get_rank() == 0:
                res["data"] = data[4]
                with open(out, "a") as f:
                    f.write(json.dumps(res) + "\n")
                print(json.dumps(res), flush=True)
        port += len(cfgs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
