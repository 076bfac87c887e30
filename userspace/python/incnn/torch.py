# SPDX-License-Identifier: GPL-2.0 OR MIT
"""incnn for PyTorch DistributedDataParallel.

    import incnn.torch as it
    state = it.State(codec="auto")
    ddp.register_comm_hook(state, it.allreduce_hook)
    ...
    it.allreduce(tensor, state)       # in-place sum, for custom loops
    state.close()                     # also at exit and destroy_process_group

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
  "auto": the rule above, from the codec the ranks agreed on.

Rendezvous: rank and world size come from the process group, the
address from MASTER_ADDR, the port from State(port=...), else INCNN_PORT,
else MASTER_PORT + 1.
"""

import atexit
import functools
import os
import warnings
import weakref
from typing import Any, Optional, Tuple

import torch
import torch.distributed as dist

from . import _lib
from ._worker import FifoWorker
from ._lib import CODEC_FORMS, CommError, parse_codec

__all__ = ["State", "allreduce_hook", "allreduce", "CommError", "CODEC_FORMS"]

Future = torch.futures.Future

_states: "weakref.WeakSet[State]" = weakref.WeakSet()

DIVIDE_FORMS = ("auto", "before", "after")


def _lossy(codec_id: int) -> bool:
    """The job's codec (incnn_comm_codec; 0: none) quantises values."""
    return codec_id != 0 and codec_id != _lib.CODEC_IDS["lz4"]


class _Job:
    __slots__ = ("work", "target", "fut", "result", "divide")

    def __init__(self, work: Optional[torch.Tensor],
                 target: Optional[torch.Tensor], fut: Future,
                 result: Optional[torch.Tensor], divide: int = 0):
        self.work = work          # contiguous fp32 on the host; None: barrier
        self.divide = divide      # average: divide by this (0: plain sum)
        self.target = target      # where the sum goes back, if not work
        self.fut = fut
        self.result = result      # the future's value


def _env_int(name: str) -> Optional[int]:
    v = os.environ.get(name)
    if not v:
        return None
    try:
        return int(v, 0)
    except ValueError:
        raise RuntimeError(f"incnn: {name}={v!r} is not a port number") \
            from None


def _rendezvous(addr: Optional[str], port: Optional[int], who: str,
                args: str) -> Tuple[str, int]:
    """The rendezvous address and port: @addr, else MASTER_ADDR; @port,
    else INCNN_PORT, else MASTER_PORT + 1. @who and @args name the caller
    and its arguments in the error."""
    addr = addr or os.environ.get("MASTER_ADDR")
    if port is None:
        port = _env_int("INCNN_PORT")
    if port is None:
        mport = _env_int("MASTER_PORT")
        port = mport + 1 if mport is not None else None
    if not addr or port is None:
        raise RuntimeError(
            f"{who}: MASTER_ADDR and MASTER_PORT (or {args}) are needed "
            "for incnn's rendezvous; python3 -m incnn.launch and torchrun "
            "set them")
    return addr, port


def _no_group() -> RuntimeError:
    return RuntimeError(
        "incnn.torch: no process group: call "
        "torch.distributed.init_process_group() (e.g. backend='gloo') "
        "before creating an incnn.torch.State; incnn takes the rank and "
        "world size from it")


