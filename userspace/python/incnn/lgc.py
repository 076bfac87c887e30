# SPDX-License-Identifier: GPL-2.0 OR MIT
"""LGC, learned gradient compression, ring-allreduce variant
(Abrahamyan et al., Section V and Algorithm 2), as a DDP comm hook.

    import incnn.torch as it
    lgc = it.LGCState(model, t1=200, t2=300)       # the paper's defaults
    ddp.register_comm_hook(lgc, it.lgc_hook)
    ...
    lgc.stats()          # bytes per stage, compression rates

Stages, counted in iterations (one iteration = one backward pass; it ends
with DDP's last bucket):
  1. it < t1: plain average through incnn's ring allreduce.
  2. t1 <= it < t1+t2: a rotating leader (rank it % K) selects the top
     alpha of |accumulated gradient| in every parameter tensor, sends the
     indices (delta- then zlib-coded) over the process group; every rank
     sends its values there through incnn's allreduce; the trainer rank
     (default 0: "a selected node", Section V-B) gathers every rank's
     vector and trains the 1-D convolutional autoencoder one step (batch
     1) per bucket.
  3. it >= t1+t2: the trainer broadcasts the trained weights once; then every
     rank encodes its top-k vector, the codes are averaged by incnn's ring
     allreduce and every rank decodes the same averaged code with the same
     weights (bit-identical on every rank).
Non-selected values stay in a local residual, with DGC's momentum
correction (u = m u + g; v += u; selected positions of u and v cleared).
Layer exceptions: the parameters of the model's first module get the
original gradient averaged; those of its last module get top-k without
the autoencoder.

The hook is asynchronous: it queues the bucket and returns a
torch.futures.Future at once; one worker thread per LGCState runs the
buckets in the order they came (the same order on every rank: DDP's
bucket order), doing the collectives of the LGC step (gloo, on a process
group of its own so that they never interleave with the caller's), and
completes each future in order (an exception becomes set_exception, so
DDP's backward raises it). Backward goes on while a bucket is processed.
"""

import math
import zlib
from dataclasses import dataclass, fields, replace
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, \
    Union

import torch
import torch.distributed as dist
import torch.nn as nn

from . import _lib
from ._base import StateBase, future_value
from .allreduce import State
# Autoencoder and ae_loss: also incnn.lgc's names, as before the module
from .autoencoder import (AEOptions, Autoencoder, ae_loss,  # noqa: F401
                          ae_train_step, padded)

__all__ = ["LGCState", "LGCOptions", "AEOptions", "lgc_hook", "Autoencoder"]


class _Param:
    """Per-parameter residual state (v, u of DGC) and the momentum of its
    averaged gradient where it is averaged densely (stage 1, the first
    layer)."""
    __slots__ = ("kind", "u", "v", "mom")

    def __init__(self, kind: str):
        self.kind = kind            # "dense", "topk", "ae"
        self.u: Optional[torch.Tensor] = None
        self.v: Optional[torch.Tensor] = None
        self.mom: Optional[torch.Tensor] = None


class _Bucket:
    """What the worker needs of a dist.GradBucket, taken in the hook (the
    buffer is DDP's; it is not touched again before the future is done)."""
    __slots__ = ("_buf", "_params", "_index", "_last")

    def __init__(self, buf: torch.Tensor, params: List[torch.Tensor],
                 index: int, last: bool):
        self._buf, self._params = buf, params
        self._index, self._last = index, last

    @classmethod
    def of(cls, bucket: Any) -> "_Bucket":
        return cls(bucket.buffer(), list(bucket.parameters()),
                   bucket.index(), bucket.is_last())

    def buffer(self) -> torch.Tensor:
        return self._buf

    def parameters(self) -> List[torch.Tensor]:
        return self._params

    def index(self) -> int:
        return self._index

    def is_last(self) -> bool:
        return self._last


class _Job:
    __slots__ = ("bucket", "iteration", "fut")

    def __init__(self, bucket: _Bucket, iteration: int,
                 fut: torch.futures.Future):
        self.bucket, self.iteration, self.fut = bucket, iteration, fut


