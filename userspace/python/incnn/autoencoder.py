# SPDX-License-Identifier: GPL-2.0 OR MIT
"""LGC's autoencoder (Abrahamyan et al., Section IV): a 1-D convolutional
encoder and decoder of gradient vectors, its loss (eq. 11), one training
step, and its settings (AEOptions), for incnn.lgc.
"""

import math
from dataclasses import dataclass
from typing import List, Tuple

import torch
import torch.nn as nn

__all__ = ["AEOptions", "Autoencoder", "ae_loss", "ae_train_step",
           "init_autoencoder", "padded"]

STRIDE = 16             # vectors are padded to a multiple of this
STRIDES = (1, 2, 4, 8, 16)
INITS = ("torch", "unit")
NORMS = ("rms", "l2")
OPTIMS = ("sgd", "adam")


class Autoencoder(nn.Module):
    """The paper's 1-D convolutional autoencoder: encoder of 5 conv layers
    with leaky ReLU between them, decoder of 5 transposed convolutions.
    A vector of length L (a multiple of 16) becomes a code of L/stride
    (stride 1, 2, 4, 8 or 16: that many of the first four layers halve
    the length)."""

    def __init__(self, width: int = 16, seed: int = 0, stride: int = 16,
                 init: str = "torch"):
        super().__init__()
        if stride not in STRIDES:
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


@dataclass(frozen=True)
class AEOptions:
    """The autoencoder's settings (LGCState(ae=...), or its keywords
    width, seed, code_stride, ae_init, ae_norm, ae_lr, ae_optim).

    width:       channels of the hidden layers
    seed:        torch's seed for the initial weights (every rank alike)
    code_stride: the code is 1/code_stride of the top-k vector (1..16,
                 powers of 2; the paper gives no figure)
    init:        initial weights: "torch" (PyTorch's default) or "unit"
                 (variance-keeping: init_autoencoder)
    norm:        the input is the selected values divided by the leader's
                 "rms" (root mean square) or "l2" (L2 norm) of its own
                 (the loss is then O(1) whatever the length)
    lr:          learning rate (the paper: SGD, 0.001)
    optim:       "sgd" (the paper) or "adam" (converges in the short stage
                 2 of small jobs where SGD at 0.001 does not: docs/lgc.md)
    steps:       optimizer steps per stage-2 sample (the paper: 1), 1..64:
                 a larger training budget for a short stage 2
    """

    width: int = 16
    seed: int = 0
    code_stride: int = 16
    init: str = "torch"
    norm: str = "rms"
    lr: float = 0.001
    optim: str = "sgd"
    steps: int = 1

    def check(self) -> None:
        """ValueError naming the setting and its limits."""
        if not self.lr > 0:
            raise ValueError(f"incnn.lgc: ae_lr {self.lr!r} must be > 0")
        if self.code_stride not in STRIDES:
            raise ValueError(f"incnn.lgc: code_stride {self.code_stride!r} "
                             "must be 1, 2, 4, 8 or 16")
        if self.optim not in OPTIMS:
            raise ValueError(f"incnn.lgc: ae_optim {self.optim!r} must be "
                             "'sgd' or 'adam'")
        if self.init not in INITS:
            raise ValueError(f"incnn.lgc: ae_init {self.init!r} must be one "
                             f"of {', '.join(map(repr, INITS))}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) \
                or not 1 <= self.steps <= 64:
            raise ValueError(f"incnn.lgc: ae_steps {self.steps!r} must be "
                             "an integer in 1..64")
        if self.norm not in NORMS:
            raise ValueError(f"incnn.lgc: ae_norm {self.norm!r} must be one "
                             f"of {', '.join(map(repr, NORMS))}")

    def build(self) -> Tuple[Autoencoder, torch.optim.Optimizer]:
        """The autoencoder and its optimizer."""
        self.check()
        ae = Autoencoder(self.width, self.seed, self.code_stride, self.init)
        opt = torch.optim.SGD if self.optim == "sgd" else torch.optim.Adam
        return ae, opt(ae.parameters(), lr=self.lr)
