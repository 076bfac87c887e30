# SPDX-License-Identifier: GPL-2.0 OR MIT
"""incnn's ring allreduce for PyTorch DistributedDataParallel (the State
behind incnn.torch's allreduce_hook).

    import incnn.torch as it
    state = it.State(codec="auto")
    ddp.register_comm_hook(state, it.allreduce_hook)
    ...
    it.allreduce(tensor, state)       # in-place sum, for custom loops
    state.close()                     # else at interpreter exit

A State is one incnn communicator (ring allreduce over marked TCP
sockets) plus one worker thread. The hook queues the bucket and returns a
torch.futures.Future at once; the worker thread averages it over the
ranks without the GIL, bucket after bucket in the order they came, and
completes each future (an error becomes set_exception carrying the
library's message). Only fp32 goes through incnn; other dtypes fall back
to the process group's allreduce (one warning per dtype).

Where the division by the world size N happens (State(divide=...)):
  "before" (the default when the sum is exact: codec none, lz4, no
      rule): the bucket is divided by N, then summed, as PyTorch's
      default hook does; incnn_allreduce_div() does the division inside
      the ring's first pass over each value (no extra pass; bit for bit
      torch's div_(N) followed by the sum).
  "after" (the default with a lossy codec: inceptionn, ebq, trunc, also
      when "auto" finds a lossy rule): the bucket is summed, then divided
      by N. A lossy codec's error is absolute (ebq: at most 2^-k per
      quantisation, N of them along the ring); dividing first would put
      the gradients N times closer to that bound, so the average would
      carry N times the error (N * 2^-k instead of 2^-k) and more
      values would be flattened to zero. The C trainer (incnn-train)
      sums, then divides, for the same reason. The division is
      deterministic, so the replicas stay bit-identical.
  "auto": the rule above, from the codec the ranks agreed on; but with
      scale="auto" (the default) "before": the bound is then relative
      to the bucket's magnitude, so the division does not bring values
      closer to it, and it is fused into the ring's first pass.

Scale-relative bounds and error feedback (State(scale=..., error_feedback=...),
docs/training.md): the hook sends each DDP bucket through
incnn_allreduce_bucket_seg(), keyed by the bucket: with a lossy codec every
value is multiplied by 2^e before it is sent and the result divided by 2^e
(one e per parameter tensor of the bucket with scale "auto" or "tensor",
one per bucket with "bucket"; e from the previous result's largest value
of that tensor or bucket, the same on every rank), and
each rank adds the quantisation error it made on a bucket to its values of
that bucket in the next iteration. A bucket is identified by its index and
its layout (its parameters' addresses and sizes): when DDP rebuilds its
buckets (after the first iteration), a bucket whose layout changed starts
afresh (its residuals are dropped, never applied to other values).
allreduce(tensor, state) sums exactly what it is given unless key= names
a recurring tensor. A bucket that the codec turns (> 99 % of its nonzero
values) into zeros for 10 iterations in a row warns once per State.

Rendezvous: rank and world size come from the process group; the ranks
meet through its c10d store, or on an explicit port (State(port=...),
INCNN_PORT) of MASTER_ADDR (incnn._base). Any number of States may be
alive at once.
"""

import warnings
from typing import Any, Iterable, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from . import _lib
from ._base import StateBase, future_value, no_group, to_ms
from ._lib import parse_codec

__all__ = ["State", "allreduce_hook", "allreduce"]

Future = torch.futures.Future

DIVIDE_FORMS = ("auto", "before", "after")
SCALE_FORMS = ("auto", "tensor", "bucket", "off")
# the defaults, from the measurements in docs/training.md: what "auto"
# means (a 2^e per parameter tensor of the bucket, or one per bucket)
AUTO_SCALE = "tensor"
DEFAULT_SCALE = "auto"
DEFAULT_ERROR_FEEDBACK = True
FLAT_CALLS = 10         # INCNN_FLAT_CALLS


class _Job:
    __slots__ = ("work", "target", "fut", "result", "divide", "key",
                 "forget", "name", "segs")

    def __init__(self, work: Optional[torch.Tensor],
                 target: Optional[torch.Tensor], fut: Future,
                 result: Optional[torch.Tensor], divide: int = 0,
                 key: Optional[int] = None, forget: Optional[int] = None,
                 name: str = "", segs: Any = None):
        self.work = work          # contiguous fp32 on the host; None: barrier
        self.divide = divide      # average: divide by this (0: plain sum;
        #                           -1 with no work: wait for the queue)
        self.target = target      # where the sum goes back, if not work
        self.fut = fut
        self.result = result      # the future's value
        self.key = key            # keyed call (scale, EF); None: plain
        self.forget = forget      # drop this key's state first
        self.name = name          # the bucket, for the warning
        self.segs = segs          # its segments (_lib.segments) or None


