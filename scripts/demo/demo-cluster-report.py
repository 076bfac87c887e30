#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The communication experiment's report (scripts/demo/demo-cluster.sh):
demo-cluster-report.py CLUSTER_JSON OUT_DIR writes OUT_DIR/cluster.md
(Markdown tables) and, per buffer size, OUT_DIR/demo-comm-SIZE.dat (a bar
chart's data: label, seconds, group, wire ratio; SIZE as 2.5MiB) and
OUT_DIR/demo-comm-SIZE.png through scripts/demo/demo-comm.gp (the names
README.md links in docs/img/),
and prints the Markdown."""
import json
import os
import subprocess
import sys


# the bar chart's groups, in its colour order (scripts/demo/demo-comm.gp)
GROUPS = ["WA", "WA+C", "INC", "INC+C"]


def size_label(b):
    return f"{b / 1048576:.1f} MiB" if b % 1048576 else f"{b // 1048576} MiB"


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    out = sys.argv[2]
    md = []
    if not rows:
        md.append("(no communication results)")
    rate = rows[0]["rate"] if rows else "?"
    md.append(f"4 hosts (network namespaces) on a bridge in the VM, every "
              f"host link limited to {rate} each way by tbf; one allreduce "
              f"of Laplace(1e-3) fp32 gradients per rank; rules set with "
              f"incctl, the library reads them (`--codec auto`).\n")
    for size in sorted({r["bytes"] for r in rows}):
        rs = [r for r in rows if r["bytes"] == size]
        wa = next((r for r in rs if r["config"] == "WA"), None)
        inc = next((r for r in rs if r["config"] == "INC"), None)
        md.append(f"**{size_label(size)} per rank**\n")
        md.append("| config | codec | time (s) | vs WA | vs INC | wire (MB) |"
                  " wire ratio | 0 / 8 / 16 / 32-bit values (%) |"
                  " replicas identical |")
        md.append("|---|---|---:|---:|---:|---:|---:|---|---|")
        dat = []
        for r in rs:
            codec = "-" if r["codec"] == "none" else f"{r['codec']}:2^-{r['k']}"
            base = wa if r["algo"] == "ps" else inc
            ratio = base["wire_bytes"] / r["wire_bytes"] if base else 0
            h = r["hist"]
            hs = " / ".join(f"{100 * x / sum(h):.1f}" for x in h) \
                if sum(h) else "-"
            vs_wa = f"{wa['time_s'] / r['time_s']:.2f}x" if wa else "-"
            vs_inc = f"{inc['time_s'] / r['time_s']:.2f}x" if inc else "-"
            md.append(f"| {r['config']} | {codec} | {r['time_s']:.2f} | "
                      f"{vs_wa} | {vs_inc} | {r['wire_bytes'] / 1e6:.2f} | "
                      f"{ratio:.2f} | {hs} | "
                      f"{'yes' if r['identical'] else 'NO'} |")
            label = "none" if r["codec"] == "none" else \
                f"{r['codec']} 2^{{-{r['k']}}}"
            group = GROUPS.index(r["config"]) if r["config"] in GROUPS \
                else 0
            dat.append(f"\"{label}\"\t{r['time_s']:.3f}\t{group}\t{ratio:.3f}")
        md.append("")
        png = f"demo-comm-{size_label(size).replace(' ', '')}"
        name = os.path.join(out, png)
        with open(name + ".dat", "w") as f:
            f.write("\n".join(dat) + "\n")
        subprocess.run(["gnuplot", "-e", f"dat='{name}.dat'; png='{name}.png';"
                        f" title='{size_label(size)} per rank'",
                        os.path.join(os.path.dirname(__file__), "demo-comm.gp")],
                       check=True)
        md.append(f"![communication time, {size_label(size)}]"
                  f"({png}.png)\n")
    md.append("vs WA, vs INC: the WA (or INC) run's time divided by this "
              "run's. wire: bytes that left the 4 hosts' interfaces (all "
              "headers). wire ratio: WA's (for WA+C) or INC's (for INC+C) "
              "wire bytes divided by this run's. Histogram: Table III of "
              "the paper, from the hosts' `incctl stats`.\n")
    with open(os.path.join(out, "cluster.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


main()
