#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Selftests of incnn.torch's GradiVeQ hook (incnn/gradiveq.py), KTAP
output with a "# Totals:" line.

    PYTHONPATH=build/python /usr/bin/python3 selftests/python/test_gradiveq.py

Needs the built package and library (make python), Debian's python3-torch
and a C compiler (the structure layout check). The 4-rank job is
gvq_worker.py on 127.0.0.1 (gloo): 14 steps, so with warm-up 2 and T_s 4
(and one layer set change when DDP rebuilds its buckets after the first
step) 3 warm-up, 4 sampling and 7 compressed iterations. A second run
quantises the uncompressed iterations (codec ebq:2^-8, scale and error
feedback on).
"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Callable, Dict, List, Tuple

from portutil import free_ports

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "gvq_worker.py")
PY = sys.executable
WORLD, STEPS = 4, 14

TESTS: List[Tuple[str, Callable[[], None]]] = []
_job: Dict[str, Any] = {}


class Skip(Exception):
    pass


def test(name: str) -> Callable:
    def add(fn: Callable[[], None]) -> Callable[[], None]:
        TESTS.append((name, fn))
        return fn
    return add


def job(codec: str = "none") -> List[Dict[str, Any]]:
    """The 4-rank run with @codec (once each, shared by the tests)."""
    if codec in _job:
        return _job[codec]
    port = free_ports(3)
    with tempfile.TemporaryDirectory() as d:
        procs = []
        for r in range(WORLD):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), RANK=str(r),
                       WORLD_SIZE=str(WORLD), LOCAL_RANK=str(r))
            procs.append(subprocess.Popen(
                [PY, WORKER, d, str(STEPS), codec], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for r, p in enumerate(procs):
            out = p.communicate(timeout=120)[0]
            assert p.returncode == 0, f"rank {r} failed:\n{out[-2000:]}"
        _job[codec] = [json.load(open(os.path.join(d, f"rank{r}.json")))
                       for r in range(WORLD)]
    return _job[codec]


@test("ctypes structures match incnn_layer, incnn_layers_opts, "
      "incnn_gvq_status (C compiler)")
def t_layout() -> None:
    from incnn import _lib
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Skip("no C compiler")
    structs = {"incnn_layer": _lib.Layer,
               "incnn_layers_opts": _lib.LayersOpts,
               "incnn_gvq_status": _lib.GvqStatus}
    prog = "#include <stdio.h>\n#include <stddef.h>\n" \
        "#include <incnn/wfbp.h>\nint main(void){\n"
    for s, cls in structs.items():
        prog += f'printf("{s} %zu\\n", sizeof(struct {s}));\n'
        prog += "".join(f'printf("{s}.{n} %zu\\n", offsetof(struct {s}, '
                        f'{n}));\n' for n, _ in cls._fields_)
    prog += "return 0;}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
        with open(c, "w") as f:
            f.write(prog)
        r = subprocess.run([cc, "-std=c11", "-I", os.path.join(
            SRC, "userspace/collective/include"), c, "-o", exe],
            capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([exe], capture_output=True, text=True,
                             timeout=10).stdout.split("\n")
    want = dict(ln.split() for ln in out if ln)
    for s, cls in structs.items():
        assert int(want[s]) == ctypes.sizeof(cls), \
            f"sizeof {s}: C {want[s]}, ctypes {ctypes.sizeof(cls)}"
        for n, _ in cls._fields_:
            got = getattr(cls, n).offset
            assert int(want[f"{s}.{n}"]) == got, \
                f"{s}.{n}: C offset {want[f'{s}.{n}']}, ctypes {got}"


@test("bad options raise ValueError naming the limit")
def t_options() -> None:
    import incnn.torch as it
    bad = [({"d": 1}, "d 1: want an integer in 2..1024"),
           ({"d": 1025}, "d 1025: want an integer in 2..1024"),
           ({"d": 64, "k": 64}, "k 64: want an integer in 1..63"),
           ({"k": 0}, "k 0: want an integer in 1..255"),
           ({"warmup": -1}, "warmup -1: want an integer in 0..2147483647"),
           ({"ts": 1}, "ts 1: want an integer in 2..4096"),
           ({"ts": 4097}, "ts 4097: want an integer in 2..4096"),
           ({"tc": 0}, "tc 0: want an integer in 1..2147483647"),
           ({"eps": 0}, "eps 0: want a number in (0, 1]"),
           ({"eps": 1.5}, "eps 1.5: want a number in (0, 1]"),
           ({"d": 2.5}, "d 2.5: want an integer"),
           ({"sched": "ring"}, "sched 'ring': want one of wfbp, single"),
           ({"codec": "auto"}, "codec 'auto': GradiVeQ's sockets are "
            "unmarked"),
           ({"codec": "ebq:9x"}, "codec 'ebq:9x': want one of"),
           ({"scale": "on"}, "scale 'on', error_feedback True: want")]
    for kw, msg in bad:
        try:
            it.GradiVeQState(**kw)
        except ValueError as e:
            assert msg in str(e), f"{kw}: {e}"
            continue
        raise AssertionError(f"{kw}: no ValueError")


@test("4 ranks, several DDP buckets: the iterations' phases are exact")
def t_phases() -> None:
    for r, d in enumerate(job()):
        assert d["buckets"] >= 2, f"rank {r}: {d['buckets']} bucket(s)"
        s = d["stats"]
        assert s["iterations"] == {"warmup": 3, "sampling": 4,
                                   "compressed": 7}, f"rank {r}: {s}"
        assert s["compressed_iterations"] == 7, f"rank {r}: {s}"
        assert s["fits"] == 1 and s["refreshes"] == 0, f"rank {r}: {s}"
        # two convolutions, two Linear weights (fc on); four biases plain
        assert (s["layers_compressed"], s["layers_plain"]) == (4, 4), \
            f"rank {r}: {s}"


@test("replicas bit-identical after sampling and compressed steps")
def t_identical() -> None:
    ranks = job()
    for key in ("digest",):
        assert len({d[key] for d in ranks}) == 1, [d[key] for d in ranks]
    us = {d["stats"]["u_digest"] for d in ranks}
    assert len(us) == 1 and "0" * 16 not in us, us


@test("quantised sampling (ebq:2^-8, scale, EF): replicas bit-identical, "
      "phases exact, the result differs from fp32 sampling's")
def t_quantised() -> None:
    ranks = job("ebq:2^-8")
    assert len({d["digest"] for d in ranks}) == 1, \
        [d["digest"] for d in ranks]
    us = {d["stats"]["u_digest"] for d in ranks}
    assert len(us) == 1 and "0" * 16 not in us, us
    for r, d in enumerate(ranks):
        s = d["stats"]
        assert s["codec"] == "ebq:2^-8", f"rank {r}: {s['codec']}"
        assert s["iterations"] == {"warmup": 3, "sampling": 4,
                                   "compressed": 7}, f"rank {r}: {s}"
    plain = job()
    assert ranks[0]["digest"] != plain[0]["digest"], "not quantised"
    assert ranks[0]["stats"]["u_digest"] != plain[0]["stats"]["u_digest"]


@test("a compressed iteration sends under a quarter of a plain one")
def t_wire() -> None:
    for r, d in enumerate(job()):
        per = d["stats"]["wire_bytes_per_iter"]
        assert per["compressed"] * 4 < per["warmup"], f"rank {r}: {per}"
        assert per["sampling"] == per["warmup"], f"rank {r}: {per}"


@test("a bad bucket fails its future with the reason (fp64)")
def t_error() -> None:
    for r, d in enumerate(job()):
        assert "TypeError: incnn GradiVeQ: contiguous fp32 CPU buckets " \
            "only, not torch.float64" in d["error"], f"rank {r}: {d['error']}"


def main() -> int:
    print("KTAP version 1")
    print(f"1..{len(TESTS)}")
    fails = skips = 0
    for n, (name, fn) in enumerate(TESTS, 1):
        try:
            fn()
            print(f"ok {n} {name}")
        except Skip as e:
            skips += 1
            print(f"ok {n} {name} # SKIP {e}")
        except Exception:               # noqa: BLE001 - reported
            fails += 1
            for ln in traceback.format_exc().rstrip().split("\n"):
                print(f"# {ln}")
            print(f"not ok {n} {name}")
        sys.stdout.flush()
    print(f"# Totals: pass:{len(TESTS) - fails - skips} fail:{fails} "
          f"xfail:0 xpass:0 skip:{skips} error:0")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
