#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""make demo's PyTorch section: DDP with PyTorch's own hooks and incnn's,
side by side, and their time to a target accuracy.

    python3 -m incnn.launch --nproc-per-node 4 scripts/demo/demo-torch.py \\
        train OUTDIR DATA CODEC_TOOL [STEPS]
    python3 scripts/demo/demo-torch.py report OUTDIR [VMOUT]
    python3 scripts/demo/demo-torch.py tta-note OUTDIR

train: every rank trains each model (a torchvision-style CNN, the paper's
HDC MLP 784-500-500-500-500-10, a wide MLP 784-2048-2048-10 of 5.8 M
parameters; INCNN_TORCH_MODELS: a comma list of MODELS, default all) for
STEPS steps (default 80, BATCH 32 digits per rank, MODEL_BATCH for the
wide MLP, SGD lr 0.05 momentum 0.9, same seed) under each configuration
(CONFIGS below; INCNN_TORCH_CONFIGS: a comma list of names from CONFIGS
and EXTRA_CONFIGS; a configuration this build of incnn.torch cannot run,
a State option or codec it lacks, is skipped with a line saying why).
Every INCNN_TORCH_EVAL_EVERY steps (EVAL_EVERY) and after the last, the
replicas' test accuracy on every EVAL_STRIDE-th test digit, each rank
scoring a quarter (not timed): the row's "curve". Rank 0 appends one
JSON object per run to OUTDIR/torch.jsonl and prints a progress line with
an ETA. DATA is incnn-train's MNIST file (scripts/demo/mnist-fetch.sh);
when it is missing the runs use a synthetic set and say so in every row
("data").

What is measured, per run (the first WARMUP steps are not timed; they
include PowerSGD's plain-allreduce phase, start_powerSGD_iter):
  iter_ms         mean wall time of forward + backward + optimizer step
  comm_share      the time at least one bucket's communication is in
                  flight (the hook called .. its future completed, the
                  union of those intervals) over the iteration time
  wire_bytes_per_iter      bytes each rank sends per timed iteration:
                  under PyTorch's hooks 2 (N-1)/N times what they hand
                  to torch.distributed.all_reduce (every call counted:
                  fp32 buckets, fp16 buckets, PowerSGD's P, Q and
                  uncompressed tensors), a ring allreduce's share; under
                  incnn's the library's count (incnn_comm_wire_bytes),
                  times the codec's measured ratio (below) for the
                  emulated codecs; LGC: the fp32 ring bytes over its
                  whole-run rate (LGCState.stats()); GradiVeQ with a
                  codec: its quantised iterations' bytes times that
                  codec's ratio on sampled sums (seeds-torch.py's
                  GvqSampler); THC's
                  worker-aggregator: the mean over the ranks (rank 0
                  sends the sums down to every worker); TCP/IP headers not
                  counted. payload_bytes_per_iter: N / (2 (N-1)) of it
  codec_ratio     incnn codecs: out_bytes / in_bytes of `incnn-codec
                  encode --chunk 1448` (one 1500-MTU TCP segment per
                  chunk, as the module encodes per segment) over the
                  bucket contents of rank 0 on SAMPLES timed steps, as
                  they go on the wire first (the gradient; divided by
                  N for the "-before" configurations); the ring's partial
                  sums are not sampled
  curve           [step, training seconds so far, wire bytes so far,
                  test accuracy] at each evaluation
  test_accuracy   the last point's

vm: the VM part (scripts/demo/demo-torch-vm.sh, one rank per host of the
rate-limited cluster): the HDC MLP, default allreduce then incnn.torch
codec "auto" through the module, and the seeds (THC ring and
worker-aggregator, GradiVeQ, LGC: see vm_seed() for what is marked);
adds eth0_tx_bytes_per_iter (the interface counter over the timed
steps, headers included, the mean over the ranks) and, for GradiVeQ
and LGC, whose schedules are shortened so that every phase has timed
steps, each phase's time and eth0 bytes per step (phase_iter_ms,
phase_eth0_tx_bytes_per_iter, phase_timed_steps); writes
OUTDIR/torch-vm.jsonl. The host rows of those two carry their
iterations per phase at each point of the curve (phases_at).

