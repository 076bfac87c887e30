# SPDX-License-Identifier: GPL-2.0 OR MIT
"""incnn for PyTorch DistributedDataParallel: the public names, one import.

    import incnn.torch as it
    state = it.State(codec="auto")
    ddp.register_comm_hook(state, it.allreduce_hook)
    ...
    it.allreduce(tensor, state)       # in-place sum, for custom loops
    state.close()                     # else at interpreter exit

The hooks and their states, each in its own module (every module imports
only the ones below it; importing changes nothing in torch):
  incnn.allreduce  State, allreduce_hook, allreduce: the ring allreduce,
                   with the module's codec (or its emulation)
  incnn.lgc        LGCState, lgc_hook: learned gradient compression
  incnn.gradiveq   GradiVeQState, gradiveq_hook: GradiVeQ in the library
  incnn._base      what the states share: the rendezvous through the
                   process group's store, the worker thread, closing at
                   exit
See docs/pytorch.md.
"""

from ._lib import CODEC_FORMS, CommError
from .allreduce import State, allreduce, allreduce_hook
from .autoencoder import AEOptions
from .gradiveq import GradiVeQState, gradiveq_hook
from .lgc import LGCOptions, LGCState, lgc_hook

__all__ = ["State", "allreduce_hook", "allreduce", "CommError",
           "CODEC_FORMS", "LGCState", "LGCOptions", "AEOptions", "lgc_hook",
           "GradiVeQState", "gradiveq_hook"]
