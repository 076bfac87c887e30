#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# stats.sh - the counters after one clean transfer (a 37-byte unmarked
# preamble, then marked floats), read as JSON (incctl -j stats, -j -p
# flows) and checked against what was sent: the sender's and receiver's
# counters agree, the compression ratio is the roundtrip's, the Table III
# size-class histogram has exactly the roundtrip's counts (one count per
# float sent), and the flow is anchored at 37 with peer-rx.

. "$(dirname "$0")/lib.sh"

ktap_header "incctl -j stats / flows against known counters"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
ip netns exec "$NS_B" sh -c 'echo 1 >/sys/class/net/vb/queues/rx-0/rps_cpus'
[ -x "$PYTHON" ] || { skip "JSON checks" "no $PYTHON"; ktap_finish; exit 0; }

# A clean run (no retransmission) lets the histogram be compared exactly.
# veth queues each packet on the transmitting CPU's backlog, and TCP may
# transmit from either CPU (process context, ACK or TSQ softirq), so the
# receiver sees reordering and the sender retransmits spuriously: steer
# the receiver's packets to one CPU (RPS, above; the deep backlog: lib.sh).
# the closed flow stays listed until the checks below read it (the default
# close-timeout, 10 s, passed before that on the debug kernel)
incctl "$NS_A" set close-timeout $((60 * SLOW)) ||
	fail "incctl set close-timeout"
PRE=37
N=125000
gen_floats "$TMP/f.bin" $N 91 1e-1
gen_preamble "$TMP/pre.bin" $PRE
cat "$TMP/pre.bin" "$TMP/f.bin" >"$TMP/in.bin"
predict "$TMP/want" "$TMP/in.bin" $PRE inceptionn --bound 2^-10
roundtrip_json "$TMP/f.bin" inceptionn --bound 2^-10 >"$TMP/rt.json"

if xfer s "$TMP/in.bin" -T 0x28 -m after -P $PRE &&
	st=$(same "$TMP/want" "$TMP/s.out"); then
	ok "transfer: bytes as predicted"
else
	fail "transfer: bytes as predicted" "${st:-transfer failed}"
