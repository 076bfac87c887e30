# SPDX-License-Identifier: GPL-2.0 OR MIT
"""ctypes binding of the incnn collective library (libincnn.so.0).

The public C API is userspace/collective/include/incnn/collective.h; the
structure below mirrors struct incnn_comm_config field by field (the
selftests compare its size and offsets with the C compiler's).

The library is found, in this order:
  1. the file named by INCNN_LIBRARY (an error if it does not load);
  2. the build tree: build/python/incnn -> build/rel/lib/libincnn.so.0;
  3. an installed prefix: PREFIX/lib/python3*/dist-packages/incnn ->
     PREFIX/lib/libincnn.so.0;
  4. the dynamic linker: ctypes.util.find_library("incnn"), then
     "libincnn.so.0".
Without it, importing raises ImportError saying what is missing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

SONAME = "libincnn.so.0"

# enum incnn_coll_codec_mode
CODEC_AUTO = 0
CODEC_NONE = 1
CODEC_EMULATE = 2

class Config(ctypes.Structure):
    """struct incnn_comm_config, field for field."""

    _fields_ = [
        ("master_addr", ctypes.c_char_p),
        ("master_port", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("world_size", ctypes.c_int),
        ("store_fd", ctypes.c_int),
        ("data_addr", ctypes.c_char_p),
        ("tos", ctypes.c_int),
        ("chunk_bytes", ctypes.c_size_t),
        ("timeout_ms", ctypes.c_int),
        ("init_timeout_ms", ctypes.c_int),
        ("sockbuf", ctypes.c_int),
        ("codec_mode", ctypes.c_int),        # enum incnn_coll_codec_mode
        ("codec_id", ctypes.c_uint),
        ("codec_param", ctypes.c_uint),
        ("fault", ctypes.c_int),             # enum incnn_coll_fault
        ("fault_after", ctypes.c_uint64),
        ("fault_stall_ms", ctypes.c_int),
        ("method", ctypes.c_int),            # enum incnn_coll_method
        ("thc_bits", ctypes.c_int),
        ("thc_gran", ctypes.c_int),
        ("gvq_d", ctypes.c_int),
        ("gvq_k", ctypes.c_int),
        ("gvq_warmup", ctypes.c_int),
        ("gvq_ts", ctypes.c_int),
        ("gvq_tc", ctypes.c_int),
        ("gvq_fc", ctypes.c_int),
        ("gvq_eps", ctypes.c_double),
        ("scale", ctypes.c_int),             # -1 unset, 0 off, 1 auto
        ("error_feedback", ctypes.c_int),    # -1 unset, 0, 1
    ]


class CodecParam(ctypes.Structure):
    """struct incnn_codec_param (kmod/codec/codec.h)."""

    _fields_ = [("kind", ctypes.c_uint8), ("min", ctypes.c_uint8),
                ("max", ctypes.c_uint8), ("def_", ctypes.c_uint8)]


class CodecHead(ctypes.Structure):
    """The leading fields of struct incnn_codec, up to its parameter (the
    rest, function pointers, is never read from Python)."""

    _fields_ = [("id", ctypes.c_uint8), ("name", ctypes.c_char_p),
                ("lossy", ctypes.c_bool), ("floats", ctypes.c_bool),
                ("param", CodecParam)]


def _candidates() -> list:
    here = Path(__file__).resolve().parent
    return [
        here.parent.parent / "rel" / "lib" / SONAME,      # build tree
        here.parent.parent.parent / SONAME,               # PREFIX/lib
    ]


def _load() -> ctypes.CDLL:
    env = os.environ.get("INCNN_LIBRARY")
    if env:
        try:
            return ctypes.CDLL(env)
        except OSError as e:
            raise ImportError(
                f"incnn: INCNN_LIBRARY={env} does not load ({e}); point it "
                f"at a built {SONAME} (make builds build/rel/lib/{SONAME})"
            ) from None
    tried = ["INCNN_LIBRARY (unset)"]
    for path in _candidates():
        if path.exists():
            try:
                return ctypes.CDLL(str(path))
            except OSError as e:
                tried.append(f"{path} ({e})")
        else:
            tried.append(f"{path} (no such file)")
    for name in (ctypes.util.find_library("incnn"), SONAME):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            tried.append(f"{name} (not found by the dynamic linker)")
    raise ImportError(
        f"incnn: the C library {SONAME} is missing; tried "
        + ", ".join(tried)
        + ". Build it with `make` in the incnn source tree (then use "
        "PYTHONPATH=build/python) or install it with `make install`, or "
        f"set INCNN_LIBRARY=/path/to/{SONAME}",
        name="incnn._lib",
    )


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    p, c_int, c_size = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    sigs = {
        "incnn_comm_config_init": (None, [ctypes.POINTER(Config)]),
        "incnn_comm_create": (c_int, [ctypes.POINTER(p),
                                      ctypes.POINTER(Config),
                                      ctypes.c_char_p, c_size]),
        "incnn_comm_destroy": (None, [p]),
        "incnn_comm_rank": (c_int, [p]),
        "incnn_comm_size": (c_int, [p]),
        "incnn_comm_codec": (None, [p, ctypes.POINTER(ctypes.c_uint),
                                    ctypes.POINTER(ctypes.c_uint)]),
        "incnn_comm_strerror": (ctypes.c_char_p, [p]),
        "incnn_allreduce": (c_int, [p, p, c_size]),
        "incnn_comm_barrier": (c_int, [p]),
        # the codec table and its settings' one spelling (codec_param.h)
        "incnn_codec_get": (ctypes.POINTER(CodecHead), [ctypes.c_uint]),
        "incnn_codec_find": (ctypes.POINTER(CodecHead), [ctypes.c_char_p]),
        "incnn_codec_label": (ctypes.c_char_p, [
            ctypes.c_uint, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t]),
        "incnn_codec_param_parse": (c_int, [
            ctypes.POINTER(CodecParam), ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_uint)]),
        "incnn_codec_param_range": (ctypes.c_char_p, [
            ctypes.POINTER(CodecParam), ctypes.c_char_p, c_size]),
    }
    for name, (res, args) in sigs.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                f"incnn: {lib._name} has no {name}: not the incnn library, "
                "or too old; rebuild it with `make`", name="incnn._lib"
            ) from None
        fn.restype = res
        fn.argtypes = args
    return lib


lib = _bind(_load())


# --- codecs: the library's table and parser (codec.h, codec_param.h) -----

PARAM_NONE = 0          # enum incnn_param_kind: a codec without a setting


def codec_head(codec_id: int) -> Optional[CodecHead]:
    """The library's codec table entry for @codec_id, None if unknown."""
    c = lib.incnn_codec_get(codec_id)
    return c.contents if c else None


