#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Selftests of the incnn Python package (incnn._lib, incnn.torch,
incnn.launch), KTAP output with a "# Totals:" line.

    PYTHONPATH=build/python /usr/bin/python3 selftests/python/test_incnn_torch.py

Needs the built package and library (make), Debian's python3-torch and a
C compiler (the structure layout check). Ranks are local processes on
127.0.0.1 with a gloo process group; ddp_worker.py is one rank.
"""

import ctypes.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from typing import Callable, Dict, List, Tuple

from portutil import free_ports

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "ddp_worker.py")
PY = sys.executable
EPS32 = 2.0 ** -23

TESTS: List[Tuple[str, Callable[[], None]]] = []


class Skip(Exception):
    pass


def test(name: str) -> Callable:
    def add(fn: Callable[[], None]) -> Callable[[], None]:
        TESTS.append((name, fn))
        return fn
    return add


def run(cmd: List[str], timeout: float, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, **kw)


def rank_env(rank: int, world: int, port: int) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    return env


# --- no ranks ----------------------------------------------------------

@test("config structure matches struct incnn_comm_config (C compiler)")
def t_layout() -> None:
    from incnn._lib import Config
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Skip("no C compiler")
    names = [f[0] for f in Config._fields_]
    prog = "#include <stdio.h>\n#include <stddef.h>\n" \
        "#include <incnn/collective.h>\nint main(void){\n" \
        'printf("sizeof %zu\\n", sizeof(struct incnn_comm_config));\n' + \
        "".join(f'printf("{n} %zu %zu\\n", offsetof(struct incnn_comm_config, {n}),'
                f' sizeof(((struct incnn_comm_config *)0)->{n}));\n'
                for n in names) + "return 0;}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
        with open(c, "w") as f:
            f.write(prog)
        r = run([cc, "-std=c11", "-I", os.path.join(
            SRC, "userspace/collective/include"), c, "-o", exe], 60)
        assert r.returncode == 0, r.stderr
        out = run([exe], 10).stdout.split("\n")
    want = {ln.split()[0]: ln.split()[1:] for ln in out if ln}
    assert int(want["sizeof"][0]) == ctypes.sizeof(Config), \
        f"sizeof: C {want['sizeof'][0]}, ctypes {ctypes.sizeof(Config)}"
    for n in names:
        field = getattr(Config, n)
        got = [str(field.offset), str(field.size)]
        assert want[n] == got, f"{n}: C offset/size {want[n]}, ctypes {got}"
    # and every field of the C structure is mirrored
    hdr = open(os.path.join(SRC, "userspace/collective/include/incnn/"
                            "collective.h")).read()
    body = hdr.split("struct incnn_comm_config {")[1].split("};")[0]
    cfields = [ln.split(";")[0].split()[-1].lstrip("*")
               for ln in body.split("\n") if ";" in ln]
    assert cfields == names, f"C fields {cfields}, ctypes {names}"


@test("codec structures match struct incnn_codec's head (C compiler)")
def t_codec_layout() -> None:
    from incnn._lib import CodecHead, CodecParam
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise Skip("no C compiler")
    heads = [f[0] for f in CodecHead._fields_]
    params = [f[0] for f in CodecParam._fields_]
    prog = "#include <stdio.h>\n#include <stddef.h>\n#include \"codec.h\"\n" \
        "int main(void){\n" + \
        "".join(f'printf("{n} %zu\\n", offsetof(struct incnn_codec, {n}));\n'
                for n in heads) + \
        "".join(f'printf("param.{n} %zu\\n", offsetof(struct '
                f'incnn_codec_param, {n.rstrip("_")}));\n' for n in params) + \
        'printf("sizeof_param %zu\\n", sizeof(struct incnn_codec_param));' \
        "return 0;}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "l.c"), os.path.join(d, "l")
        with open(c, "w") as f:
            f.write(prog)
        r = run([cc, "-std=c11", "-D_GNU_SOURCE"] +
                [f"-I{os.path.join(SRC, x)}" for x in
                 ("uapi", "kmod/codec", "userspace/include")] +
                [c, "-o", exe], 60)
        assert r.returncode == 0, r.stderr
        out = run([exe], 10).stdout.split("\n")
    want = {ln.split()[0]: int(ln.split()[1]) for ln in out if ln}
    got = {n: getattr(CodecHead, n).offset for n in heads}
    got.update({f"param.{n}": getattr(CodecParam, n).offset for n in params})
    got["sizeof_param"] = ctypes.sizeof(CodecParam)
    assert want == got, f"C {want}, ctypes {got}"


@test("codec strings: accepted forms map to codec ids, others ValueError")
def t_codecs() -> None:
    from incnn._lib import parse_codec
    good = {"auto": (0, 0, 0), "none": (1, 0, 0), "ebq:2^-10": (2, 2, 10),
            "inceptionn:2^-10": (2, 1, 10), "trunc:16": (2, 3, 16),
            "lz4": (2, 4, 0), "ebq:2^-30": (2, 2, 30), "ebq:7": (2, 2, 7),
            "trunc:8": (2, 3, 8), "zebq:2^-8": (2, 5, 8), "zebq": (2, 5, 10),
            "trunc": (2, 3, 16), " EBQ:2^-3 ": (2, 2, 3)}
    for s, want in good.items():
        assert parse_codec(s) == want, f"{s}: {parse_codec(s)} != {want}"
    for bad in ("", "zstd", "ebq:2^-0", "ebq:2^-31", "ebq:2^10", "trunc:12",
                "lz4:3", "inceptionn:x", "none:1", "auto:", "zebq:2^-31",
                "lz4:0", "lz4:", "ebq:", ":10"):
        try:
            parse_codec(bad)
        except ValueError as e:
            assert str(e) == f"codec {bad!r}: want one of {FORMS}", str(e)
        else:
            raise AssertionError(f"{bad!r} accepted")


# the library's codec table, as State(codec=...)'s error states it
FORMS = ('"auto", "none", "inceptionn:S" (S in 2^-1..2^-30), '
         '"ebq:S" (S in 2^-1..2^-30), "trunc:S" (S in 8, 16 or 24), "lz4" '
         'or "zebq:S" (S in 2^-1..2^-30)')


@test("codec labels and lossiness from the library's table")
def t_codec_labels() -> None:
    from incnn._lib import CODEC_FORMS, codec_label, codec_lossy
    assert CODEC_FORMS == FORMS, CODEC_FORMS
    want = {(0, 0): ("none", False), (1, 7): ("inceptionn:2^-7", True),
            (2, 10): ("ebq:2^-10", True), (3, 16): ("trunc:16", True),
            (4, 0): ("lz4", False), (5, 30): ("zebq:2^-30", True),
            (200, 1): ("codec 200 param 1", False)}
    got = {k: (codec_label(*k), codec_lossy(k[0])) for k in want}
    assert got == want, got


@test("State: bad codec or divide -> ValueError; before the process group -> RuntimeError")
def t_no_group() -> None:
    import incnn.torch as it
    try:
        it.State(codec="ebq:2^-99")
        raise AssertionError("bad codec accepted")
    except ValueError as e:
        assert '"inceptionn:S" (S in 2^-1..2^-30)' in str(e), str(e)
    try:
        it.State(codec="none", divide="sideways")
        raise AssertionError("bad divide accepted")
    except ValueError as e:
        assert "'before'" in str(e) and "'after'" in str(e), str(e)
    try:
        it.State(codec="none")
        raise AssertionError("State() without a process group")
    except RuntimeError as e:
        assert "init_process_group" in str(e), str(e)


@test("import without the library: ImportError saying what is missing")
def t_import_error() -> None:
    import incnn
    if ctypes.util.find_library("incnn"):
        raise Skip("libincnn is installed system-wide")
    with tempfile.TemporaryDirectory() as d:
        shutil.copytree(os.path.dirname(incnn.__file__),
                        os.path.join(d, "python", "incnn"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("INCNN_LIBRARY", "LD_LIBRARY_PATH")}
        env["PYTHONPATH"] = os.path.join(d, "python")
        r = run([PY, "-c", "import incnn.torch"], 60, env=env)
        assert r.returncode != 0 and "ImportError" in r.stderr, r.stderr
        msg = r.stderr.strip().split("\n")[-1]
        assert "libincnn.so.0 is missing" in msg and "make" in msg, msg
        env["INCNN_LIBRARY"] = os.path.join(d, "nonexistent.so")
        r = run([PY, "-c", "import incnn.torch"], 60, env=env)
        msg = r.stderr.strip().split("\n")[-1]
        assert "ImportError" in msg and "nonexistent.so" in msg, msg


# --- the launcher (plain Python ranks: fast) ---------------------------

ENV_SCRIPT = textwrap.dedent("""
    import json, os, sys
    keys = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
            "LOCAL_RANK", "LOCAL_WORLD_SIZE")
    with open(os.path.join(sys.argv[1], os.environ["RANK"]), "w") as f:
        json.dump({k: os.environ.get(k) for k in keys} | {"argv": sys.argv[2:]}, f)
    if os.environ["RANK"] == sys.argv[2]:
        sys.exit(int(sys.argv[3]))
    if sys.argv[2] != "-1":
        import time; time.sleep(60)