class _WireSampler:
    """What a lossy codec encodes on the ring's last leg, sampled per
    stage: every stride-th keyed call's result as it is sent (the sum,
    or the average when divided first, times 2^e per segment: e puts the
    segment's largest value in [0.5, 1), incnn's scale rule applied to
    the result itself), at most 2 * @most per stage (the stride doubles
    and every other sample goes when full)."""

    def __init__(self, most: int, world: int, scaled: bool,
                 divide_after: bool):
        self.most, self.world = most, world
        self.scaled, self.divide_after = scaled, divide_after
        self.samples: Dict[str, List[torch.Tensor]] = {k: [] for k in
                                                       STAGES}
        self._calls = {k: 0 for k in STAGES}
        self._stride = {k: 1 for k in STAGES}

    def wire(self, result: torch.Tensor, sizes: Sequence[int]
             ) -> torch.Tensor:
        """@result (an average) as the last leg carries it."""
        v = result * self.world if self.divide_after else result.clone()
        if not self.scaled:
            return v
        for part in v.split(list(sizes)):
            m = float(part.abs().max()) if part.numel() else 0.0
            if m > 0 and math.isfinite(m):
                part.mul_(2.0 ** -math.frexp(m)[1])
        return v

    def add(self, stage: int, parts: Sequence[Tuple[torch.Tensor,
                                                    Sequence[int]]]
            ) -> None:
        """One call's (or one bucket's) results of @stage with their
        segment sizes."""
        k = str(stage)
        n = self._calls[k]
        self._calls[k] += 1
        if not self.most or n % self._stride[k]:
            return
        lst = self.samples[k]
        lst.append(torch.cat([self.wire(r, z) for r, z in parts]))
        if len(lst) >= 2 * self.most:
            del lst[1::2]
            self._stride[k] *= 2


STAGE_KEYS = ("sent", "baseline", "index", "iterations", "coded")
STAGES = ("1", "2", "3")


@dataclass(frozen=True)
class LGCOptions:
    """LGC's algorithm settings (LGCState(options=...), or the same names
    as keywords).

    alpha:    fraction of each parameter's positions selected, in (0, 1]
              (the paper: 0.1 % = 0.001)
    t1, t2:   iterations of stage 1 and 2 (>= 0; the paper: ~200, 300)
    momentum: DGC's momentum correction factor in [0, 1) (use an optimizer
              without momentum with it, as DGC does; 0: plain residual)
    feedback: (not in the paper) in stage 3, keep in the residual what the
              decoder's output missed of this rank's selected values
              (error feedback: docs/lgc.md), rather than clearing them
    trainer:  the rank that gathers the vectors, trains the autoencoder in
              stage 2 and broadcasts its weights (the paper's "selected
              node"), in [0, world size)
    measure:  in stage 3, also average the selected values exactly (gloo,
              not counted in the rates) to record the reconstruction
              error in stats()["3"]["rec_err"]
    dense_momentum: apply @momentum to what is averaged densely (stage 1,
              the first layer in stages 2-3) as SGD's momentum would
              (buf = m buf + mean g, the same on every rank): the
              optimizer runs without momentum for DGC's correction, so
              without it those updates are SGD without momentum (as
              before this option; the paper trains them with its
              optimizer's momentum)
    wire_samples: with a lossy codec, keep about this many samples per
              stage of what the codec encodes (state.coded_samples), to
              measure its ratio for stats(codec_ratio=); 0: none
    """

    alpha: float = 0.001
    t1: int = 200
    t2: int = 300
    momentum: float = 0.9
    feedback: bool = False
    trainer: int = 0
    measure: bool = False
    wire_samples: int = 0
    dense_momentum: bool = True

    def check(self) -> None:
        """ValueError naming the setting and its limits."""
        if not (isinstance(self.alpha, (int, float)) and
                0 < self.alpha <= 1):
            raise ValueError(f"incnn.lgc: alpha {self.alpha!r} must be in "
                             "(0, 1]")
        for name, t in (("t1", self.t1), ("t2", self.t2)):
            if not isinstance(t, int) or t < 0:
                raise ValueError(f"incnn.lgc: {name} {t!r} must be an "
                                 "integer >= 0")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"incnn.lgc: momentum {self.momentum!r} must "
                             "be in [0, 1)")
        if not isinstance(self.trainer, int) or self.trainer < 0:
            raise ValueError(f"incnn.lgc: trainer {self.trainer!r} must be "
                             "a rank in [0, world size)")
        if not isinstance(self.wire_samples, int) or self.wire_samples < 0:
            raise ValueError(f"incnn.lgc: wire_samples {self.wire_samples!r}"
                             " must be an integer >= 0")

    def check_world(self, world_size: Optional[int]) -> None:
        """ValueError unless LGC runs on @world_size ranks (None: not known
        yet)."""
        if world_size is None:
            return
        if world_size < 2:
            raise ValueError(f"incnn.lgc: world size {world_size} must be "
                             ">= 2 (LGC averages over ranks)")
        if self.trainer >= world_size:
            raise ValueError(f"incnn.lgc: trainer {self.trainer} must be a "
                             f"rank in [0, {world_size})")