def _codecs() -> list:
    """Every codec of the library's table, by id."""
    return [h for h in map(codec_head, range(1, 256)) if h is not None]


def _forms() -> str:
    """The codec strings State(codec=...) takes, from the library."""
    out = ['"auto"', '"none"']
    buf = ctypes.create_string_buffer(64)
    for h in _codecs():
        name = h.name.decode()
        if h.param.kind == PARAM_NONE:
            out.append(f'"{name}"')
            continue
        rng = lib.incnn_codec_param_range(ctypes.byref(h.param), buf,
                                          len(buf)).decode()
        out.append(f'"{name}:S" (S in {rng})')
    return ", ".join(out[:-1]) + " or " + out[-1]


CODEC_FORMS = _forms()


def parse_codec(spec: str) -> Tuple[int, int, int]:
    """A codec string -> (codec_mode, codec_id, codec_param).

    "auto", "none", or NAME[:SETTING] as INCNN_CODEC takes it
    ("ebq:2^-10", "ebq:10", "trunc:16", "lz4"; a bare name takes the
    codec's default), read by the library's own parser
    (incnn_codec_find, incnn_codec_param_parse). Anything else raises
    ValueError naming the forms."""
    if not isinstance(spec, str):
        raise ValueError(f"codec {spec!r}: want a string: {CODEC_FORMS}")
    s = spec.strip().lower()
    if s == "auto":
        return CODEC_AUTO, 0, 0
    if s == "none":
        return CODEC_NONE, 0, 0
    name, colon, setting = s.partition(":")
    c = lib.incnn_codec_find(name.encode()) if name else None
    if c:
        head = c.contents
        param = ctypes.c_uint(head.param.def_)
        if not colon or (setting and head.param.kind != PARAM_NONE and
                         not lib.incnn_codec_param_parse(
                             ctypes.byref(head.param), setting.encode(),
                             ctypes.byref(param))):
            return CODEC_EMULATE, head.id, param.value
    raise ValueError(f"codec {spec!r}: want one of {CODEC_FORMS}")