class State(FifoWorker):
    """One incnn communicator and its worker thread (see the module doc).

    codec:   "auto" (the module's rule for the socket's ToS; INCNN_CODEC
             overrides), "none", "ebq:2^-10", "inceptionn:2^-10",
             "trunc:16" or "lz4"
    port:    incnn's rendezvous port (default INCNN_PORT, else
             MASTER_PORT + 1)
    timeout: seconds without progress after which every rank's allreduce
             fails (default 30)
    Keyword-only: process_group (rank, size, fallback; default WORLD),
    master_addr (default MASTER_ADDR), init_timeout (seconds for the
    rendezvous, default 300), tos, chunk_bytes, divide ("auto",
    "before" or "after": where the hook divides by the world size, see
    the module doc; the attribute divide_after says what "auto" chose).
    """

    def __init__(self, codec: str = "auto", port: Optional[int] = None,
                 timeout: Optional[float] = None, *,
                 process_group: Optional[Any] = None,
                 master_addr: Optional[str] = None,
                 init_timeout: Optional[float] = None,
                 tos: Optional[int] = None,
                 chunk_bytes: Optional[int] = None,
                 divide: str = "auto"):
        parse_codec(codec)                  # ValueError before anything
        if divide not in DIVIDE_FORMS:
            raise ValueError(f"divide {divide!r}: want one of "
                             + ", ".join(map(repr, DIVIDE_FORMS)))
        if not dist.is_available() or not dist.is_initialized():
            raise _no_group()
        self.codec = codec
        self.process_group = process_group
        self.rank = dist.get_rank(process_group)
        self.world_size = dist.get_world_size(process_group)
        addr, port = _rendezvous(master_addr, port, "incnn.torch.State",
                                 "State(master_addr=..., port=...)")
        ms = (lambda s: None if s is None else max(1, round(s * 1000)))
        self._closed = False
        self._comm = _lib.Comm(addr, port, self.rank, self.world_size, codec,
                               timeout_ms=ms(timeout),
                               init_timeout_ms=ms(init_timeout), tos=tos,
                               chunk_bytes=chunk_bytes)
        self.wire_codec = _lib.codec_label(*self._comm.codec())
        self.divide_after = divide == "after" or (
            divide == "auto" and _lossy(self._comm.codec()[0]))
        self._warned: set = set()
        self._worker_start(self._run, f"incnn-allreduce-{self.rank}")
        _states.add(self)

    def __repr__(self) -> str:
        return (f"<incnn.torch.State rank {self.rank}/{self.world_size} "
                f"codec {self.codec!r} ({self.wire_codec})"
                f"{' closed' if self._closed else ''}>")

    def __enter__(self) -> "State":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- the worker thread ---------------------------------------------
    def _run(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                return
            try:
                work = job.work
                if work is None:
                    self._comm.barrier()
                else:
                    # the pointer is taken now: DDP rebuilds its buckets
                    self._reduce(work, job.divide)
                if job.target is not None:
                    job.target.copy_(work)
            except Exception as e:              # noqa: BLE001 - to the future
                job.fut.set_exception(e)
                continue
            job.fut.set_result(job.result)

    def _reduce(self, work: torch.Tensor, divide: int) -> None:
        """Sum @work over the ranks; average it when @divide (= N)."""
        ptr, n = work.data_ptr(), work.numel()
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

    def submit(self, tensor: torch.Tensor, divide: bool = False) -> Future:
        """Queue an in-place sum of @tensor (the average over the ranks
        when @divide: divided by the world size before or after the sum,
        see the module doc); the future's value is @tensor."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"incnn.torch: {self!r} is closed")
        if not dist.is_initialized():
            raise _no_group()
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
                         self.world_size if divide else 0))
        return fut

    def barrier(self) -> None:
        """Wait for every rank (through incnn's store), after the queue."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"incnn.torch: {self!r} is closed")
        fut = Future()
        self._q.put(_Job(None, None, fut, None))
        fut.wait()

    def close(self) -> None:
        """Finish the queued work, stop the thread, leave the job."""
        if not self._worker_stop():
            return
        self._comm.close()
        _states.discard(self)


# real annotations: DDP's register_comm_hook compares them with its own
def allreduce_hook(state: State, bucket: dist.GradBucket
                   ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: average the bucket over the ranks through
    incnn (divided by the world size before the sum, or after it with a
    lossy codec); returns a future at once (see the module doc)."""
    # The chained future: its value() re-raises our exception in Python,
    # so DDP's reducer gets a real error (with the library's message)
    # rather than an exception object where it wants a tensor.
    return state.submit(bucket.buffer(), divide=True).then(_value)


def _value(fut: Future) -> torch.Tensor:
    return fut.value()


def allreduce(tensor: torch.Tensor, state: State) -> torch.Tensor:
    """In-place sum of @tensor over every rank (waits); returns it."""
    state.submit(tensor).wait()
    return tensor


def _close_all(group: Optional[Any] = None) -> None:
    for s in list(_states):
        if group is None or s.process_group is group:
            s.close()


atexit.register(_close_all)


def _wrap_destroy() -> None:
    """Close the States of a process group when it is destroyed."""
    c10d = dist.distributed_c10d
    orig = c10d.destroy_process_group
    if getattr(orig, "_incnn_wrapped", False):
        return

    @functools.wraps(orig)
    def destroy_process_group(group: Optional[Any] = None) -> Any:
        _close_all(group)
        return orig(group)

    destroy_process_group._incnn_wrapped = True    # type: ignore[attr-defined]
    c10d.destroy_process_group = destroy_process_group
    dist.destroy_process_group = destroy_process_group


if dist.is_available():
    _wrap_destroy()

# LGC (learned gradient compression, ring variant): incnn/lgc.py
from .lgc import LGCState, lgc_hook  # noqa: E402
__all__ += ["LGCState", "lgc_hook"]
from .gradiveq import GradiVeQState, gradiveq_hook  # noqa: E402,F401
