# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The FIFO worker thread behind incnn.torch's states.

State, LGCState and GradiVeQState each hand their buckets to one daemon
thread per process that takes jobs from a queue in the order they came
(the same order on every rank) and completes their futures; None on the
queue stops it. This is that thread's start and stop, written once.
"""

import queue
import threading
from typing import Any, Callable


class FifoWorker:
    """Mix-in: one worker thread fed by self._q, guarded by self._lock."""

    _closed: bool

    def _worker_start(self, run: Callable[[], None], name: str) -> None:
        """Start the thread running @run (which reads self._q)."""
        self._closed = False
        self._lock = threading.Lock()
        self._q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._thread = threading.Thread(target=run, daemon=True, name=name)
        self._thread.start()

    def _worker_stop(self) -> bool:
        """Let the queued jobs finish, then stop the thread (waiting for
        it unless called from it). False if it was stopped already."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
        self._q.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join()
        return True
