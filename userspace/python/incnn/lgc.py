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
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn

from ._worker import FifoWorker

if TYPE_CHECKING:                   # incnn.torch imports this module
    from .torch import State

__all__ = ["LGCState", "lgc_hook", "Autoencoder"]

STRIDE = 16             # vectors are padded to a multiple of this


class Autoencoder(nn.Module):
    """The paper's 1-D convolutional autoencoder: encoder of 5 conv layers
    with leaky ReLU between them, decoder of 5 transposed convolutions.
    A vector of length L (a multiple of 16) becomes a code of L/stride
    (stride 1, 2, 4, 8 or 16: that many of the first four layers halve
    the length)."""

    def __init__(self, width: int = 16, seed: int = 0, stride: int = 16,
                 init: str = "torch"):
        super().__init__()
        if stride not in (1, 2, 4, 8, 16):
            raise ValueError(f"incnn.lgc: code stride {stride!r} must be "
                             "1, 2, 4, 8 or 16")
        if init not in INITS:
            raise ValueError(f"incnn.lgc: init {init!r} must be one of "
                             f"{', '.join(INITS)}")
        self.stride = stride
        halve = [i < stride.bit_length() - 1 for i in range(4)]
        with torch.random.fork_rng():     # the same weights on every rank
            torch.manual_seed(seed)
            self.encoder, self.decoder = self._build(width, halve)
            if init == "unit":
                init_autoencoder(self)

    @staticmethod
    def _build(w: int, halve: List[bool]) -> Tuple[nn.Module, nn.Module]:
        act = nn.LeakyReLU
        enc: List[nn.Module] = []
        dec: List[nn.Module] = [nn.ConvTranspose1d(1, w, 5, 1, 2), act()]
        for i, h in enumerate(halve):
            enc += [nn.Conv1d(1 if i == 0 else w, w, 5, 2 if h else 1, 2),
                    act()]
        enc.append(nn.Conv1d(w, 1, 5, 1, 2))
        for i, h in enumerate(reversed(halve)):
            out = 1 if i == 3 else w
            dec.append(nn.ConvTranspose1d(w, out, 4, 2, 1) if h else
                       nn.ConvTranspose1d(w, out, 5, 1, 2))
            if i < 3:
                dec.append(act())
        return nn.Sequential(*enc), nn.Sequential(*dec)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """(L,) -> (L/stride,)"""
        return self.encoder(x.view(1, 1, -1)).view(-1)

    def decode(self, c: torch.Tensor) -> torch.Tensor:
        """(L/stride,) -> (L,)"""
        return self.decoder(c.view(1, 1, -1)).view(-1)


INITS = ("torch", "unit")
NORMS = ("rms", "l2")


def init_autoencoder(ae: nn.Module) -> None:
    """The "unit" initialisation: weights N(0, 1/fan_in) (fan_in of a
    transposed convolution: in_channels * kernel / stride), biases 0.
    PyTorch's default divides the variance by ~3 per layer and adds
    biases: at init our output does not depend on its input (< 1e-4 of
    it, docs/lgc.md). Uses torch's global RNG."""
    with torch.no_grad():
        for m in ae.modules():
            if isinstance(m, nn.ConvTranspose1d):
                fan = m.in_channels * m.kernel_size[0] / m.stride[0]
            elif isinstance(m, nn.Conv1d):
                fan = m.in_channels * m.kernel_size[0]
            else:
                continue
            m.weight.normal_(0.0, math.sqrt(1.0 / fan))
            if m.bias is not None:
                m.bias.zero_()


