#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""make demo's PyTorch section: DDP with PyTorch's own hooks and incnn's.

    python3 -m incnn.launch --nproc-per-node 4 scripts/demo/demo-torch.py \\
        train OUTDIR DATA CODEC_TOOL [STEPS]
    python3 scripts/demo/demo-torch.py report OUTDIR

train: every rank trains each model (a torchvision-style CNN, the paper's
HDC MLP 784-500-500-500-500-10; INCNN_TORCH_MODELS: a comma list of
MODELS, default all) for STEPS steps (default 150, batch 32
per rank, SGD lr 0.05 momentum 0.9, same seed) under each configuration
(CONFIGS below; INCNN_TORCH_CONFIGS: a comma list of names from CONFIGS
and EXTRA_CONFIGS). Rank 0 appends one JSON object per run to
OUTDIR/torch.jsonl and prints a progress line with an ETA. DATA is
incnn-train's MNIST file (scripts/demo/mnist-fetch.sh); when it is missing the
runs use a synthetic set and say so in every row ("data").

What is measured, per run (the first WARMUP steps are not timed; they
include PowerSGD's plain-allreduce phase, start_powerSGD_iter):
  iter_ms         mean wall time of forward + backward + optimizer step
  comm_share      the time at least one bucket's communication is in
                  flight (the hook called .. its future completed, the
                  union of those intervals) over the iteration time
  payload_bytes_per_iter   what the hook hands to its allreduce(s) per
                  iteration: every torch.distributed.all_reduce call is
                  counted (fp32 buckets, fp16 buckets, PowerSGD's P, Q and
                  uncompressed tensors); for incnn, the fp32 bucket bytes
                  times the codec's measured ratio (below)
  wire_bytes_per_iter      bytes each rank sends per iteration under a
                  ring allreduce (gloo's and incnn's): 2 (N-1)/N times
                  the payload; TCP/IP headers not counted
  codec_ratio     incnn codecs: out_bytes / in_bytes of `incnn-codec
                  encode --chunk 1448` (one 1500-MTU TCP segment per
                  chunk, as the module encodes per segment) over the
                  bucket contents of rank 0 on SAMPLES timed steps, as
                  they go on the wire first (the gradient; divided by
                  N for the "-before" configurations); the ring's partial
                  sums are not sampled
  test_accuracy   rank 0's model on the 2,000 test digits after STEPS

vm: the VM part (scripts/demo/demo-torch-vm.sh, one rank per host of the
rate-limited cluster): the HDC MLP, default allreduce then incnn.torch
codec "auto" through the module; adds eth0_tx_bytes_per_iter (rank 0's
interface counter over the timed steps, headers included) and writes
OUTDIR/torch-vm.jsonl.

report: torch.json (a list of the objects, "where": "host", and the VM
part's from VMOUT/torch-vm.jsonl, "where": "vm"), torch.md (the
Markdown section) and the plot's data torch-plot.dat in OUTDIR.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

BATCH = 32
WARMUP = 10
SAMPLES = 4
# name, kind, argument (see make_hook)
CONFIGS: List[Tuple[str, str, Any]] = [
    ("default", "default", None),
    ("fp16", "fp16", None),
    ("powersgd-1", "powersgd", 1),
    ("powersgd-4", "powersgd", 4),
    ("incnn-none", "incnn", "none"),
    ("incnn-ebq-10", "incnn", "ebq:2^-10"),
    ("incnn-inceptionn-10", "incnn", "inceptionn:2^-10"),
]
# not in the demo: the hook dividing by N before the sum with a lossy
# codec (State(divide="before"), what it did before the rule; README)
EXTRA_CONFIGS: List[Tuple[str, str, Any]] = [
    ("incnn-ebq-10-before", "incnn-before", "ebq:2^-10"),
    ("incnn-inceptionn-10-before", "incnn-before", "inceptionn:2^-10"),
]
LABELS = {
    "default": "DDP default (gloo allreduce)",
    "fp16": "fp16_compress_hook",
    "powersgd-1": "PowerSGD rank 1",
    "powersgd-4": "PowerSGD rank 4",
    "incnn-none": "incnn, no codec",
    "incnn-ebq-10": "incnn ebq 2^-10",
    "incnn-inceptionn-10": "incnn inceptionn 2^-10",
    "incnn-auto": "incnn, codec auto (the module's rule)",
    "incnn-ebq-10-before": "incnn ebq 2^-10, divided before the sum",
    "incnn-inceptionn-10-before":
        "incnn inceptionn 2^-10, divided before the sum",
}
MODELS = ["cnn", "hdc-mlp"]


def selected(names: str, known: List[Any], what: str) -> List[Any]:
    """The entries of @known named in the comma list @names (all if
    empty), in @names' order."""
    if not names:
        return list(known)
    by = {(k[0] if isinstance(k, tuple) else k): k for k in known}
    bad = [n for n in names.split(",") if n not in by]
    if bad:
        raise SystemExit(f"demo-torch: unknown {what} {', '.join(bad)}; "
                         f"known: {', '.join(by)}")
    return [by[n] for n in names.split(",")]


# --- data ---------------------------------------------------------------
def load_mnist(path: str) -> Tuple[Any, Any, Any, Any, str]:
    """incnn-train's file (scripts/demo/mnist-fetch.sh), or a synthetic set."""
    import torch
    if os.path.exists(path):
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:8] != b"INCNNMN1":
            raise RuntimeError(f"{path}: not an incnn MNIST file")
        ntr, nte, rows, cols = struct.unpack_from("<4I", raw, 8)
        rec = rows * cols + 1
        t = torch.frombuffer(bytearray(raw[24:24 + (ntr + nte) * rec]),
                             dtype=torch.uint8).reshape(ntr + nte, rec)
        x = (t[:, :-1].float() / 255 - 0.1307) / 0.3081
        x = x.reshape(-1, 1, rows, cols)
        y = t[:, -1].long()
        return x[:ntr], y[:ntr], x[ntr:], y[ntr:], "MNIST"
    g = torch.Generator().manual_seed(7)
    proto = torch.randn(10, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (10000,), generator=g)
    x = proto[y] + 1.5 * torch.randn(10000, 1, 28, 28, generator=g)
    return x[:8000], y[:8000], x[8000:], y[8000:], "synthetic"