def codec_label(codec_id: int, param: int) -> str:
    """The inverse of parse_codec for what incnn_comm_codec() reports
    ("none", "ebq:2^-10", "trunc:16", "lz4")."""
    buf = ctypes.create_string_buffer(64)
    return lib.incnn_codec_label(codec_id, param, buf, len(buf)).decode()


def codec_lossy(codec_id: int) -> bool:
    """The codec (0: none) may change values (the library's table)."""
    head = codec_head(codec_id) if codec_id else None
    return bool(head is not None and head.lossy)


def _bind_div(lib: ctypes.CDLL) -> bool:
    """incnn_allreduce_div, in libraries that export it."""
    try:
        fn = lib.incnn_allreduce_div
    except AttributeError:
        return False
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                   ctypes.c_float]
    return True


HAVE_DIV = _bind_div(lib)


class BucketInfo(ctypes.Structure):
    """struct incnn_bucket_info (collective.h)."""

    _fields_ = [("calls", ctypes.c_uint64), ("n", ctypes.c_uint64),
                ("exp", ctypes.c_int32), ("next_exp", ctypes.c_int32),
                ("ef_bytes", ctypes.c_uint64),
                ("quantised", ctypes.c_uint64),
                ("nonzero", ctypes.c_uint64),
                ("flattened", ctypes.c_uint64),
                ("flat_streak", ctypes.c_uint32), ("flat", ctypes.c_uint32)]


class BucketStats(ctypes.Structure):
    """struct incnn_bucket_stats (collective.h)."""

    _fields_ = [("scale", ctypes.c_int32),
                ("error_feedback", ctypes.c_int32),
                ("buckets", ctypes.c_uint64), ("ef_bytes", ctypes.c_uint64),
                ("flattened", ctypes.c_uint64)]


def _bind_bucket(lib: ctypes.CDLL) -> bool:
    """The keyed calls (scale, error feedback), when exported."""
    p = ctypes.c_void_p
    sigs = {
        "incnn_allreduce_bucket": (ctypes.c_int, [
            p, p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_float]),
        "incnn_comm_bucket_info": (ctypes.c_int, [
            p, ctypes.c_uint64, ctypes.POINTER(BucketInfo)]),
        "incnn_comm_bucket_forget": (ctypes.c_int, [p, ctypes.c_uint64]),
        "incnn_comm_bucket_stats": (None, [p, ctypes.POINTER(BucketStats)]),
    }
    return _bind_all(lib, sigs)


def _bind_all(lib: ctypes.CDLL, sigs: dict) -> bool:
    """Bind every function of @sigs (name: (restype, argtypes)); False,
    binding none, when the library lacks one."""
    if any(getattr(lib, name, None) is None for name in sigs):
        return False
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return True


HAVE_BUCKET = _bind_bucket(lib)
# per-segment scale (incnn_allreduce_bucket_seg), when exported
HAVE_BUCKET_SEG = HAVE_BUCKET and _bind_all(lib, {
    "incnn_allreduce_bucket_seg": (ctypes.c_int, [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64,
        ctypes.c_float, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t]),
    "incnn_comm_bucket_exps": (ctypes.c_int, [
        ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int32),
        ctypes.c_size_t]),
})


def segments(lengths: Sequence[int]) -> Any:
    """A segment list for Comm.allreduce_bucket (a size_t array)."""
    return (ctypes.c_size_t * len(lengths))(*lengths)


class CommError(RuntimeError):
    """An error of the C library; str() is its one-line message."""

    def __init__(self, message: str, err: int = 0):
        super().__init__(message)
        self.errno = err