""")


def launch(args: List[str], timeout: float) -> subprocess.CompletedProcess:
    return run([PY, "-m", "incnn.launch"] + args, timeout)


@test("launch: 2 ranks get the torchrun environment, exit 0")
def t_launch_env() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(ENV_SCRIPT)
        r = launch(["--nproc-per-node", "2", "--nnodes", "2", "--node-rank",
                    "1", "--master-addr", "10.0.0.1", "--master-port",
                    "1234", s, d, "-1", "0"], 60)
        assert r.returncode == 0, r.stderr
        for rank, lr in ((2, 0), (3, 1)):
            got = json.load(open(os.path.join(d, str(rank))))
            want = {"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "1234",
                    "RANK": str(rank), "WORLD_SIZE": "4",
                    "LOCAL_RANK": str(lr), "LOCAL_WORLD_SIZE": "2",
                    "argv": ["-1", "0"]}
            assert got == want, f"{got} != {want}"


@test("launch: a failing rank's status propagates, the others are stopped")
def t_launch_fail() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(ENV_SCRIPT)
        t0 = time.monotonic()
        r = launch(["--nproc-per-node", "2", s, d, "1", "3"], 60)
        took = time.monotonic() - t0
        assert r.returncode == 3, (r.returncode, r.stderr)
        assert "local rank 1" in r.stderr and "status 3" in r.stderr, r.stderr
        assert took < 20, f"took {took:.1f} s (rank 0 sleeps 60 s)"


@test("launch: SIGTERM is forwarded to every rank")
def t_launch_signal() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(ENV_SCRIPT)
        p = subprocess.Popen([PY, "-m", "incnn.launch", "--nproc-per-node",
                              "2", s, d, "9", "0"], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while len(os.listdir(d)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=20)
        assert rc == 128 + signal.SIGTERM, rc


@test("launch: --master-addr takes IPv6 ([::1] and ::1), bad ones fail in one line")
def t_launch_ipv6_addr() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(ENV_SCRIPT)
        for given in ("[::1]", "::1"):
            r = launch(["--master-addr", given, s, d, "-1", "0"], 60)
            assert r.returncode == 0, r.stderr
            got = json.load(open(os.path.join(d, "0")))
            assert got["MASTER_ADDR"] == "::1", got
        for bad, why in (("fe80::1", "needs a scope"),
                         ("[10.0.0.1]", "brackets hold an IPv6 address"),
                         ("fd00::1::2", "cannot resolve")):
            r = launch(["--master-addr", bad, s, d, "-1", "0"], 60)
            last = r.stderr.strip().splitlines()[-1]
            assert r.returncode == 2 and why in last \
                and last.startswith("python3 -m incnn.launch: error: "
                                    "--master-addr: "), (bad, r.stderr)


V6_SCRIPT = textwrap.dedent("""
    import torch, torch.distributed as dist
    import incnn.torch as it
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    with it.State(codec="none", timeout=20) as st:
        t = torch.arange(100003, dtype=torch.float32) * (r + 1)
        it.allreduce(t, st)
        want = torch.arange(100003, dtype=torch.float32) * (n * (n + 1) / 2)
        assert torch.equal(t, want), "IPv6 allreduce is not exact"
    # a second State needs its own port (MASTER_PORT + 2)
    port = int(__import__("os").environ["MASTER_PORT"]) + 2
    with it.State(codec="ebq:2^-10", port=port, timeout=20) as st:
        g = torch.Generator().manual_seed(r)
        t = torch.randn(50000, generator=g) * 1e-2
        it.allreduce(t, st)
        ts = [torch.empty_like(t) for _ in range(n)]
        dist.all_gather(ts, t)
        assert all(torch.equal(ts[0], x) for x in ts), "replicas differ"
    print("ipv6 ok", flush=True)
