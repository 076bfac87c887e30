#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per float of the AVX2 codecs by phase, from the callgrind
dumps of scripts/bench/bench-callgrind.sh (run it first).

Each source line that callgrind counts (inlined code keeps its own file
and line) goes to the phase of the function it lies in; inside the
kernels of 16 values, by what the line does:
  classify  the vector math that gives the classes, the payload lanes and
            the tag word (encode: loads, q, compares, packs, movemasks)
  pack      table loads, pshufb, payload and tag stores, lengths
  rebuild   decode: payload -> fp32 (sign, int -> float, product, store)
  flags     zebq: the flag bytes, the tag-area size, the zero groups
  loop      loop control, per-call setup, padded tails, dispatch, libc
  scalar    the scalar incnn_*_rest() loops that finish a buffer

  scripts/bench/callgrind-phases.py [CODEC/k=K/DIST/SIZE ...]
default: inceptionn, ebq and zebq at k=10 on Laplace(1e-3), 1448 and
65536 bytes.
"""
import glob
import os
import re
import subprocess
import sys

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("INCNN_BUILD", os.path.join(SRC, "build"))
OUT = os.path.join(BUILD, "callgrind")
PHASES = ["classify", "pack", "rebuild", "flags", "loop", "scalar"]

FUNC = {
    "classify": """avx2_ebq_q avx2_below avx2_words avx2_bytes16 avx2_load8
        avx2_load_part avx2_ebq_enc_lanes avx2_inc_enc_lanes
        avx2_inc_classes avx2_tags16 avx2_tags8 avx2_tag_lane avx2_nlt
        avx2_count avx2_mask8 avx2_srlv avx2_srl avx2_set1""",
    "pack": """avx2_pack16 avx2_pack_tab avx2_put64 avx2_put_hi64
        avx2_get64 avx2_unpack_tab avx2_unpack_hi avx2_store16
        avx2_load16 put_unaligned_le16 put_unaligned_le32
        get_unaligned_le16 get_unaligned_le32 ebq_len16
        inc_group_len""",
    "rebuild": "avx2_sx8 avx2_dec_lanes avx2_store8 avx2_blendv avx2_pow2",
    "flags": """zebq_flag_byte zebq_flags_avx2 zebq_tags_nz zebq_dec_zeros
        zebq_whole incnn_zebq_start incnn_zebq_tag_bytes zebq_popcount
        hweight32 hweight8 zebq_tag_at incnn_zebq_decode_check
        zebq_enc_block zebq_enc_pairs""",
}
PHASE_OF = {f: p for p, fs in FUNC.items() for f in fs.split()}
SCALAR_FILES = ("ebq.c", "zebq.c", "inceptionn.c", "ebq_value.h", "fp32.h")
# lines of the kernels and loops, by what they do
LINE_RULES = [
    ("rebuild", r"convertvector|psignb|avx2_sx8|\* s[127]\b|dec_lanes"),
    ("pack", r"put_|pack16|pack_tab|unpack|popcount|_len\b|len16|get_unaligned|incnn_simd_len|memcpy\(out|store8\(out"),
    ("classify", r"load8|ebq_q|below|words|bytes16|cvtt|enc_lanes|tags16|> kc|packssdw"),
]
KERNELS = {"ebq_enc16", "ebq_dec16", "inc_enc16_bytes", "ebq_dec8",
           "inc_dec8", "inc_enc8", "avx2_unpack16"}


def functions(path, cache={}):
    """line number -> enclosing function name, for a C file"""
    if path in cache:
        return cache[path]
    names, cur, depth = {}, None, 0
    try:
        lines = open(path).read().split("\n")
    except OSError:
        lines = []
    for n, line in enumerate(lines, 1):
        m = re.match(r"^(?:static\s+)?(?:__always_inline\s+|inline\s+)*"
                     r"[A-Za-z_][\w\s\*]*?\b(\w+)\(", line)
        if depth == 0 and m and not line.rstrip().endswith(";"):
            cur = m.group(1)
        depth += line.count("{") - line.count("}")
        names[n] = cur if (depth > 0 or line.startswith("}")) else None
        if depth == 0 and line.startswith("}"):
            cur = None
    cache[path] = (names, lines)
    return cache[path]


def phase(path, n):
    base = os.path.basename(path)
    names, lines = functions(path)
    fn = names.get(n)
    text = lines[n - 1] if 0 < n <= len(lines) else ""
    if fn in PHASE_OF and fn not in KERNELS:
        return PHASE_OF[fn]
    if fn == "avx2_unpack16":
        return "rebuild" if re.search(r"psignb|sx8", text) else "pack"
    if base in SCALAR_FILES:
        return "flags" if fn in PHASE_OF else "scalar"
    for p, rx in LINE_RULES:
        if re.search(rx, text):
            return p
    return "loop"


def split(dump, enc):
    out = subprocess.run(["callgrind_annotate", "--threshold=100",
                          "--auto=yes", "--show-percs=no", dump],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    sums = dict.fromkeys(PHASES, 0)
    path, n = None, 0
    for line in out.split("\n"):
        m = re.match(r"^\s*([\d,]+)\s+\(?[\d.%]*\)?\s*PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
        m = re.match(r"^-- Auto-annotated source: (.*)$", line)
        if m:
            path = m.group(1).strip()
            continue
        m = re.match(r"^-- line (\d+) -+$", line)
        if m:
            n = int(m.group(1))
            continue
        if "events annotated" in line or "unknown (line 0)" in line:
            path = None
        if path is None or line.startswith("--"):
            continue
        m = re.match(r"^\s*([\d,]+|\.)\s?(.*)$", line)
        if not m or line.strip() == "" or line.startswith("Ir") or \
                re.match(r"^\s*[\d,]+\s+=>", line):
            continue
        if m.group(1) != ".":
            p = phase(path, n)
            # the encoders' blends and constants are classification
            if enc and p == "rebuild":
                p = "classify"
            sums[p] += int(m.group(1).replace(",", ""))
        n += 1
    sums["loop"] += total - sum(sums.values())
    return total, sums


def main():
    rows = sys.argv[1:] or ["%s/k=10/laplace:0.001/%s" % (c, s)
                            for c in ("ebq", "inceptionn", "zebq")
                            for s in (65536, 1448)]
    print("| codec, dir | size | " + " | ".join(PHASES) + " | total |")
    print("|---|---|" + "---:|" * (len(PHASES) + 1))
    for r in rows:
        codec, k, dist, size = r.split("/")
        for d in ("enc", "dec"):
            name = "%s/avx2/%s/%s/%s/%s/" % (codec, k, dist, size, d)
            dumps = [f for f in glob.glob(OUT + "/cg.out.*")
                     if "Client Request: " + name in
                     open(f, errors="replace").read(4096)]
            if not dumps:
                sys.exit("callgrind-phases.py: no dump for %s: run "
                         "scripts/bench/bench-callgrind.sh" % name)
            head = open(dumps[0], errors="replace").read(4096)
            floats = int(re.search(r"floats=(\d+)", head).group(1))
            total, sums = split(dumps[0], d == "enc")
            print("| %s %s | %s | %s | **%.2f** |" % (
                codec, d, size,
                " | ".join("%.2f" % (sums[p] / floats) if sums[p] else "-"
                           for p in PHASES), total / floats))


if __name__ == "__main__":
    main()
