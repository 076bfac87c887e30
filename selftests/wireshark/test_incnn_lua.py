#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Host test of the Wireshark dissector (contrib/wireshark/incnn.lua) on
a pcap written here, byte by byte, as docs/wire-format.md defines the
options and the frame: tshark must decode every field to the exact value.
(selftests/net/wireshark.sh runs it on a capture of the real module.)
KTAP output with a "# Totals:" line.

    /usr/bin/python3 selftests/wireshark/test_incnn_lua.py

Stdlib and tshark only.
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import ktap  # noqa: E402  (selftests/ktap.py)

LUA = os.path.join(HERE, "..", "..", "contrib", "wireshark", "incnn.lua")

ISN_A, ISN_B = 1000, 5000

CAP = struct.pack(">BBHBBH", 253, 8, 0x1C4E, 0x02, 0, 0x001E)
FOPT = struct.pack(">BBH", 253, 4, 0x1C4F)
NOP2 = b"\x01\x01"



def frame(codec: int, param: int, dscp: int, orig: int, head: bytes,
          body: bytes, tail: bytes) -> bytes:
    hdr = struct.pack(">BBBBHH", 0x10, codec, param, dscp << 2, orig, len(head))
    return hdr + head + body + tail


def packet(src: int, seq: int, ack: int, flags: int, opts: bytes,
           payload: bytes) -> bytes:
    """Ethernet, IPv4 and TCP around @payload (checksums left 0: tshark
    does not verify them by default)."""
    sport, dport = (40000, 5201) if src == 1 else (5201, 40000)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack,
                      (20 + len(opts)) // 4 << 4, flags, 65535, 0, 0) + opts
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0x2C, 20 + len(tcp) + len(payload),
                     1, 0x4000, 64, 6, 0,
                     bytes([10, 66, 0, src]), bytes([10, 66, 0, 3 - src]))
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
    return eth + ip + tcp + payload


# the capture: handshake with offers, a framed ebq segment (head 3 bytes,
# tail 1), a raw segment, a framed lz4 segment, a framed segment of an
# unknown version, a malformed frame (head_len > orig_len), frames
# of trunc, zebq, an unknown codec and a parameter ebq does not take,
# and a version-2 frame (a superframe restoring two segments)
EBQ = frame(2, 10, 10, 1448, b"abc", bytes(range(100)), b"z")
LZ4 = frame(4, 0, 10, 1000, b"", bytes(200), b"")
V3 = b"\x30" + EBQ[1:]
SUPER = b"\x20" + frame(2, 10, 10, 2896, b"", bytes(100), b"")[1:]
BAD = frame(2, 10, 10, 8, b"", bytes(20), b"")[:6] + b"\x00\x09" + bytes(20)
PACKETS = [
    packet(1, ISN_A, 0, 0x02, NOP2 + NOP2 + CAP, b""),
    packet(2, ISN_B, ISN_A + 1, 0x12, CAP, b""),
    packet(1, ISN_A + 1, ISN_B + 1, 0x10, b"", b""),
    packet(1, ISN_A + 1, ISN_B + 1, 0x18, FOPT, EBQ),
    packet(1, ISN_A + 1449, ISN_B + 1, 0x18, b"", bytes(100)),
    packet(1, ISN_A + 1549, ISN_B + 1, 0x18, NOP2 + NOP2 + FOPT, LZ4),
    packet(1, ISN_A + 2549, ISN_B + 1, 0x18, FOPT, V3),
    packet(1, ISN_A + 3997, ISN_B + 1, 0x18, FOPT, BAD),
] + [packet(1, ISN_A + 4005 + 400 * i, ISN_B + 1, 0x18, FOPT,
            frame(codec, param, 10, 400, b"", bytes(20), b""))
     for i, (codec, param) in enumerate([(3, 16), (5, 8), (9, 3), (2, 31)])] + [
    packet(1, ISN_A + 5605, ISN_B + 1, 0x18, FOPT, SUPER),
]

_cache: Dict[str, List[List[str]]] = {}


def tshark(fields: List[str], dfilter: str = "incnn") -> List[List[str]]:
    """One row per packet that matches @dfilter, the values of @fields."""
    assert shutil.which("tshark"), "tshark is not installed (scripts/check/deps.sh vm)"
    key = " ".join(fields) + "|" + dfilter
    if key in _cache:
        return _cache[key]
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "incnn.pcap")
        with open(pcap, "wb") as out:
            out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
            for n, pkt in enumerate(PACKETS):
                out.write(struct.pack("<IIII", 1700000000, n, len(pkt), len(pkt)))
                out.write(pkt)
        cmd = ["tshark", "-n", "-X", "lua_script:" + LUA, "-r", pcap,
               "-Y", dfilter, "-T", "fields", "-E", "occurrence=a",
               "-E", "aggregator=|"]
        for fld in fields:
            cmd += ["-e", fld]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False,
                             env={**os.environ, "HOME": d})
        assert res.returncode == 0, res.stderr
        rows = [ln.split("\t") for ln in res.stdout.splitlines()]
    _cache[key] = rows
    return rows