fi
retrans=$(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
kstats "$NS_A" >"$TMP/a.json"
kstats "$NS_B" >"$TMP/b.json"
"$INCCTL" -n "$NS_A" -j -p flows >"$TMP/flows.json"

# one python run checks everything and prints KTAP lines itself
"$PYTHON" - "$TMP/a.json" "$TMP/b.json" "$TMP/flows.json" "$TMP/rt.json" \
	"$N" "$PRE" "${retrans:-0}" "$KT_N" >"$TMP/py.tap" <<'EOF'
import json, sys

a, b, flows, rt = (json.load(open(p)) for p in sys.argv[1:5])
n, pre, retrans, num = (int(x) for x in sys.argv[5:9])
sa, sb = a["stats"], b["stats"]
failed = 0


def check(cond, desc, *detail):
    global num, failed
    num += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", num, desc))
    if not cond:
        failed += 1
        for d in detail:
            print("#   " + str(d))


def codec(doc, name):
    return [c for c in doc["codec_stats"] if c["codec"] == name][0]


ci = codec(a, "inceptionn")
hist = [ci["hist_%d" % k] for k in (0, 8, 16, 32)]
rth = [rt["hist"][k] for k in ("0", "8", "16", "32")]
check(isinstance(sa["tx_framed"], int) and sa["tx_framed"] >= 1,
      "tx_framed %s >= 1" % sa["tx_framed"])
check(sa["tx_bytes"] == n * 4 or retrans > 0,
      "tx_bytes %d = %d marked payload bytes (retransmissions: %d)"
      % (sa["tx_bytes"], n * 4, retrans))
raw = sum(v for k, v in sa.items() if k.startswith("tx_raw_")) + sa["tx_errors"]
check(sa["tx_segs"] == sa["tx_framed"] + raw,
      "tx_segs %d = tx_framed %d + raw %d" % (sa["tx_segs"], sa["tx_framed"], raw))
check(sa["tx_raw_not_smaller"] == 0 and raw == 0,
      "every marked segment framed (no raw reason counted)", sa)
ratio = sa["tx_bytes_orig"] / sa["tx_bytes_wire"]
check(abs(ratio - rt["ratio"]) / rt["ratio"] < 0.05,
      "tx_bytes_orig/tx_bytes_wire %.3f within 5%% of the roundtrip ratio %.3f"
      % (ratio, rt["ratio"]))
check(abs(a["tx_ratio"] - ratio) < 0.01, "tx_ratio %s = orig/wire" % a["tx_ratio"])
check(a["tx_bytes_saved"] == sa["tx_bytes_orig"] - sa["tx_bytes_wire"],
      "tx_bytes_saved = orig - wire")
check(sum(hist) * 4 == sa["tx_bytes_orig"],
      "histogram: %d values = tx_bytes_orig / 4 (the grid is aligned: no raw heads or tails)"
      % sum(hist))
if retrans == 0:
    check(hist == rth and sum(hist) == n,
          "histogram %s = roundtrip's %s, sums to the %d floats sent" % (hist, rth, n))
    check(sb["rx_frames"] == sa["tx_framed"] and
          sb["rx_bytes_wire"] == sa["tx_bytes_wire"] and
          sb["rx_bytes_orig"] == sa["tx_bytes_orig"],
          "receiver: rx_frames/bytes_wire/bytes_orig = sender's framed/wire/orig",
          sa, sb)
else:
    check(sum(hist) >= n, "histogram sums to >= %d floats (%d retransmissions)" % (n, retrans))
    check(sb["rx_frames"] <= sa["tx_framed"], "receiver: rx_frames <= sender's tx_framed")
check(ci["frames"] == sa["tx_framed"] and ci["bytes_in"] == sa["tx_bytes_orig"] and
      ci["bytes_out"] == sa["tx_bytes_wire"],
      "codec_stats inceptionn: frames/bytes_in/bytes_out = tx_framed/orig/wire", ci)
pct = [ci["hist_%d_pct" % k] for k in (0, 8, 16, 32)]
check(abs(sum(pct) - 100) < 0.01, "histogram percentages sum to 100: %s" % pct)
others = [c for c in a["codec_stats"] if c["codec"] != "inceptionn"]
check(all(c["frames"] == 0 for c in others), "other codecs: no frames")
check(b["rx_dropped"] == 0 and sb["rx_drop_csum"] == 0, "receiver: nothing dropped")
check(sa["flows_created"] == 1, "sender: flows_created 1 (%s)" % sa["flows_created"])
mine = [f for f in flows if f["dport"] != 0 and "anchored" in f["flags"]]
check(len(mine) == 1, "flows: one anchored flow", flows)
if mine:
    f = mine[0]
    check(f["anchor"] == pre and "peer_rx" in f["flags"] and f["codec"] == "inceptionn"
          and f["param"] == 10 and f["dscp"] == 10,
          "flow: anchor %d, peer_rx, dscp 10, inceptionn k=10" % pre, f)
    check(f["bytes_orig"] == sa["tx_bytes_orig"] and f["bytes_wire"] == sa["tx_bytes_wire"],
          "flow: bytes_orig/bytes_wire = the namespace's counters", f)
print("#NUM %d %d" % (num, failed))
EOF
prc=$?
grep -v '^#NUM' "$TMP/py.tap"
read -r _ num nfail < <(grep '^#NUM' "$TMP/py.tap")
if [ $prc != 0 ] || [ -z "${num:-}" ]; then
	fail "JSON checks ran" "python exit $prc"
else
	KT_PASS=$((KT_PASS + num - KT_N - nfail))
	KT_FAIL=$((KT_FAIL + nfail))
	KT_N=$num
fi

ktap_finish