""")


@test("State over IPv6 (MASTER_ADDR=::1): exact with codec none, identical replicas with ebq")
def t_state_ipv6() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(V6_SCRIPT)
        r = launch(["--nproc-per-node", "2", "--master-addr", "::1",
                    "--master-port", str(free_ports(3, "::1")), s], 180)
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.count("ipv6 ok") == 2, r.stdout


EXIT_SCRIPT = textwrap.dedent("""
    import atexit, os, sys
    states = []
    def after():            # registered first: runs after incnn's handler
        # one write(2) per line: the two ranks share the pipe
        os.write(1, ("closed at exit: %s\\n"
                     % all(s._closed for s in states)).encode())
    atexit.register(after)
    import torch, torch.distributed as dist
    import incnn.torch as it
    dist.init_process_group("gloo")
    states.append(it.State(codec="none", timeout=10))
    t = torch.ones(1000)
    it.allreduce(t, states[0])
    assert t[0].item() == dist.get_world_size()
    # no close(), no destroy_process_group(): interpreter exit does it
""")


@test("interpreter exit closes the State (atexit), the job ends")
def t_atexit() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(EXIT_SCRIPT)
        r = launch(["--nproc-per-node", "2", "--master-port",
                    str(free_ports(2)), s], 120)
        assert r.returncode == 0, r.stderr[-2000:]
        assert r.stdout.count("closed at exit: True") == 2, r.stdout


MULTI_SCRIPT = textwrap.dedent("""
    import os, sys
    import torch, torch.distributed as dist
    import incnn.torch as it
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    tri = n * (n + 1) // 2
    base = torch.arange(4099, dtype=torch.float32)

    def use(st, k):
        # exact sums: small integers; k tells the States' calls apart
        t = base * (r + 1) + k
        it.allreduce(t, st)
        assert torch.equal(t, base * tri + n * k), (st, k)

    def order(states, rev):
        return list(reversed(states)) if rev else states

    # two alive at once, used in both orders, closed in both orders
    # (odd ranks close in the other order than even ranks)
    a = it.State(codec="none", timeout=20)
    b = it.State(codec="ebq:2^-10", timeout=20)
    assert b.wire_codec == "ebq:2^-10", b.wire_codec
    for rev in (False, True):
        for i, st in enumerate(order([a, b], rev)):
            use(st, i)
    for st in order([a, b], r % 2 == 1):
        st.close()
    # three alive at once (one made while two are in use), both orders
    a = it.State(codec="none", timeout=20)
    b = it.State(codec="none", timeout=20)
    use(a, 1)
    c = it.State(codec="none", timeout=20)
    for rev in (False, True):
        for i, st in enumerate(order([a, b, c], rev)):
            use(st, i + 2)
    for st in order([a, b, c], r % 2 == 0):
        st.close()
    assert all(s._closed for s in (a, b, c))
    # a hook state beside a plain one
    with it.State(codec="none", timeout=20) as d, \\
            it.GradiVeQState(warmup=5, timeout=20) as g:
        use(d, 7)
        assert g.rank == r and not g._closed
    # a State of a subgroup whose rank 0 is global rank 1
    sub = dist.new_group([1, 2])
    if r in (1, 2):
        with it.State(codec="none", timeout=20, process_group=sub) as e:
            assert e.rank == r - 1 and e.world_size == 2, e
            t = base * r
            it.allreduce(t, e)
            assert torch.equal(t, base * 3), "subgroup sum"
    print("multi ok", flush=True)
