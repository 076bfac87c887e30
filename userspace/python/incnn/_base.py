# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The base of incnn's DDP states (incnn.allreduce.State, incnn.lgc's
LGCState, incnn.gradiveq's GradiVeQState): the process group they ride
on, their rendezvous, their worker thread and the registry that closes
them at interpreter exit. Nothing here changes torch.

Rendezvous. Each communicator's rank 0 serves the C library's small
store (userspace/collective/store.c), which every rank joins. Without a
port (the default), the State's rank 0 listens on a free port of the
address it reaches MASTER_ADDR by and publishes "address port" in the
process group's own c10d store (torch.distributed's default store),
under a key of its own: incnn/<group>/<n> (<group>: its global ranks,
"0,1,2,3"), n counting the States made for that group in this process (made in the same order on every rank,
as process groups are). So any number of States live in one process,
and no port beyond the data connections' (free ports, as before) has to
be open between hosts. An explicit port (State(port=...) or INCNN_PORT)
keeps the library's own rendezvous: rank 0 serves the store on that
port of the address (master_addr=..., else MASTER_ADDR).

Lifetime. A State's worker thread holds it, so it lives until close()
(or `with`), or until interpreter exit, where one atexit handler closes
every State still open. torch.distributed.destroy_process_group() does
not close States (incnn never patches torch): close them first if the
process goes on for long without them.
"""

import atexit
import itertools
import json
import os
import queue
import socket
import threading
import weakref
from datetime import timedelta
from typing import Any, Dict, Iterable, Optional, Tuple

import torch.distributed as dist

from . import _lib
from ._addr import normalize_addr

DEFAULT_INIT_TIMEOUT = 300.0        # seconds, as the C library's default


def no_group(who: str) -> RuntimeError:
    """The error for a State made before the process group."""
    return RuntimeError(
        f"{who}: no process group: call "
        "torch.distributed.init_process_group() (e.g. backend='gloo') "
        "first; incnn takes the rank and world size from it")


def future_value(fut: Any) -> Any:
    """A hook's chained future's value: value() re-raises the worker's
    exception in Python, so DDP's reducer gets a real error (with the
    library's message) rather than an exception object for a tensor."""
    return fut.value()


def to_ms(seconds: Optional[float]) -> Optional[int]:
    """Seconds (None: the library's default) as the C fields' ms."""
    return None if seconds is None else max(1, round(seconds * 1000))


def _env_port(name: str) -> Optional[int]:
    v = os.environ.get(name)
    if not v:
        return None
    try:
        return int(v, 0)
    except ValueError:
        raise RuntimeError(f"incnn: {name}={v!r} is not a port number") \
            from None


def _store_host(store: Any) -> Optional[str]:
    """The host of the TCPStore under @store (PrefixStores), if any."""
    while store is not None:
        host = getattr(store, "host", None)
        if isinstance(host, str) and host:
            return host
        store = getattr(store, "underlying_store", None)
    return None


def _local_addr(target: str) -> Tuple[int, str]:
    """(family, address) of this host on the route to @target (no packet
    is sent: a UDP socket's connect only picks the route)."""
    info = socket.getaddrinfo(target, 9, type=socket.SOCK_DGRAM)[0]
    with socket.socket(info[0], socket.SOCK_DGRAM) as s:
        s.connect(info[4])
        return info[0], s.getsockname()[0]


def _listen(target: str) -> Tuple[socket.socket, str, int]:
    """A listening socket on a free port of the address this host reaches
    @target by (any address of its family if that one cannot be bound);
    (socket, address others connect to, port)."""
    family, host = _local_addr(target)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        try:
            sock.bind((host, 0))
        except OSError:
            sock.bind(("", 0))
        sock.listen(128)
        return sock, host, sock.getsockname()[1]
    except BaseException:
        sock.close()
        raise


