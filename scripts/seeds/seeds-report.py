#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""make seeds' report: RESDIR/results.json, results.md and the plots' data.

    seeds-report.py RESDIR [--epochs E] [--vm-iters K] [--rate R]
        [--torch-steps S] [--compare TRAIN_COMPARE_SH]

Reads what scripts/seeds/seeds.sh left in RESDIR:
  data.txt               the C trainer's data (a path, or "synth")
  c/host-M-B.log         incnn-train's log per C row (method M, buckets B),
  c/host-M-B.log.why     or why the row did not run
  vm/vm.jsonl            the VM rows (scripts/seeds/seeds-vm.sh)
  vm/vm-M-B.log          rank 0's log of each VM row
  torch/torch.jsonl      the PyTorch rows (scripts/seeds/seeds-torch.py)
Writes results.json (a list: one object per job, method and buckets),
results.md, seeds-acc.dat and seeds-time.dat (scripts/seeds/seeds.gp).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from typing import Any, Dict, List, Optional, Tuple

C_METHODS = ["none", "inceptionn", "ebq", "thc", "thc-wa", "gradiveq"]
BUCKETS = ["single", "mgwfbp"]
TORCH_METHODS = ["pytorch-default", "none", "inceptionn", "ebq", "thc",
                 "thc-wa", "gradiveq", "lgc"]
RANKS = 4       # make seeds' C trainer (-n 4)
BOUND = "2^-10"
LABEL = {"none": "none (fp32)", "inceptionn": f"inceptionn {BOUND}",
         "ebq": f"ebq {BOUND}", "thc": "THC (ring)",
         "thc-wa": "THC (worker-aggregator)", "gradiveq": "GradiVeQ",
         "lgc": "LGC", "pytorch-default": "PyTorch default allreduce"}

# paper, short claim (table), full claim (results.json)
INCEPTIONN = (
    "INCEPTIONN (MICRO'18)",
    "5.5-11.6x at 2^-10; 2.2-3.1x faster training than WA",
    "gradients compressed 5.5-11.6x at error bound 2^-10 (up to ~15x at "
    "2^-6), HDC among its 4 DNNs; with its aggregator-free ring, 2.2-3.1x "
    "faster training than the worker-aggregator system at the same "
    "accuracy")
PAPERS: Dict[str, Tuple[str, str, str]] = {
    "none": ("-", "baseline", "baseline: fp32 ring allreduce"),
    "pytorch-default": ("-", "baseline", "baseline: PyTorch DDP's gloo "
                        "allreduce"),
    "inceptionn": INCEPTIONN,
    "ebq": (INCEPTIONN[0], "as inceptionn (ebq: incnn's variant)",
            "ebq is incnn's variant of INCEPTIONN's error-bounded codec; "
            "the paper's claim is for its own codec: " + INCEPTIONN[2]),
    "thc": ("THC (NSDI'24)", "8x up, 4x down; 1.40-1.47x time-to-accuracy",
            "8x bandwidth reduction worker to PS and 4x PS to worker; "
            "1.40-1.47x faster time-to-accuracy with aggregation on a "
            "programmable switch, 1.28-1.33x with a software PS, vs Horovod "
            "RDMA"),
    "thc-wa": ("THC (NSDI'24)", "8x up, 4x down (parameter server)",
               "8x bandwidth reduction worker to PS and 4x PS to worker "
               "(4-bit indices up, 8-bit lane sums down); our "
               "worker-aggregator mode: rank 0 aggregates"),
    "gradiveq": ("GradiVeQ (NeurIPS'18)",
                 "~8x; >5x faster aggregation than ring allreduce",
                 "gradients compressed ~8x (ResNet-32/CIFAR-100); "
                 "gradient aggregation time of ring allreduce cut by more "
                 "than 5x, end-to-end training time by ~46%"),
    "lgc": ("LGC (Abrahamyan et al.)",
            "202x (ring, ResNet-50/ImageNet); within 0.2% (CIFAR-10)",
            "202x compression with ring-allreduce (386x parameter server) "
            "on ResNet-50/ImageNet; accuracy within 0.2% of the baseline "
            "on CIFAR-10"),
}


