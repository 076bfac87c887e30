#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""make seeds' PyTorch job: the CNN of make demo on MNIST, DDP on 4 ranks.

    python3 -m incnn.launch --nproc-per-node 4 scripts/seeds/seeds-torch.py \\
        OUTDIR DATA CODEC_TOOL STEPS

Every rank trains the same CNN (scripts/demo/demo-torch.py's "cnn": the
model, the data loading and the measuring hook wrapper are imported from
there) for STEPS steps, batch 32 per rank, SGD lr 0.05, under each of
CONFIGS (INCNN_SEEDS_TORCH_METHODS="name ...": those only). Rank 0 appends one JSON object per run to OUTDIR/torch.jsonl
and prints a progress line.

  default     PyTorch's default allreduce (gloo), SGD momentum 0.9
  none        incnn.torch, codec none (unmarked sockets)
  inceptionn, ebq
              incnn.torch, codec X:2^-10 emulated in userspace; the wire
              bytes are the library's fp32 count times the codec's ratio
              on sampled buckets (`incnn-codec encode --chunk 1448`, as
              make demo does)
  thc         incnn.torch, codec none, INCNN_METHOD=thc in the rank's
              environment when the communicator is created (checked:
              incnn_comm_method() must say THC)
  thc-wa      the same through THC's worker-aggregator mode (the paper's
              parameter server: incnn_allreduce_ps(), rank 0 aggregates):
              bytes up (a worker's sends) and down (rank 0's sends per
              worker) per iteration, and their ratios to the fp32
              gradient, reported apart (the paper: 8x up, 4x down)
  gradiveq    incnn.torch's GradiVeQState + gradiveq_hook: the library's
              d 256, k 32, T_c 400, loss threshold 0.01, Linear weights
              compressed too (fc, as the C trainer's --gvq-fc); warm-up
              and T_s scaled to the run as the C rows' are:
              INCNN_SEEDS_GVQ_TORCH_WARMUP / _TS (30 / 30 of 300 steps),
              INCNN_SEEDS_GVQ_TORCH_EPS (0.01; "off": no loss monitor);
              the warm-up and sampling iterations quantised as the paper
              does, with INCNN_SEEDS_GVQ_TORCH_CODEC (ebq:2^-8, scale and
              error feedback; "none": fp32): their wire bytes are the
              library's fp32 count times the codec's ratio on sampled
              results (the summed values times 2^e of the scale rule,
              as the ring's last leg carries them); the row adds the
              iterations per phase and the wire bytes per phase
              (GradiVeQState.stats())
  lgc         incnn.torch's LGCState + lgc_hook (lgc_options(): alpha,
              t1, t2, the State's codec, feedback, code stride and the
              autoencoder's steps per sample from INCNN_SEEDS_LGC_*; Adam
              for the autoencoder); the optimizer without momentum (LGC's
              DGC momentum correction replaces it); its allreduces are
              keyed calls through the codec (scale and error feedback:
              stage 1's buckets, stage 2-3's dense first layer; the
              selected values and codes with a fresh e per call), their
              bytes as the codec encodes rank 0's samples of each stage
              (lgc_stats()); rates from LGCState.stats(): the whole run
              (stages 1-3, index bytes, gather and weight broadcast
              counted) and each stage

wire_bytes_per_iter: what one rank sends per iteration (payload, no
headers): for incnn rows incnn_comm_wire_bytes() over the run / STEPS,
for default 2(N-1)/N x the fp32 bucket bytes, for lgc the fp32 ring
bytes divided by the whole-run rate.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS: List[Tuple[str, str, Any]] = [
    ("default", "default", None),
    ("none", "incnn", "none"),
    ("inceptionn", "incnn", "inceptionn:2^-10"),
    ("ebq", "incnn", "ebq:2^-10"),
    ("thc", "thc", None),
    ("thc-wa", "thc", "ps"),
    ("gradiveq", "gradiveq", None),
    ("lgc", "lgc", None),
]
METHOD_THC = 2      # enum incnn_coll_method


def demo_torch() -> Any:
    """scripts/demo/demo-torch.py as a module (its name has a dash)."""
    path = os.path.join(HERE, "..", "demo", "demo-torch.py")
    spec = importlib.util.spec_from_file_location("demo_torch", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def comm_fn(name: str, restype: Any) -> Any:
    from incnn import _lib
    fn = getattr(_lib.lib, name)
    fn.restype = restype
    fn.argtypes = [ctypes.c_void_p]
    return fn


def comm_wire_bytes(state: Any) -> int:
    return int(comm_fn("incnn_comm_wire_bytes", ctypes.c_uint64)(
        state._comm._handle()))


def comm_method(state: Any) -> int:
    return int(comm_fn("incnn_comm_method", ctypes.c_int)(
        state._comm._handle()))


class GvqSampler:
    """Rank 0's view of a GradiVeQState's iterations: samples of its
    quantised (uncompressed) ones, the summed gradients times 2^e of
    incnn's scale rule (e from the previous such iteration's largest
    sum, as the keyed call's), every @every-th; and the loss monitor's
    trace of the compressed ones."""

    def __init__(self, dt: Any, world: int, every: int = 4,
                 most: int = 16) -> None:
        self.dt, self.world, self.every, self.most = dt, world, every, most
        self.m, self.e, self.seen, self.plain = 0.0, 0, 0, 0
        self.samples: List[Any] = []
        # compressed iterations: [step, loss, its window mean, reference]
        self.trace: List[List[float]] = []

    def after_step(self, step: int, state: Any, params: List[Any]) -> None:
        """After optimizer step @step (the iteration's sums are done)."""
        st = state.stats()
        now = st["iterations"]["warmup"] + st["iterations"]["sampling"]
        quantised, self.plain = now > self.plain, now
        if not quantised:
            self.trace.append([step, round(st["loss"], 4),
                               round(st["loss_avg"], 4),
                               round(st["loss_ref"], 4)])
            return
        import torch
        s = torch.cat([p.grad.detach().reshape(-1) for p in params])
        s = s * self.world                      # the sum, not the average
        self.e = self.dt.scale_exp(self.m, self.e)
        if self.seen % self.every == self.every - 1 and \
                len(self.samples) < self.most:
            self.samples.append(s * 2.0 ** self.e)
        self.m = float(s.abs().max())
        self.seen += 1


def plain_bytes(state: Any) -> int:
    """A GradiVeQState's bytes so far in its uncompressed iterations."""
    w = state.stats()["wire_bytes"]
    return int(w["warmup"] + w["sampling"])


def gvq_wire(dt: Any, tool: str, codec: str, stats: Dict[str, Any],
             sampler: GvqSampler) -> Tuple[int, float]:
    """GradiVeQ's payload over the run (compressed iterations' fp32
    coefficients, uncompressed ones through @codec) and that codec's
    ratio on the samples."""
    w = stats["wire_bytes"]
    ratio = dt.codec_ratio(tool, codec, sampler.samples)
    return round(w["compressed"] + (w["warmup"] + w["sampling"]) *
                 ratio), ratio


def wa_state(it: Any) -> Any:
    """incnn.torch.State whose sums take the worker-aggregator path
    (incnn_allreduce_ps(): THC's parameter-server mode) instead of the
    ring."""
    from incnn import _lib
    fn = _lib.lib.incnn_allreduce_ps
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]

    class WAState(it.State):       # type: ignore[misc, name-defined]
        def _reduce(self, work: Any, divide: int,
                    key: Optional[int] = None, segs: Any = None) -> None:
            self._comm._check("incnn_allreduce_ps", fn(
                self._comm._handle(), work.data_ptr(), work.numel()))
            if divide:
                work.div_(divide)
    return WAState


def timeout() -> float:
    """The States' timeout in seconds: INCNN_SEEDS_TIMEOUT (120; the VM
    rows of demo-torch.py set 300: TCG's ranks drift apart)."""
    return float(os.environ.get("INCNN_SEEDS_TIMEOUT", "120"))


def make_hook(dt: Any, name: str, kind: str, arg: Any, model: Any,
              port: int, world: int) -> Tuple[Any, Any, Any]:
    """(state, hook, incnn State whose wire bytes count)"""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    import incnn.torch as it
    if kind == "default":
        return None, dt.timed(default_hooks.allreduce_hook, world, False), None
    if kind == "incnn":
        st = it.State(codec=arg, port=port, timeout=timeout(), tos=0)
        return st, dt.timed(it.allreduce_hook, world, arg != "none"), st
    if kind == "thc":
        os.environ["INCNN_METHOD"] = "thc"
        try:
            cls = wa_state(it) if arg == "ps" else it.State
            st = cls(codec="none", port=port, timeout=timeout(), tos=0)
        finally:
            del os.environ["INCNN_METHOD"]
        if comm_method(st) != METHOD_THC:
            raise RuntimeError("INCNN_METHOD=thc did not make a THC "
                               f"communicator (method {comm_method(st)})")
        return st, dt.timed(it.allreduce_hook, world, False), st
    if kind == "gradiveq":
        env = os.environ.get
        gvq = it.GradiVeQState(
            warmup=int(env("INCNN_SEEDS_GVQ_TORCH_WARMUP", "30")),
            ts=int(env("INCNN_SEEDS_GVQ_TORCH_TS", "30")), fc=True,
            eps=(None if env("INCNN_SEEDS_GVQ_TORCH_EPS") == "off" else
                 float(env("INCNN_SEEDS_GVQ_TORCH_EPS", "0.01"))),
            codec=env("INCNN_SEEDS_GVQ_TORCH_CODEC", "ebq:2^-8"),
            port=port, timeout=timeout())
        return gvq, dt.timed(it.gradiveq_hook, world, False), gvq
    # @arg a ToS (demo-torch.py's VM rows): the codec calls marked, the
    # module's rule for that ToS encodes them (codec "auto")
    opts = lgc_options()
    if isinstance(arg, int):
        opts["codec"] = "auto"
    lgc = it.LGCState(model, **opts, momentum=0.9, ae_optim="adam",
                      wire_samples=8 if dist_rank() == 0 else 0,
                      port=port, timeout=timeout(),
                      tos=arg if isinstance(arg, int) else 0)
    return lgc, it.lgc_hook, lgc.state


# INCNN_SEEDS_LGC_*: LGCState's keyword, its type, the default. alpha 2 %:
# ~24 k values per iteration of the CNN's 1.2 M, the paper's ~25 k of
# ResNet-50 at 0.1 %; feedback on: our autoencoder's reconstruction alone
# is poor (docs/results.md, "LGC at its steady state")
LGC_KNOBS = (("T1", "t1", int, "20"), ("T2", "t2", int, "40"),
             ("ALPHA", "alpha", float, "0.02"),
             ("CODEC", "codec", str, "ebq:2^-8"),
             ("FEEDBACK", "feedback", lambda v: v == "1", "1"),
             ("STRIDE", "code_stride", int, "4"),
             ("AE_STEPS", "ae_steps", int, "1"),
             ("MEASURE", "measure", lambda v: v == "1", "0"),
             ("DENSE_MOMENTUM", "dense_momentum", lambda v: v == "1", "1"))


def lgc_options() -> Dict[str, Any]:
    """The LGC rows' settings (INCNN_SEEDS_LGC_T1 ... _DENSE_MOMENTUM)."""
    env = os.environ.get
    return {kw: conv(env(f"INCNN_SEEDS_LGC_{var}", d))
            for var, kw, conv, d in LGC_KNOBS}


def dist_rank() -> int:
    import torch.distributed as dist
    return dist.get_rank()


def lgc_stats(dt: Any, tool: str, state: Any
              ) -> Tuple[Dict[str, Any], Dict[str, float]]:
    """An LGCState's stats() with each stage's codec bytes counted at
    the codec's ratio on that stage's samples (rank 0's; elsewhere, or
    with codec none, the fp32 count), and those ratios."""
    q = {k: dt.codec_ratio(tool, state.codec, v)
         for k, v in state.coded_samples.items() if v}
    return state.stats(codec_ratio=q), q


def run(dt: Any, cfg: Tuple[str, str, Any], data: Tuple, steps: int,
        port: int, tool: str) -> Optional[Dict[str, Any]]:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP
    rank, world = dist.get_rank(), dist.get_world_size()
    xtr, ytr, xte, yte, source = data
    name, kind, arg = cfg
    model = dt.make_model("cnn")
    ddp = DDP(model)
    state, hook, inc = make_hook(dt, name, kind, arg, model, port, world)
    ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05,
                          momentum=0.0 if kind == "lgc" else 0.9)
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(xtr.shape[0], generator=g)
    per_step = dt.BATCH * world
    meter = dt.METER
    meter.samples = []
    every = max(1, steps // dt.SAMPLES)
    fp32b, t_all = 0, 0.0
    w0 = comm_wire_bytes(inc) if inc is not None else 0
    sampler = GvqSampler(dt, world) if kind == "gradiveq" and rank == 0 \
        else None
    for step in range(steps):
        off = (step * per_step) % (xtr.shape[0] - per_step + 1)
        idx = perm[off + rank * dt.BATCH: off + (rank + 1) * dt.BATCH]
        meter.reset()
        meter.sample_now = rank == 0 and step % every == every - 1 and \
            len(meter.samples) < 64
        t0 = time.perf_counter()
        loss = F.cross_entropy(ddp(xtr[idx]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        t_all += time.perf_counter() - t0
        fp32b += meter.fp32_bucket_bytes
        if sampler is not None:
            sampler.after_step(step, state, list(ddp.parameters()))
    wire = comm_wire_bytes(inc) - w0 if inc is not None else 0
    every_wire: List[int] = [0] * world
    dist.all_gather_object(every_wire, wire)
    sstats = state.stats() if kind == "gradiveq" else None
    lgc_q: Dict[str, float] = {}
    if kind == "lgc":
        sstats, lgc_q = lgc_stats(dt, tool, state)
    if inc is not None:
        state.close()
    if rank != 0:
        return None
    with torch.no_grad():
        acc = float((ddp.module.eval()(xte).argmax(1) == yte).float().mean())
    params = sum(p.numel() for p in ddp.parameters())
    ring = 2 * (world - 1) / world * 4 * params   # fp32 ring bytes/rank
    r: Dict[str, Any] = {
        "method": name, "job": "torch-cnn", "data": source, "ranks": world,
        "steps": steps, "batch_per_rank": dt.BATCH, "params": params,
        "host_iter_ms": round(t_all / steps * 1e3, 2),
        "fp32_ring_bytes_per_iter": round(ring),
        "test_accuracy": round(acc, 4), "final_loss": round(float(loss), 4),
    }
    if kind == "default":
        r["wire_bytes_per_iter"] = round(fp32b / steps * 2 * (world - 1)
                                         / world)
    elif kind == "lgc":
        s = sstats
        r["wire_bytes_per_iter"] = round(ring / s["total"]["rate"])
        r["lgc_rate_total"] = round(s["total"]["rate"], 2)
        r["lgc_rate_stage3"] = round(s["3"].get("rate", 0.0), 2)
        for k in ("1", "2"):
            r[f"lgc_rate_stage{k}"] = round(s[k].get("rate", 0.0), 2)
        r["lgc_codec_ratio"] = {k: round(v, 5) for k, v in lgc_q.items()}
        r["lgc_stats"] = s
        r["lgc_incnn_wire_bytes_per_iter"] = round(wire / steps)
        r["lgc_ae_rel_error_last10"] = (
            round(sum(state.ae_rel_error[-10:]) /
                  len(state.ae_rel_error[-10:]), 3)
            if state.ae_rel_error else None)
        r["lgc_params"] = {"alpha": state.alpha, "t1": state.t1,
                           "t2": state.t2, "ae_optim": "adam",
                           "code_stride": state.ae.stride,
                           "codec": state.codec,
                           "feedback": state.feedback,
                           "ae_steps": state.ae_options.steps}
    else:
        r["wire_bytes_per_iter"] = round(wire / steps)
        if kind == "thc" and arg == "ps":
            up = sum(every_wire[1:]) / (world - 1) / steps
            down = every_wire[0] / (world - 1) / steps
            r["wire_bytes_per_iter"] = round(sum(every_wire) / world / steps)
            r["wa_up_bytes_per_iter"] = round(up)
            r["wa_down_bytes_per_iter"] = round(down)
            r["wa_up_ratio"] = round(4 * params / up, 2)
            r["wa_down_ratio"] = round(4 * params / down, 2)
        if kind == "gradiveq":
            r["gvq_stats"] = sstats
            r["gvq_params"] = {"d": state.d, "k": state.k,
                               "warmup": state.warmup, "ts": state.ts,
                               "tc": state.tc, "eps": state.eps, "fc": True,
                               "codec": state.codec}
            r["gvq_loss_trace"] = sampler.trace if sampler else []
            if state.codec != "none":
                total, ratio = gvq_wire(dt, tool, state.codec, sstats,
                                        sampler)
                r["gvq_codec_ratio"] = round(ratio, 5)
                r["wire_bytes_per_iter"] = round(total / steps)
        if kind == "incnn" and arg != "none":
            ratio = dt.codec_ratio(tool, arg, meter.samples)
            r["codec_ratio"] = round(ratio, 5)
            r["wire_bytes_per_iter"] = round(wire / steps * ratio)
    return r


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit("usage: seeds-torch.py OUTDIR DATA CODEC_TOOL STEPS "
                 "(under python3 -m incnn.launch)")
    outdir, data_path, tool, steps = sys.argv[1:5]
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dt = demo_torch()
    dist.init_process_group("gloo")
    data = dt.load_mnist(data_path)
    base = int(os.environ["MASTER_PORT"]) + 1
    t_start = time.monotonic()
    only = os.environ.get("INCNN_SEEDS_TORCH_METHODS", "").split()
    for i, c in enumerate(CONFIGS):
        if only and c[0] not in only:
            continue
        t0 = time.monotonic()
        res = run(dt, c, data, int(steps), base + i, tool)
        dist.barrier()
        if res is None:
            continue
        res["seconds"] = round(time.monotonic() - t0, 1)
        with open(os.path.join(outdir, "torch.jsonl"), "a") as f:
            f.write(json.dumps(res) + "\n")
        extra = ""
        if "lgc_rate_total" in res:
            extra = (f", LGC rate {res['lgc_rate_total']}x whole run, "
                     f"{res['lgc_rate_stage3']}x stage 3")
        if "wa_up_ratio" in res:
            extra = (f", up {res['wa_up_ratio']}x, down "
                     f"{res['wa_down_ratio']}x")
        if "gvq_stats" in res:
            g = res["gvq_stats"]
            extra = (f", GradiVeQ {g['compressed_iterations']} compressed "
                     f"iterations, {g['refreshes']} refreshes")
        print(f"seeds-torch: [{i + 1}/{len(CONFIGS)}] {c[0]}: accuracy "
              f"{res['test_accuracy'] * 100:.2f} %, "
              f"{res['wire_bytes_per_iter'] / 1e6:.3f} MB/iter/rank{extra} "
              f"({res['seconds']:.0f} s, {time.monotonic() - t_start:.0f} s "
              "in all)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