class Rendezvous:
    """Where a communicator's ranks meet: master_addr, master_port and,
    on rank 0 of the c10d rendezvous, the store's listening socket."""

    _seq: Dict[str, int] = {}       # States made per group (this process)
    _seq_lock = threading.Lock()

    def __init__(self, who: str, process_group: Any,
                 master_addr: Optional[str], port: Optional[int],
                 init_timeout: Optional[float]):
        self.store_sock: Optional[socket.socket] = None
        if port is None:
            port = _env_port("INCNN_PORT")
        if port is not None:
            addr = master_addr or os.environ.get("MASTER_ADDR")
            if not addr:
                raise RuntimeError(
                    f"{who}: port {port} needs MASTER_ADDR (or "
                    "master_addr=...) for incnn's rendezvous")
            self.addr, self.port = addr, port
            return
        self._c10d(who, process_group, master_addr,
                   DEFAULT_INIT_TIMEOUT if init_timeout is None
                   else init_timeout)

    @classmethod
    def _key(cls, process_group: Any) -> str:
        # its global ranks: None and the world group alike
        ranks = dist.get_process_group_ranks(process_group) \
            if process_group is not None else range(dist.get_world_size())
        group = ",".join(map(str, ranks))
        with cls._seq_lock:
            n = cls._seq.get(group, 0)
            cls._seq[group] = n + 1
        return f"incnn/{group}/{n}"

    def _c10d(self, who: str, process_group: Any,
              master_addr: Optional[str], timeout: float) -> None:
        store = dist.distributed_c10d._get_default_store()
        key = self._key(process_group)
        if dist.get_rank(process_group) == 0:
            target = master_addr or os.environ.get("MASTER_ADDR") or \
                _store_host(store) or "127.0.0.1"
            try:
                sock, host, port = _listen(normalize_addr(target))
            except (OSError, ValueError) as e:
                msg = f"rank 0 cannot serve incnn's store near {target}: {e}"
                store.set(key, json.dumps({"error": msg}))
                raise RuntimeError(f"{who}: {msg}") from None
            self.store_sock = sock
            store.set(key, json.dumps({"addr": host, "port": port}))
            self.addr, self.port = host, port
            return
        try:
            store.wait([key], timedelta(seconds=timeout))
        except RuntimeError as e:
            raise RuntimeError(f"{who}: rank 0 did not publish incnn's "
                               f"store ({key}) in {timeout:g} s: {e}") \
                from None
        got = json.loads(store.get(key))
        if "error" in got:
            raise RuntimeError(f"{who}: {got['error']}")
        self.addr, self.port = got["addr"], int(got["port"])

    def take_fd(self) -> int:
        """The listening socket's descriptor for the C library, which
        takes it over (closes it); -1 where there is none."""
        sock, self.store_sock = self.store_sock, None
        return sock.detach() if sock is not None else -1

    def close(self) -> None:
        """Close a listening socket not handed over (an error before)."""
        if self.store_sock is not None:
            self.store_sock.close()
            self.store_sock = None


# --- the registry: one atexit handler for every open State ---------------

# open States by creation number: the newest closes first (an LGCState
# before the State it made)
_open: "weakref.WeakValueDictionary[int, StateBase]" = \
    weakref.WeakValueDictionary()
_created = itertools.count()


def close_all() -> None:
    """Close every State still open, the newest first (at interpreter
    exit)."""
    for n in sorted(_open.keys(), reverse=True):
        s = _open.get(n)
        if s is not None:
            s.close()


atexit.register(close_all)


class StateBase:
    """A process group's rank and size, one worker thread fed by a FIFO
    queue (the same order on every rank) and the exit registry.

    A subclass calls _group_init() first, _worker_start() once its
    communicator is up, and implements _work() (one job, on the worker
    thread; _futures() where a job is not one future) and _stop() (after
    the queue is drained: release what it holds); close() is the public
    end."""

    _closed: bool = True
    _kind = "incnn state"

    def _group_init(self, process_group: Any) -> None:
        """Rank and world size of @process_group (None: the default)."""
        if not dist.is_available() or not dist.is_initialized():
            raise no_group(f"incnn {type(self).__name__}")
        self.process_group = process_group
        self.rank = dist.get_rank(process_group)
        self.world_size = dist.get_world_size(process_group)

    def _comm_create(self, codec: str, port: Optional[int],
                     master_addr: Optional[str],
                     init_timeout: Optional[float],
                     **fields: Any) -> _lib.Comm:
        """This rank's communicator of the group (_group_init first):
        the rendezvous (see the module doc), then incnn_comm_create with
        @codec and the config @fields."""
        rv = Rendezvous(f"incnn {type(self).__name__}", self.process_group,
                        master_addr, port, init_timeout)
        try:
            return _lib.Comm(rv.addr, rv.port, self.rank, self.world_size,
                             codec, store_fd=rv.take_fd(),
                             init_timeout_ms=to_ms(init_timeout), **fields)
        finally:
            rv.close()

    def _worker_start(self, name: str) -> None:
        """Start the worker thread @name (jobs from self._q, in order,
        until None) and register the State for closing at exit."""
        self._closed = False
        self._lock = threading.Lock()
        self._q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name=name)
        self._thread.start()
        self._number = next(_created)
        _open[self._number] = self

    def _work(self, job: Any) -> Iterable[Tuple[Any, Any]]:
        """Do @job (the worker thread); its (future, value) pairs."""
        raise NotImplementedError

    def _futures(self, job: Any) -> Iterable[Any]:
        """@job's futures, to fail with the error _work raised."""
        return (job.fut,)

    def _loop(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                return
            try:
                done = list(self._work(job))
            except Exception as e:              # noqa: BLE001 - to the future
                for fut in self._futures(job):
                    fut.set_exception(e)
                continue
            for fut, value in done:
                fut.set_result(value)

    def _check_open(self) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"incnn: {self!r} is closed")

    def _stop(self) -> None:
        """Release what the State holds (the queue is done)."""

    def close(self) -> None:
        """Finish the queued work, stop the thread, leave the job. A
        second call does nothing."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if self._closed:
                return
            self._closed = True
        self._q.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join()
        _open.pop(self._number, None)
        self._stop()

    def __enter__(self) -> "StateBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
