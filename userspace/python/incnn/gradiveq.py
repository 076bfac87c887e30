# SPDX-License-Identifier: GPL-2.0 OR MIT
"""GradiVeQ for PyTorch DDP: the C communicator method (docs/gradiveq.md)
behind a DDP communication hook.

    import incnn.torch as it
    state = it.GradiVeQState(d=256, k=32, warmup=1000, ts=100, tc=400)
    ddp.register_comm_hook(state, it.gradiveq_hook)
    ...
    state.stats()        # compressed iterations, refreshes, wire bytes
    state.close()

A GradiVeQState is one incnn communicator created with method gradiveq
(its settings are the config fields gvq_*; INCNN_GVQ_* cannot override
them) and one worker thread. The communicator keeps its compressors for
one layer set (counts and shapes), so the hook reduces a whole iteration
in one incnn_allreduce_layers() call: the hook of every DDP bucket but
the last only records the bucket and returns a pending future; the hook
of the last bucket (bucket.is_last()) queues the iteration; the worker
thread (without the GIL) describes every parameter of the buckets as an
incnn_layer pointing into its bucket's flat buffer (a 4-d weight
[out, in, kh, kw] as a conv layer, with fc=True a 2-d weight [out, in]
as a fully-connected layer, everything else plain), sums them over the
ranks (schedule "single" by default, no_wait), divides the buffers by
the world size and completes the iteration's futures (an error fails
each of them with the library's message). DDP rebuilds its buckets
after the first iteration: the layer set changes once and the
communicator restarts its schedule from warm-up (every rank alike; the
ranks check that they agree on each new layer set). fp32 buckets only.

codec (e.g. "ebq:2^-8"): the paper's scalar quantisation of the
iterations GradiVeQ does not compress (warm-up and sampling), emulated
by the library: each such iteration's buffers go through the keyed path
of incnn.torch.State (scale and error feedback, kept per bucket of the
layers call; State's scale= and error_feedback= settings) and the
compressors are fitted on what they deliver; the compressed iterations'
coefficients are never quantised. "none" (the default): fp32.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Dict, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist

from . import _lib
from ._base import StateBase, future_value, to_ms
from .allreduce import DEFAULT_ERROR_FEEDBACK, DEFAULT_SCALE, SCALE_FORMS

__all__ = ["GradiVeQState", "gradiveq_hook"]

Future = torch.futures.Future

# the C limits (collective.h, config.c)
D_MIN, D_MAX = 2, 1024
TS_MIN, TS_MAX = 2, 4096
INT_MAX = 0x7fffffff
PHASES = ("warmup", "sampling", "compressed")


def _check_int(name: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"GradiVeQState: {name} {v!r}: want an integer "
                         f"in {lo}..{hi}")
    return v


def check_options(d: int, k: int, warmup: int, ts: int, tc: int,
                  eps: Optional[float], sched: str) -> float:
    """ValueError naming the limit for a bad option; the C eps (inf:
    off)."""
    _check_int("d", d, D_MIN, D_MAX)
    _check_int("k", k, 1, d - 1)
    _check_int("warmup", warmup, 0, INT_MAX)
    _check_int("ts", ts, TS_MIN, TS_MAX)
    _check_int("tc", tc, 1, INT_MAX)
    if sched not in _lib.SCHED_IDS:
        raise ValueError(f"GradiVeQState: sched {sched!r}: want one of "
                         f"{', '.join(_lib.SCHED_IDS)}")
    if eps is None or eps == "off":
        return math.inf
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or \
            not (0.0 < eps <= 1.0 or eps == math.inf):
        raise ValueError(f"GradiVeQState: eps {eps!r}: want a number in "
                         "(0, 1], or None / \"off\" (no loss monitor)")
    return float(eps)


def describe(params: List[torch.Tensor], base: int, fc: bool
             ) -> Tuple[List[_lib.Layer], int]:
    """incnn_layer descriptors of @params laid out one after the other
    from address @base (a DDP bucket's flat buffer); their float count."""
    out, off = [], 0
    for p in params:
        n = p.numel()
        lay = _lib.Layer(grad=base + 4 * off, count=n, ready=0.0)
        if p.dim() == 4:
            lay.shape = _lib.LAYER_SHAPE_CONV
            lay.out_ch, lay.in_ch, lay.kh, lay.kw = p.shape
        elif p.dim() == 2 and fc:
            # PyTorch's [out][in] is input-major for the transposed layer
            lay.shape = _lib.LAYER_SHAPE_FC
            lay.in_ch, lay.out_ch = p.shape
        out.append(lay)
        off += n
    return out, off


class GradiVeQState(StateBase):
    """GradiVeQ in incnn's communicator, for it.gradiveq_hook.

    d, k:     slice size (2..1024) and compressed size (1..d - 1)
    warmup:   uncompressed iterations first (0..2^31 - 1)
    ts, tc:   T_s sampling iterations (2..4096), then up to T_c
              compressed ones (1..2^31 - 1)
    eps:      the loss monitor's threshold, (0, 1]; None or "off": none
    fc:       also compress 2-d (Linear) weights (our extension)
    sched:    the layers call's schedule ("single", "wfbp", "fixed",
              "mgwfbp"); bucket_bytes for "fixed" (0: 25 MB)
    codec:    "none", or a lossy codec ("ebq:2^-8", "inceptionn:2^-10",
              ...) for the warm-up and sampling iterations (see the
              module doc); scale ("auto", "off") and error_feedback
              (bool) as incnn.torch.State's, for those iterations
    The defaults are the C library's. port, timeout, process_group,
    master_addr, init_timeout as incnn.torch.State (default port:
    INCNN_PORT, else none: the process group's store).
    """

    def __init__(self, d: int = 256, k: int = 32, warmup: int = 1000,
                 ts: int = 100, tc: int = 400,
                 eps: Optional[Any] = 0.01, fc: bool = False,
                 sched: str = "single", bucket_bytes: int = 0,
                 port: Optional[int] = None,
                 timeout: Optional[float] = None, *,
                 codec: str = "none", scale: str = DEFAULT_SCALE,
                 error_feedback: bool = DEFAULT_ERROR_FEEDBACK,
                 process_group: Optional[Any] = None,
                 master_addr: Optional[str] = None,
                 init_timeout: Optional[float] = None):
        c_eps = check_options(d, k, warmup, ts, tc, eps, sched)
        _check_int("bucket_bytes", bucket_bytes, 0, 2**63 - 1)
        if _lib.parse_codec(codec)[0] == _lib.CODEC_AUTO:
            raise ValueError("GradiVeQState: codec 'auto': GradiVeQ's "
                             "sockets are unmarked; name the codec")
        if scale not in SCALE_FORMS or not isinstance(error_feedback, bool):
            raise ValueError(f"GradiVeQState: scale {scale!r}, "
                             f"error_feedback {error_feedback!r}: want "
                             "'auto' or 'off', and a bool")
        if not _lib.HAVE_LAYERS:
            raise ImportError("incnn: the library has no "
                              "incnn_allreduce_layers: rebuild it")
        self.d, self.k, self.warmup, self.ts, self.tc = d, k, warmup, ts, tc
        self.eps, self.fc, self.sched = eps, bool(fc), sched
        self._group_init(process_group)
        self._comm = self._comm_create(
            codec, port, master_addr, init_timeout,
            timeout_ms=to_ms(timeout), method=_lib.METHOD_GRADIVEQ,
            gvq_d=d, gvq_k=k, gvq_warmup=warmup, gvq_ts=ts, gvq_tc=tc,
            gvq_fc=1 if fc else 0, gvq_eps=c_eps,
            scale=int(scale == "auto"), error_feedback=int(error_feedback))
        self.codec = _lib.codec_label(*self._comm.codec())
        self._opts = _lib.LayersOpts()
        _lib.lib.incnn_layers_opts_init(ctypes.byref(self._opts))
        self._opts.no_wait = True
        self._opts.bucket_bytes = bucket_bytes
        self._pending: List[Tuple[Any, Future]] = []
        self._wire = {p: 0 for p in PHASES}
        self._iters = {p: 0 for p in PHASES}
        self._worker_start(f"incnn-gradiveq-{self.rank}")

    def __repr__(self) -> str:
        return (f"<incnn GradiVeQState rank {self.rank}/{self.world_size} "
                f"d {self.d} k {self.k}{' closed' if self._closed else ''}>")

    def status(self) -> _lib.GvqStatus:
        st = _lib.GvqStatus()
        _lib.lib.incnn_comm_gvq_status(self._comm._handle(),
                                       ctypes.byref(st))
        return st

    def wire_bytes(self) -> int:
        return int(_lib.lib.incnn_comm_wire_bytes(self._comm._handle()))

    # --- the worker thread ---------------------------------------------
    def reduce(self, buffers: List[torch.Tensor],
               params: List[List[torch.Tensor]]) -> None:
        """Sum the buckets (flat fp32 buffers and their parameters) over
        the ranks in one layers call, then divide by the world size."""
        layers: List[_lib.Layer] = []
        for buf, ps in zip(buffers, params):
            if buf.dtype != torch.float32 or buf.is_cuda or \
                    not buf.is_contiguous():
                raise TypeError("incnn GradiVeQ: contiguous fp32 CPU "
                                f"buckets only, not {buf.dtype} on "
                                f"{buf.device}")
            lay, n = describe(ps, buf.data_ptr(), self.fc)
            if n != buf.numel():
                raise RuntimeError(f"incnn GradiVeQ: a bucket of "
                                   f"{buf.numel()} floats holds parameters "
                                   f"of {n}: unknown DDP bucket layout")
            layers += lay
        arr = (_lib.Layer * len(layers))(*layers)
        phase = PHASES[max(0, min(2, self.status().phase))]
        w0 = self.wire_bytes()
        self._comm._check("incnn_allreduce_layers",
                          _lib.lib.incnn_allreduce_layers(
                              self._comm._handle(), arr, len(layers),
                              _lib.SCHED_IDS[self.sched],
                              ctypes.byref(self._opts), None))
        self._wire[phase] += self.wire_bytes() - w0
        self._iters[phase] += 1
        for buf in buffers:
            buf.div_(self.world_size)

    def _work(self, job: List[Tuple[torch.Tensor, List[torch.Tensor],
                                    Future]]
              ) -> Iterable[Tuple[Future, torch.Tensor]]:
        self.reduce([b for b, _, _ in job], [p for _, p, _ in job])
        return [(fut, buf) for buf, _, fut in job]

    def _futures(self, job: List[Tuple[Any, Any, Future]]
                 ) -> Iterable[Future]:
        return [fut for _, _, fut in job]

    # --- submitting ----------------------------------------------------
    def submit(self, bucket: dist.GradBucket) -> Future:
        """Record @bucket; at the iteration's last bucket queue them all.
        The future's value is the bucket's buffer, averaged."""
        self._check_open()
        fut = Future()
        self._pending.append((bucket.buffer(), list(bucket.parameters()),
                              fut))
        if bucket.is_last():
            job, self._pending = self._pending, []
            self._q.put(job)
        return fut

    def stats(self) -> Dict[str, Any]:
        """The communicator's GradiVeQ counters and this rank's wire bytes
        per phase (bytes sent on the data connections by the layers calls
        of that phase; iterations: the calls)."""
        st = self.status()
        per = {p: (self._wire[p] / self._iters[p] if self._iters[p] else None)
               for p in PHASES}
        return {
            "calls": st.calls, "compressed_iterations": st.compressed_calls,
            "refreshes": st.refreshes, "fits": st.fits,
            "phase": PHASES[st.phase] if 0 <= st.phase < 3 else st.phase,
            "layers_compressed": st.layers_compressed,
            "layers_plain": st.layers_plain, "note": st.note.decode(),
            "u_digest": f"{st.u_digest:016x}", "codec": self.codec,
            "loss": st.loss, "loss_avg": st.loss_avg,
            "loss_ref": st.loss_ref,
            "iterations": dict(self._iters), "wire_bytes": dict(self._wire),
            "wire_bytes_per_iter": per,
        }

    def _stop(self) -> None:
        """After the queue (close()): leave the job."""
        self._comm.close()


# real annotations: DDP's register_comm_hook compares them with its own
def gradiveq_hook(state: GradiVeQState, bucket: dist.GradBucket
                  ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: GradiVeQ-compressed average of the
    iteration's buckets through incnn (see the module doc)."""
    return state.submit(bucket).then(future_value)