""")


@test("two and three States alive at once, both orders of use and close, "
      "no second port (MASTER_PORT + 1 taken)")
def t_multi_state() -> None:
    import socket
    with tempfile.TemporaryDirectory() as d, \
            socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        s = os.path.join(d, "s.py")
        open(s, "w").write(MULTI_SCRIPT)
        port = free_ports(2)
        busy.bind(("127.0.0.1", port + 1))      # the old default's port
        busy.listen(1)
        r = launch(["--nproc-per-node", "3", "--master-port", str(port), s],
                   180)
        assert r.returncode == 0, r.stderr[-3000:]
        assert r.stdout.count("multi ok") == 3, r.stdout


NO_PATCH_SCRIPT = textwrap.dedent("""
    import atexit, sys
    import torch, torch.distributed as dist, torch.nn.parallel
    import torch.distributed.algorithms.ddp_comm_hooks as hooks

    mods = [m for name, m in sorted(sys.modules.items())
            if name == "torch" or name.startswith("torch.")]

    def snap():
        return {(m.__name__, k): id(v) for m in mods
                for k, v in list(vars(m).items())}
    before = snap()
    excepthook, n_atexit = sys.excepthook, atexit._ncallbacks()
    import incnn.torch as it
    after = snap()
    changed = sorted(k for k in before if after.get(k) != before[k])
    print("changed", changed[:5], len(changed))
    print("same hooks", sys.excepthook is excepthook,
          atexit._ncallbacks() - n_atexit)