report: torch.json (a list of the objects, "where": "host", and the VM
part's from VMOUT/torch-vm.jsonl, "where": "vm"), torch.md (the
Markdown section) and the plot's data torch-plot.dat in OUTDIR; with
the default configuration's curves, time to accuracy (tta): tta.json
(issue 19's keys, see tta()), tta-curves.json, tta-plot.txt and
tta-MODEL.dat (scripts/demo/tta-plot.sh draws and tabulates them).
tta-note: the paragraph saying how the tta table was measured.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

BATCH = 32
WARMUP = 10
SAMPLES = 4
EVAL_EVERY = 10
EVAL_STRIDE = 2     # the test digits scored along the way: every 2nd (1,000)
LGC_FULL_AT = 150   # steps from which LGC runs make seeds' stages 1-2
# digits per rank and step where not BATCH: the wide MLP's compute is
# kept small so that its communication weighs more
MODEL_BATCH = {"mlp-wide": 8}
# the configurations a model runs by default where not all of CONFIGS
# (INCNN_TORCH_CONFIGS runs what it names on every model): the wide MLP's
# steps cost the most, so it runs PyTorch's hooks, incnn's best and the
# seeds (issue 21: every seed in the time-to-accuracy table)
MODEL_CONFIGS = {"mlp-wide": ["default", "fp16", "powersgd-r1",
                              "powersgd-r4", "incnn-ebq-2^-10",
                              "incnn-ebq-2^-8-scale-ef", "incnn-zebq-2^-10",
                              "incnn-zebq-2^-4-scale-ef", "incnn-thc-ring",
                              "incnn-thc-wa", "incnn-gradiveq",
                              "incnn-lgc"]}
TARGET_MARGIN = 0.5     # pp under the default's final accuracy
SCALE_EXP_MAX = 64      # INCNN_SCALE_EXP_MAX (collective.h)
# name, kind, argument (see make_hook). incnn's names: incnn-CODEC-BOUND,
# then "-scale" for State(scale="auto") and "-ef" for
# State(error_feedback=True) (incnn_options); the seeds' rows run
# incnn.torch's existing hooks (scripts/seeds/seeds-torch.py's make_hook).
CONFIGS: List[Tuple[str, str, Any]] = [
    ("default", "default", None),
    ("fp16", "fp16", None),
    ("powersgd-r1", "powersgd", 1),
    ("powersgd-r4", "powersgd", 4),
    ("incnn-ebq-2^-10", "incnn", "ebq:2^-10"),
    ("incnn-ebq-2^-8-scale-ef", "incnn", "ebq:2^-8"),
    ("incnn-inceptionn-2^-10", "incnn", "inceptionn:2^-10"),
    ("incnn-inceptionn-2^-10-scale-ef", "incnn", "inceptionn:2^-10"),
    ("incnn-zebq-2^-10", "incnn", "zebq:2^-10"),
    # 2^-4: on the HDC MLP (80 steps, 2026-11-26) zebq with scale and
    # error feedback sent 7.7x fewer bytes at 2^-6, 32x at 2^-4 and 72x at
    # 2^-3, where it no longer learned (11.8 %)
    ("incnn-zebq-2^-4-scale-ef", "incnn", "zebq:2^-4"),
    ("incnn-thc-ring", "thc", None),
    ("incnn-thc-wa", "thc", "ps"),
    ("incnn-gradiveq", "gradiveq", None),
    ("incnn-lgc", "lgc", None),
]
# not in the demo: incnn with no codec; the hook dividing by N before the
# sum with a lossy codec (State(divide="before"), what it did before the
# rule; README); scale or error feedback alone
EXTRA_CONFIGS: List[Tuple[str, str, Any]] = [
    ("incnn-none", "incnn", "none"),
    ("incnn-ebq-2^-10-before", "incnn-before", "ebq:2^-10"),
    ("incnn-inceptionn-2^-10-before", "incnn-before", "inceptionn:2^-10"),
    ("incnn-ebq-2^-8-scale", "incnn", "ebq:2^-8"),
    ("incnn-ebq-2^-8-ef", "incnn", "ebq:2^-8"),
    ("incnn-ebq-2^-10-scale-ef", "incnn", "ebq:2^-10"),
    ("incnn-inceptionn-2^-8-scale-ef", "incnn", "inceptionn:2^-8"),
    ("incnn-zebq-2^-10-scale-ef", "incnn", "zebq:2^-10"),
]
# the names of earlier versions of this script (README's commands)
ALIASES = {"powersgd-1": "powersgd-r1", "powersgd-4": "powersgd-r4",
           "incnn-ebq-10": "incnn-ebq-2^-10",
           "incnn-inceptionn-10": "incnn-inceptionn-2^-10",
           "incnn-ebq-10-before": "incnn-ebq-2^-10-before",
           "incnn-inceptionn-10-before": "incnn-inceptionn-2^-10-before"}
LABELS = {
    "default": "DDP default (gloo allreduce)",
    "fp16": "fp16_compress_hook",
    "powersgd-r1": "PowerSGD rank 1",
    "powersgd-r4": "PowerSGD rank 4",
    "incnn-none": "incnn, no codec",
    "incnn-auto": "incnn, codec auto (the module's rule)",
    "incnn-thc-ring": "incnn THC (ring)",
    "incnn-thc-wa": "incnn THC (worker-aggregator)",
    "incnn-gradiveq": "incnn GradiVeQ",
    "incnn-lgc": "incnn LGC",
}


INCNN_NAME = re.compile(r"incnn-([a-z0-9]+)-(2\^-[0-9]+)((?:-[a-z]+)*)$")
OPTION_WORDS = {"scale": "scale auto", "ef": "error feedback",
                "tscale": "scale per tensor", "bscale": "scale per bucket",
                "before": "divided before the sum"}
# State(scale=...) of each name's word
SCALE_WORDS = {"scale": "auto", "tscale": "tensor", "bscale": "bucket"}


def label(name: str) -> str:
    """The table's words for configuration @name."""
    m = INCNN_NAME.match(name)
    if name in LABELS or not m:
        return LABELS.get(name, name)
    more = [OPTION_WORDS.get(w, w) for w in m.group(3).split("-")[1:]]
    return f"incnn {m.group(1)} {m.group(2)}" + \
        (", " + ", ".join(more) if more else "")


def incnn_options(name: str) -> Dict[str, Any]:
    """State keyword arguments of incnn configuration @name: scale and
    error feedback as the name says, and said off where this
    incnn.torch has them (they are on by default there)."""
    import inspect
    import incnn.torch as it
    m = INCNN_NAME.match(name)
    words = m.group(3).split("-")[1:] if m else []
    have = inspect.signature(it.State.__init__).parameters
    kw: Dict[str, Any] = {}
    scale = [SCALE_WORDS[w] for w in words if w in SCALE_WORDS]
    if scale or "scale" in have:
        kw["scale"] = scale[0] if scale else "off"
    if "ef" in words or "error_feedback" in have:
        kw["error_feedback"] = "ef" in words
    return kw


def missing(cfg: Tuple[str, str, Any]) -> Optional[str]:
    """Why configuration @cfg cannot run with this build of incnn.torch
    (a State option or a codec not there yet), or None."""
    import inspect
    import incnn.torch as it
    from incnn import _lib
    name, kind, arg = cfg
    if not kind.startswith("incnn"):
        return None
    have = inspect.signature(it.State.__init__).parameters
    for opt in incnn_options(name):
        if opt not in have:
            return f"incnn.torch.State has no {opt}= option"
    if kind == "incnn-auto":
        m = INCNN_NAME.match(name)
        arg = f"{m.group(1)}:{m.group(2)}" if m else "auto"
    try:
        _lib.parse_codec(arg)
    except ValueError:
        return f"codec {arg.split(':')[0]} unknown to this libincnn"
    return None


MODELS = ["cnn", "hdc-mlp", "mlp-wide"]


def selected(names: str, known: List[Any], what: str) -> List[Any]:
    """The entries of @known named in the comma list @names (all if
    empty), in @names' order."""
    if not names:
        return list(known)
    by = {(k[0] if isinstance(k, tuple) else k): k for k in known}
    want = [ALIASES.get(n, n) for n in names.split(",")]
    for n in want:      # any incnn-CODEC-2^-K[-scale][-ef] on the host
        m = INCNN_NAME.match(n)
        if n not in by and m and known is not VM_CONFIGS and \
                set(m.group(3).split("-")[1:]) <= {"ef", *SCALE_WORDS}:
            by[n] = (n, "incnn", f"{m.group(1)}:{m.group(2)}")
    bad = [n for n in want if n not in by]
    if bad:
        raise SystemExit(f"demo-torch: unknown {what} {', '.join(bad)}; "
                         f"known: {', '.join(by)}")
    return [by[n] for n in want]


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
    if name == "mlp-wide":  # 5.8 M parameters, little compute for them
        return nn.Sequential(
            nn.Flatten(), nn.Linear(784, 2048), nn.ReLU(),
            nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))
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
    counted.uncounted = orig    # type: ignore[attr-defined]
    dist.all_reduce = counted


def scale_exp(m: float, e: int) -> int:
    """incnn's scale rule (collective.h, incnn_allreduce_bucket): the e
    that puts @m, the largest |value| of a key's previous result, in
    [0.5, 1), clamped to +-SCALE_EXP_MAX; @e (the previous one) when @m
    is 0."""
    if m == 0 or not math.isfinite(m):
        return e
    return max(-SCALE_EXP_MAX, min(SCALE_EXP_MAX, -math.frexp(m)[1]))


