# SPDX-License-Identifier: GPL-2.0 OR MIT
"""incnn: in-network gradient compression, from Python.

    import incnn.torch as it          # PyTorch DDP communication hook
    python3 -m incnn.launch ...       # torchrun-compatible launcher

Importing this package does not load the C library or torch; incnn.torch
does (see incnn._lib for how libincnn.so.0 is found).
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