# --- reading ------------------------------------------------------------
def read_jsonl(path: str) -> List[Dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def final_accuracy(log: str) -> Optional[float]:
    acc = None
    with open(log) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "epoch" and "test_acc" in w:
                acc = float(w[w.index("test_acc") + 1])
    return acc


def log_field(log: str, name: str) -> Optional[float]:
    """The last NAME value a log line gives ("NAME V" or "NAME=V")."""
    v = None
    pat = re.compile(r"\b" + re.escape(name) + r"[ =:]+([0-9.]+)")
    with open(log) as f:
        for line in f:
            m = pat.search(line)
            if m:
                v = float(m.group(1))
    return v


def compare(tool: Optional[str], a: str, b: str, n: int) -> Optional[str]:
    """train-compare.sh's verdict on the first N iterations of two logs."""
    if not tool or not os.path.exists(a) or not os.path.exists(b):
        return None
    r = subprocess.run([tool, a, b, str(n)], capture_output=True, text=True,
                       check=False)
    return (r.stdout + r.stderr).strip().replace("train-compare: ", "")


# --- the C trainer's rows ---------------------------------------------
def c_host(res: str, m: str, b: str) -> Dict[str, Any]:
    log = os.path.join(res, "c", f"host-{m}-{b}.log")
    why = log + ".why"
    if os.path.exists(why):
        with open(why) as f:
            return {"accuracy_reason": f.read().strip()}
    if not os.path.exists(log):
        return {"accuracy_reason": "not run (no log)"}
    r: Dict[str, Any] = {"test_accuracy": final_accuracy(log)}
    # incnn-train's summary line (rank 0's library count, training ms)
    for k in ("wire_bytes_per_iter", "iter_ms", "nbuckets", "iters",
              "gvq_compressed_iters", "gvq_refreshes", "up_bytes_per_iter",
              "down_bytes_per_iter"):
        v = log_field(log, k)
        if v is not None:
            r["host_" + k] = v
    return r


def c_vm(vm: Dict[Tuple[str, str], Dict[str, Any]], m: str, b: str,
         vm_reason: str) -> Dict[str, Any]:
    v = vm.get((m, b))
    if v is None:
        return {"iter_ms_reason": vm_reason}
    if "reason" in v:
        return {"iter_ms_reason": v["reason"]}
    r = {"iter_ms": v["iter_ms"], "vm_iters": v["iters"],
         "link_rate": v["rate"], "marked": m in ("inceptionn", "ebq"),
         "vm_eth0_tx_bytes": v["eth0_tx_bytes"]}
    if b == "mgwfbp":
        # the run's bytes include MG-WFBP's cost probe (allreduces of
        # several sizes before the first iteration); iter_ms does not
        r["wire_reason"] = ("the VM run's interface and module counts "
                            "include MG-WFBP's cost probe; see the single "
                            "row (buckets change the time, not the bytes)")
        return r
    r["wire_bytes_per_iter"] = v["wire_bytes_per_iter"]
    if "module_stats" in v:
        r["module_stats"] = v["module_stats"]
    if "gvq_compressed_iters" in v:
        r["vm_gvq_compressed_iters"] = v["gvq_compressed_iters"]
    return r


def c_rows(res: str, a: argparse.Namespace) -> List[Dict[str, Any]]:
    vm: Dict[Tuple[str, str], Dict[str, Any]] = {}
    # a partial run's rows (INCNN_SEEDS_METHODS) replace the full run's
    for d in ("vm", "vm-partial"):
        for v in read_jsonl(os.path.join(res, d, "vm.jsonl")):
            vm[(v["method"], v["buckets"])] = dict(v, dir=d)
    vmrows = list(vm.values())
    vm_reason = ("the VM part did not run (INCNN_SEEDS_VM=0 or it failed)"
                 if not vmrows else "no VM row")
    data = "MNIST"
    if os.path.exists(os.path.join(res, "data.txt")):
        with open(os.path.join(res, "data.txt")) as f:
            data = "synthetic (--data synth)" \
                if f.read().strip() == "synth" else "MNIST"
    rows = []
    for m in C_METHODS:
        for b in BUCKETS:
            r: Dict[str, Any] = {"job": "hdc-mnist-c", "method": m,
                                 "buckets": b, "data": data,
                                 "epochs": a.epochs}
            r.update(c_host(res, m, b))
            r.update(c_vm(vm, m, b, vm_reason))
            if "iter_ms" in r:
                r["vm_vs_host"] = compare(
                    a.compare, os.path.join(res, "c", f"host-{m}-{b}.log"),
                    os.path.join(res, vm[(m, b)]["dir"], f"vm-{m}-{b}.log"),
                    r["vm_iters"])
            rows.append(r)
    ratios(rows, "VM hosts' eth0 tx bytes, headers included", "none")
    payload_ratios(rows)
    baselines(rows, "none")
    return rows


def payload_ratios(rows: List[Dict[str, Any]]) -> None:
    """The compression of the payload alone: inceptionn/ebq the module's
    (incctl stats of the VM hosts: original / wire bytes), the others the
    library's count on the host (none's wire bytes over the row's)."""
    ref = {r["buckets"]: r.get("host_wire_bytes_per_iter") for r in rows
           if r["method"] == "none"}
    for r in rows:
        st = r.get("module_stats")
        if st:
            orig = sum(h["stats"]["tx_bytes_orig"] for h in st)
            wire = sum(h["stats"]["tx_bytes_wire"] for h in st)
            r["payload_ratio"] = round(orig / wire, 2) if wire else None
            r["payload_ratio_basis"] = "module: tx_bytes_orig / tx_bytes_wire"
        elif r["buckets"] == "mgwfbp":
            r["payload_ratio"] = None
        elif r["method"] == "thc-wa" and ref.get(r["buckets"]):
            wa_ratios(r, ref[r["buckets"]], RANKS)
        elif r["method"] in ("none", "thc", "gradiveq") and \
                r.get("host_wire_bytes_per_iter") and ref.get(r["buckets"]):
            r["payload_ratio"] = round(ref[r["buckets"]] /
                                       r["host_wire_bytes_per_iter"], 2)
            r["payload_ratio_basis"] = "library: incnn_comm_wire_bytes()"
        else:
            r["payload_ratio"] = None
        gvq_phase(r, ref.get(r["buckets"]))


def wa_ratios(r: Dict[str, Any], none_wire: float, n: int) -> None:
    """A worker-aggregator row (host_up/down_bytes_per_iter: what a worker
    sends up, what rank 0 sends down to each): up and down against the
    fp32 gradient (none's ring bytes per rank are 2(n-1)/n of it), and the
    payload ratio of the bytes every rank sends on average."""
    up, down = r.get("host_up_bytes_per_iter"), \
        r.get("host_down_bytes_per_iter")
    if not (up and down):
        r["payload_ratio"] = None
        return
    fp32 = none_wire * n / (2 * (n - 1))
    r["up_ratio"] = round(fp32 / up, 2)
    r["down_ratio"] = round(fp32 / down, 2)
    r["payload_ratio"] = round(none_wire / ((n - 1) * (up + down) / n), 2)
    r["payload_ratio_basis"] = ("library: incnn_comm_wire_bytes() of every "
                                "rank, up and down per worker")


def updown(r: Dict[str, Any]) -> str:
    """ " (up Ux, down Dx)" for a worker-aggregator row, else "" """
    if r.get("up_ratio") is None:
        return ""
    return f" (up {r['up_ratio']:.2f}x, down {r['down_ratio']:.2f}x)"


def gvq_phase(r: Dict[str, Any], none_wire: Optional[float]) -> None:
    """GradiVeQ's ratio in its compressed iterations alone: the run's
    bytes less its uncompressed (warm-up, sampling) iterations' at
    method none's rate."""
    n, ci = r.get("host_iters"), r.get("host_gvq_compressed_iters")
    w = r.get("host_wire_bytes_per_iter")
    if not (n and ci and w and none_wire):
        return
    comp = (w * n - (n - ci) * none_wire) / ci
    if comp > 0:
        r["payload_ratio_compressed_iters"] = round(none_wire / comp, 2)


def ratios(rows: List[Dict[str, Any]], basis: str, refm: str) -> None:
    """ratio = method refm's wire bytes (same buckets) over the row's."""
    ref = {r["buckets"]: r.get("wire_bytes_per_iter") for r in rows
           if r["method"] == refm}
    for r in rows:
        w = r.get("wire_bytes_per_iter")
        base = ref.get(r["buckets"]) or ref.get("single")
        r["ratio"] = round(base / w, 2) if w and base else None
        if r["ratio"] is not None:
            r.setdefault("ratio_basis", basis)
        else:
            r["ratio_reason"] = r.get("wire_reason") or \
                r.get("iter_ms_reason") or \
                r.get("accuracy_reason") or "no wire bytes measured"


def baselines(rows: List[Dict[str, Any]], refm: str) -> None:
    """baseline_accuracy: method refm's (same buckets, else single)."""
    ref = {r["buckets"]: r.get("test_accuracy") for r in rows
           if r["method"] == refm}
    for r in rows:
        r["baseline_accuracy"] = ref.get(r["buckets"]) or ref.get("single")
        r.setdefault("test_accuracy", None)
        r.setdefault("iter_ms", None)
        r.setdefault("wire_bytes_per_iter", None)
        p = PAPERS[r["method"]]
        r["paper"], r["paper_claim_short"], r["paper_claim"] = p


# where every seed's time to accuracy is measured (one table with
# PyTorch's hooks and incnn's codecs)
TTA_LINK = (
    "Time to accuracy: the seeds run in `make demo`'s table beside "
    "PyTorch's hooks and incnn's codecs, the same models and target, on "
    "the host and in the 4-host VM through the module (configurations "
    "incnn-thc-ring, incnn-thc-wa, incnn-gradiveq, incnn-lgc; "
    "`build/demo/tta.json`, docs/results.md \"Seeds in the "
    "time-to-accuracy table\", "
    "docs/results.md#seeds-in-the-time-to-accuracy-table); this report "
    "keeps the papers' claims and our ratios.")


# --- the PyTorch rows ---------------------------------------------------
TORCH_VM_REASON = (
    "not measured in the VM by make seeds: importing torch takes over a "
    "minute per rank under QEMU/TCG and the 6 configurations do not fit "
    "its budget; host_iter_ms is the host's (4 ranks on 2 cores); the "
    "seeds' VM times are make demo's (demo-torch-vm.sh, tta.json)")


def torch_rows(res: str, a: argparse.Namespace) -> List[Dict[str, Any]]:
    got = {r["method"]: r for r in
           read_jsonl(os.path.join(res, "torch", "torch.jsonl"))}
    if "default" in got:
        got["pytorch-default"] = dict(got.pop("default"),
                                      method="pytorch-default")
    rows = []
    for m in TORCH_METHODS:
        r: Dict[str, Any] = {"job": "torch-cnn-mnist", "method": m,
                             "buckets": "ddp", "steps": a.torch_steps,
                             "iter_ms_reason": TORCH_VM_REASON}
        if m in got:
            r.update({k: v for k, v in got[m].items() if k != "method"})
            r["job"] = "torch-cnn-mnist"
            if "wa_up_ratio" in r:
                r["up_ratio"] = r["wa_up_ratio"]
                r["down_ratio"] = r["wa_down_ratio"]
        else:
            r["accuracy_reason"] = "the PyTorch part did not run or failed"
        rows.append(r)
    ratios(rows, "payload per rank (library count; codecs: x incnn-codec "
           "ratio on sampled buckets; LGC: stats() whole-run rate)",
           "pytorch-default")
    baselines(rows, "pytorch-default")
    return rows


# --- Markdown -------------------------------------------------------------
def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:.2f}%"


