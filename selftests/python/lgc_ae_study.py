#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Why the paper's autoencoder optimiser (SGD, lr 0.001, batch 1) does not
train our autoencoder in a 300-step stage 2: a measurement, not a test
(docs/lgc.md, "The autoencoder's optimiser").

    PYTHONPATH=build/python /usr/bin/python3 selftests/python/lgc_ae_study.py \
        [STEPS [N...]]

The signal is test_lgc.py's: 4 nodes' vectors of length N, a common
smooth component plus 10 % per-node noise; the error is eq. (11)'s loss
over 10 held-out samples relative to ||mean g||^2 (1.0: no better than
sending zeros). Each row trains Autoencoder(seed=0) for STEPS (default
300, the paper's t2) steps of batch 1 and varies:

  init   torch: PyTorch's default (kaiming_uniform a=sqrt(5)): every
                layer scales the signal's variance by ~1/3, so through
                the 10 layers the output is ~3 % of the input at init;
         unit:  weights N(0, 1/fan_in), biases 0 (variance kept per layer)
  norm   rms:   the vector divided by its RMS (LGCState's scale);
         l2:    divided by its L2 norm (the loss is then O(1) whatever N)
  opt    sgd lr 1e-3 (the paper), sgd lr 1e-4, sgd lr 1e-3 momentum 0.9,
         sgd lr 1e-3 with 4 steps on each sample, adam lr 1e-3

Also prints, per init, how much of the code and of the output depends on
the input at init (and how much is the biases' constant).
"""

import math
import sys
import time
from typing import List, Tuple

import torch

from incnn.autoencoder import Autoencoder, ae_loss


def sample(seed: int, n: int, k: int = 4) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, n)
    f = torch.rand(2, generator=g) * 3 + 1
    ph = torch.rand(2, generator=g) * 6.28
    a = torch.randn(2, generator=g)
    common = sum(a[i] * torch.sin(6.28 * f[i] * t + ph[i]) for i in range(2))
    return common + 0.1 * torch.randn(k, n, generator=g)


def normed(v: torch.Tensor, norm: str) -> torch.Tensor:
    s = v.pow(2).mean().sqrt() if norm == "rms" else v.norm() / 2
    return v / s


# name, optimiser, lr, momentum, steps per sample
OPTS: List[Tuple[str, str, float, float, int]] = [
    ("sgd 1e-3 (paper)", "sgd", 1e-3, 0.0, 1),
    ("sgd 1e-4", "sgd", 1e-4, 0.0, 1),
    ("sgd 1e-3 mom .9", "sgd", 1e-3, 0.9, 1),
    ("sgd 1e-3 x4 steps", "sgd", 1e-3, 0.0, 4),
    ("adam 1e-3", "adam", 1e-3, 0.0, 1)]


def run(n: int, init: str, norm: str,
        opt: Tuple[str, str, float, float, int], steps: int
        ) -> Tuple[float, float]:
    held = [normed(sample(1000 + i, n), norm) for i in range(10)]
    ref = sum(float(v.mean(0).pow(2).sum()) for v in held)
    ae = Autoencoder(seed=0, init=init)

    def err() -> float:
        with torch.no_grad():
            e = sum(float(ae_loss(ae, v)) for v in held) / ref
        return e if math.isfinite(e) else float("nan")

    e0 = err()
    _, kind, lr, mom, per = opt
    o: torch.optim.Optimizer = \
        torch.optim.SGD(ae.parameters(), lr=lr, momentum=mom) \
        if kind == "sgd" else torch.optim.Adam(ae.parameters(), lr=lr)
    for i in range(steps):
        v = normed(sample(i, n), norm)
        for _ in range(per):
            o.zero_grad()
            ae_loss(ae, v).backward()
            o.step()
    return e0, err()


def gains(init: str, n: int = 256) -> Tuple[float, float, float, float]:
    """At init, for x ~ N(0, 1): the std of the input-dependent part of
    the code and of the output (f(x) - f(0)), and the mean |f(0)| (what
    the biases put there)."""
    ae = Autoencoder(seed=0, init=init)
    x = torch.randn(n, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        c, c0 = ae.encode(x), ae.encode(torch.zeros(n))
        y, y0 = ae.decode(c), ae.decode(c0)
    return (float((c - c0).std()), float(c0.abs().mean()),
            float((y - y0).std()), float(y0.abs().mean()))


def main(argv: List[str]) -> int:
    steps = int(argv[1]) if len(argv) > 1 else 300
    ns = [int(a) for a in argv[2:]] or [256, 2048]
    torch.set_num_threads(1)
    for init in ("torch", "unit"):
        c, cb, y, yb = gains(init)
        print(f"# init {init}, input N(0, 1): code = signal of std {c:.4f}"
              f" + bias part of mean |.| {cb:.4f}; output = signal {y:.5f}"
              f" + bias part {yb:.4f}")
    print(f"| N | init | norm | optimiser | rel. error at 0 | after {steps} |")
    print("|---|---|---|---|---|---|")
    for n in ns:
        for init in ("torch", "unit"):
            for norm in ("rms", "l2"):
                for opt in OPTS:
                    t = time.monotonic()
                    e0, e1 = run(n, init, norm, opt, steps)
                    print(f"| {n} | {init} | {norm} | {opt[0]} | {e0:.3f} | "
                          f"{e1:.3f} |  <!-- {time.monotonic() - t:.1f} s -->",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