""")


@test("importing incnn.torch changes nothing in torch "
      "(destroy_process_group is torch's own)")
def t_no_patch() -> None:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        open(s, "w").write(NO_PATCH_SCRIPT)
        r = run([PY, s], 120)
        assert r.returncode == 0, r.stderr[-2000:]
        out = r.stdout.splitlines()
        # one atexit handler: incnn's registry of open States
        assert out == ["changed [] 0", "same hooks True 1"], r.stdout


# --- DDP with 4 ranks ---------------------------------------------------

WORLD = 4
RES: Dict[str, object] = {}


def load_train() -> List[dict]:
    if "train" not in RES:
        raise AssertionError("the 4-rank job did not produce results")
    return RES["train"]  # type: ignore[return-value]


@test(f"DDP job, {WORLD} ranks via incnn.launch (gloo, codecs none and ebq)")
def t_train_job() -> None:
    d = worker_job("train", 3, 240, keep=True)
    try:
        RES["checks"] = [json.load(open(os.path.join(d, f"rank{i}.json")))
                         for i in range(WORLD)]
    finally:
        shutil.rmtree(d)


def worker_job(scenario: str, ports: int, timeout: float,
               keep: bool = False) -> str:
    """Run ddp_worker.py @scenario on WORLD ranks (@ports ports from
    MASTER_PORT), load the ranks' rank<i>.pt into RES[scenario]; the
    directory is removed unless @keep (then returned)."""
    import torch
    d = tempfile.mkdtemp(prefix=f"incnn-{scenario}-")
    try:
        r = launch(["--nproc-per-node", str(WORLD), "--master-port",
                    str(free_ports(ports)), WORKER, scenario, d], timeout)
        assert r.returncode == 0, r.stderr[-3000:]
        RES[scenario] = [torch.load(os.path.join(d, f"rank{i}.pt"))
                         for i in range(WORLD)]
    except BaseException:
        shutil.rmtree(d)
        raise
    if not keep:
        shutil.rmtree(d)
    return d


def local_check(name: str) -> None:
    def fn() -> None:
        checks = RES.get("checks")
        assert checks, "the 4-rank job did not produce results"
        bad = [(i, c[name][1]) for i, c in enumerate(checks)
               if not c[name][0]]
        assert not bad, f"ranks failing: {bad}"
    TESTS.append((f"every rank: {name}", fn))


for _n in ("wire codec reported", "fp64 bucket falls back, warns once",
           "non-contiguous allreduce in place", "fp16 allreduce falls back",
           "use after close raises",
           "destroy_process_group is torch's, close() after it",
           "divide_after: none False, ebq True",
           "none: hook == div_(N) then the sum, bit for bit",
           "ebq: hook == the sum then div_(N), bit for bit"):
    local_check(_n)


def replicas_equal(key: str) -> None:
    import torch
    res = load_train()
    for i, r in enumerate(res[1:], 1):
        for what in ("grad0", "snap", "params"):
            assert torch.equal(res[0][key][what], r[key][what]), \
                f"{key} {what}: rank {i} differs from rank 0"


@test("codec none: every rank's parameters and gradients bit-identical")
def t_none_replicas() -> None:
    replicas_equal("none")


@test("codec none: within fp32 rounding of the default hook (5 steps)")
def t_none_vs_default() -> None:
    res = load_train()[0]
    d, n = res["default"], res["none"]
    gmax = d["grad0"].abs().max().item()
    gerr = (n["grad0"] - d["grad0"]).abs().max().item()
    # two orders of summing 4 values: a few ulps of the largest
    assert gerr <= 4 * WORLD * EPS32 * gmax, f"grad {gerr} (max {gmax})"
    perr = (n["snap"] - d["snap"]).abs().max().item()
    pmax = d["snap"].abs().max().item()
    assert perr <= 64 * EPS32 * pmax, f"params after 5 steps: {perr} (max {pmax})"
    assert not (n["snap"] == 0).all()


@test("codec ebq:2^-10: replicas bit-identical")
def t_ebq_replicas() -> None:
    replicas_equal("ebq")


@test("codec ebq:2^-10: each gradient within the ring's error budget")
def t_ebq_budget() -> None:
    res = load_train()[0]
    d, e = res["default"]["grad0"], res["ebq"]["grad0"]
    err = (e - d).abs()
    # collective.h: N * 2^-k on the sum plus fp32 rounding of the
    # additions (and the default hook's own rounding); a lossy codec's
    # sum is divided by N afterwards (incnn.torch), so 2^-k on the mean
    budget = 2.0 ** -10 + 4 * WORLD * EPS32 * d.abs().max().item()
    assert err.max().item() <= budget, f"max error {err.max().item()} > {budget}"
    assert err.max().item() > 2.0 ** -12, \
        f"max error {err.max().item()}: the codec was not applied"


@test("training: none and ebq:2^-10 reach the default hook's loss")
def t_loss() -> None:
    res = load_train()

    def final(key: str) -> float:
        return sum(sum(r[key]["loss"][-5:]) for r in res) / (5 * len(res))
    first = sum(r["default"]["loss"][0] for r in res) / len(res)
    ld, ln, le = final("default"), final("none"), final("ebq")
    assert ld < 0.7 * first, f"default hook did not learn: {first} -> {ld}"
    assert abs(ln - ld) <= 1e-4 * ld, f"none {ln} vs default {ld}"
    assert abs(le - ld) <= 0.05 * ld, f"ebq {le} vs default {ld}"


# --- scale-relative bounds and error feedback ---------------------------

def q_emulate(codec_id: int, param: int, x: "torch.Tensor") -> "torch.Tensor":
    """decode(encode(x)) with the library's codec (incnn_codec_encode)."""
    import ctypes
    import torch
    from incnn import _lib
    lib = _lib.lib
    lib.incnn_codec_get.restype = ctypes.c_void_p
    lib.incnn_codec_get.argtypes = [ctypes.c_uint]
    lib.incnn_simd_auto.restype = ctypes.c_int
    lib.incnn_codec_encode.restype = ctypes.c_ssize_t
    lib.incnn_codec_encode.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
        ctypes.c_void_p]
    lib.incnn_codec_decode.restype = ctypes.c_int
    lib.incnn_codec_decode.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint8, ctypes.c_void_p,
        ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    c = lib.incnn_codec_get(codec_id)
    out = x.clone().contiguous()
    piece = 4096
    enc = ctypes.create_string_buffer(8 * piece + 1024)
    scratch = ctypes.create_string_buffer(1 << 20)
    for i in range(0, out.numel(), piece):
        v = out[i:i + piece]
        n = lib.incnn_codec_encode(c, 0, param, v.data_ptr(), 4 * v.numel(),
                                   enc, len(enc), scratch, None)
        assert n >= 0, f"encode: {n}"
        assert lib.incnn_codec_decode(c, 0, param, enc, n, v.data_ptr(),
                                      4 * v.numel()) == 0
    return out