# LGCState's keywords for AEOptions' fields (the names before AEOptions)
AE_KEYWORDS = {"width": "width", "seed": "seed", "code_stride": "code_stride",
               "ae_init": "init", "ae_norm": "norm", "ae_lr": "lr",
               "ae_optim": "optim", "ae_steps": "steps"}
LGC_KEYWORDS = tuple(f.name for f in fields(LGCOptions))


def split_keywords(kw: Dict[str, Any], options: Optional[LGCOptions],
                   ae: Optional[AEOptions]
                   ) -> Tuple[LGCOptions, AEOptions, Dict[str, Any]]:
    """LGCState's keywords: (@options, @ae with the keywords that name
    their fields, the rest: for the State made there)."""
    lgc = {k: kw.pop(k) for k in LGC_KEYWORDS if k in kw}
    aes = {AE_KEYWORDS[k]: kw.pop(k) for k in list(kw) if k in AE_KEYWORDS}
    return (replace(options or LGCOptions(), **lgc),
            replace(ae or AEOptions(), **aes), kw)


def _group_size(kw: Dict[str, Any]) -> Optional[int]:
    """The world size of the group LGC would run on, None before the
    process group."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(kw.get("process_group"))
    return None


class LGCState(StateBase):
    """LGC's state on one rank (see the module doc).

    model:    the module DDP wraps (its first and last modules with
              parameters are the layer exceptions); None: no exceptions
    options:  LGCOptions (alpha, t1, t2, momentum, feedback, trainer,
              measure), or those names as keywords (which take
              precedence)
    ae:       AEOptions (the autoencoder: width, seed, code_stride, init,
              norm, lr, optim), or as keywords width, seed, code_stride,
              ae_init, ae_norm, ae_lr, ae_optim
    state:    an existing incnn.torch.State for the ring allreduce; else
              one is made here from the other keywords (State's: codec,
              default "none" here ("auto" sends the codes marked, through
              the module's codec), port, timeout, process_group, ...)
    Everything but model is keyword-only.
    """

    def __init__(self, model: Optional[nn.Module] = None, *,
                 options: Optional[LGCOptions] = None,
                 ae: Optional[AEOptions] = None,
                 state: Optional[State] = None, **kw: Any):
        opts, aeo, state_kw = split_keywords(dict(kw), options, ae)
        opts.check()
        aeo.check()
        opts.check_world(_group_size(state_kw))
        if state is not None and state_kw:
            raise TypeError("incnn.lgc: State keywords "
                            f"{', '.join(sorted(state_kw))} with state=")
        state_kw.setdefault("codec", "none")
        self.state = state if state is not None else State(**state_kw)
        self._own_state = state is None
        try:
            opts.check_world(self.state.world_size)
            self._setup(model, opts, aeo)
        except BaseException:
            if self._own_state:
                self.state.close()
            raise
        self._worker_start(f"incnn-lgc-{self.rank}")

    def _setup(self, model: Optional[nn.Module], opts: LGCOptions,
               aeo: AEOptions) -> None:
        """Everything but the worker: LGC's process group, the
        autoencoder, the layer exceptions, the figures."""
        self.options, self.ae_options = opts, aeo
        self.rank, self.world_size = self.state.rank, self.state.world_size
        self.process_group = pg = self.state.process_group
        # LGC's own gloo group: its collectives run on the worker thread
        # and must not interleave with the caller's on the same group
        ranks = None if pg is None else dist.get_process_group_ranks(pg)
        self.group = dist.new_group(ranks=ranks, backend="gloo")
        # group ranks of the trainer and leaders -> global ranks (gloo's
        # broadcast and gather name global ranks)
        self._global = ranks if ranks is not None else \
            list(range(self.world_size))
        self.alpha, self.t1, self.t2 = float(opts.alpha), opts.t1, opts.t2
        self.momentum = float(opts.momentum)
        self.feedback = bool(opts.feedback)
        self.trainer = opts.trainer
        self.measure = bool(opts.measure)
        self.ae_norm = aeo.norm
        self.ae, self.ae_opt = aeo.build()
        self.iteration = 0                      # hooks seen (caller's side)
        self.ae_loss: List[float] = []          # the trainer, stage 2
        # the same relative to ||mean g||^2 (1: no better than zeros)
        self.ae_rel_error: List[float] = []
        self.last_indices: Dict[int, torch.Tensor] = {}  # bucket -> indices
        self._kinds: Dict[int, str] = {}
        if model is not None:
            mods = [m for m in model.modules()
                    if any(True for _ in m.parameters(recurse=False))]
            for p in mods[-1].parameters(recurse=False):
                self._kinds[id(p)] = "topk"
            for p in mods[0].parameters(recurse=False):
                self._kinds[id(p)] = "dense"
        self._params: Dict[int, _Param] = {}
        self._broadcast_done = False
        self._stats: Dict[str, Dict[str, Any]] = {
            s: {k: 0 for k in STAGE_KEYS} for s in STAGES}
        self._stats["weights"] = {"sent": 0}
        self._stats["3"].update(rec_sq=0.0, ref_sq=0.0)
        # what the State's codec encodes: samples per stage (every
        # stride-th call), for the codec's ratio (stats(codec_ratio=))
        self.codec = self.state.wire_codec
        lossy = _lib.codec_lossy(self.state._comm.codec()[0])
        self._sampler = _WireSampler(
            opts.wire_samples if lossy else 0, self.world_size,
            self.state.scale != "off", self.state.divide_after)
        self.coded_samples = self._sampler.samples

    def __repr__(self) -> str:
        return (f"<incnn.LGCState rank {self.rank}/{self.world_size} "
                f"alpha {self.alpha} t1 {self.t1} t2 {self.t2} "
                f"iteration {self.iteration} stage {self.stage}>")

    def stage_of(self, iteration: int) -> int:
        return 1 if iteration < self.t1 else \
            2 if iteration < self.t1 + self.t2 else 3

    @property
    def stage(self) -> int:
        """The stage of the next iteration the hook will see."""
        return self.stage_of(self.iteration)

    def _stop(self) -> None:
        """After the queue (close()): close the State made here."""
        if self._own_state:
            self.state.close()

    # --- the worker thread -----------------------------------------------
    def submit(self, bucket: Any) -> torch.futures.Future:
        """Queue one bucket (a dist.GradBucket) of the current iteration;
        the future's value is its buffer, averaged the LGC way."""
        self._check_open()
        b = bucket if isinstance(bucket, _Bucket) else _Bucket.of(bucket)
        fut: torch.futures.Future = torch.futures.Future()
        self._q.put(_Job(b, self.iteration, fut))
        if b.is_last():
            self.iteration += 1
        return fut

    def _work(self, job: _Job
              ) -> Iterable[Tuple[torch.futures.Future, torch.Tensor]]:
        return ((job.fut, self.process(job.bucket, job.iteration)),)

    # --- rates ---------------------------------------------------------
    def stats(self, codec_ratio: Union[None, float, Dict[str, float]] = None
              ) -> Dict[str, Any]:
        """Bytes over every rank (the same figures on every rank; call it
        when no bucket is in flight, e.g. after backward): see docs/lgc.md
        for the keys. @codec_ratio (the codec's output over input bytes,
        one for every stage or a dict stage -> ratio): each stage's
        "coded" bytes (what went through the State's codec, as fp32)
        count at that ratio in "sent" and the rates."""
        s = {k: dict(v) for k, v in self._stats.items()}
        stages = STAGES
        for k in stages:
            q = codec_ratio.get(k) if isinstance(codec_ratio, dict) \
                else codec_ratio
            if q is not None:
                s[k]["sent"] -= round(s[k]["coded"] * (1.0 - q))
        sent = sum(s[k]["sent"] for k in stages) + s["weights"]["sent"]
        base = sum(s[k]["baseline"] for k in stages)
        s["total"] = {"sent": sent, "baseline": base,
                      "index": sum(s[k]["index"] for k in stages),
                      "iterations": sum(s[k]["iterations"] for k in stages),
                      "rate": base / sent if sent else 0.0}
        for k in stages:
            s[k]["rate"] = s[k]["baseline"] / s[k]["sent"] \
                if s[k]["sent"] else 0.0
        s3 = s["3"]
        ref = s3.pop("ref_sq")
        rec = s3.pop("rec_sq")
        s3["rec_err"] = rec / ref if ref > 0 else None
        s["iteration"] = self.iteration
        return s

    # --- helpers -------------------------------------------------------
    def _param(self, p: torch.Tensor) -> _Param:
        st = self._params.get(id(p))
        if st is None:
            st = self._params[id(p)] = _Param(self._kinds.get(id(p), "ae"))
        return st

    def _k(self, n: int) -> int:
        return min(n, max(1, math.ceil(self.alpha * n)))

    def _leader(self, it: int) -> int:
        return it % self.world_size

    def _broadcast_bytes(self, data: bytes, scale: float, it: int) -> \
            Tuple[bytes, float]:
        """The leader's index bytes and scale to every rank (gloo)."""
        leader = self._leader(it)
        src = self._global[leader]
        hdr = torch.zeros(2, dtype=torch.float64)
        if self.rank == leader:
            hdr[0], hdr[1] = len(data), scale
        dist.broadcast(hdr, src, group=self.group)
        n = int(hdr[0])
        buf = torch.zeros(n, dtype=torch.uint8)
        if self.rank == leader:
            buf.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
        dist.broadcast(buf, src, group=self.group)
        return buf.numpy().tobytes(), float(hdr[1])

    def _segments(self, sizes: Sequence[int]) -> List[int]:
        """The segments the State scales @sizes by: each, or one."""
        n = sum(sizes)
        return list(sizes) if self.state.scale_tensor else [n]

    def _mean(self, t: torch.Tensor, st: Dict[str, Any],
              sizes: Sequence[int], key: int = 0, bucket: Any = None,
              fresh: bool = False) -> torch.Tensor:
        """Average @t over the ranks in place through the State, as a
        keyed call: the DDP bucket's (@bucket), else @key's with a 2^e
        per segment of @sizes (@fresh: a new e, no residual); counts its
        bytes, those through the codec as "coded"."""
        if not t.numel():
            return t
        if bucket is not None:
            fut = self.state.submit(t, divide=True, bucket=bucket)
        else:
            fut = self.state.submit(t, divide=True, key=key,
                                    segments=sizes, fresh=fresh)
        fut.wait()
        n = 4 * t.numel() * self.world_size
        st["sent"] += n
        if t.dtype == torch.float32:
            st["coded"] += n
        return t

    def _broadcast_weights(self) -> None:
        flat = torch.cat([p.detach().reshape(-1)
                          for p in self.ae.parameters()])
        dist.broadcast(flat, self._global[self.trainer], group=self.group)
        off = 0
        with torch.no_grad():
            for p in self.ae.parameters():
                p.copy_(flat[off:off + p.numel()].view_as(p))
                off += p.numel()
        self._stats["weights"]["sent"] += 4 * flat.numel() * \
            (self.world_size - 1)
        self._broadcast_done = True

    # --- one bucket ----------------------------------------------------
    def process(self, bucket: Any, iteration: Optional[int] = None
                ) -> torch.Tensor:
        """The LGC step of one bucket of @iteration (default: the current
        one), synchronously; returns the bucket's buffer, overwritten."""
        it = self.iteration if iteration is None else iteration
        buf = bucket.buffer()
        stage = self.stage_of(it)
        K = self.world_size
        st = self._stats[str(stage)]
        st["baseline"] += 4 * buf.numel() * K
        if bucket.is_last():
            st["iterations"] += 1
        if stage == 1 or buf.dtype != torch.float32:
            # keyed by the bucket: scale and error feedback per tensor
            self._mean(buf, st, (), bucket=bucket)
            if buf.dtype == torch.float32:
                sizes = [p.numel() for p in bucket.parameters()]
                if sum(sizes) != buf.numel():
                    sizes = [buf.numel()]
                self._sampler.add(stage, [(buf, self._segments(sizes))])
                if len(sizes) == len(bucket.parameters()):
                    self._momentum_dense(bucket.parameters(), buf)
            return buf
        if stage == 3 and not self._broadcast_done:
            self._broadcast_weights()
        out = self._sparse(bucket, buf, stage, st, it)
        buf.copy_(out)
        return buf

    def _momentum_dense(self, params: Sequence[torch.Tensor],
                        avg: torch.Tensor) -> None:
        """In place on @avg, the mean gradients of @params one after the
        other: SGD's momentum (buf = avg at first, then m buf + avg), the
        same on every rank (dense_momentum)."""
        if not self.options.dense_momentum or not self.momentum:
            return
        off = 0
        for p in params:
            n = p.numel()
            ps, a = self._param(p), avg[off:off + n]
            if ps.mom is None:
                ps.mom = a.clone()
            else:
                ps.mom.mul_(self.momentum).add_(a)
            a.copy_(ps.mom)
            off += n

    def _select(self, bucket: Any, buf: torch.Tensor
                ) -> Tuple[List[Tuple[_Param, int, int]], torch.Tensor]:
        """Update the residuals; this rank's top-k of every sparse tensor
        as bucket offsets (int64, ascending)."""
        layout = []
        idx: List[torch.Tensor] = []
        off = 0
        for p in bucket.parameters():
            n = p.numel()
            ps = self._param(p)
            layout.append((ps, off, n))
            if ps.kind != "dense":
                g = buf[off:off + n]
                if ps.v is None:
                    ps.u, ps.v = torch.zeros_like(g), torch.zeros_like(g)
                    ps.mom = None           # stage 1's, not needed now
                ps.u.mul_(self.momentum).add_(g)
                ps.v.add_(ps.u)
                k = self._k(n)
                top = ps.v.abs().topk(k, sorted=False).indices
                idx.append(top.sort().values + off)
            off += n
        return layout, (torch.cat(idx) if idx else
                        torch.zeros(0, dtype=torch.int64))

    def _share(self, layout: List[Tuple[_Param, int, int]],
               idx: torch.Tensor, st: Dict[str, Any], it: int
               ) -> Tuple[torch.Tensor, float]:
        """The leader's positions (delta- and deflate-coded) and scale
        (the RMS, or L2 norm, of its selected autoencoder values) to
        every rank."""
        data, scale = b"", 0.0
        if self.rank == self._leader(it):
            d = torch.diff(idx, prepend=torch.zeros(1, dtype=torch.int64))
            data = zlib.compress(d.to(torch.int32).numpy().tobytes(), 9)
            sc = [ps.v[idx[(idx >= o) & (idx < o + n)] - o]
                  for ps, o, n in layout if ps.kind == "ae"]
            c = torch.cat(sc) if sc else torch.zeros(0)
            scale = 0.0 if not c.numel() else float(c.norm()) \
                if self.ae_norm == "l2" else float(c.pow(2).mean().sqrt())
        data, scale = self._broadcast_bytes(data, scale, it)
        # the index bytes and the scale (fp32) count; the length does not
        # (a framed stream carries it)
        st["index"] += len(data) + 4
        st["sent"] += len(data) + 4
        raw = zlib.decompress(data)
        # none: a bucket of dense tensors only (the first layer alone)
        idx = torch.zeros(0, dtype=torch.int64) if not raw else \
            torch.frombuffer(bytearray(raw), dtype=torch.int32).to(
                torch.int64).cumsum(0)
        return idx, scale

    def _sparse(self, bucket: Any, buf: torch.Tensor, stage: int,
                st: Dict[str, Any], it: int) -> torch.Tensor:
        layout, idx = self._select(bucket, buf)
        idx, scale = self._share(layout, idx, st, it)
        self.last_indices[bucket.index()] = idx
        dense, sel, vals_ae, vals_tk = [], [], [], []
        for ps, o, n in layout:
            if ps.kind == "dense":
                dense.append(buf[o:o + n])
                continue
            i = idx[(idx >= o) & (idx < o + n)] - o
            sel.append((ps, o, i))
            (vals_ae if ps.kind == "ae" else vals_tk).append(ps.v[i].clone())
            ps.v[i] = 0
            ps.u[i] = 0
        z = buf.new_zeros(0)
        dv = torch.cat(dense) if dense else z
        tv = torch.cat(vals_tk) if vals_tk else z
        av = torch.cat(vals_ae) if vals_ae else z
        L = av.numel()
        code = av
        asz = [v.numel() for v in vals_ae]
        if stage == 2 and L:
            self._train(av, scale)
        elif stage == 3 and L:
            x = buf.new_zeros(padded(L))
            x[:L] = av / scale if scale > 0 else av
            with torch.no_grad():
                code = self.ae.encode(x).contiguous()
            asz = [code.numel()]
        # two keyed calls: the dense tensors keep their positions (error
        # feedback per bucket); the selected values and codes change
        # meaning every call (a fresh e, no residual carried over)
        dsz = [v.numel() for v in dense]
        ssz = [v.numel() for v in vals_tk] + asz
        sp = torch.cat([tv, code])
        key = 2 * int(bucket.index())
        self._mean(dv, st, dsz, key)
        self._mean(sp, st, ssz, key + 1, fresh=True)
        self._sampler.add(stage, [(dv, self._segments(dsz)),
                                  (sp, self._segments(ssz))])
        self._momentum_dense([p for p, (ps, _, _) in
                              zip(bucket.parameters(), layout)
                              if ps.kind == "dense"], dv)
        msg = torch.cat([dv, sp])
        b = dv.numel() + tv.numel()
        rav = msg[b:]
        if stage == 3 and L:
            with torch.no_grad():
                rav = self.ae.decode(rav)[:L]
            if scale > 0:
                rav = rav * scale
            if self.measure:
                self._measure(av, rav, st)
        return self._place(buf, layout, sel, msg[:b], rav,
                           av if stage == 3 and self.feedback else None)

    def _measure(self, av: torch.Tensor, rav: torch.Tensor,
                 st: Dict[str, Any]) -> None:
        """The exact mean of the selected values (gloo, not counted):
        accumulate ||rec - mean||^2 and ||mean||^2."""
        ref = av.clone()
        dist.all_reduce(ref, group=self.group)
        ref /= self.world_size
        st["rec_sq"] += float((rav - ref).pow(2).sum())
        st["ref_sq"] += float(ref.pow(2).sum())

    @staticmethod
    def _place(buf: torch.Tensor, layout: List[Tuple[_Param, int, int]],
               sel: List[Tuple[_Param, int, torch.Tensor]],
               plain: torch.Tensor, rav: torch.Tensor,
               own: Optional[torch.Tensor]) -> torch.Tensor:
        """The bucket's new content: averaged dense and top-k values,
        reconstructed autoencoder values, zeros elsewhere. @own: this
        rank's autoencoder values, to keep what the decoder missed."""
        out = torch.zeros_like(buf)
        j = 0
        for ps, o, n in layout:
            if ps.kind == "dense":
                out[o:o + n] = plain[j:j + n]
                j += n
        pa = 0
        for ps, o, i in sel:
            m = i.numel()
            if ps.kind == "ae":
                out[o + i] = rav[pa:pa + m]
                if own is not None:
                    ps.v[i] += own[pa:pa + m] - rav[pa:pa + m]
                pa += m
            else:
                out[o + i] = plain[j:j + m]
                j += m
        return out

    def _train(self, av: torch.Tensor, scale: float) -> None:
        """Stage 2: the trainer gathers every rank's selected values and
        takes one optimizer step of the autoencoder (batch 1: one
        bucket)."""
        K, L = self.world_size, av.numel()
        x = av.new_zeros(padded(L))
        x[:L] = av / scale if scale > 0 else av
        me = self.rank == self.trainer
        gl = [torch.zeros_like(x) for _ in range(K)] if me else None
        dist.gather(x, gl, self._global[self.trainer], group=self.group)
        self._stats["2"]["sent"] += 4 * L * (K - 1)
        if me:
            vecs = torch.stack(gl)
            ref = float(vecs.mean(0).pow(2).sum())
            # the loss before the first step: on a sample not seen yet
            loss = ae_train_step(self.ae, self.ae_opt, vecs)
            for _ in range(self.ae_options.steps - 1):
                ae_train_step(self.ae, self.ae_opt, vecs)
            self.ae_loss.append(loss)
            self.ae_rel_error.append(loss / ref if ref > 0 else 0.0)


def lgc_hook(state: LGCState, bucket: dist.GradBucket
             ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: LGC (see the module doc). Returns at once;
    the state's worker thread completes the future (or sets the error)."""
    return state.submit(bucket).then(future_value)
