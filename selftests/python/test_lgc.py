#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Selftests of incnn.lgc (LGC, ring variant), KTAP output with a
"# Totals:" line.

    PYTHONPATH=build/python /usr/bin/python3 selftests/python/test_lgc.py

Needs the built package and library (make python) and Debian's
python3-torch. The 4-rank job is lgc_worker.py on 127.0.0.1 (gloo).
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Callable, Dict, List, Tuple

from portutil import free_ports

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "lgc_worker.py")
PY = sys.executable
WORLD, STEPS, T1, T2 = 4, 12, 3, 4
TRAINER = 2                 # not rank 0, nor the first stage-2 leader

TESTS: List[Tuple[str, Callable[[], None]]] = []
_job: Dict[str, Any] = {}


def test(name: str) -> Callable:
    def add(fn: Callable[[], None]) -> Callable[[], None]:
        TESTS.append((name, fn))
        return fn
    return add


def job(codec: str = "none") -> List[Dict[str, Any]]:
    """The 4-rank run with the State's @codec (once per codec, shared by
    the tests that need it); an emulated codec: its samples kept too;
    "baseline": the plain incnn hook and SGD with momentum; "dense-bucket":
    codec none with the first layer (dense) alone in a DDP bucket."""
    if codec in _job:
        return _job[codec]
    port = free_ports(3)
    extra = {"LGC_CHECKS": "1"} if codec == "none" else {} \
        if codec == "baseline" else {"LGC_BUCKET_BYTES": "1"} \
        if codec == "dense-bucket" else \
        {"LGC_CODEC": codec, "LGC_SAMPLES": "2"}
    args = ["baseline"] if codec == "baseline" else []
    with tempfile.TemporaryDirectory() as d:
        procs = []
        for r in range(WORLD):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1",
                       LGC_TRAINER=str(TRAINER),
                       MASTER_PORT=str(port), RANK=str(r),
                       WORLD_SIZE=str(WORLD), LOCAL_RANK=str(r), **extra)
            procs.append(subprocess.Popen(
                [PY, WORKER, d, str(STEPS), str(T1), str(T2)] + args,
                env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for r, p in enumerate(procs):
            out = p.communicate(timeout=120)[0]
            assert p.returncode == 0, f"rank {r} failed:\n{out[-2000:]}"
        _job[codec] = [json.load(open(os.path.join(d, f"rank{r}.json")))
                       for r in range(WORLD)]
    return _job[codec]


def value_error(call: Callable[..., Any], args: Dict[str, Any],
                want: str) -> None:
    """call(**args) raises ValueError with @want in its message."""
    try:
        call(**args)
    except ValueError as e:
        assert want in str(e), f"{args}: {e}"
    else:
        raise AssertionError(f"{args}: no ValueError")


@test("bad configuration raises ValueError naming the limit; keyed "
      "calls' segments")
def t_config() -> None:
    import torch.distributed as dist
    import incnn.lgc as it_lgc
    import incnn.torch as it
    for kw, want in (({"alpha": 0}, "(0, 1]"), ({"alpha": 1.5}, "(0, 1]"),
                     ({"alpha": -0.1}, "(0, 1]"), ({"t1": -1}, "t1 -1"),
                     ({"t2": -5}, "t2 -5"), ({"momentum": 1.0}, "[0, 1)"),
                     ({"code_stride": 3}, "1, 2, 4, 8 or 16"),
                     ({"trainer": -1}, "trainer -1 must be a rank"),
                     ({"ae_init": "he"}, "'torch', 'unit'"),
                     ({"ae_steps": 0}, "ae_steps 0 must be an integer in "
                      "1..64"),
                     ({"wire_samples": -1}, "wire_samples -1 must be"),
                     ({"ae_norm": "max"}, "'rms', 'l2'")):
        # as keywords, and as the option groups
        ae_kw = {it_lgc.AE_KEYWORDS[k]: v for k, v in kw.items()
                 if k in it_lgc.AE_KEYWORDS}
        grouped = {"ae": it.AEOptions(**ae_kw)} if ae_kw else \
            {"options": it.LGCOptions(**kw)}
        for args in (kw, grouped):
            value_error(lambda **a: it.LGCState(None, **a), args, want)
    # a keyword wins over its group; the rest is for the State
    opts, ae, rest = it_lgc.split_keywords(
        {"alpha": 0.5, "ae_lr": 0.1, "codec": "ebq", "t2": 7},
        it.LGCOptions(alpha=0.25, t1=3), it.AEOptions(width=8))
    assert (opts, ae, rest) == (
        it.LGCOptions(alpha=0.5, t1=3, t2=7),
        it.AEOptions(width=8, lr=0.1), {"codec": "ebq"}), (opts, ae, rest)
    try:
        it.LGCState(None, state=object(), codec="none")  # type: ignore
    except TypeError as e:
        assert str(e) == "incnn.lgc: State keywords codec with state=", e
    else:
        raise AssertionError("state= with State keywords: no TypeError")
    with tempfile.TemporaryDirectory() as d:
        dist.init_process_group("gloo", init_method=f"file://{d}/s",
                                rank=0, world_size=1)
        try:
            it.LGCState(None)
        except ValueError as e:
            assert "world size 1 must be >= 2" in str(e), str(e)
        else:
            raise AssertionError("world size 1: no ValueError")
        try:
            keyed_args(it)
        finally:
            dist.destroy_process_group()


def keyed_args(it: Any) -> None:
    """State.submit's segments= and fresh= (LGC's keyed calls): ValueError
    for lengths that do not add up and without key=; fine otherwise."""
    with it.State(codec="ebq:2^-8", tos=0) as st:
        t = torch.ones(8)
        for kw, want in (({"key": 1, "segments": [3, 4]}, "summing to the "
                          "tensor's 8 values"),
                         ({"key": 1, "segments": [9, -1]}, "lengths >= 0"),
                         ({"segments": [8]}, "go with key="),
                         ({"fresh": True}, "go with key=")):
            value_error(lambda **a: st.submit(t, **a), kw, want)
        st.submit(t, key=1, segments=[3, 0, 5], fresh=True).wait()
        assert torch.equal(t, torch.ones(8)), t


@test("trained autoencoder reconstructs correlated gradients far better")
def t_autoencoder() -> None:
    from incnn.autoencoder import Autoencoder, ae_loss, ae_train_step

    def sample(seed: int, k: int = 4, n: int = 256) -> torch.Tensor:
        # a common smooth component plus per-node noise
        g = torch.Generator().manual_seed(seed)
        t = torch.linspace(0, 1, n)
        f = torch.rand(2, generator=g) * 3 + 1
        ph = torch.rand(2, generator=g) * 6.28
        a = torch.randn(2, generator=g)
        common = sum(a[i] * torch.sin(6.28 * f[i] * t + ph[i])
                     for i in range(2))
        return common + 0.1 * torch.randn(k, n, generator=g)

    held = [sample(1000 + i) for i in range(20)]
    norm = sum(float((v.mean(0) ** 2).sum()) for v in held)

    def err(ae: Autoencoder) -> float:
        with torch.no_grad():
            return sum(float(ae_loss(ae, v)) for v in held) / norm

    ae = Autoencoder(seed=0)
    untrained = err(ae)
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    for i in range(400):
        ae_train_step(ae, opt, sample(i))
    trained = err(ae)
    print(f"# relative error: untrained {untrained:.3f}, trained "
          f"{trained:.3f}")
    assert trained < 0.25 * untrained, (untrained, trained)
    # the code is 1/16 of the input
    assert ae.encode(torch.zeros(256)).numel() == 16
    # the initial weights depend on the seed only, and leave torch's RNG
    torch.manual_seed(3)
    a, x = Autoencoder(seed=0), torch.rand(1)
    torch.manual_seed(3)
    assert torch.equal(x, torch.rand(1)), "Autoencoder() used torch's RNG"
    b = Autoencoder(seed=0)
    assert all(torch.equal(p, q) for p, q in
               zip(a.parameters(), b.parameters())), "init not seeded"


@test("stage transitions at t1 and t1+t2 on every rank")
def t_stages() -> None:
    want = [1] * T1 + [2] * T2 + [3] * (STEPS - T1 - T2)
    for r, d in enumerate(job()):
        assert d["stages"] == want, f"rank {r}: {d['stages']} != {want}"
        s = d["stats"]
        got = [s[k]["iterations"] for k in ("1", "2", "3")]
        assert got == [T1, T2, STEPS - T1 - T2], f"rank {r}: {got}"
        assert s["1"]["sent"] == s["1"]["baseline"], s["1"]
        assert s["1"]["index"] == 0 and s["2"]["index"] > 0, s
        assert s["weights"]["sent"] > 0, s


@test("top-k indices identical on every rank")
def t_indices() -> None:
    ranks = job()
    for step in range(T1, STEPS):
        got = [d["indices"][step] for d in ranks]
        assert got[0], f"step {step}: no indices"
        assert all(g == got[0] for g in got), f"step {step}: {got}"
    for step in range(T1):
        assert ranks[0]["indices"][step] == {}, step


@test("replicas bit-identical after stage-3 steps, same stats")
def t_identical() -> None:
    ranks = job()
    ps = [d["params"] for d in ranks]
    assert all(p == ps[0] for p in ps), ps
    for step in range(STEPS):
        got = [d["digests"][step] for d in ranks]
        assert all(g == got[0] for g in got), f"step {step}: {got}"
    assert all(d["stats"] == ranks[0]["stats"] for d in ranks)
    s = ranks[0]["stats"]
    print(f"# rate: stage 3 {s['3']['rate']:.1f}x, whole run "
          f"{s['total']['rate']:.2f}x")
    assert s["3"]["rate"] > 10 and s["total"]["rate"] > 1, s


@test("a bucket of dense tensors only (the first layer alone): no "
      "indices, stages 2 and 3 run, replicas bit-identical")
def t_dense_bucket() -> None:
    ranks = job("dense-bucket")
    empty = hashlib.sha256(b"").hexdigest()[:16]
    for step in range(T1, STEPS):
        got = [d["indices"][step] for d in ranks]
        assert all(g == got[0] for g in got), f"step {step}: {got}"
        assert empty in got[0].values() and len(got[0]) >= 2, got[0]
    ps = [d["params"] for d in ranks]
    assert all(p == ps[0] for p in ps), ps
    assert ranks[0]["stats"]["3"]["iterations"] == STEPS - T1 - T2, \
        ranks[0]["stats"]


@test("ebq stages: replicas bit-identical at every step, coded bytes")
def t_ebq_stages() -> None:
    exact, ranks = job(), job("ebq:2^-8")
    for step in range(STEPS):
        got = [d["digests"][step] for d in ranks]
        assert all(g == got[0] for g in got), \
            f"step {step} (stage {ranks[0]['stages'][step]}): {got}"
    # the codec acts from the first step on: stage 1 and 2 are quantised
    for step in (0, T1 - 1, T1 + T2 - 1):
        assert ranks[0]["digests"][step] != exact[0]["digests"][step], step
    assert all(d["stats"] == ranks[0]["stats"] for d in ranks)
    s = ranks[0]["stats"]
    for k in ("1", "2", "3"):
        assert 0 < s[k]["coded"] <= s[k]["sent"], (k, s[k])
        assert exact[0]["stats"][k]["coded"] == s[k]["coded"], k
    assert s["1"]["coded"] == s["1"]["sent"] == s["1"]["baseline"], s["1"]
    # samples of what the codec encodes, and the bytes at a given ratio
    assert all(ranks[0]["samples"][k] > 0 for k in "123"), ranks[0]
    half = ranks[0]["stats_half"]
    for k in ("1", "2", "3"):
        assert half[k]["sent"] == s[k]["sent"] - s[k]["coded"] // 2, k
    assert half["total"]["rate"] > s["total"]["rate"]


@test("stage 1 is the plain hook with SGD's momentum, bit for bit")
def t_stage1_momentum() -> None:
    lgc, base = job(), job("baseline")
    for step in range(STEPS):
        same = lgc[0]["digests"][step] == base[0]["digests"][step]
        # the momentum of the averaged gradient: the baseline's optimizer
        assert same == (step < T1), f"step {step}: same {same}"


@test("the trainer alone trains; the same weights everywhere afterwards")
def t_trainer() -> None:
    ranks = job()
    for r, d in enumerate(ranks):
        n = len(d["ae_loss"])
        # one step per stage-2 bucket (2 buckets an iteration)
        want = 2 * T2 if r == TRAINER else 0
        assert n == want, f"rank {r}: {n} autoencoder steps, want {want}"
    ae = [d["ae"] for d in ranks]
    assert len(set(ae)) == 1, f"autoencoder weights differ: {ae}"


@test("hook asynchronous: futures pending at return, one worker thread")
def t_async() -> None:
    for r, d in enumerate(job()):
        a = d["async"]
        assert sorted(a) == sorted(str(i) for i in (T1, T1 + T2)), a
        for i, (held, done, threads) in a.items():
            # the worker held iteration i's first bucket until the hook of
            # the last one returned: a synchronous hook never gets there
            assert held, f"rank {r} it {i}: hooks did not all return"
            assert len(done) >= 2 and not any(done), \
                f"rank {r} it {i}: futures done at return: {done}"
            assert threads == [f"incnn-lgc-{r}"], f"rank {r}: {threads}"


@test("an error in the worker reaches backward with its message")
def t_fault() -> None:
    for r, d in enumerate(job()):
        assert "lgc_worker: injected fault" in d["fault"], \
            f"rank {r}: {d['fault'][:300]}"


def main() -> int:
    print("KTAP version 1")
    print(f"1..{len(TESTS)}")
    fails = 0
    for n, (name, fn) in enumerate(TESTS, 1):
        try:
            fn()
            print(f"ok {n} {name}")
        except Exception:               # noqa: BLE001 - reported
            fails += 1
            for ln in traceback.format_exc().rstrip().split("\n"):
                print(f"# {ln}")
            print(f"not ok {n} {name}")
        sys.stdout.flush()
    print(f"# Totals: pass:{len(TESTS) - fails} fail:{fails} xfail:0 "
          "xpass:0 skip:0 error:0")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