def ring_reference(codec_id: int, param: int, inputs: list, calls: int,
                   world: int) -> list:
    """The keyed calls' rule (collective.h) in torch: per call, e (first:
    agreed from the inputs' largest values; then from the previous
    result), per block the ring's hops u = x + r, u * 2^e, a = u + v,
    q = Q(a), r = (a - q) * 2^-e; the result q * 2^-e."""
    import math
    import torch
    n = inputs[0][0].numel()
    res = [torch.zeros(n) for _ in range(world)]
    lg = math.ceil(math.log2(world))
    base, rem = divmod(n, world)
    blocks = [(b * base + min(b, rem), base + (b < rem)) for b in range(world)]
    out, e = [], None
    clamp = (lambda v: max(-64, min(64, v)))
    for t in range(calls):
        x = [inputs[r][t] for r in range(world)]
        if e is None:
            top = max(math.frexp(float(xr.abs().max()))[1] - 1 for xr in x)
            e = clamp(-1 - (top + lg))
        s, inv = 2.0 ** e, 2.0 ** -e
        v = torch.zeros(n)
        for b, (off, ln) in enumerate(blocks):
            for k in range(world):
                r = (b + k) % world
                u = (x[r][off:off + ln] + res[r][off:off + ln]) * s
                a = u + v[off:off + ln] if k else u
                q = q_emulate(codec_id, param, a)
                res[r][off:off + ln] = (a - q) * inv
                v[off:off + ln] = q
        result = v * inv
        out.append(result)
        m = float(result.abs().max())
        e = clamp(-1 - (math.frexp(m)[1] - 1))
    return out