def _errname(ret: int) -> str:
    return errno.errorcode.get(-ret, str(ret))


class Comm:
    """One communicator (incnn_comm_create .. incnn_comm_destroy).

    Used by one thread at a time, as the C library requires."""

    def __init__(self, master_addr: str, master_port: int, rank: int,
                 world_size: int, codec: str = "auto", *,
                 store_fd: int = -1, **fields: Any):
        """@codec as parse_codec reads it; @store_fd: rank 0's listening
        socket for the store, taken over (closed) by the library even on
        an error; @fields: other fields of struct incnn_comm_config by
        name (timeout_ms, tos, method, gvq_d, ...; None: the default)."""
        names = {f[0] for f in Config._fields_}
        cfg = Config()
        lib.incnn_comm_config_init(ctypes.byref(cfg))
        try:
            mode, cid, param = parse_codec(codec)
            bad = sorted(set(fields) - names)
            if bad:
                raise TypeError(f"incnn: no config field {bad[0]!r}")
        except BaseException:
            if store_fd >= 0:
                os.close(store_fd)
            raise
        cfg.master_addr = master_addr.encode()  # the Structure keeps it
        cfg.master_port = master_port
        cfg.rank = rank
        cfg.world_size = world_size
        cfg.store_fd = store_fd
        cfg.codec_mode, cfg.codec_id, cfg.codec_param = mode, cid, param
        for name, v in fields.items():
            if v is not None:
                setattr(cfg, name, v)
        err = ctypes.create_string_buffer(512)
        handle = ctypes.c_void_p()
        ret = lib.incnn_comm_create(ctypes.byref(handle), ctypes.byref(cfg),
                                    err, len(err))
        if ret:
            raise CommError(f"incnn_comm_create: {err.value.decode()} "
                            f"({_errname(ret)})", -ret)
        self._h: Optional[ctypes.c_void_p] = handle

    def _handle(self) -> ctypes.c_void_p:
        if self._h is None:
            raise RuntimeError("incnn: the communicator is closed")
        return self._h

    @property
    def rank(self) -> int:
        return lib.incnn_comm_rank(self._handle())

    @property
    def size(self) -> int:
        return lib.incnn_comm_size(self._handle())

    def codec(self) -> Tuple[int, int]:
        cid, param = ctypes.c_uint(), ctypes.c_uint()
        lib.incnn_comm_codec(self._handle(), ctypes.byref(cid),
                             ctypes.byref(param))
        return cid.value, param.value

    def _check(self, what: str, ret: int) -> None:
        if ret:
            msg = lib.incnn_comm_strerror(self._handle()) or b""
            raise CommError(f"{what}: {msg.decode(errors='replace')} "
                            f"({_errname(ret)})", -ret)

    def allreduce(self, ptr: int, n: int) -> None:
        """In-place sum of n floats at address ptr (the GIL is released)."""
        self._check("incnn_allreduce",
                    lib.incnn_allreduce(self._handle(), ptr, n))

    def allreduce_div(self, ptr: int, n: int, divisor: float) -> None:
        """In-place sum of the n floats at ptr, each divided by @divisor
        first (bit for bit x / divisor, then the sum), the division fused
        into the ring's passes; needs HAVE_DIV."""
        self._check("incnn_allreduce_div",
                    lib.incnn_allreduce_div(self._handle(), ptr, n, divisor))

    def allreduce_bucket(self, ptr: int, n: int, key: int,
                         divisor: float = 0.0, segs: Any = None) -> None:
        """Keyed in-place sum (incnn_allreduce_bucket): scale and error
        feedback per @key, @divisor 0: no division; @segs (segments(),
        needs HAVE_BUCKET_SEG): a 2^e per segment; needs HAVE_BUCKET."""
        if segs is None:
            self._check("incnn_allreduce_bucket",
                        lib.incnn_allreduce_bucket(self._handle(), ptr, n,
                                                   key, divisor))
            return
        self._check("incnn_allreduce_bucket_seg",
                    lib.incnn_allreduce_bucket_seg(self._handle(), ptr, n,
                                                   key, divisor, segs,
                                                   len(segs)))

    def bucket_exps(self, key: int) -> Optional[List[int]]:
        """@key's segments' e of the next call, None when it has none."""
        n = lib.incnn_comm_bucket_exps(self._handle(), key, None, 0)
        if n < 0:
            return None
        exps = (ctypes.c_int32 * n)()
        lib.incnn_comm_bucket_exps(self._handle(), key, exps, n)
        return list(exps)

    def bucket_info(self, key: int) -> Optional[BucketInfo]:
        """@key's state, None when it has none."""
        info = BucketInfo()
        ret = lib.incnn_comm_bucket_info(self._handle(), key,
                                         ctypes.byref(info))
        return None if ret else info

    def bucket_forget(self, key: int) -> None:
        lib.incnn_comm_bucket_forget(self._handle(), key)

    def bucket_stats(self) -> BucketStats:
        st = BucketStats()
        lib.incnn_comm_bucket_stats(self._handle(), ctypes.byref(st))
        return st

    def barrier(self) -> None:
        self._check("incnn_comm_barrier",
                    lib.incnn_comm_barrier(self._handle()))

    def close(self) -> None:
        h, self._h = self._h, None
        if h is not None:
            lib.incnn_comm_destroy(h)