def seg_sizes(bucket: Any, per_tensor: bool) -> List[int]:
    """The sizes of a DDP bucket's segments as incnn.torch scales them:
    its parameters' (per tensor), else the whole buffer."""
    n = bucket.buffer().numel()
    if not per_tensor:
        return [n]
    sizes = [p.numel() for p in bucket.parameters()]
    return sizes if sum(sizes) == n else [n]


def timed(hook: Callable, world: int, sample: bool,
          serial: bool = False, wire: Optional[Tuple[int, bool, bool]] = None
          ) -> Callable:
    """@hook, timed; with @sample, rank 0 keeps copies of what goes on
    the wire first: the bucket divided by @world (1: as it is). With
    @wire = (multiplier, scaled, per tensor) instead, it keeps what the
    all-gather leg of the ring carries, exactly: the result (the owner's
    quantised sum) times the multiplier (the world size when the hook
    divides after the sum) and, when scaled, each segment (the bucket, or
    each parameter tensor) times 2^e of incnn's scale rule (e from the
    segment's previous result, tracked here)."""
    prev: Dict[int, List[Tuple[float, int]]] = {}   # bucket: (max, e)s

    def wrapper(state, bucket):     # type: ignore[no-untyped-def]
        # (no annotations: DDP insists on its own ones when present)
        t0 = time.perf_counter()
        buf = bucket.buffer()
        METER.fp32_bucket_bytes += buf.numel() * buf.element_size()
        if sample and METER.sample_now and wire is None:
            METER.samples.append(buf.detach().clone() / world)
        keep = sample and METER.sample_now and wire is not None
        fut = hook(state, bucket)
        if serial:      # see make_hook
            fut.wait()

        def done(f: Any) -> Any:
            METER.intervals.append((t0, time.perf_counter()))
            v = f.value()
            if wire is None or not sample:
                return v
            import torch
            i = bucket.index()
            sizes = seg_sizes(bucket, wire[2])
            old = prev.get(i, [])
            if len(old) != len(sizes):
                old = [(0.0, 0)] * len(sizes)
            es = [scale_exp(m, e) if wire[1] else 0 for m, e in old]
            parts = v.detach().reshape(-1).split(sizes)
            if keep:
                METER.samples.append(torch.cat(
                    [p * (wire[0] * 2.0 ** e) for p, e in zip(parts, es)]))
            if wire[1]:
                prev[i] = [(float(p.abs().max()) * wire[0] if p.numel()
                            else 0.0, e) for p, e in zip(parts, es)]
            return v
        return fut.then(done)
    wrapper.scale_state = prev      # type: ignore[attr-defined]
    return wrapper


def seeds_torch() -> Any:
    """scripts/seeds/seeds-torch.py as a module (its name has a dash)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "seeds", "seeds-torch.py")
    spec = importlib.util.spec_from_file_location("seeds_torch", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_hook(cfg: Tuple[str, str, Any], model: Any, warmup: int, port: int,
              world: int) -> Tuple[Any, Callable, Any]:
    """(DDP hook state, hook, the incnn state whose library counts the
    bytes sent or None)"""
    from torch.distributed.algorithms.ddp_comm_hooks import (
        default_hooks as dh, powerSGD_hook as ps)
    name, kind, arg = cfg
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
    if kind in ("thc", "gradiveq", "lgc"):
        return seeds_torch().make_hook(sys.modules[__name__], name, kind,
                                       arg, model, port, world)
    import incnn.torch as it
    if kind == "incnn-auto":    # the module's rule for ToS arg, marked
        st = it.State(codec="auto", port=port, timeout=300, tos=arg,
                      **incnn_options(name))
        return st, timed(it.allreduce_hook, world, False), st
    opts = incnn_options(name)
    st = it.State(codec=arg, port=port, timeout=120, tos=0,
                  divide="before" if kind == "incnn-before" else "auto",
                  **opts)
    return st, timed(it.allreduce_hook, world, arg != "none",
                     wire=(world if st.divide_after else 1,
                           opts.get("scale", "off") != "off",
                           bool(getattr(st, "scale_tensor", False)))), st


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


def comm_wire_bytes(inc: Any) -> int:
    """Bytes @inc's library sent on its data connections (fp32 for the
    emulated codecs: the module would compress them on the wire)."""
    import ctypes
    from incnn import _lib
    comm = getattr(inc, "_comm", None) or inc.state._comm
    fn = _lib.lib.incnn_comm_wire_bytes
    fn.restype, fn.argtypes = ctypes.c_uint64, [ctypes.c_void_p]
    return int(fn(comm._handle()))


def evaluate(model: Any, xte: Any, yte: Any) -> float:
    """Test accuracy of the replicas (identical on every rank), each
    rank scoring its share of the test set; the counts are summed with
    the uncounted all_reduce."""
    import torch
    import torch.distributed as dist
    rank, world = dist.get_rank(), dist.get_world_size()
    n = xte.shape[0]
    lo, hi = n * rank // world, n * (rank + 1) // world
    with torch.no_grad():
        model.eval()
        right = (model(xte[lo:hi]).argmax(1) == yte[lo:hi]).sum()
        model.train()
    t = torch.tensor([float(right)], dtype=torch.float64)
    getattr(dist.all_reduce, "uncounted", dist.all_reduce)(t)
    return t.item() / n


class Run:
    """One model under one configuration on every rank: the training loop
    and what it measures (see the module doc)."""

    def __init__(self, model_name: str, cfg: Tuple[str, str, Any],
                 warmup: int, port: int) -> None:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.model_name, self.cfg, self.warmup = model_name, cfg, warmup
        model = make_model(model_name)
        self.ddp = DDP(model)
        self.state, self.hook, self.inc = make_hook(cfg, model, warmup,
                                                    port, self.world)
        self.ddp.register_comm_hook(self.state, self.hook)
        # LGC's DGC momentum correction replaces the optimizer's
        self.opt = torch.optim.SGD(
            self.ddp.parameters(), lr=0.05,
            momentum=0.0 if cfg[1] == "lgc" else 0.9)
        self.iter_s = self.busy = self.all_s = 0.0
        self.payload = self.fp32b = self.payload_all = 0
        self.curve: List[List[float]] = []  # step, seconds, raw bytes, acc
        self.wire0 = self.wire_timed0 = self.sent()
        self.loss = 0.0
        # GradiVeQ with a codec: what its quantised iterations carry
        # (rank 0), their library bytes at the warm-up's end and at each
        # point of the curve
        self.seeds = seeds_torch() if cfg[1] == "gradiveq" else None
        self.gvq = self.seeds.GvqSampler(sys.modules[__name__], self.world) \
            if self.seeds is not None and self.rank == 0 else None
        self.plain_timed0, self.plain_at = 0, []
        # LGC: its stats' (sent, coded) bytes per stage at each point
        self.lgc_at: List[Dict[str, Tuple[int, int]]] = []
        # the seeds: their iterations per phase so far at each point
        self.phases_at: List[Dict[str, int]] = []
        self.last_dt = 0.0
        # the VM: per phase of a seed, [timed steps, seconds, eth0 bytes]
        self.phase_log: Dict[str, List[float]] = {}

    def sent(self) -> int:
        """Bytes sent so far: the library's count, or the all_reduce
        payload in a ring (2 (N-1)/N of it)."""
        if self.inc is not None:
            return comm_wire_bytes(self.inc)
        return round(self.payload_all * 2 * (self.world - 1) / self.world)

    def step(self, step: int, x: Any, y: Any, sample_every: int) -> None:
        import torch.nn.functional as F
        METER.reset()
        METER.sample_now = self.rank == 0 and step >= self.warmup and \
            (step - self.warmup) % sample_every == 0 and \
            len(METER.samples) < 64
        if step == self.warmup:
            self.wire_timed0 = self.sent()
            if self.gvq is not None:
                self.plain_timed0 = self.seeds.plain_bytes(self.state)
        t0 = time.perf_counter()
        loss = F.cross_entropy(self.ddp(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        dt = time.perf_counter() - t0
        self.last_dt = dt
        if self.gvq is not None:
            self.gvq.after_step(step, self.state, list(self.ddp.parameters()))
        self.all_s += dt
        self.payload_all += METER.payload
        self.loss = float(loss)
        if step >= self.warmup:
            self.iter_s += dt
            self.busy += METER.in_flight()
            self.payload += METER.payload
            self.fp32b += METER.fp32_bucket_bytes

    def point(self, step: int, xte: Any, yte: Any) -> None:
        """A point of the accuracy curve after @step steps."""
        acc = evaluate(self.ddp.module, xte, yte)
        self.curve.append([step, round(self.all_s, 4),
                           self.sent() - self.wire0, round(acc, 4)])
        if self.gvq is not None:
            self.plain_at.append(self.seeds.plain_bytes(self.state))
        ph = phase_counts(self.cfg[1], self.state)
        if ph is not None:
            self.phases_at.append(ph)
        if self.cfg[1] == "lgc":
            s = self.state.stats()
            at = {k: (s[k]["sent"], s[k]["coded"]) for k in ("1", "2", "3")}
            at["weights"] = (s["weights"]["sent"], 0)
            self.lgc_at.append(at)


def phase_counts(kind: str, state: Any) -> Optional[Dict[str, int]]:
    """A seed's iterations so far per phase (GradiVeQ: warmup, sampling,
    compressed; LGC: stages 1, 2, 3), from its State; None for the
    configurations without phases."""
    if kind == "gradiveq":
        return dict(state.stats()["iterations"])
    if kind == "lgc":
        s = state.stats()
        return {k: s[k]["iterations"] for k in ("1", "2", "3")}
    return None


def log_phase(r: "Run", before: Dict[str, int], sent: int) -> None:
    """The VM: add the step just done (its time, @sent eth0 bytes) to the
    phase whose count it advanced (@before: the counts before it)."""
    after = phase_counts(r.cfg[1], r.state) or {}
    ph = next((p for p, n in after.items() if n > before.get(p, 0)), "?")
    e = r.phase_log.setdefault(ph, [0, 0.0, 0])
    e[0] += 1
    e[1] += r.last_dt
    e[2] += sent


def phase_tx_mean(r: "Run") -> None:
    """The phases' eth0 bytes as the mean over the ranks (each rank
    logged the same phases: the seeds' schedules are replicated)."""
    import torch
    import torch.distributed as dist
    if not r.phase_log:
        return
    keys = sorted(r.phase_log)
    d = torch.tensor([float(r.phase_log[p][2]) for p in keys],
                     dtype=torch.float64)
    dist.all_reduce(d)
    for p, v in zip(keys, d.tolist()):
        r.phase_log[p][2] = v / r.world


