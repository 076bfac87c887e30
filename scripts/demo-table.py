#!/usr/bin/env python3
"""Format the demo's JSON lines (scripts/demo-vm.sh) as a Markdown table."""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rate = sys.argv[2] if len(sys.argv) > 2 else "?"
base = next((r for r in rows if r["label"] == "no module"), rows[0])

print(f"iperf3 over a veth link limited to {rate} (tbf) each way, "
      f"{base['sent_bytes'] / 1048576:.0f} MiB of Laplace(1e-3) fp32 per run.\n")
print("| run | goodput Mbit/s | speedup | wire bytes | ratio | max abs err |"
      " received = prediction | 0 / 8 / 16 / 32-bit values (%) |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    ratio = r["sent_bytes"] / r["wire_bytes"] if r["wire_bytes"] else 0
    hist = r.get("hist")
    if hist and sum(hist):
        tot = sum(hist)
        h = " / ".join(f"{100 * x / tot:.1f}" for x in hist)
    else:
        h = "-"
    c = r["cmp"]
    same = "yes" if c.get("bytes_differ", 1) == 0 else \
        f"NO ({c.get('bytes_differ')} bytes differ)"
    print(f"| {r['label']} | {r['goodput_mbps']:.1f} | "
          f"{r['goodput_mbps'] / base['goodput_mbps']:.2f}x | "
          f"{r['wire_bytes']} | {ratio:.2f} | {r['max_abs_err']:.3g} | "
          f"{same} | {h} |")
print("\nratio = bytes iperf3 sent / bytes on the sender's veth (all headers "
      "included). max abs err: incnn-codec roundtrip of the file with that "
      "codec. received = prediction: every byte iperf3's server wrote is "
      "part of a 4-byte aligned piece of the prediction (the file itself "
      "without compression); iperf3 -F sends file blocks out of order after "
      "partial writes, so pieces, not one run, are compared.")