def padded(n: int) -> int:
    return max(STRIDE, -(-n // STRIDE) * STRIDE)


def ae_loss(ae: Autoencoder, vecs: torch.Tensor) -> torch.Tensor:
    """The paper's eq. (11): || D(mean_k E(g_k)) - mean_k g_k ||^2 for the
    rows of @vecs (K x L, L a multiple of 16)."""
    codes = torch.stack([ae.encode(v) for v in vecs])
    rec = ae.decode(codes.mean(0))
    return ((rec - vecs.mean(0)) ** 2).sum()


def ae_train_step(ae: Autoencoder, opt: torch.optim.Optimizer,
                  vecs: torch.Tensor) -> float:
    with torch.enable_grad():          # DDP's hooks run without grad
        opt.zero_grad()
        loss = ae_loss(ae, vecs)
        loss.backward()
        opt.step()
    return float(loss)


class _Param:
    """Per-parameter residual state (v, u of DGC)."""
    __slots__ = ("kind", "u", "v")

    def __init__(self, kind: str):
        self.kind = kind            # "dense", "topk", "ae"
        self.u: Optional[torch.Tensor] = None
        self.v: Optional[torch.Tensor] = None


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


STAGE_KEYS = ("sent", "baseline", "index", "iterations")


class LGCState(FifoWorker):
    """LGC's state on one rank (see the module doc).

    model:    the module DDP wraps (its first and last modules with
              parameters are the layer exceptions); None: no exceptions
    alpha:    fraction of each parameter's positions selected, in (0, 1]
              (the paper: 0.1 % = 0.001)
    t1, t2:   iterations of stage 1 and 2 (>= 0; the paper: ~200, 300)
    momentum: DGC's momentum correction factor in [0, 1) (use an optimizer
              without momentum with it, as DGC does; 0: plain residual)
    ae_lr:    the autoencoder's learning rate (the paper: SGD, 0.001)
    ae_optim: "sgd" (the paper) or "adam" (converges in the short stage 2
              of small jobs where SGD at 0.001 does not: docs/lgc.md)
    code_stride: the code is 1/code_stride of the top-k vector (1..16,
              powers of 2; the paper gives no figure)
    feedback: (not in the paper) in stage 3, keep in the residual what the
              decoder's output missed of this rank's selected values
              (error feedback: docs/lgc.md), rather than clearing them
    ae_init:  the autoencoder's initial weights: "torch" (PyTorch's
              default) or "unit" (variance-keeping: init_autoencoder)
    ae_norm:  the autoencoder's input is the selected values divided by
              the leader's "rms" (root mean square) or "l2" (L2 norm) of
              its own (the loss is then O(1) whatever the length)
    trainer:  the rank that gathers the vectors, trains the autoencoder in
              stage 2 and broadcasts its weights (the paper's "selected
              node"), in [0, world size)
    measure:  in stage 3, also average the selected values exactly (gloo,
              not counted in the rates) to record the reconstruction
              error in stats()["3"]["rec_err"]
    codec, port, timeout, **kw: for the incnn State made here (codec
              "auto" sends the codes marked, through the module's codec);
              or pass state= an existing incnn.torch.State
    """

    def __init__(self, model: Optional[nn.Module] = None, alpha: float = 0.001,
                 t1: int = 200, t2: int = 300, momentum: float = 0.9,
                 ae_lr: float = 0.001, ae_optim: str = "sgd",
                 codec: str = "none",
                 port: Optional[int] = None, timeout: Optional[float] = None,
                 *, state: Optional["State"] = None, width: int = 16,
                 seed: int = 0, feedback: bool = False,
                 code_stride: int = 16, trainer: int = 0,
                 measure: bool = False, ae_init: str = "torch",
                 ae_norm: str = "rms", **kw: Any):
        if not (isinstance(alpha, (int, float)) and 0 < alpha <= 1):
            raise ValueError(f"incnn.lgc: alpha {alpha!r} must be in (0, 1]")
        for name, t in (("t1", t1), ("t2", t2)):
            if not isinstance(t, int) or t < 0:
                raise ValueError(f"incnn.lgc: {name} {t!r} must be an "
                                 "integer >= 0")
        if not 0 <= momentum < 1:
            raise ValueError(f"incnn.lgc: momentum {momentum!r} must be in "
                             "[0, 1)")
        if not ae_lr > 0:
            raise ValueError(f"incnn.lgc: ae_lr {ae_lr!r} must be > 0")
        if code_stride not in (1, 2, 4, 8, 16):
            raise ValueError(f"incnn.lgc: code_stride {code_stride!r} must "
                             "be 1, 2, 4, 8 or 16")
        if ae_optim not in ("sgd", "adam"):
            raise ValueError(f"incnn.lgc: ae_optim {ae_optim!r} must be "
                             "'sgd' or 'adam'")
        if ae_init not in INITS:
            raise ValueError(f"incnn.lgc: ae_init {ae_init!r} must be one "
                             f"of {', '.join(map(repr, INITS))}")
        if ae_norm not in NORMS:
            raise ValueError(f"incnn.lgc: ae_norm {ae_norm!r} must be one "
                             f"of {', '.join(map(repr, NORMS))}")
        if not isinstance(trainer, int) or trainer < 0:
            raise ValueError(f"incnn.lgc: trainer {trainer!r} must be a "
                             "rank in [0, world size)")
        if dist.is_available() and dist.is_initialized():
            ws = dist.get_world_size(kw.get("process_group"))
            if ws < 2:
                raise ValueError(f"incnn.lgc: world size {ws} must be >= 2 "
                                 "(LGC averages over ranks)")
            if trainer >= ws:
                raise ValueError(f"incnn.lgc: trainer {trainer} must be a "
                                 f"rank in [0, {ws})")
        from .torch import State
        self.state = state if state is not None else \
            State(codec=codec, port=port, timeout=timeout, **kw)
        self._own_state = state is None
        self.rank, self.world_size = self.state.rank, self.state.world_size
        if self.world_size < 2:
            raise ValueError(f"incnn.lgc: world size {self.world_size} must "
                             "be >= 2 (LGC averages over ranks)")
        if trainer >= self.world_size:
            raise ValueError(f"incnn.lgc: trainer {trainer} must be a rank "
                             f"in [0, {self.world_size})")
        pg = self.state.process_group
        # LGC's own gloo group: its collectives run on the worker thread
        # and must not interleave with the caller's on the same group
        ranks = None if pg is None else dist.get_process_group_ranks(pg)
        self.group = dist.new_group(ranks=ranks, backend="gloo")
        # group ranks of the trainer and leaders -> global ranks (gloo's
        # broadcast and gather name global ranks)
        self._global = ranks if ranks is not None else \
            list(range(self.world_size))
        self.alpha, self.t1, self.t2 = float(alpha), t1, t2
        self.momentum = float(momentum)
        self.feedback = bool(feedback)
        self.trainer = trainer
        self.measure = bool(measure)
        self.ae_norm = ae_norm
        self.ae = Autoencoder(width, seed, code_stride, ae_init)
        opt = torch.optim.SGD if ae_optim == "sgd" else torch.optim.Adam
        self.ae_opt = opt(self.ae.parameters(), lr=ae_lr)
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
            s: {k: 0 for k in STAGE_KEYS} for s in ("1", "2", "3")}
        self._stats["weights"] = {"sent": 0}
        self._stats["3"].update(rec_sq=0.0, ref_sq=0.0)
        self._worker_start(self._run, f"incnn-lgc-{self.rank}")

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

    def close(self) -> None:
        """Finish the queued buckets, stop the worker, close the State
        made here."""
        if not self._worker_stop():
            return
        if self._own_state:
            self.state.close()

    # --- the worker thread -----------------------------------------------
    def submit(self, bucket: Any) -> torch.futures.Future:
        """Queue one bucket (a dist.GradBucket) of the current iteration;
        the future's value is its buffer, averaged the LGC way."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"incnn.lgc: {self!r} is closed")
        b = bucket if isinstance(bucket, _Bucket) else _Bucket.of(bucket)
        fut: torch.futures.Future = torch.futures.Future()
        self._q.put(_Job(b, self.iteration, fut))
        if b.is_last():
            self.iteration += 1
        return fut

    def _run(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                return
            try:
                out = self.process(job.bucket, job.iteration)
            except Exception as e:              # noqa: BLE001 - to the future
                job.fut.set_exception(e)
                continue
            job.fut.set_result(out)

    # --- rates ---------------------------------------------------------
    def stats(self) -> Dict[str, Any]:
        """Bytes over every rank (the same figures on every rank; call it
        when no bucket is in flight, e.g. after backward): see docs/lgc.md
        for the keys."""
        s = {k: dict(v) for k, v in self._stats.items()}
        stages = ("1", "2", "3")
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

    def _allreduce_mean(self, t: torch.Tensor) -> torch.Tensor:
        if t.numel():
            self.state.submit(t, divide=True).wait()
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
            self._allreduce_mean(buf)
            st["sent"] += 4 * buf.numel() * K
            return buf
        if stage == 3 and not self._broadcast_done:
            self._broadcast_weights()
        out = self._sparse(bucket, buf, stage, st, it)
        buf.copy_(out)
        return buf

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
        idx = torch.frombuffer(bytearray(zlib.decompress(data)),
                               dtype=torch.int32).to(torch.int64).cumsum(0)
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
        if stage == 2 and L:
            self._train(av, scale)
        elif stage == 3 and L:
            x = buf.new_zeros(padded(L))
            x[:L] = av / scale if scale > 0 else av
            with torch.no_grad():
                code = self.ae.encode(x).contiguous()
        msg = self._allreduce_mean(torch.cat([dv, tv, code]))
        st["sent"] += 4 * msg.numel() * self.world_size
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
            loss = ae_train_step(self.ae, self.ae_opt, vecs)
            self.ae_loss.append(loss)
            self.ae_rel_error.append(loss / ref if ref > 0 else 0.0)


def lgc_hook(state: LGCState, bucket: dist.GradBucket
             ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: LGC (see the module doc). Returns at once;
    the state's worker thread completes the future (or sets the error)."""
    # chained: value() re-raises our exception in Python, so DDP's reducer
    # gets a real error rather than an exception object for a tensor
    return state.submit(bucket).then(_value)


def _value(fut: torch.futures.Future) -> torch.Tensor:
    return fut.value()