@test(f"scale and error feedback: {WORLD} ranks, every lossy codec")
def t_bucket_job() -> None:
    worker_job("bucket", 42, 300)


def load_bucket() -> List[dict]:
    if "bucket" not in RES:
        raise AssertionError("the 4-rank bucket job did not produce results")
    return RES["bucket"]  # type: ignore[return-value]


@test("scale and error feedback: replicas bit-identical (DDP, keyed calls)")
def t_bucket_replicas() -> None:
    import torch
    res = load_bucket()
    codecs = res[0]["codecs"]
    assert {"ebq", "inceptionn", "trunc"} <= set(codecs), codecs
    for name in codecs:
        # scale "auto": a 2^e per parameter tensor, several per bucket
        assert any(len(e) > 1 for e in res[0][name]["exps"]), \
            res[0][name]["exps"]
        assert all(len(e) == 1 for e in res[0][name]["exps_bucket"]), \
            res[0][name]["exps_bucket"]
        # (trunc's error is relative: powers of two change nothing)
        assert name == "trunc" or not torch.equal(
            res[0][name]["params"], res[0][name]["params_bucket"]), name
        for r in range(1, WORLD):
            assert torch.equal(res[0][name]["params"],
                               res[r][name]["params"]), \
                f"{name}: rank {r}'s parameters differ from rank 0's"
            assert torch.equal(res[0][name]["params_bucket"],
                               res[r][name]["params_bucket"]), \
                f"{name}, scale per bucket: rank {r}'s parameters differ"
            assert res[0][name]["exps"] == res[r][name]["exps"], name
            for t, k in enumerate(res[0][name]["keyed"]):
                assert torch.equal(k, res[r][name]["keyed"][t]), \
                    f"{name}: keyed call {t} differs on rank {r}"
        st = res[0][name]["stats"]
        # one residual per gradient value, the rebuilt buckets' old
        # layouts forgotten, plus the keyed tensor's
        assert st["ef_bytes"] == 4 * (res[0][name]["nparams"] +
                                      len(res[0][name]["keyed"][0])), st
        assert st["scale"] and st["error_feedback"], st