def num(x: Optional[float], fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def delta(r: Dict[str, Any]) -> str:
    a, b = r.get("test_accuracy"), r.get("baseline_accuracy")
    return "-" if a is None or b is None else f"{(a - b) * 100:+.2f}"


def c_table(rows: List[Dict[str, Any]]) -> List[str]:
    t0 = {r["buckets"]: r["iter_ms"] for r in rows
          if r["method"] == "none" and r["iter_ms"]}
    out = ["| method | buckets | sockets (VM) | ratio | payload ratio "
           "| wire MB/iter/host | ms/iter (VM) | vs none | test accuracy "
           "| Δ vs none (pp) | paper's claim |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r.get("accuracy_reason") and r["test_accuracy"] is None and \
                r["iter_ms"] is None:
            out.append(f"| {LABEL[r['method']]} | {r['buckets']} | | | | "
                       f"| | | {r['accuracy_reason']} | | "
                       f"{r['paper_claim_short']} |")
            continue
        sock = "marked, module codec" if r["method"] in ("inceptionn",
                                                         "ebq") else "unmarked"
        base = t0.get(r["buckets"])
        sp = f"{base / r['iter_ms']:.2f}x" if base and r["iter_ms"] else "-"
        wire = r["wire_bytes_per_iter"]
        out.append(
            f"| {LABEL[r['method']]} | {r['buckets']} | {sock} | "
            f"{num(r['ratio'], '.2f')} | "
            f"{num(r.get('payload_ratio'), '.2f')}{updown(r)} | "
            f"{num(None if wire is None else wire / 1e6, '.3f')} | "
            f"{num(r['iter_ms'], '.0f')} | {sp} | "
            f"{pct(r['test_accuracy'])} | {delta(r)} | "
            f"{r['paper_claim_short']} |")
    return out


def torch_table(rows: List[Dict[str, Any]]) -> List[str]:
    out = ["| method | ratio | wire MB/iter/rank | ms/iter (host) "
           "| test accuracy | Δ vs PyTorch default (pp) | paper's claim |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["test_accuracy"] is None:
            out.append(f"| {LABEL[r['method']]} | | | | "
                       f"{r.get('accuracy_reason', '-')} | | "
                       f"{r['paper_claim_short']} |")
            continue
        ratio = num(r["ratio"], ".2f")
        if r["method"] == "lgc":
            ratio = (f"{r['lgc_rate_total']:.2f} (stage 3: "
                     f"{r['lgc_rate_stage3']:.1f})")
        per = (r.get("gvq_stats") or {}).get("wire_bytes_per_iter") or {}
        plain = per.get("warmup") or per.get("sampling")
        if r["method"] == "gradiveq" and per.get("compressed") and plain:
            q = r.get("gvq_codec_ratio")
            codec = (f"; the others through {r['gvq_params']['codec']}: "
                     f"{1 / q:.2f}" if q else "")
            ratio = (f"{ratio} (compressed iterations: "
                     f"{plain / per['compressed']:.2f}, "
                     f"{r['gvq_stats']['compressed_iterations']} of "
                     f"{r['steps']}{codec})")
        ratio += updown(r)
        wire = r["wire_bytes_per_iter"]
        out.append(
            f"| {LABEL[r['method']]} | {ratio} | "
            f"{num(None if wire is None else wire / 1e6, '.3f')} | "
            f"{num(r.get('host_iter_ms'), '.1f')} | "
            f"{pct(r['test_accuracy'])} | {delta(r)} | "
            f"{r['paper_claim_short']} |")
    return out


def find(rows: List[Dict[str, Any]], m: str, b: str = "single"
         ) -> Dict[str, Any]:
    for r in rows:
        if r["method"] == m and r["buckets"] in (b, "ddp"):
            return r
    return {}


def xs(x: Optional[float]) -> str:
    return "not measured" if x is None else f"{x:.2f}x"


def regime(c: List[Dict[str, Any]], t: List[Dict[str, Any]]) -> List[str]:
    """Where our jobs cannot reproduce the papers' regime, with numbers."""
    inc, thc, gvq = find(c, "inceptionn"), find(c, "thc"), find(c, "gradiveq")
    lgc = find(t, "lgc")
    out = [
        "**Where our jobs cannot reproduce the papers' regime.** Scale: "
        "our models have 1.15 M (HDC MLP) and 1.20 M (CNN) parameters, "
        "4.6-4.8 MB of gradient, trained for minutes on 8,000 MNIST "
        "digits; the papers train ResNet-50 (25.6 M parameters, ~98 MB) "
        "and larger on ImageNet/CIFAR to convergence, so our accuracies "
        "say whether a method still trains, not the papers' final-accuracy "
        "deltas (2,000 test digits: one digit is 0.05 pp, and a run's "
        "accuracy moves by ~1 pp from epoch to epoch).",
        "INCEPTIONN: the module compresses our HDC gradients "
        f"{xs(inc.get('payload_ratio'))} at 2^-10 (payload; the paper: "
        f"5.5-11.6x), {xs(inc.get('ratio'))} counting all bytes on the "
        "hosts' interfaces (TCP/IP headers and the unmarked control "
        "traffic, which the codec cannot shrink); the paper's 2.2-3.1x "
        "speedup is against a worker-aggregator "
        "system, ours against the same ring without compression, and the "
        "VM's emulated CPUs (QEMU/TCG) bound the compressed rows' time "
        "rather than the 4 Mbit/s links.",
        f"THC: ours is {xs(thc.get('payload_ratio'))} (payload) and "
        f"{xs(thc.get('ratio'))} (interfaces) on the ring; the paper's 8x "
        "up / 4x down are for a parameter server (4-bit indices up, 8-bit "
        "lanes down). In incnn's ring only the first reduce-scatter step "
        "sends 4-bit indices; later steps carry partial sums in wider "
        "lanes (docs/thc.md), and the time-to-accuracy claim needs a "
        "programmable switch or a GPU cluster at 100 Gbit/s. "
        f"{wa_text(find(c, 'thc-wa'), find(t, 'thc-wa'))}",
    ]
    if gvq.get("test_accuracy") is not None:
        out.append(
            f"GradiVeQ: over the whole host run ours is "
            f"{xs(gvq.get('payload_ratio'))} (payload), "
            f"{xs(gvq.get('payload_ratio_compressed_iters'))} in its "
            f"{int(gvq.get('host_gvq_compressed_iters') or 0)} compressed "
            f"iterations of {int(gvq.get('host_iters') or 0)} (the "
            "library's count: warm-up and sampling are quantised by an "
            "emulated codec, as the paper's QSGD, but counted as the fp32 "
            "they are on the wire; the library's warm-up of 1000 "
            "iterations is scaled down to 100), against the paper's ~8x "
            "on CNNs (we compress the MLP's fully connected layers as 1x1 "
            "convolutions, --gvq-fc). The loss monitor (each rank's loss "
            "averaged over 10 compressed iterations, large when above the "
            "fresh compressor's by more than 0.01, a majority of ranks: "
            "back to sampling) stopped compression "
            f"{int(gvq.get('host_gvq_refreshes') or 0)} times "
            "(docs/gradiveq.md). In the "
            "VM its row is the mean of "
            f"{gvq.get('vm_iters')} iterations of which "
            f"{gvq.get('vm_gvq_compressed_iters')} compressed (the others "
            "sample the gradients), and its interface ratio "
            f"{xs(gvq.get('ratio'))} mixes both.")
    else:
        out.append("GradiVeQ: no figures of ours: "
                   f"{gvq.get('accuracy_reason', 'not run')}.")
    out.append(lgc_regime(lgc))
    return out


def wa_text(c: Dict[str, Any], t: Dict[str, Any]) -> str:
    """THC's worker-aggregator rows against the paper's 8x / 4x."""
    got = [f"{job}: up {r['up_ratio']:.2f}x, down {r['down_ratio']:.2f}x"
           for job, r in (("C trainer", c), ("PyTorch CNN", t))
           if r.get("up_ratio") is not None]
    if not got:
        return "Its worker-aggregator mode was not measured."
    return ("In its worker-aggregator mode (rank 0 aggregates, as the "
            "paper's parameter server) ours is " + "; ".join(got) +
            " against the fp32 gradient, the paper's 8x / 4x.")


def lgc_regime(lgc: Dict[str, Any]) -> str:
    if lgc.get("lgc_rate_total") is None:
        return ("LGC: no figures of ours: "
                f"{lgc.get('accuracy_reason', 'not run')}.")
    p, s = lgc["lgc_params"], lgc["lgc_stats"]
    steps = lgc["steps"]
    s3 = s["3"]
    idx = s3["index"] / s3["sent"] if s3.get("sent") else 0
    codec = p.get("codec", "none")
    if codec != "none" and lgc.get("lgc_rate_stage1") is not None:
        early = (f"stage 1 through {codec} with scale and error feedback, "
                 f"{lgc['lgc_rate_stage1']:.1f}x; stage 2's top-k values "
                 f"too, {lgc['lgc_rate_stage2']:.1f}x")
    else:
        early = "plain or top-k-only exchange"
    fb = ", decoder's error fed back" if p.get("feedback") else ""
    return (
        f"LGC: our whole-run rate is {lgc['lgc_rate_total']:.2f}x against "
        f"the paper's 202x; stages 1-2 (t1 = {p['t1']}, t2 = {p['t2']}: "
        f"{early}) are {(p['t1'] + p['t2']) / steps * 100:.0f}% of our "
        f"{steps} iterations, against ~0.1% of the paper's ~450 k; stage 3 "
        f"reaches {lgc['lgc_rate_stage3']:.1f}x (index bytes "
        f"{idx * 100:.0f}% of what stage 3 sends; code stride "
        f"{p['code_stride']}, alpha {p['alpha']}{fb}). Our autoencoder had "
        f"{p['t2']} steps of stage 2 (relative error of its last 10: "
        f"{lgc.get('lgc_ae_rel_error_last10')}; 1 is no better than "
        "zeros), the paper's 200-300 on a 21x larger model; our LGC run "
        f"ends {delta(lgc)} pp from PyTorch's default allreduce, the "
        "paper's within 0.2% (CIFAR-10).")


def vm_load(res: str) -> str:
    """The host's load averages around the VM part (vm-load.txt)."""
    path = os.path.join(res, "vm-load.txt")
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        d = dict(ln.split(" ", 1) for ln in f.read().strip().split("\n")
                 if " " in ln)
    return (" The host's load average (1, 5, 15 min) was "
            f"{d.get('start', '?').strip()} when the VM part began and "
            f"{d.get('end', '?').strip()} when it ended: the VM's 2 vCPUs "
            "share the machine's 2 cores with everything else, so the "
            "CPU-bound rows' times (all but none) vary with that load.")


def setup(c: List[Dict[str, Any]], t: List[Dict[str, Any]],
          a: argparse.Namespace) -> List[str]:
    d = c[0].get("data", "MNIST") if c else "MNIST"
    return [
        f"**HDC/MNIST, the C trainer** (`incnn-train`, 784-500-500-500-500-10 "
        f"MLP, data: {d}). Accuracy: 4 local ranks on the host, "
        f"{a.epochs} epochs for every row, codecs emulated in userspace "
        "(bit-identical to the module); the final test accuracy against "
        "method none with the same buckets. Time and bytes: the 4-host "
        f"VM cluster (QEMU/TCG, one boot), links limited to {a.rate} each "
        f"way (the demo's cluster rate), {a.vm_iters} iterations per row: "
        "inceptionn/ebq rows go marked through the real module (rule "
        "`tos 0x28 codec C bound 2^-10`, `--codec auto`); none, THC and "
        "GradiVeQ on unmarked sockets (no rule). Ratio: method none's bytes "
        "on the hosts' eth0 over the row's (headers included); wire "
        "MB/iter/host is that count / 4 hosts / iterations. Payload ratio: "
        "the gradient bytes alone: the module's own count (`incctl stats`, "
        "original / wire) for inceptionn/ebq, the library's "
        "(`incnn_comm_wire_bytes()`, the host run's summary line) for THC "
        "and GradiVeQ. vs none: method none's ms/iter over the row's "
        "(incnn-train's own mean, training only; MG-WFBP's cost probe "
        "excluded)." + vm_load(a.res),
        "",
        f"**PyTorch CNN/MNIST** (demo-torch.py's CNN, DDP, 4 local ranks, "
        f"{a.torch_steps} steps of batch 32 per rank, SGD lr 0.05; "
        "scripts/seeds/seeds-torch.py). Ratio: PyTorch default's per-rank "
        "bytes over the row's (payload: the library's count; codecs: times "
        "`incnn-codec`'s ratio on sampled buckets; LGC: its own stats(), "
        "stage 1-3 with index, gather and weight bytes). ms/iter is on the "
        "host (4 ranks share 2 cores); the VM was not used for PyTorch "
        "(importing torch takes over a minute per rank under TCG).",
    ]


# --- plots' data ------------------------------------------------------------
def plot_data(res: str, c: List[Dict[str, Any]],
              t: List[Dict[str, Any]]) -> None:
    with open(os.path.join(res, "seeds-acc.dat"), "w") as f:
        for job, rows in (("hdc", c), ("cnn", t)):
            f.write(f"# {job}: label ratio accuracy%\n")
            for r in rows:
                if r.get("ratio") and r.get("test_accuracy") is not None:
                    f.write(f"\"{r['method']}\" {r['ratio']} "
                            f"{r['test_accuracy'] * 100:.2f}\n")
            f.write("\n\n")
    with open(os.path.join(res, "seeds-time.dat"), "w") as f:
        for r in c:
            if r["iter_ms"]:
                f.write(f"\"{r['method']}\\n{r['buckets']}\" "
                        f"{r['iter_ms'] / 1e3:.3f} {r['ratio'] or 0}\n")


def markdown(c: List[Dict[str, Any]], t: List[Dict[str, Any]],
             a: argparse.Namespace) -> List[str]:
    lines = ["# incnn: the seed methods compared (`make seeds`)", ""]
    lines += setup(c, t, a) + ["", "## HDC/MNIST (C trainer)", ""]
    lines += c_table(c)
    same = [f"{r['method']} {r['buckets']}: {r['vm_vs_host']}"
            for r in c if r.get("vm_vs_host")]
    if same:
        lines += ["", "VM rows against the host run's first iterations "
                  "(`train-compare.sh`): " + "; ".join(same) + "."]
        if any("differs" in r["vm_vs_host"] for r in c
               if r.get("vm_vs_host") and r["buckets"] == "mgwfbp"):
            lines += ["MG-WFBP plans its buckets from a cost probe on each "
                      "machine, so the VM's buckets need not be the host's; "
                      "with a lossy method other buckets give other "
                      "(equally valid) sums, hence mgwfbp rows may differ."]
    lines += ["", "## PyTorch CNN/MNIST", ""] + torch_table(t)
    lgc = find(t, "lgc")
    if lgc.get("lgc_rate_total") is not None:
        lines += ["", f"LGC's rate: {lgc['lgc_rate_total']:.2f}x over the "
                  f"whole run (stages 1-3, index bytes counted), "
                  f"{lgc['lgc_rate_stage3']:.1f}x in stage 3 alone."]
    lines += ["", TTA_LINK]
    lines += ["", "## The papers' claims", ""]
    for m in ["inceptionn", "thc", "gradiveq", "lgc"]:
        p = PAPERS[m]
        lines.append(f"- {p[0]}: {p[2]}.")
    lines += [""] + "\n\n".join(regime(c, t)).split("\n")
    lines += ["", "![accuracy vs compression ratio](seeds-accuracy.png)",
              "![time per iteration in the VM](seeds-time.png)"]
    return lines


def main() -> None:
    p = argparse.ArgumentParser(prog="seeds-report.py")
    p.add_argument("res")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--vm-iters", type=int, default=3)
    p.add_argument("--rate", default="4mbit")
    p.add_argument("--torch-steps", type=int, default=300)
    p.add_argument("--compare", default=None)
    a = p.parse_args()
    c, t = c_rows(a.res, a), torch_rows(a.res, a)
    with open(os.path.join(a.res, "results.json"), "w") as f:
        json.dump(c + t, f, indent=1)
        f.write("\n")
    plot_data(a.res, c, t)
    with open(os.path.join(a.res, "results.md"), "w") as f:
        f.write("\n".join(markdown(c, t, a)) + "\n")


if __name__ == "__main__":
    main()
