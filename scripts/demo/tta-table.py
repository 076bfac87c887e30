#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Time to accuracy as Markdown: make demo's tta.json (and, when given, its
tta-curves.json) as one table and the goals of issue 19 checked on it.

    python3 scripts/demo/tta-table.py TTA_JSON [CURVES_JSON]

TTA_JSON: a list of objects with exactly the keys model, config, where
("host" or "vm"), payload_ratio, wire_bytes_per_iter, target_accuracy,
final_accuracy (both %), time_to_target_s (null: never reached), as
scripts/demo/demo-torch.py writes it. CURVES_JSON (optional): the same
rows' steps_to_target and bytes_to_target. Prints to standard output;
bad input: one line on standard error and exit status 1.

"vs PyTorch" is the time to the target of the fastest of PyTorch's own
hooks (default, fp16, powersgd-r1, powersgd-r4) on the same model and
place over the row's. Goals (issue 19): host, per model, an incnn
configuration (config starting with "incnn") ends within HOST_PP of the
default's final accuracy with at least HOST_RATIO x fewer payload bytes
per iteration; vm, per model, incnn's fastest to the target reaches it
at least VM_SPEEDUP x sooner than the fastest of PyTorch's hooks.
"""

import json
import sys
from typing import Any, Dict, List, Optional, Tuple

KEYS = {"model", "config", "where", "payload_ratio", "wire_bytes_per_iter",
        "target_accuracy", "final_accuracy", "time_to_target_s"}
PYTORCH = ("default", "fp16", "powersgd-r1", "powersgd-r4")
HOST_PP = 0.5
HOST_RATIO = 40.0
VM_SPEEDUP = 1.5

Row = Dict[str, Any]


def load(path: str) -> List[Row]:
    with open(path) as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        raise ValueError(f"{path}: not a JSON list")
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or set(r) != KEYS:
            got = sorted(r) if isinstance(r, dict) else type(r).__name__
            raise ValueError(f"{path}: row {i}: keys {got}, want "
                             f"{sorted(KEYS)}")
        if r["where"] not in ("host", "vm"):
            raise ValueError(f"{path}: row {i}: where {r['where']!r}")
    return rows


def num(v: Optional[float], fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def fastest(rows: List[Row], model: str, where: str, incnn: bool
            ) -> Optional[Row]:
    """The row of @model at @where reaching the target soonest, among
    incnn's configurations or PyTorch's hooks."""
    cand = [r for r in rows if r["model"] == model and r["where"] == where
            and r["time_to_target_s"] is not None and
            (r["config"].startswith("incnn") if incnn
             else r["config"] in PYTORCH)]
    return min(cand, key=lambda r: r["time_to_target_s"], default=None)


def table(rows: List[Row], extra: Dict[Tuple[str, str, str], Row]
          ) -> List[str]:
    out = ["| model | configuration | where | payload ratio | wire MB/iter "
           "| target % | final % | time to target (s) | vs PyTorch "
           "| steps to target | MB to target |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        best = fastest(rows, r["model"], r["where"], False)
        t = r["time_to_target_s"]
        vs = "-" if best is None or t is None or t <= 0 else \
            f"{best['time_to_target_s'] / t:.2f}x"
        e = extra.get((r["model"], r["config"], r["where"]), {})
        mb = e.get("bytes_to_target")
        wire = r["wire_bytes_per_iter"]
        out.append(
            f"| {r['model']} | {r['config']} | {r['where']} | "
            f"{num(r['payload_ratio'], '.2f')} | "
            f"{num(None if wire is None else wire / 1e6, '.3f')} | "
            f"{num(r['target_accuracy'], '.2f')} | "
            f"{num(r['final_accuracy'], '.2f')} | "
            f"{'not reached' if t is None else format(t, '.1f')} | {vs} | "
            f"{num(e.get('steps_to_target'), 'd')} | "
            f"{num(None if mb is None else mb / 1e6, '.2f')} |")
    return out


def host_goal(rows: List[Row], model: str) -> str:
    host = [r for r in rows if r["model"] == model and r["where"] == "host"]
    ref = next((r for r in host if r["config"] == "default"), None)
    if ref is None or ref["final_accuracy"] is None:
        return f"- host, {model}: no default row"
    ok = [r for r in host if r["config"].startswith("incnn") and
          r["final_accuracy"] is not None and r["payload_ratio"] is not None
          and r["final_accuracy"] >= ref["final_accuracy"] - HOST_PP - 1e-9]
    good = [r for r in ok if r["payload_ratio"] >= HOST_RATIO]
    if good:
        r = max(good, key=lambda r: r["payload_ratio"])
        return (f"- host, {model}: **met** by {r['config']}: "
                f"{r['payload_ratio']:.2f}x fewer payload bytes, "
                f"{r['final_accuracy']:.2f} % against the default's "
                f"{ref['final_accuracy']:.2f} %")
    if not ok:
        return (f"- host, {model}: **missed**: no incnn configuration "
                f"within {HOST_PP} pp of the default's "
                f"{ref['final_accuracy']:.2f} %")
    r = max(ok, key=lambda r: r["payload_ratio"])
    return (f"- host, {model}: **missed**: within {HOST_PP} pp of the "
            f"default's {ref['final_accuracy']:.2f} %, the most compressed "
            f"incnn configuration is {r['config']} at "
            f"{r['payload_ratio']:.2f}x (goal {HOST_RATIO:g}x)")


def vm_goal(rows: List[Row], model: str) -> str:
    inc = fastest(rows, model, "vm", True)
    pt = fastest(rows, model, "vm", False)
    if inc is None or pt is None:
        who = "incnn's configurations" if inc is None else "PyTorch's hooks"
        return f"- vm, {model}: none of {who} reached the target"
    s = pt["time_to_target_s"] / inc["time_to_target_s"]
    return (f"- vm, {model}: **{'met' if s >= VM_SPEEDUP else 'missed'}**: "
            f"{inc['config']} {inc['time_to_target_s']:.1f} s against "
            f"{pt['config']} {pt['time_to_target_s']:.1f} s, {s:.2f}x "
            f"(goal {VM_SPEEDUP:g}x)")


def render(rows: List[Row], curves: List[Row]) -> List[str]:
    extra = {(c["model"], c["config"], c["where"]): c for c in curves}
    models = list(dict.fromkeys(r["model"] for r in rows))
    lines = table(rows, extra)
    lines += ["", f"Goals (issue 19): host, an incnn configuration within "
              f"{HOST_PP} pp of the default's final accuracy with at least "
              f"{HOST_RATIO:g}x fewer payload bytes per iteration; vm, "
              f"incnn's fastest to the target at least {VM_SPEEDUP:g}x "
              "sooner than the fastest of PyTorch's hooks:", ""]
    lines += [host_goal(rows, m) for m in models]
    lines += [vm_goal(rows, m) for m in models
              if any(r["model"] == m and r["where"] == "vm" for r in rows)]
    return lines


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("usage: tta-table.py TTA_JSON [CURVES_JSON]", file=sys.stderr)
        return 2
    try:
        rows = load(sys.argv[1])
        curves: List[Row] = []
        if len(sys.argv) == 3:
            with open(sys.argv[2]) as f:
                curves = json.load(f)
        print("\n".join(render(rows, curves)))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"tta-table: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