@test("error feedback and scale: exactly the torch reference of the rule")
def t_bucket_reference() -> None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("ddp_worker", WORKER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    res = load_bucket()
    inputs = [[mod.keyed_input(r, t) for t in range(mod.KEYED_CALLS)]
              for r in range(WORLD)]
    for name in res[0]["codecs"]:
        cid, param = res[0][name]["codec"]
        want = ring_reference(cid, param, inputs, mod.KEYED_CALLS, WORLD)
        for t, w in enumerate(want):
            got = res[0][name]["keyed"][t]
            bad = int((got.view(-1).view(torch_int()) !=
                       w.view(torch_int())).sum())
            assert bad == 0, f"{name}: call {t}: {bad} values differ " \
                f"from the reference"


def torch_int():    # noqa: ANN201 - torch.int32, imported late
    import torch
    return torch.int32


@test("a bound that zeroes a bucket 10 times in a row warns once")
def t_bucket_warn() -> None:
    res = load_bucket()
    for r in range(WORLD):
        w = res[r]["warn"]
        assert len(w["msgs"]) == 1, w
        assert "key 9" in w["msgs"][0] and "ebq:2^-4" in w["msgs"][0], w
        assert "try scale='auto', a finer bound or error_feedback=True" \
            in w["msgs"][0], w
        assert w["flattened"] == 1, w


@test("State: bad scale, error_feedback or key -> ValueError")
def t_bucket_args() -> None:
    import incnn.torch as it
    for kw in ({"scale": "max"}, {"scale": None}, {"scale": "Tensor"},
               {"error_feedback": 1},
               {"error_feedback": "yes"}):
        try:
            it.State(codec="ebq:2^-8", **kw)
        except ValueError as e:
            assert repr(list(kw.values())[0]) in str(e), str(e)
        else:
            raise AssertionError(f"{kw}: no error")


def fail_job(how: str) -> None:
    world, timeout = 3, 3.0
    d = tempfile.mkdtemp(prefix="incnn-fail-")
    port = free_ports(2)
    procs = [subprocess.Popen([PY, WORKER, how, d],
                              env=rank_env(r, world, port),
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    try:
        deadline = time.monotonic() + 90
        for p in procs[:-1]:
            p.wait(timeout=max(1, deadline - time.monotonic()))
        for r, p in enumerate(procs[:-1]):
            assert p.returncode == 0, f"rank {r}: {p.stderr.read()[-2000:]}"
            got = json.load(open(os.path.join(d, f"rank{r}.json")))
            assert got["raised"], f"rank {r} did not raise"
            assert "CommError: incnn_allreduce" in got["msg"], got["msg"]
            assert got["after"] < timeout + 8, \
                f"rank {r} raised after {got['after']:.1f} s"
    except subprocess.TimeoutExpired:
        raise AssertionError("a surviving rank hangs") from None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stderr.close()
        shutil.rmtree(d)


@test("a killed rank: the others raise (incnn's message), no hang")
def t_killed() -> None:
    fail_job("kill")


@test("a stalled rank: the others raise within the timeout")
def t_stalled() -> None:
    fail_job("stall")


def main() -> int:
    print("KTAP version 1")
    print(f"1..{len(TESTS)}")
    counts = {"pass": 0, "fail": 0, "skip": 0}
    for i, (name, fn) in enumerate(TESTS, 1):
        t0 = time.monotonic()
        try:
            fn()
            counts["pass"] += 1
            print(f"# {time.monotonic() - t0:.1f} s")
            print(f"ok {i} {name}")
        except Skip as e:
            counts["skip"] += 1
            print(f"ok {i} {name} # SKIP {e}")
        except Exception as e:      # noqa: BLE001 - reported as not ok
            counts["fail"] += 1
            for ln in (traceback.format_exc() if not isinstance(
                    e, AssertionError) else f"{e}\n").rstrip().split("\n"):
                print(f"# {ln}")
            print(f"not ok {i} {name}")
        sys.stdout.flush()
    print(f"# Totals: pass:{counts['pass']} fail:{counts['fail']} xfail:0 "
          f"xpass:0 skip:{counts['skip']} error:0")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