# --- models -------------------------------------------------------------
def make_model(name: str) -> Any:
    import torch
    import torch.nn as nn
    torch.manual_seed(1)
    if name == "cnn":       # PyTorch's MNIST example network, smaller fc
        return nn.Sequential(
            nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(),
            nn.Linear(128, 10))
    layers: List[Any] = [nn.Flatten()]
    width = [784, 500, 500, 500, 500]
    for a, b in zip(width, width[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(500, 10))


# --- measuring hooks ----------------------------------------------------
class Meter:
    """Per-iteration communication intervals and all_reduce payload."""

    def __init__(self) -> None:
        self.intervals: List[Tuple[float, float]] = []
        self.payload = 0
        self.fp32_bucket_bytes = 0
        self.samples: List[Any] = []
        self.sample_now = False

    def reset(self) -> None:
        self.intervals, self.payload, self.fp32_bucket_bytes = [], 0, 0

    def in_flight(self) -> float:
        busy, end = 0.0, float("-inf")
        for a, b in sorted(self.intervals):
            if b > end:
                busy += b - max(a, end)
                end = b
        return busy


METER = Meter()


def count_all_reduce() -> None:
    """Count every torch.distributed.all_reduce's bytes (the hooks all
    call it as dist.all_reduce)."""
    import torch.distributed as dist
    orig = dist.all_reduce

    def counted(tensor: Any, *a: Any, **kw: Any) -> Any:
        METER.payload += tensor.numel() * tensor.element_size()
        return orig(tensor, *a, **kw)
    dist.all_reduce = counted


def timed(hook: Callable, world: int, sample: bool,
          serial: bool = False) -> Callable:
    """@hook, timed; with @sample, rank 0 keeps copies of what goes on
    the wire first: the bucket divided by @world (1: as it is)."""
    def wrapper(state, bucket):     # type: ignore[no-untyped-def]
        # (no annotations: DDP insists on its own ones when present)
        t0 = time.perf_counter()
        buf = bucket.buffer()
        METER.fp32_bucket_bytes += buf.numel() * buf.element_size()
        if sample and METER.sample_now:
            METER.samples.append(buf.detach().clone() / world)
        fut = hook(state, bucket)
        if serial:      # see make_hook
            fut.wait()

        def done(f: Any) -> Any:
            METER.intervals.append((t0, time.perf_counter()))
            return f.value()
        return fut.then(done)
    return wrapper


def make_hook(kind: str, arg: Any, warmup: int, port: int,
              world: int) -> Tuple[Any, Callable, Any]:
    from torch.distributed.algorithms.ddp_comm_hooks import (
        default_hooks as dh, powerSGD_hook as ps)
    if kind == "default":   # what DDP runs without a hook, as a hook
        return None, timed(dh.allreduce_hook, world, False), None
    if kind == "fp16":
        return None, timed(dh.fp16_compress_hook, world, False), None
    if kind == "powersgd":
        st = ps.PowerSGDState(process_group=None,
                              matrix_approximation_rank=arg,
                              start_powerSGD_iter=min(10, warmup),
                              random_seed=0)
        # one bucket after the other: PowerSGD chains allreduces in its
        # futures' callbacks, and with several buckets in flight they
        # reach gloo in a different order on different ranks (gloo
        # aborts: "op.preamble.length <= op.nbytes")
        return st, timed(ps.powerSGD_hook, world, False, True), None
    import incnn.torch as it
    if kind == "incnn-auto":    # the module's rule for ToS arg, marked
        st = it.State(codec="auto", port=port, timeout=300, tos=arg)
        return st, timed(it.allreduce_hook, world, False), st
    st = it.State(codec=arg, port=port, timeout=120, tos=0,
                  divide="before" if kind == "incnn-before" else "auto")
    return st, timed(it.allreduce_hook, 1 if st.divide_after else world,
                     arg != "none"), st


def codec_ratio(tool: str, codec: str, samples: List[Any]) -> float:
    import torch
    if codec in ("none", "auto") or not samples:
        return 1.0
    name, bound = codec.split(":")
    with tempfile.TemporaryDirectory() as d:
        inp = os.path.join(d, "grad.f32")
        torch.cat([s.reshape(-1) for s in samples]).numpy().tofile(inp)
        r = subprocess.run([tool, "encode", "--codec", name, "--bound",
                            bound, "--chunk", "1448", "--json", inp,
                            os.path.join(d, "grad.inc")],
                           capture_output=True, text=True, check=False)
        if r.returncode:
            raise RuntimeError(f"incnn-codec: {r.stderr.strip()}")
        j = json.loads(r.stdout)
        return j["out_bytes"] / j["in_bytes"]


# --- one run ------------------------------------------------------------
def tx_bytes(dev: str = "eth0") -> int:
    """@dev's transmitted bytes in this process's network namespace."""
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == dev:
                return int(rest.split()[8])
    raise RuntimeError(f"no device {dev} in /proc/net/dev")


def run(model_name: str, cfg: Tuple[str, str, Any], data: Tuple,
        steps: int, port: int, tool: str,
        tx: Optional[Callable[[], int]] = None,
        warmup: int = WARMUP, batch: int = BATCH, evaluate: bool = True
        ) -> Optional[Dict[str, Any]]:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, ytr, xte, yte, source = data
    name, kind, arg = cfg
    ddp = DDP(make_model(model_name))
    state, hook, inc = make_hook(kind, arg, warmup, port, world)
    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(xtr.shape[0], generator=g)
    per_step = batch * world
    every = max(1, (steps - warmup) // SAMPLES)
    METER.samples = []
    iter_s, busy, payload, fp32b = 0.0, 0.0, 0, 0
    tx0 = 0
    for step in range(steps):
        if step == warmup and tx is not None:
            tx0 = tx()
        off = (step * per_step) % (xtr.shape[0] - per_step + 1)
        idx = perm[off + rank * batch: off + (rank + 1) * batch]
        METER.reset()
        METER.sample_now = rank == 0 and step >= warmup and \
            (step - warmup) % every == 0 and len(METER.samples) < 64
        t0 = time.perf_counter()
        loss = F.cross_entropy(ddp(xtr[idx]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if step >= warmup:
            iter_s += t1 - t0
            busy += METER.in_flight()
            payload += METER.payload
            fp32b += METER.fp32_bucket_bytes
    tx1 = tx() if tx is not None else 0
    if tx is not None:      # every rank's counter: the mean over the ranks
        d = torch.tensor([float(tx1 - tx0)], dtype=torch.float64)
        dist.all_reduce(d)
        tx_mean = d.item() / world
    if inc is not None:
        wire_codec = inc.wire_codec
        inc.close()
    if rank != 0:
        return None
    acc = None
    if evaluate:    # (the VM skips it: minutes of emulated CPU)
        with torch.no_grad():
            model = ddp.module.eval()
            acc = float((model(xte).argmax(1) == yte).float().mean())
    timed_steps = steps - warmup
    incnn = kind in ("incnn", "incnn-before")   # emulated: ratio measured
    ratio = codec_ratio(tool, arg, METER.samples) if incnn else None
    if incnn:
        payload = fp32b * ratio
    params = sum(p.numel() for p in ddp.parameters())
    extra: Dict[str, Any] = {}
    if tx is not None:
        extra = {"eth0_tx_bytes_per_iter": round(tx_mean / timed_steps)}
    if inc is not None:
        extra["wire_codec"] = wire_codec
    return {**extra,
        "config": name, "label": LABELS[name], "model": model_name,
        "data": source, "ranks": world, "steps": steps,
        "timed_steps": timed_steps, "batch_per_rank": batch,
        "params": params,
        "iter_ms": round(iter_s / timed_steps * 1e3, 3),
        "comm_share": round(busy / iter_s, 4),
        "fp32_bucket_bytes_per_iter": fp32b // timed_steps,
        "payload_bytes_per_iter": round(payload / timed_steps),
        "wire_bytes_per_iter":
            round(payload / timed_steps * 2 * (world - 1) / world),
        "codec_ratio": None if ratio is None else round(ratio, 5),
        "test_accuracy": None if acc is None else round(acc, 4),
        "final_loss": round(float(loss), 4),
    }


def train(outdir: str, data_path: str, tool: str, steps: int) -> None:
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    count_all_reduce()
    data = load_mnist(data_path)
    base = int(os.environ["MASTER_PORT"]) + 1
    out = os.path.join(outdir, "torch.jsonl")
    models = selected(os.environ.get("INCNN_TORCH_MODELS", ""), MODELS,
                      "model")
    configs = selected(os.environ.get("INCNN_TORCH_CONFIGS", ""),
                       CONFIGS + EXTRA_CONFIGS, "configuration") \
        if os.environ.get("INCNN_TORCH_CONFIGS") else CONFIGS
    runs = [(m, c) for m in models for c in configs]
    t_start = time.monotonic()
    for i, (m, c) in enumerate(runs):
        res = run(m, c, data, steps, base + i, tool)
        dist.barrier()
        if res is None:
            continue
        with open(out, "a") as f:
            f.write(json.dumps(res) + "\n")
        el = time.monotonic() - t_start
        eta = el / (i + 1) * (len(runs) - i - 1)
        print(f"demo-torch: [{i + 1}/{len(runs)}] {m} {LABELS[c[0]]}: "
              f"{res['iter_ms']:.1f} ms/iter, "
              f"{res['wire_bytes_per_iter'] / 1e6:.3f} MB/iter, comm "
              f"{res['comm_share'] * 100:.0f} %, accuracy "
              f"{res['test_accuracy'] * 100:.2f} % ({el:.0f} s, about "
              f"{eta:.0f} s left)", flush=True)
    dist.destroy_process_group()


# The VM part: the HDC MLP under every configuration, through the module.
# incnn's lossy configurations are codec "auto" on marked sockets: the
# module's rule for tos 0x28 (ebq 2^-10) or tos 0x30 (inceptionn 2^-10),
# set by scripts/demo/demo-torch-vm.sh; "none" is unmarked (tos 0).
VM_CONFIGS: List[Tuple[str, str, Any]] = [
    ("default", "default", None),
    ("fp16", "fp16", None),
    ("powersgd-1", "powersgd", 1),
    ("powersgd-4", "powersgd", 4),
    ("incnn-none", "incnn", "none"),
    ("incnn-ebq-10", "incnn-auto", 0x28),
    ("incnn-inceptionn-10", "incnn-auto", 0x30),
]
VM_WARMUP = 2
VM_BATCH = 8        # per rank: 4 ranks share the VM's 2 emulated CPUs


def vm(outdir: str, data_path: str, steps: int) -> None:
    """Inside the VM cluster (scripts/demo/demo-torch-vm.sh), one rank per
    host: the HDC MLP under each of VM_CONFIGS in this one process (torch
    is imported once: that takes minutes under TCG), a fresh DDP model and
    hook per configuration, STEPS steps of VM_BATCH digits per rank
    (INCNN_TORCH_VM_BATCH; the gradient's size does not depend on it, the
    emulated compute does) of which the first VM_WARMUP are
    not timed (DDP's bucket rebuild; PowerSGD's start_powerSGD_iter is
    VM_WARMUP here, the least it allows, so that the timed steps are
    compressed); every rank counts its eth0 tx bytes over the timed
    steps (the mean over the ranks is reported)."""
    t_import = time.monotonic()
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        print(f"demo-torch-vm: torch imported, process group of "
              f"{dist.get_world_size()} up ({time.monotonic() - t_import:.0f} s)",
              flush=True)
    count_all_reduce()
    data = load_mnist(data_path)
    base = int(os.environ["MASTER_PORT"]) + 1
    names = os.environ.get("INCNN_TORCH_VM_CONFIGS", "")
    cfgs = selected(names, VM_CONFIGS, "configuration")
    for i, c in enumerate(cfgs):
        t0 = time.monotonic()
        res = run("hdc-mlp", c, data, steps, base + i, "", tx_bytes,
                  VM_WARMUP, int(os.environ.get("INCNN_TORCH_VM_BATCH",
                                                VM_BATCH)), evaluate=False)
        dist.barrier()
        if res is None:
            continue
        res["link_rate"] = os.environ.get("INCNN_TORCH_VM_RATE", "")
        res["start_powerSGD_iter"] = VM_WARMUP if c[1] == "powersgd" else None
        with open(os.path.join(outdir, "torch-vm.jsonl"), "a") as f:
            f.write(json.dumps(res) + "\n")
        print(f"demo-torch-vm: [{i + 1}/{len(cfgs)}] {LABELS[c[0]]}"
              f"{' (' + res['wire_codec'] + ')' if 'wire_codec' in res else ''}: "
              f"{res['iter_ms']:.0f} ms/iter, eth0 "
              f"{res['eth0_tx_bytes_per_iter'] / 1e6:.3f} MB/iter, comm "
              f"{res['comm_share'] * 100:.0f} % "
              f"({time.monotonic() - t0:.0f} s)", flush=True)
    dist.destroy_process_group()


# --- report -------------------------------------------------------------
def vm_table(vmdir: str, host: List[Dict[str, Any]]
             ) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The VM part's rows (torch-vm.jsonl) and their Markdown table; the
    accuracy is the host run's of the same model and configuration (the
    VM's few steps say nothing about it; the host's incnn codecs are the
    userspace emulation, bit-identical to the module)."""
    path = os.path.join(vmdir, "torch-vm.jsonl")
    if not os.path.exists(path):
        return [], []
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    acc = {(r["model"], r["config"]): r["test_accuracy"] for r in host}
    for r in rows:
        # the VM's wire bytes are the interface counter, not the model
        r["where"] = "vm"
        r["ring_model_bytes_per_iter"] = r["wire_bytes_per_iter"]
        r["wire_bytes_per_iter"] = r["eth0_tx_bytes_per_iter"]
        r["codec_ratio"] = None     # the module's, see the hosts' stats
        r["test_accuracy"] = acc.get((r["model"], r["config"]))
        r["test_accuracy_from"] = "host run" if r["test_accuracy"] \
            is not None else None
    if not rows:
        return rows, []
    r0 = rows[0]
    ref = next((r["wire_bytes_per_iter"] for r in rows
                if r["config"] == "default"), 0)
    lines = [
        "", "Through the real module (VM, QEMU/TCG, "
        "scripts/demo/demo-torch-vm.sh): "
        f"{r0['ranks']} hosts of the VM cluster, a rank each, links limited "
        f"to {r0.get('link_rate') or '10mbit'} with tbf, rules "
        "`tos 0x28 codec ebq bound 2^-10` and `tos 0x30 codec inceptionn "
        "bound 2^-10` (incnn.torch codec \"auto\" on sockets marked 0x28 "
        "or 0x30; \"no codec\" is unmarked); the HDC MLP, "
        f"{r0['timed_steps']} timed steps after {r0['steps'] - r0['timed_steps']} "
        "(PowerSGD's start_powerSGD_iter is "
        f"{r0['steps'] - r0['timed_steps']} here); wire bytes are the eth0 tx "
        "counter per iteration (mean over the hosts, headers included); "
        "accuracy is the host run's of the same configuration:", "",
        "| configuration | ms/iter | eth0 MB/iter | vs default | comm % "
        "| test accuracy (host) |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        a = r["test_accuracy"]
        codec = f" ({r['wire_codec']})" if r.get("wire_codec") else ""
        lines.append(
            f"| {r['label']}{codec} | {r['iter_ms']:.0f} | "
            f"{r['eth0_tx_bytes_per_iter'] / 1e6:.3f} | "
            f"{ref / max(1, r['wire_bytes_per_iter']):.1f}x | "
            f"{r['comm_share'] * 100:.0f} | "
            f"{'-' if a is None else f'{a * 100:.2f} %'} |")
    return rows, lines


def report(outdir: str, vmdir: Optional[str] = None) -> None:
    rows = []
    with open(os.path.join(outdir, "torch.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for r in rows:
        r["where"] = "host"
    vrows, vlines = vm_table(vmdir, rows) if vmdir else ([], [])
    with open(os.path.join(outdir, "torch.json"), "w") as f:
        json.dump(rows + vrows, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "torch-plot.dat"), "w") as f:
        for r in rows:
            short = r["config"].replace("incnn-", "inc ").replace(
                "inceptionn", "incep")
            f.write(f"\"{r['model']}\\n{short}\" {r['iter_ms']} "
                    f"{r['wire_bytes_per_iter'] / 1e6} "
                    f"{r['test_accuracy'] * 100} {r['comm_share'] * 100}\n")
    if not rows:
        return
    r0 = rows[0]
    lines = [
        f"{r0['ranks']} local ranks (`incnn.launch`, gloo), "
        f"{r0['steps']} steps of {r0['batch_per_rank']} {r0['data']} "
        f"digits per rank, times over the last {r0['timed_steps']} steps; "
        "incnn codecs emulated in userspace (bit-identical to the module). "
        "Wire bytes: what each rank sends per iteration in a ring "
        "allreduce, 2(N-1)/N x the hook's all_reduce payload (incnn: fp32 "
        "bytes x `incnn-codec` ratio on sampled buckets, 1448-byte "
        "chunks); comm: share of the iteration with a bucket's "
        "communication in flight.", "",
        "| model | configuration | ms/iter | wire MB/iter | vs default "
        "| comm % | test accuracy |",
        "|---|---|---:|---:|---:|---:|---:|"]
    ref = {r["model"]: r["wire_bytes_per_iter"] for r in rows
           if r["config"] == "default"}
    for r in rows:
        red = ref.get(r["model"], 0) / max(1, r["wire_bytes_per_iter"])
        lines.append(
            f"| {r['model']} ({r['params'] / 1e6:.2f} M) | {r['label']} | "
            f"{r['iter_ms']:.1f} | {r['wire_bytes_per_iter'] / 1e6:.3f} | "
            f"{red:.1f}x | {r['comm_share'] * 100:.0f} | "
            f"{r['test_accuracy'] * 100:.2f} % |")
    with open(os.path.join(outdir, "torch.md"), "w") as f:
        f.write("\n".join(lines + vlines) + "\n")


def main() -> None:
    if len(sys.argv) >= 5 and sys.argv[1] == "train":
        steps = int(sys.argv[5]) if len(sys.argv) > 5 else 150
        train(sys.argv[2], sys.argv[3], sys.argv[4], steps)
    elif len(sys.argv) == 5 and sys.argv[1] == "vm":
        vm(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None)
    else:
        sys.exit("usage: demo-torch.py train OUTDIR DATA CODEC_TOOL [STEPS]"
                 " | vm OUTDIR DATA STEPS | report OUTDIR [VMOUT]")


if __name__ == "__main__":
    main()