# --- the layers API and GradiVeQ (wfbp.h, collective.h), for incnn.gradiveq -

METHOD_GRADIVEQ = 3         # enum incnn_coll_method
SCHED_IDS = {"wfbp": 0, "single": 1, "fixed": 2, "mgwfbp": 3}
LAYER_SHAPE_NONE, LAYER_SHAPE_CONV, LAYER_SHAPE_FC = 0, 1, 2


class Layer(ctypes.Structure):
    """struct incnn_layer (wfbp.h)."""

    _fields_ = [("grad", ctypes.c_void_p), ("count", ctypes.c_size_t),
                ("ready", ctypes.c_double), ("shape", ctypes.c_uint),
                ("out_ch", ctypes.c_uint), ("in_ch", ctypes.c_uint),
                ("kh", ctypes.c_uint), ("kw", ctypes.c_uint)]


class LayersOpts(ctypes.Structure):
    """struct incnn_layers_opts (wfbp.h)."""

    _fields_ = [("ps", ctypes.c_bool), ("bucket_bytes", ctypes.c_uint64),
                ("have_cost", ctypes.c_bool), ("alpha", ctypes.c_double),
                ("beta", ctypes.c_double), ("no_wait", ctypes.c_bool)]


class GvqStatus(ctypes.Structure):
    """struct incnn_gvq_status (collective.h)."""

    _fields_ = [("calls", ctypes.c_uint64),
                ("compressed_calls", ctypes.c_uint64),
                ("refreshes", ctypes.c_uint64), ("fits", ctypes.c_uint64),
                ("phase", ctypes.c_int),
                ("layers_compressed", ctypes.c_uint),
                ("layers_plain", ctypes.c_uint),
                ("u_digest", ctypes.c_uint64),
                ("note", ctypes.c_char * 192),
                ("loss", ctypes.c_double), ("loss_avg", ctypes.c_double),
                ("loss_ref", ctypes.c_double)]


def _bind_layers(lib: ctypes.CDLL) -> bool:
    """incnn_allreduce_layers and the GradiVeQ status, when exported."""
    p = ctypes.c_void_p
    sigs = {
        "incnn_layers_opts_init": (None, [ctypes.POINTER(LayersOpts)]),
        "incnn_allreduce_layers": (ctypes.c_int, [
            p, ctypes.POINTER(Layer), ctypes.c_size_t, ctypes.c_int,
            ctypes.POINTER(LayersOpts), p]),
        "incnn_comm_gvq_status": (None, [p, ctypes.POINTER(GvqStatus)]),
        "incnn_comm_wire_bytes": (ctypes.c_uint64, [p]),
        "incnn_comm_method": (ctypes.c_int, [p]),
    }
    return _bind_all(lib, sigs)


HAVE_LAYERS = _bind_layers(lib)