FIELDS = ["frame.number", "incnn.cap.versions", "incnn.cap.reserved",
          "incnn.cap.codecs", "incnn.cap.codec", "incnn.version", "incnn.flags",
          "incnn.codec", "incnn.param", "incnn.setting", "incnn.dscp", "incnn.rsv",
          "incnn.orig_len", "incnn.head_len", "incnn.head", "incnn.body_len",
          "incnn.floats", "incnn.tail", "incnn.tail_len", "incnn.stream.seq",
          "incnn.stream.nxtseq", "incnn.stream.float_seq", "incnn.ratio",
          "_ws.expert.message"]


def fields(num: int, *names: str) -> List[str]:
    """The values of @names in packet @num (one tshark run for all)."""
    rows = {r[0]: r for r in tshark(FIELDS, "frame")}
    row = rows[str(num)]
    return [row[FIELDS.index(n)] for n in names]


@ktap.test("capability options of SYN and SYN-ACK")
def t_cap() -> None:
    names = ("incnn.cap.versions", "incnn.cap.reserved", "incnn.cap.codecs",
             "incnn.cap.codec")
    want = ["0x02", "0x00", "0x001e", "inceptionn|ebq|trunc|lz4"]
    assert fields(1, *names) == want, fields(1, *names)
    assert fields(2, *names) == want, fields(2, *names)


@ktap.test("frame option and header of an ebq frame")
def t_header() -> None:
    got = fields(4, "incnn.version", "incnn.flags", "incnn.codec", "incnn.param",
                 "incnn.setting", "incnn.dscp", "incnn.rsv", "incnn.orig_len",
                 "incnn.head_len")
    assert got == ["1", "0x00", "2", "10", "ebq:2^-10", "10", "0x00", "1448", "3"], got


@ktap.test("the codec setting as incnn_codec_label() spells it")
def t_setting() -> None:
    got = [fields(n, "incnn.setting")[0] for n in (4, 6, 9, 10, 11, 12)]
    assert got == ["ebq:2^-10", "lz4", "trunc:16", "zebq:2^-8", "codec 9 param 3",
                   "ebq param 31"], got


@ktap.test("head, body and tail of an ebq frame")
def t_parts() -> None:
    got = fields(4, "incnn.head", "incnn.body_len", "incnn.floats", "incnn.tail",
                 "incnn.tail_len", "incnn.ratio")
    # ratio: 1448 / (8 + 3 + 100 + 1 bytes of frame + 4 of option)
    assert got[:5] == ["616263", "100", "361", "7a", "1"], got
    assert abs(float(got[5]) - 1448 / 116) < 1e-4, got


@ktap.test("where the frame sits in the stream (relative seq)")
def t_stream() -> None:
    names = ("incnn.stream.seq", "incnn.stream.nxtseq", "incnn.stream.float_seq")
    assert fields(4, *names) == ["1", "1449", "4"], fields(4, *names)
    assert fields(6, *names) == ["1549", "2549", "1549"], fields(6, *names)


@ktap.test("the frame holding stream byte 2000, by display filter")
def t_byte_n() -> None:
    rows = tshark(["frame.number", "incnn.setting"],
                  "incnn.stream.seq <= 2000 && incnn.stream.nxtseq > 2000")
    assert rows == [["6", "lz4"]], rows


@ktap.test("lz4 frame: no tail, no float count")
def t_lz4() -> None:
    got = fields(6, "incnn.codec", "incnn.body_len", "incnn.tail_len", "incnn.floats")
    assert got == ["4", "200", "0", ""], got


@ktap.test("raw segments and the bare ACK are not incnn")
def t_raw() -> None:
    got = [fields(n, "incnn.version", "incnn.cap.versions") for n in (3, 5)]
    assert got == [["", ""], ["", ""]], got


@ktap.test("unknown version and malformed frames flagged")
def t_expert() -> None:
    v, msg = fields(7, "incnn.version", "_ws.expert.message")
    assert v == "3" and "frame version 3: only versions 1 and 2 are dissected" in msg.split("|"), msg
    v, msg = fields(8, "incnn.version", "_ws.expert.message")
    assert v == "1" and "lengths: frame 28, orig_len 8, head_len 9, tail 0" in msg.split("|"), msg
    assert fields(8, "incnn.body_len") == [""], fields(8, "incnn.body_len")


@ktap.test("a version-2 frame (superframe): header, floats, stream range")
def t_superframe() -> None:
    got = fields(13, "incnn.version", "incnn.setting", "incnn.orig_len",
                 "incnn.body_len", "incnn.floats", "incnn.stream.seq",
                 "incnn.stream.nxtseq", "_ws.expert.message")
    # the dissector flags nothing (TCP's own analysis may: the wire
    # packets before it are shorter than the stream ranges they restore)
    assert got[:7] == ["2", "ebq:2^-10", "2896", "100", "724", "5605", "8501"], got
    assert not any(m.startswith(("frame version", "lengths")) for m in got[7].split("|")), got


if __name__ == "__main__":
    sys.exit(ktap.run())
