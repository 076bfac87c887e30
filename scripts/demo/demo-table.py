#!/usr/bin/env python3
"""Format the demo's JSON lines (scripts/demo/demo-iperf.sh) as a Markdown table."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rate = sys.argv[2] if len(sys.argv) > 2 else "?"
base = next((r for r in rows if r["label"] == "no module"), rows[0])
floor = base.get("floor_pct", 0)

print(f"iperf3 over a veth link limited to {rate} (tbf) each way (the last "
      f"rows: no limit), {base['sent_bytes'] / 1048576:.0f} MiB of "
      f"Laplace(1e-3) fp32 per run; a row fails when the server received "
      f"less than {floor:g}% of what iperf3 sent.\n")
print("| run | goodput Mbit/s | speedup | received | wire bytes | wire ratio |"
      " max abs err | received = prediction | 0 / 8 / 16 / 32-bit values (%) |"
      " row |")
print("|---|---:|---:|---:|---:|---:|---:|---|---|---|")
for r in rows:
    hist = r.get("hist")
    if hist and sum(hist):
        tot = sum(hist)
        h = " / ".join(f"{100 * x / tot:.1f}" for x in hist)
    else:
        h = "-"
    c = r["cmp"]
    same = "yes" if c.get("bytes_differ", 1) == 0 else \
        f"NO ({c.get('bytes_differ')} bytes differ)"
    if c.get("short_pieces"):
        same += f" ({c['short_pieces']} short pieces)"
    verdict = "ok" if not r["problems"] else \
        "**FAIL**: " + "; ".join(r["problems"])
    print(f"| {r['label']} | {r['goodput_mbps']:.1f} | "
          f"{r['goodput_mbps'] / base['goodput_mbps']:.2f}x | "
          f"{r['received_pct']:.1f}% | {r['wire_bytes']} | "
          f"{r['wire_ratio']:.3f} | {r['max_abs_err']:.3g} | "
          f"{same} | {h} | {verdict} |")
print(f"\nreceived: bytes iperf3's server wrote / bytes its client sent "
      f"(iperf3 -n ends the test when the last byte is written, so what is "
      f"still in the socket buffers is lost; the client runs with -w to "
      f"keep that small); a row fails below {floor:g}%. wire ratio = "
      "bytes received / bytes that left the sender's veth during the run, "
      "read after its queue drained (all headers, the control connection "
      "and retransmissions included): below 1.0 without compression. "
      "max abs err: incnn-codec roundtrip of the file with that codec. "
      "received = prediction: every byte iperf3's server wrote is part of "
      "a 4-byte aligned piece of the prediction (the file itself without "
      "compression); iperf3 -F sends file blocks out of order after "
      "partial writes, so pieces, not one run, are compared (a short piece, "
      "under 32 bytes, is looked for in the whole prediction). No rate "
      "limit: the same veth without tbf, where the emulated CPUs are the "
      "limit (segmentation, codec and checksums of both hosts on 2 vCPUs).")
cpu = [r for r in rows if r["label"].startswith("no rate limit") and
       r["tos"] != "0x00"]
raw = [r for r in rows if r["label"].startswith("no rate limit") and
       r["tos"] == "0x00"]
comp = [r for r in rows if r.get("hist") and sum(r["hist"]) and
        not r["label"].startswith("no rate limit")]
try:
    mbit = float(rate.lower().removesuffix("mbit"))
except ValueError:
    mbit = 0
for r in cpu:
    print(f"\nCPU limit, measured: with no rate limit on the link, "
          f"{r['label'].removeprefix('no rate limit, ')} moved "
          f"{r['goodput_mbps']:.1f} Mbit/s of fp32 through the module"
          + (f" (unmarked TCP: {raw[0]['goodput_mbps']:.0f} Mbit/s)"
             if raw else "") + ".", end="")
    if comp and mbit:
        g = [c["goodput_mbps"] for c in comp]
        cap = min(mbit * c["wire_ratio"] for c in comp)
        print(f" With compression the rate-limited runs moved "
              f"{min(g):.1f}–{max(g):.1f} Mbit/s, below the {cap:.0f}+ "
              f"Mbit/s their wire ratios would fit into {rate}: they are "
              f"bounded by the emulated CPUs, not by the link, like the "
              f"4-host INC+C times, so these figures depend on the host "
              f"CPU and its load (and vary from run to run).", end="")
    print()