def scale_check(r: "Run") -> Optional[bool]:
    """Whether the scale exponents this script predicts for the buckets'
    next calls (scale_exp, from what it saw) are the library's
    (bucket_info's next_exp); None where nothing was predicted."""
    prev = getattr(r.hook, "scale_state", None)
    layouts = getattr(r.state, "_layouts", None)
    if not prev or layouts is None:
        return None
    comm = r.state._comm
    for idx, lay in layouts.items():
        key = lay[1]
        if idx not in prev:
            continue
        want = [scale_exp(*p) for p in prev[idx]]
        if hasattr(comm, "bucket_exps"):
            have = comm.bucket_exps(key)
        else:
            info = comm.bucket_info(key)
            have = None if info is None else [info.next_exp]
        if have is not None and have != want:
            return False
    return True


def run(model_name: str, cfg: Tuple[str, str, Any], data: Tuple,
        steps: int, port: int, tool: str,
        tx: Optional[Callable[[], int]] = None,
        warmup: int = WARMUP, batch: int = BATCH, evaluate_every: int = 0
        ) -> Optional[Dict[str, Any]]:
    """Train; with @evaluate_every, the test accuracy on every
    EVAL_STRIDE-th test digit every so many steps and after the last (not
    timed). Rank 0's results, None elsewhere."""
    import torch
    import torch.distributed as dist
    xtr, ytr, xte, yte, _ = data
    xte, yte = xte[::EVAL_STRIDE], yte[::EVAL_STRIDE]
    r = Run(model_name, cfg, warmup, port)
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(xtr.shape[0], generator=g)
    per_step = batch * r.world
    every = max(1, (steps - warmup) // SAMPLES)
    METER.samples = []
    tx0 = 0
    for step in range(steps):
        if step == warmup and tx is not None:
            tx0 = tx()
        off = (step * per_step) % (xtr.shape[0] - per_step + 1)
        sl = slice(off + r.rank * batch, off + (r.rank + 1) * batch)
        before = phase_counts(cfg[1], r.state) \
            if tx is not None and step >= warmup else None
        tx_step = tx() if before is not None and tx is not None else 0
        r.step(step, xtr[perm[sl]], ytr[perm[sl]], every)
        if before is not None and tx is not None:
            log_phase(r, before, tx() - tx_step)
        if evaluate_every and ((step + 1) % evaluate_every == 0 or
                               step + 1 == steps):
            r.point(step + 1, xte, yte)
    tx_mean = None
    if tx is not None:      # every rank's counter: the mean over the ranks
        d = torch.tensor([float(tx() - tx0)], dtype=torch.float64)
        dist.all_reduce(d)
        tx_mean = d.item() / r.world
        phase_tx_mean(r)
    wire_timed, wire_all = r.sent() - r.wire_timed0, r.sent() - r.wire0
    if cfg[2] == "ps":      # worker-aggregator: the mean over the ranks
        d = torch.tensor([float(wire_timed), float(wire_all)],
                         dtype=torch.float64)
        dist.all_reduce(d)
        mean = d / r.world
        for pt in r.curve:  # the same bytes every iteration: scaled
            pt[2] = round(pt[2] * mean[1].item() / max(1, wire_all))
        wire_timed, wire_all = round(mean[0].item()), round(mean[1].item())
    stats = r.state.stats() if cfg[1] == "gradiveq" else None
    if cfg[1] == "lgc" and tool:    # the codec's bytes at its ratio
        stats, q = seeds_torch().lgc_stats(sys.modules[__name__], tool,
                                           r.state)
        stats["codec_ratio"] = q
    elif cfg[1] == "lgc":   # the VM: eth0 counts what the wire carried
        stats = r.state.stats()
    if cfg[1] == "incnn" and hasattr(r.state, "bucket_stats"):
        stats = {**r.state.bucket_stats(), "scale_rule_checked":
                 scale_check(r)}
    wire_codec = getattr(r.inc, "wire_codec", None)
    if r.inc is not None:
        r.state.close()
    if r.rank != 0:
        return None
    return result(r, data, steps, tool, batch, tx_mean, wire_timed,
                  wire_all, stats, wire_codec)


def lgc_curve(r: Run, stats: Dict[str, Any], ring: float) -> None:
    """LGC's curve bytes: at each point its bytes so far (stages and
    weights; the codec's at each stage's ratio, stats["codec_ratio"]), as
    the fp32
    ring's bytes per rank times sent over baseline (LGC counts the
    bytes every rank puts into the exchange, 4 per value)."""
    base = 4 * sum(p.numel() for p in r.ddp.parameters()) * r.world
    q = stats.get("codec_ratio") or {}
    for pt, at in zip(r.curve, r.lgc_at):
        sent = sum(s - c * (1.0 - q.get(k, 1.0)) for k, (s, c) in at.items())
        pt[2] = round(sent / base * ring)


def result(r: Run, data: Tuple, steps: int, tool: str, batch: int,
           tx_mean: Optional[float], wire_timed: int, wire_all: int,
           stats: Optional[Dict[str, Any]], wire_codec: Optional[str]
           ) -> Dict[str, Any]:
    """Rank 0's row for run @r (see the module doc for the keys)."""
    name, kind, arg = r.cfg
    world, timed_steps = r.world, steps - r.warmup
    params = sum(p.numel() for p in r.ddp.parameters())
    ring = 2 * (world - 1) / world * 4 * params    # fp32 ring bytes/rank
    ratio = codec_ratio(tool, arg, METER.samples) \
        if kind in ("incnn", "incnn-before") else None
    # bytes per timed iteration and over the whole run (curve: raw bytes
    # -> bytes): the library's count (times the codec's ratio for the
    # emulated codecs), LGC's from its own rates (its codes and indices
    # partly go through gloo)
    keep = os.environ.get("INCNN_TORCH_SAVE_SAMPLES")
    if keep and METER.samples:  # what the ratio was measured on, raw f32
        import torch
        os.makedirs(keep, exist_ok=True)
        torch.cat([x.reshape(-1) for x in METER.samples]).numpy().tofile(
            os.path.join(keep, f"{r.model_name}_{name}.f32"))
    extra: Dict[str, Any] = {}
    if r.gvq is not None and r.gvq.samples and stats and tool:
        # GradiVeQ's quantised iterations: as the codec would encode them
        q = codec_ratio(tool, stats["codec"], r.gvq.samples)
        w = stats["wire_bytes"]
        cut = 1 - q
        wire_all -= round((w["warmup"] + w["sampling"]) * cut)
        wire_timed -= round((w["warmup"] + w["sampling"] - r.plain_timed0)
                            * cut)
        for pt, plain in zip(r.curve, r.plain_at):
            pt[2] -= round(plain * cut)
        extra["gvq_codec_ratio"] = round(q, 5)
    factor = 1.0 if ratio is None else ratio
    wire = wire_timed * factor / timed_steps
    if kind == "lgc" and stats:
        wire = ring / stats["total"]["rate"]
        lgc_curve(r, stats, ring)
    for pt in r.curve:
        pt[2] = pt[2] if kind == "lgc" else round(pt[2] * factor)
    total = wire * steps if kind == "lgc" else wire_all * factor
    if tx_mean is not None:
        extra["eth0_tx_bytes_per_iter"] = round(tx_mean / timed_steps)
    if wire_codec is not None:
        extra["wire_codec"] = wire_codec
    if stats is not None:
        extra[f"{kind}_stats"] = stats
    if r.phases_at:
        extra["phases_at"] = r.phases_at
    if r.phase_log:     # the VM: each phase's time and eth0 bytes
        extra["phase_timed_steps"] = {p: int(v[0])
                                      for p, v in r.phase_log.items()}
        extra["phase_iter_ms"] = {p: round(v[1] / v[0] * 1e3, 3)
                                  for p, v in r.phase_log.items()}
        extra["phase_eth0_tx_bytes_per_iter"] = {
            p: round(v[2] / v[0]) for p, v in r.phase_log.items()}
    acc = r.curve[-1][3] if r.curve else None
    return {**extra,
        "config": name, "label": label(name), "model": r.model_name,
        "data": data[4], "ranks": world, "steps": steps,
        "timed_steps": timed_steps, "batch_per_rank": batch,
        "params": params,
        "iter_ms": round(r.iter_s / timed_steps * 1e3, 3),
        "comm_share": round(r.busy / r.iter_s, 4),
        "fp32_bucket_bytes_per_iter": r.fp32b // timed_steps,
        "payload_bytes_per_iter": round(wire * world / (2 * (world - 1))),
        "wire_bytes_per_iter": round(wire),
        "fp32_ring_bytes_per_iter": round(ring),
        "run_wire_bytes_per_iter": round(total / steps),
        "run_seconds": round(r.all_s, 3),
        "codec_ratio": None if ratio is None else round(ratio, 5),
        "test_accuracy": acc,
        "curve": r.curve,
        "final_loss": round(r.loss, 4),
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
    k = int(os.environ.get("INCNN_TORCH_EVAL_EVERY", EVAL_EVERY))
    # the seeds' schedules, scaled to the run (seeds-torch.py reads them).
    # LGC: make seeds' stages 1-2 (20 + 40), shortened in proportion below
    # 150 steps only: its autoencoder needs about 40 stage-2 iterations,
    # with 20 (150 steps at 2/15) stage 3 diverged (docs/results.md)
    lgc = min(steps, LGC_FULL_AT)
    for var, v in (("LGC_T1", 20 * lgc // LGC_FULL_AT),
                   ("LGC_T2", 40 * lgc // LGC_FULL_AT),
                   ("GVQ_TORCH_WARMUP", steps // 10),
                   ("GVQ_TORCH_TS", steps // 10)):
        os.environ.setdefault(f"INCNN_SEEDS_{var}", str(max(1, v)))
    skip = {c[0]: missing(c) for c in configs}
    for c in configs:
        if skip[c[0]] and dist.get_rank() == 0:
            print(f"demo-torch: {c[0]} skipped: {skip[c[0]]}", flush=True)
    chosen = bool(os.environ.get("INCNN_TORCH_CONFIGS"))
    runs = [(m, c) for m in models for c in configs if not skip[c[0]] and
            (chosen or m not in MODEL_CONFIGS or c[0] in MODEL_CONFIGS[m])]
    t_start = time.monotonic()
    for i, (m, c) in enumerate(runs):
        res = run(m, c, data, steps, base + i, tool,
                  batch=MODEL_BATCH.get(m, BATCH), evaluate_every=k)
        dist.barrier()
        if res is None:
            continue
        res["eval_every"] = k
        with open(out, "a") as f:
            f.write(json.dumps(res) + "\n")
        el = time.monotonic() - t_start
        eta = el / (i + 1) * (len(runs) - i - 1)
        print(f"demo-torch: [{i + 1}/{len(runs)}] {m} {label(c[0])}: "
              f"{res['iter_ms']:.1f} ms/iter, "
              f"{res['wire_bytes_per_iter'] / 1e6:.3f} MB/iter, comm "
              f"{res['comm_share'] * 100:.0f} %, accuracy "
              f"{res['test_accuracy'] * 100:.2f} % ({el:.0f} s, about "
              f"{eta:.0f} s left)", flush=True)
    dist.destroy_process_group()


# The VM part: the HDC MLP under every configuration, through the module.
# incnn's lossy configurations are codec "auto" on marked sockets: the
# module's rule for that ToS, the codec and bound of the name (vm_rules(),
# set by scripts/demo/demo-torch-vm.sh); "none" is unmarked (tos 0).
VM_CONFIGS: List[Tuple[str, str, Any]] = [
    ("default", "default", None),
    ("fp16", "fp16", None),
    ("powersgd-r1", "powersgd", 1),
    ("powersgd-r4", "powersgd", 4),
    ("incnn-none", "incnn", "none"),
    ("incnn-ebq-2^-10", "incnn-auto", 0x28),
    ("incnn-inceptionn-2^-10", "incnn-auto", 0x30),
    ("incnn-zebq-2^-10", "incnn-auto", 0x34),
    ("incnn-ebq-2^-8-scale-ef", "incnn-auto", 0x38),
    ("incnn-zebq-2^-4-scale-ef", "incnn-auto", 0x3c),
    ("incnn-zebq-2^-5-scale-ef", "incnn-auto", 0x24),
    ("incnn-zebq-2^-5-bscale-ef", "incnn-auto", 0x20),
    # the seeds (scripts/seeds/seeds-torch.py's make_hook): THC's codes
    # and GradiVeQ's payloads are the library's, on unmarked sockets;
    # LGC's codec calls go marked for the rule of its codec (vm_seed())
    ("incnn-thc-ring", "thc", None),
    ("incnn-thc-wa", "thc", "ps"),
    ("incnn-gradiveq", "gradiveq", None),
    ("incnn-lgc", "lgc", None),
]


WIRE_TOS = 0x2c     # INCNN_DEFAULT_WIRE_TOS (uapi/linux/incnn.h)


def vm_rules() -> List[str]:
    """"TOS CODEC BOUND" of every module rule VM_CONFIGS needs; a ToS
    the module refuses (the wire DSCP) or one given two rules is an
    error here, not a skipped configuration in the VM."""
    out: Dict[int, str] = {}
    for name, kind, tos in VM_CONFIGS:
        m = INCNN_NAME.match(name)
        if kind != "incnn-auto" or not m:
            continue
        rule = f"{tos:#04x} {m.group(1)} {m.group(2)}"
        if tos >> 2 == WIRE_TOS >> 2 or out.get(tos >> 2, rule) != rule:
            raise SystemExit(f"demo-torch: {name}: tos {tos:#04x} is the "
                             "wire DSCP or another rule's")
        out[tos >> 2] = rule
    return list(out.values())


VM_WARMUP = 2
# the seeds' schedules in the VM: every phase gets timed steps (2 each
# after the VM_WARMUP untimed: GradiVeQ's warm-up (W + 1 steps: DDP's
# first one is repeated), sampling and compressed iterations; LGC's
# stages 1, 2 (t2 steps) and 3), so the seeds' rows run VM_SEED_STEPS
# steps (or STEPS if more); the host's phase counts at its target
# weight each phase's time (tta())
VM_SEED_SCHEDULE = {"INCNN_SEEDS_GVQ_TORCH_WARMUP": VM_WARMUP + 1,
                    "INCNN_SEEDS_GVQ_TORCH_TS": 2,
                    "INCNN_SEEDS_LGC_T1": VM_WARMUP + 2,
                    "INCNN_SEEDS_LGC_T2": 2,
                    "INCNN_SEEDS_TIMEOUT": 300}
VM_SEED_STEPS = VM_WARMUP + 6
# per rank: the host's, so that the host's steps to the target and the
# VM's time per step make a time to the target
VM_BATCH = BATCH


def vm_seed(cfg: Tuple[str, str, Any], refused: set
            ) -> Tuple[Tuple[str, str, Any], str]:
    """A seed's configuration as the VM runs it and the line saying how
    its codec reaches the wire: LGC's codec calls marked with the ToS of
    the VM rule of the same codec and bound (codec "auto"), where there
    is one the module took; GradiVeQ's warm-up and sampling iterations
    through its codec emulated in userspace, fp32 on the wire
    (GradiVeQState takes no codec "auto": its data connections also
    carry PCA coefficients, which the module must not re-quantise)."""
    name, kind, arg = cfg
    if kind == "gradiveq":
        codec = os.environ.get("INCNN_SEEDS_GVQ_TORCH_CODEC", "ebq:2^-8")
        return cfg, (f"{name}: warm-up and sampling through {codec} "
                     "emulated in userspace, unmarked (fp32 on the wire: "
                     "GradiVeQState takes no codec \"auto\")")
    if kind != "lgc":
        return cfg, f"{name}: the library's codes, unmarked"
    codec = seeds_torch().lgc_options()["codec"]
    for rname, rkind, tos in VM_CONFIGS:
        m = INCNN_NAME.match(rname)
        if rkind == "incnn-auto" and m and tos not in refused and \
                f"{m.group(1)}:{m.group(2)}" == codec:
            how = f"codec calls marked tos {tos:#04x} ({codec}, module)"
            return (name, kind, tos), f"{name}: {how}"
    return cfg, (f"{name}: no module rule for {codec}: emulated in "
                 "userspace, unmarked (fp32 on the wire)")


def vm(outdir: str, data_path: str, steps: int) -> None:
    """Inside the VM cluster (scripts/demo/demo-torch-vm.sh), one rank per
    host: the HDC MLP (INCNN_TORCH_VM_MODELS: a comma list of MODELS)
    under each of VM_CONFIGS (INCNN_TORCH_VM_CONFIGS: some of them; those
    the library cannot run are skipped, saying why) in this one process
    (torch is imported once: that takes minutes under TCG), a fresh DDP
    model and hook per configuration, STEPS steps of VM_BATCH digits per
    rank (INCNN_TORCH_VM_BATCH; the gradient's size does not depend on
    it, the emulated compute does) of which the first VM_WARMUP are
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
    models = selected(os.environ.get("INCNN_TORCH_VM_MODELS", "hdc-mlp"),
                      MODELS, "model")
    batch = int(os.environ.get("INCNN_TORCH_VM_BATCH", VM_BATCH))
    refused = {int(t, 16) for t in
               os.environ.get("INCNN_TORCH_VM_REFUSED", "").split()}
    skip = {c[0]: missing(c) or ("the module refused its rule"
                                 if c[1] == "incnn-auto" and c[2] in refused
                                 else None) for c in cfgs}
    for c in cfgs:
        if skip[c[0]] and rank == 0:
            print(f"demo-torch-vm: {c[0]} skipped: {skip[c[0]]}", flush=True)
    for var, v in VM_SEED_SCHEDULE.items():
        os.environ.setdefault(var, str(v))
    seeds = {}
    for c in cfgs:
        if c[1] in ("thc", "gradiveq", "lgc") and not skip[c[0]]:
            seeds[c[0]], how = vm_seed(c, refused)
            if rank == 0:
                print(f"demo-torch-vm: {how}", flush=True)
    runs = [(m, seeds.get(c[0], c)) for m in models for c in cfgs
            if not skip[c[0]]]
    for i, (m, c) in enumerate(runs):
        t0 = time.monotonic()
        n = max(steps, VM_SEED_STEPS) if c[0] in seeds else steps
        res = run(m, c, data, n, base + i, "", tx_bytes, VM_WARMUP,
                  MODEL_BATCH.get(m, batch))
        dist.barrier()
        if res is None:
            continue
        res["link_rate"] = os.environ.get("INCNN_TORCH_VM_RATE", "")
        res["start_powerSGD_iter"] = VM_WARMUP if c[1] == "powersgd" else None
        with open(os.path.join(outdir, "torch-vm.jsonl"), "a") as f:
            f.write(json.dumps(res) + "\n")
        print(f"demo-torch-vm: [{i + 1}/{len(runs)}] {m} {label(c[0])}"
              f"{' (' + res['wire_codec'] + ')' if 'wire_codec' in res else ''}: "
              f"{res['iter_ms']:.0f} ms/iter, eth0 "
              f"{res['eth0_tx_bytes_per_iter'] / 1e6:.3f} MB/iter, comm "
              f"{res['comm_share'] * 100:.0f} % "
              f"({time.monotonic() - t0:.0f} s){phase_note(res)}",
              flush=True)
    dist.destroy_process_group()


def phase_note(res: Dict[str, Any]) -> str:
    """A seed's VM row's phases for its progress line: "; PHASE: STEPS x
    MS ms, MB MB/iter" each."""
    ms = res.get("phase_iter_ms")
    if not ms:
        return ""
    return "; " + ", ".join(
        f"{'stage ' * p.isdigit()}{p}: {res['phase_timed_steps'][p]} x "
        f"{v:.0f} ms, "
        f"{res['phase_eth0_tx_bytes_per_iter'][p] / 1e6:.3f} MB/iter"
        for p, v in ms.items())


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
        + ", ".join(f"`tos {r.replace(' ', ' codec ', 1).replace(' 2', ' bound 2')}`"
                    for r in vm_rules())
        + " (incnn.torch codec \"auto\" on sockets marked with that ToS; "
        "\"no codec\" is unmarked); "
        f"{', '.join(dict.fromkeys(r['model'] for r in rows))}, "
        f"{r0['batch_per_rank']} digits per rank, "
        f"{r0['timed_steps']} timed steps after {r0['steps'] - r0['timed_steps']} "
        "(PowerSGD's start_powerSGD_iter is "
        f"{r0['steps'] - r0['timed_steps']} here); wire bytes are the eth0 tx "
        "counter per iteration (mean over the hosts, headers included); "
        "accuracy is the host run's of the same configuration; link "
        "ms/iter: the eth0 bytes at the link's rate, the least time the "
        "link alone takes (the rest of an iteration is the emulated CPUs: "
        "compute, the library and the module):", "",
        "| model | configuration | ms/iter | link ms/iter | eth0 MB/iter "
        "| vs default | comm % | test accuracy (host) |",
        "|---|---|---:|---:|---:|---:|---:|---:|"]
    bps = rate_bits(r0.get("link_rate") or "10mbit")
    for r in rows:
        a = r["test_accuracy"]
        codec = f" ({r['wire_codec']})" if r.get("wire_codec") else ""
        link = r["eth0_tx_bytes_per_iter"] * 8 / bps * 1e3 if bps else None
        lines.append(
            f"| {r['model']} | {r['label']}{codec} | {r['iter_ms']:.0f} | "
            f"{'-' if link is None else f'{link:.0f}'} | "
            f"{r['eth0_tx_bytes_per_iter'] / 1e6:.3f} | "
            f"{ref / max(1, r['wire_bytes_per_iter']):.1f}x | "
            f"{r['comm_share'] * 100:.0f} | "
            f"{'-' if a is None else f'{a * 100:.2f} %'} |")
    phased = [r for r in rows if r.get("phase_iter_ms")]
    if phased:
        lines += ["", "The seeds' phases in the VM (their schedules "
                  "shortened so that each phase has timed steps, "
                  f"{r0['steps'] - r0['timed_steps']} untimed first; "
                  "the table's row is their mean; time to accuracy "
                  "weights each phase by the host run's steps in it):", ""]
        lines += [f"- {r['model']} {r['label']}: {phase_note(r)[2:]}"
                  for r in phased]
    return rows, lines


def rate_bits(rate: str) -> Optional[float]:
    """tc's rate @rate ("10mbit", "512kbit") in bit/s, None if not so."""
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.strip().lower())
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


def first_at(curve: List[List[float]], target: float
             ) -> Optional[List[float]]:
    """The first point of @curve (step, seconds, bytes, accuracy 0..1)
    at or above @target (%)."""
    return next((p for p in curve if p[3] * 100 >= target - 1e-9), None)


def phase_mix(counts: Dict[str, int], per: Dict[str, float],
              rest: float) -> float:
    """The mean per step of @per (a figure per phase; @rest for a phase
    it lacks) over @counts (steps per phase)."""
    n = sum(counts.values())
    if not n:
        return rest
    return sum(c * per.get(p, rest) for p, c in counts.items()) / n


def vm_figures(r: Dict[str, Any], h: Optional[Dict[str, Any]],
               pt: Optional[List[float]]
               ) -> Tuple[int, Optional[float], Optional[int]]:
    """A VM row's wire bytes per iteration, seconds and bytes to the
    target (@pt: the host run @h's first point at it): the host's steps
    times the VM's time and eth0 bytes per step. A seed's phases
    (phase_iter_ms, phase_eth0_tx_bytes_per_iter) are weighted by the
    host run's steps in each (phases_at): at the target for the time
    and the bytes to it, over the whole run for the bytes per
    iteration; a phase the VM did not time counts at the row's mean."""
    wire, ms = r["wire_bytes_per_iter"], r["iter_ms"]
    mix = h.get("phases_at") if h and r.get("phase_iter_ms") else None
    at = None
    if mix:
        wire = round(phase_mix(mix[-1], r["phase_eth0_tx_bytes_per_iter"],
                               wire))
        if pt is not None:
            at = mix[h["curve"].index(pt)]
    if pt is None:
        return wire, None, None
    per_ms = phase_mix(at, r["phase_iter_ms"], ms) if at else ms
    per_b = phase_mix(at, r["phase_eth0_tx_bytes_per_iter"],
                      r["wire_bytes_per_iter"]) if at else wire
    return wire, round(pt[0] * per_ms / 1e3, 3), round(pt[0] * per_b)


def tta(outdir: str, rows: List[Dict[str, Any]],
        vrows: List[Dict[str, Any]]) -> None:
    """tta.json (the keys of issue 19, one object per model, configuration
    and place), tta-curves.json (the curves, steps and bytes to the
    target) and the plots' data tta-MODEL.dat in @outdir. The target:
    the default configuration's final accuracy on that model minus
    TARGET_MARGIN pp. The VM's rows: the host run's accuracy (the same
    trajectory: the emulation is bit-identical to the module), its steps
    to the target times the VM's seconds per iteration."""
    target = {r["model"]: round(r["test_accuracy"] * 100 - TARGET_MARGIN, 2)
              for r in rows if r["config"] == "default"}
    host = {(r["model"], r["config"]): r for r in rows}
    # the VM's ratios: against its default row's eth0 bytes (headers on
    # both sides), else against fp32 in a ring
    ref = {r["model"]: r["wire_bytes_per_iter"] for r in vrows
           if r["config"] == "default"}
    out, curves = [], []
    for r in rows + vrows:
        h = host.get((r["model"], r["config"]))
        t = target.get(r["model"])
        pt = first_at(h["curve"], t) if h and t is not None else None
        vm = r is not h
        wire = r["wire_bytes_per_iter"]
        base = ref.get(r["model"]) if vm else None
        secs = None if pt is None else pt[1]
        to_target = None if pt is None else pt[2]
        if vm:
            wire, secs, to_target = vm_figures(r, h, pt)
        out.append({
            "model": r["model"], "config": r["config"],
            "where": "vm" if vm else "host",
            "payload_ratio": round((base or r["fp32_ring_bytes_per_iter"])
                                   / wire, 2) if wire else None,
            "wire_bytes_per_iter": wire,
            "target_accuracy": t,
            "final_accuracy": None if not h else
            round(h["test_accuracy"] * 100, 2),
            "time_to_target_s": secs})
        curves.append({
            "model": r["model"], "config": r["config"],
            "where": out[-1]["where"], "eval_every": r.get("eval_every"),
            "steps": r["steps"],
            "steps_to_target": None if pt is None else pt[0],
            "bytes_to_target": to_target,
            "phase_weighted": bool(vm and h and h.get("phases_at") and
                                   r.get("phase_iter_ms")),
            "curve": [] if vm or not h else h["curve"]})
    for name, obj in (("tta.json", out), ("tta-curves.json", curves)):
        with open(os.path.join(outdir, name), "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
    with open(os.path.join(outdir, "tta-plot.txt"), "w") as f:
        for m, t in target.items():
            n = sum(1 for r in rows if r["model"] == m)
            f.write(f"{m} {t} {n} {rows[0]['eval_every']}\n")
    for m in target:
        with open(os.path.join(outdir, f"tta-{m}.dat"), "w") as f:
            for r in rows:
                if r["model"] != m:
                    continue
                f.write(f"step \"{r['config']}\" MB acc\n")
                for p in r["curve"]:
                    f.write(f"{p[0]} {p[1]} {p[2] / 1e6} {p[3] * 100}\n")
                f.write("\n\n")


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
    if any(r["config"] == "default" and r.get("curve") for r in rows):
        tta(outdir, rows, vrows)
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


def tta_note(outdir: str) -> None:
    """Print how make demo's time-to-accuracy table was measured (from
    OUTDIR/torch.json)."""
    with open(os.path.join(outdir, "torch.json")) as f:
        rows = json.load(f)
    host = [r for r in rows if r["where"] == "host" and r.get("curve")]
    if not host:
        print("No time-to-accuracy rows (the PyTorch part did not run).")
        return
    r0 = host[0]
    models = {r["model"]: r for r in host}
    sizes = ", ".join(f"{m} ({r['params'] / 1e6:.2f} M parameters, "
                      f"{r['batch_per_rank']} digits per rank and step)"
                      for m, r in models.items())
    print(f"Models: {sizes}; {r0['steps']} steps each, SGD lr 0.05. Test "
          f"accuracy every {r0['eval_every']} steps and after the last, on "
          f"a fixed subset of the test digits (1 in {EVAL_STRIDE}: "
          f"{2000 // EVAL_STRIDE} of 2,000), not timed. Target: the "
          f"default allreduce's final accuracy on that subset minus "
          f"{TARGET_MARGIN} pp, from the same run. Host (4 local ranks, "
          "incnn's codecs emulated in userspace, bit-identical to the "
          "module): time to target is the training wall time (forward, "
          "backward, optimizer step, communication) up to the first "
          "evaluation at or above the target, on this shared machine; MB to "
          "target is what a rank sent until then (the hook's all_reduce "
          "payload in a ring, 2(N-1)/N of it; for incnn the library's count "
          "times the codec's ratio on sampled buckets; LGC: its whole-run "
          "rate). payload ratio and wire MB/iter: per timed iteration "
          f"(after the first {r0['steps'] - r0['timed_steps']}; PowerSGD's "
          "plain-allreduce phase excluded), against fp32 in a ring. VM rows "
          "(4 hosts through the module, rate-limited links): the host "
          "run's accuracy and steps to the target (the same trajectory) "
          "times the VM's measured seconds per iteration; wire bytes are "
          "the eth0 counter, headers included, and the payload ratio is "
          "the VM default row's eth0 bytes over the row's. A seed with "
          "phases (GradiVeQ: warm-up, sampling, compressed; LGC: stages "
          "1-3) is timed in the VM per phase; its time and bytes to the "
          "target weight each phase by the host run's steps in it up to "
          "the target, its wire bytes per iteration by those of the whole "
          "run.")


def main() -> None:
    if len(sys.argv) >= 5 and sys.argv[1] == "train":
        steps = int(sys.argv[5]) if len(sys.argv) > 5 else 80
        train(sys.argv[2], sys.argv[3], sys.argv[4], steps)
    elif len(sys.argv) == 5 and sys.argv[1] == "vm":
        vm(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None)
    elif len(sys.argv) == 3 and sys.argv[1] == "tta-note":
        tta_note(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "vm-rules":
        print("\n".join(vm_rules()))
    else:
        sys.exit("usage: demo-torch.py train OUTDIR DATA CODEC_TOOL [STEPS]"
                 " | vm OUTDIR DATA STEPS | report OUTDIR [VMOUT]"
                 " | tta-note OUTDIR | vm-rules")


if __name__ == "__main__":
    main()