class State(StateBase):
    """One incnn communicator and its worker thread (see the module doc).

    codec:   "auto" (the module's rule for the socket's ToS; INCNN_CODEC
             overrides), "none", "ebq:2^-10", "inceptionn:2^-10",
             "trunc:16" or "lz4"
    port:    incnn's rendezvous port (default INCNN_PORT, else none:
             through the process group's store, see incnn._base)
    timeout: seconds without progress after which every rank's allreduce
             fails (default 30)
    Keyword-only: process_group (rank, size, fallback; default WORLD),
    master_addr (the address rank 0 is reached by; default
    MASTER_ADDR), init_timeout (seconds for the
    rendezvous, default 300), tos, chunk_bytes, divide ("auto",
    "before" or "after": where the hook divides by the world size, see
    the module doc; the attribute divide_after says what "auto" chose),
    scale ("tensor": the codec's bound relative to the largest value of
    each parameter tensor of the bucket, "bucket": to the bucket's
    largest value, "auto": AUTO_SCALE's choice of those, "off":
    absolute; default "auto"; the attribute scale_tensor says which),
    error_feedback (bool, default True: each rank feeds its
    quantisation error back into the next iteration;
    error_feedback_bytes is the memory it takes). Both only
    act with a lossy codec, through the hook (or allreduce(key=...)).
    """

    def __init__(self, codec: str = "auto", port: Optional[int] = None,
                 timeout: Optional[float] = None, *,
                 process_group: Optional[Any] = None,
                 master_addr: Optional[str] = None,
                 init_timeout: Optional[float] = None,
                 tos: Optional[int] = None,
                 chunk_bytes: Optional[int] = None,
                 divide: str = "auto",
                 scale: str = DEFAULT_SCALE,
                 error_feedback: bool = DEFAULT_ERROR_FEEDBACK):
        parse_codec(codec)                  # ValueError before anything
        if divide not in DIVIDE_FORMS:
            raise ValueError(f"divide {divide!r}: want one of "
                             + ", ".join(map(repr, DIVIDE_FORMS)))
        if not isinstance(scale, str) or scale not in SCALE_FORMS:
            raise ValueError(f"scale {scale!r}: want one of "
                             + ", ".join(map(repr, SCALE_FORMS)))
        if not isinstance(error_feedback, bool):
            raise ValueError(f"error_feedback {error_feedback!r}: want "
                             "True or False")
        if not _lib.HAVE_BUCKET:
            raise RuntimeError(
                "incnn.torch: the C library has no incnn_allreduce_bucket "
                "(too old); rebuild it with `make`")
        if scale == "tensor" and not _lib.HAVE_BUCKET_SEG:
            raise RuntimeError(
                "incnn.torch: the C library has no "
                "incnn_allreduce_bucket_seg (too old for scale='tensor'); "
                "rebuild it with `make`")
        self._group_init(process_group)
        self.codec = codec
        self._comm = self._comm_create(codec, port, master_addr,
                                       init_timeout, timeout_ms=to_ms(timeout),
                                       tos=tos, chunk_bytes=chunk_bytes,
                                       scale=int(scale != "off"),
                                       error_feedback=int(error_feedback))
        self.scale = scale
        # a 2^e per parameter tensor of each DDP bucket (else per bucket)
        self.scale_tensor = scale == "tensor" or (
            scale == "auto" and AUTO_SCALE == "tensor" and
            _lib.HAVE_BUCKET_SEG)
        self.error_feedback = error_feedback
        self.error_feedback_bytes = 0       # residual memory (this rank)
        self.flattened_buckets = 0          # buckets the codec zeroed
        self._layouts: dict = {}            # bucket index -> (layout, key)
        self._flat_msg: Optional[str] = None
        self._flat_warned = False
        self.wire_codec = _lib.codec_label(*self._comm.codec())
        # with scale "auto" the bound follows the magnitude: dividing
        # first costs no accuracy and saves the pass of div_ afterwards
        self.divide_after = divide == "after" or (
            divide == "auto" and _lib.codec_lossy(self._comm.codec()[0]) and
            scale == "off")
        self._warned: set = set()
        self._worker_start(f"incnn-allreduce-{self.rank}")

    def __repr__(self) -> str:
        return (f"<incnn.torch.State rank {self.rank}/{self.world_size} "
                f"codec {self.codec!r} ({self.wire_codec})"
                f"{' closed' if self._closed else ''}>")

    # --- the worker thread ---------------------------------------------
    def _work(self, job: _Job) -> Iterable[Tuple[Future, Any]]:
        work = job.work
        if work is None and job.divide == -1:
            pass                # barrier_local: the queue is done
        elif work is None:
            self._comm.barrier()
        else:
            if job.forget is not None:
                self._comm.bucket_forget(job.forget)
            # the pointer is taken now: DDP rebuilds its buckets
            self._reduce(work, job.divide, job.key, job.segs)
            if job.key is not None:
                self._after_keyed(job.key, job.name)
        if job.target is not None:
            job.target.copy_(work)
        return ((job.fut, job.result),)

    def _after_keyed(self, key: int, name: str) -> None:
        """The worker thread, after a keyed call: the figures, and the
        warning (given by the submitting thread) for a zeroed bucket."""
        st = self._comm.bucket_stats()
        self.error_feedback_bytes = st.ef_bytes
        self.flattened_buckets = st.flattened
        info = self._comm.bucket_info(key)
        if info is None or not info.flat or self._flat_msg is not None:
            return
        self._flat_msg = (
            f"incnn.torch: {name} ({info.n} values): the codec "
            f"{self.wire_codec} (scale {self.scale!r}) turned more than 99 % "
            f"of the nonzero values this rank quantised into zeros, "
            f"{FLAT_CALLS} iterations in a row: its gradients are below "
            f"the codec's bound{self._flat_advice()}")

    def _flat_advice(self) -> str:
        """The end of the flattened bucket's warning: what is lost, and
        the settings that would help that this State does not have."""
        fixes = []
        if self.scale == "off":
            fixes.append("scale='auto'")
        elif not self.scale_tensor and _lib.HAVE_BUCKET_SEG:
            fixes.append("scale='tensor' (a scale per parameter tensor)")
        fixes.append("a finer bound")
        if not self.error_feedback:
            fixes.append("error_feedback=True")
        lost = (" and reach the wire only through the error feedback, "
                "late" if self.error_feedback else " and are lost")
        return lost + "; try " + ", ".join(fixes[:-1]) + \
            (" or " if len(fixes) > 1 else "") + fixes[-1]

    def _warn_flat(self) -> None:
        if self._flat_msg is not None and not self._flat_warned:
            self._flat_warned = True
            warnings.warn(self._flat_msg, RuntimeWarning, stacklevel=4)

    def _bucket_key(self, bucket: Any
                    ) -> Tuple[int, Optional[int], str, Any]:
        """(key, key to forget or None, name, segments or None) of a DDP
        bucket: its index, and a new key whenever its layout (parameters)
        changes; its segments (scale per tensor): the parameters' sizes,
        in the order of the bucket's buffer."""
        buf = bucket.buffer()
        try:
            index = int(bucket.index())
            layout = tuple((p.data_ptr(), p.numel())
                           for p in bucket.parameters())
        except (AttributeError, RuntimeError):
            index, layout = -1, ((buf.data_ptr(), buf.numel()),)
        old = self._layouts.get(index)
        if old is not None and old[0] == layout:
            return old[1], None, f"bucket {index}", old[2]
        key = old[1] + (1 << 32) if old is not None else index & 0xffffffff
        sizes = [n for _, n in layout]
        segs = _lib.segments(sizes) if self.scale_tensor and \
            len(sizes) > 1 and sum(sizes) == buf.numel() else None
        self._layouts[index] = (layout, key, segs)
        return key, (old[1] if old is not None else None), \
            f"bucket {index}", segs

    def _reduce(self, work: torch.Tensor, divide: int,
                key: Optional[int] = None, segs: Any = None) -> None:
        """Sum @work over the ranks; average it when @divide (= N); keyed
        (scale, error feedback; a 2^e per segment of @segs) when @key is
        not None."""
        ptr, n = work.data_ptr(), work.numel()
        if key is not None:
            before = divide and not self.divide_after
            self._comm.allreduce_bucket(ptr, n, key,
                                        float(divide) if before else 0.0,
                                        segs)
            if divide and self.divide_after:
                work.div_(divide)
            return
        if not divide:
            self._comm.allreduce(ptr, n)
        elif self.divide_after:
            self._comm.allreduce(ptr, n)
            work.div_(divide)
        elif _lib.HAVE_DIV:
            self._comm.allreduce_div(ptr, n, float(divide))
        else:                               # an older library
            work.div_(divide)
            self._comm.allreduce(ptr, n)

    # --- submitting ----------------------------------------------------
    def _fallback(self, tensor: torch.Tensor, divide: bool) -> Future:
        if tensor.dtype not in self._warned:
            self._warned.add(tensor.dtype)
            warnings.warn(
                f"incnn.torch: {tensor.dtype} tensors are not sent through "
                "incnn (fp32 only); using the process group's allreduce",
                RuntimeWarning, stacklevel=3)
        if divide:
            tensor.div_(self.world_size)
        work = dist.all_reduce(tensor, group=self.process_group,
                               async_op=True)
        return work.get_future().then(lambda f: f.value()[0])

    def submit(self, tensor: torch.Tensor, divide: bool = False,
               key: Optional[int] = None, bucket: Any = None, *,
               segments: Optional[Sequence[int]] = None,
               fresh: bool = False) -> Future:
        """Queue an in-place sum of @tensor (the average over the ranks
        when @divide: divided by the world size before or after the sum,
        see the module doc); the future's value is @tensor. @key (an int
        in 0..2^63-1) or @bucket (a DDP GradBucket) makes it a keyed call:
        scale and error feedback for the values that come back under that
        key. With @key: @segments (lengths summing to the tensor's size)
        give a 2^e per segment where the State scales per tensor (else
        one per call); @fresh drops the key's state first (its e is
        agreed afresh, no residual carried in: for values whose positions
        mean something else at every call)."""
        self._check_open()
        self._warn_flat()
        forget, name, segs = None, f"key {key}", None
        if key is not None:
            if isinstance(key, bool) or not isinstance(key, int) or \
                    not 0 <= key < 1 << 63:
                raise ValueError(f"key {key!r}: want an int in 0..2^63-1")
            key = key | 1 << 63           # apart from the buckets' keys
            segs = self._key_segments(segments, tensor.numel())
            forget = key if fresh else None
        elif segments is not None or fresh:
            raise ValueError("segments= and fresh= go with key=")
        elif bucket is not None:
            key, forget, name, segs = self._bucket_key(bucket)
        if not dist.is_initialized():
            raise no_group("incnn.torch.State")
        if tensor.dtype != torch.float32:
            return self._fallback(tensor, divide)
        fut = Future(devices=[tensor.device]) if tensor.is_cuda else Future()
        if tensor.numel() == 0:
            fut.set_result(tensor)
            return fut
        if tensor.is_cuda:
            work, target = tensor.detach().to("cpu"), tensor
        elif not tensor.is_contiguous():
            work, target = tensor.detach().contiguous(), tensor
        else:
            work, target = tensor.detach(), None
        # the averaging too is the thread's work: backward goes on at once
        self._q.put(_Job(work, target, fut, tensor,
                         self.world_size if divide else 0, key, forget,
                         name, segs))
        return fut

    def _key_segments(self, segments: Optional[Sequence[int]],
                      n: int) -> Any:
        """The segment list of a key= call of @n values (None: one
        segment); ValueError for lengths that do not add up to @n."""
        if segments is None:
            return None
        sizes = [int(s) for s in segments]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ValueError(f"segments {sizes!r}: want lengths >= 0 "
                             f"summing to the tensor's {n} values")
        if not self.scale_tensor or len(sizes) < 2:
            return None
        return _lib.segments(sizes)

    def bucket_stats(self) -> dict:
        """This rank's keyed-call figures, after the queued work: scale,
        error_feedback, buckets (with state), ef_bytes (residual memory),
        flattened (buckets the codec zeroed 10 iterations in a row)."""
        self._check_open()
        fut = Future()
        self._q.put(_Job(None, None, fut, None, divide=-1))
        fut.wait()
        st = self._comm.bucket_stats()
        return {"scale": bool(st.scale),
                "error_feedback": bool(st.error_feedback),
                "buckets": st.buckets, "ef_bytes": st.ef_bytes,
                "flattened": st.flattened}

    def barrier(self) -> None:
        """Wait for every rank (through incnn's store), after the queue."""
        self._check_open()
        fut = Future()
        self._q.put(_Job(None, None, fut, None))
        fut.wait()

    def _stop(self) -> None:
        """After the queue (close()): the warning, leave the job."""
        self._warn_flat()
        self._comm.close()


# real annotations: DDP's register_comm_hook compares them with its own
def allreduce_hook(state: State, bucket: dist.GradBucket
                   ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: average the bucket over the ranks through
    incnn (divided by the world size before the sum, or after it with a
    lossy codec); returns a future at once (see the module doc)."""
    return state.submit(bucket.buffer(), divide=True,
                        bucket=bucket).then(future_value)


def allreduce(tensor: torch.Tensor, state: State,
              key: Optional[int] = None) -> torch.Tensor:
    """In-place sum of @tensor over every rank (waits); returns it. With
    @key (0..2^63-1, the same on every rank for the same recurring
    values), scale and error feedback apply as for a DDP bucket."""
    state.submit(tensor, key=key).wait()
    return tensor
