#!/usr/bin/env python3
"""Plots a verifybench results file: time against context length per kernel on log axes,
with the floor (max of bytes / read ceiling and flops / the fastest tensor ceiling, as the
harness writes it) as a line, and, given a
Triton baseline dump, the speedup against it.

Context length is the mean prefix length of a scenario's requests; every scenario with one
prefix length for all its requests is a point (the ragged and padded ones are left out).
One panel per batch size measured at two or more context lengths; graph replays, hot medians, with the p10-p90 spread as error bars.

usage: scripts/plot_results.py RESULTS.json [--baseline DUMP] [--out DIR] [--mode graph|eager]
writes DIR/time_vs_context.png and, with --baseline, DIR/speedup_vs_context.png
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402  (the schema check and whether a run is whole, shared)


def floor_of(hot, wgmma_tflops):
    """The harness's floor (result.c), derived as `verifybench report` derives it, so that files
    written before a share existed plot the same floor: median times the larger of the bandwidth
    share and the smaller nonzero tensor share (that of the fastest tensor ceiling)."""
    wgmma = hot.get("wgmma_share") or ((hot.get("tflops") or 0) / wgmma_tflops if wgmma_tflops else 0)
    tensor = [x for x in (hot.get("mma_share"), wgmma) if x and x > 0]
    share = max(hot.get("bw_share") or 0, min(tensor) if tensor else 0)
    return hot["median_us"] * share if share > 0 else float("nan")


def load_points(results, mode):
    """(batch, context, kernel) -> (median, p10, p90, floor, shape_key) for base variants."""
    pts = {}
    wgmma_tflops = (results.get("ceilings") or {}).get("wgmma_bf16_tflops") or 0
    for s in results["scenarios"]:
        shape = s.get("shape") or {}
        if not s.get("valid") or not str(shape.get("prefix_len", "")).isdigit():
            continue
        batch, ctx = shape["batch"], int(shape["prefix_len"])
        for r in s.get("records", []):
            hot = ((r.get("timing") or {}).get("hot")) or {}
            if r["variant"] != "base" or r["mode"] != mode or not hot.get("samples"):
                continue
            floor = floor_of(hot, wgmma_tflops)
            key = (batch, ctx, r["kernel"])
            # one point per (batch, context): the first scenario that has it
            pts.setdefault(key, (hot["median_us"], hot["p10_us"], hot["p90_us"], floor, s["shape_key"]))
    return pts


def panels(pts):
    """Batch sizes with at least two context lengths (a line needs two points), and kernels."""
    batches = sorted(b for b in {b for b, _, _ in pts} if len({c for bb, c, _ in pts if bb == b}) > 1)
    kernels = []
    for _, _, k in pts:
        if k not in kernels:
            kernels.append(k)
    return batches, kernels


def style_panel(ax, batch, ylabel):
    """Both figures share their axes: log-log against context, one panel per batch size."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("context (prefix tokens per request)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"batch {batch}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def save(plt, fig, title, out):
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_times(plt, pts, out, title):
    batches, kernels = panels(pts)
    fig, axes = plt.subplots(1, len(batches), figsize=(6 * len(batches), 4.5), squeeze=False)
    for ax, b in zip(axes[0], batches):
        floors = {}
        for k in kernels:
            xs = sorted(c for bb, c, kk in pts if bb == b and kk == k)
            if not xs:
                continue
            med = [pts[(b, c, k)][0] for c in xs]
            lo = [pts[(b, c, k)][0] - pts[(b, c, k)][1] for c in xs]
            hi = [pts[(b, c, k)][2] - pts[(b, c, k)][0] for c in xs]
            ax.errorbar(xs, med, yerr=[lo, hi], marker="o", ms=4, capsize=2, label=k)
            for c in xs:
                if not math.isnan(pts[(b, c, k)][3]):
                    floors[c] = pts[(b, c, k)][3]
        if floors:
            xs = sorted(floors)
            ax.plot(xs, [floors[c] for c in xs], "k--", lw=1.5, label="floor")
        style_panel(ax, b, "time (µs, hot median)")
    save(plt, fig, title, out)


def plot_speedups(plt, pts, dump, mode, out, title):
    base = {e["shape_key"]: e for e in dump.get("entries", []) if e.get("correct")}
    batches, kernels = panels(pts)
    fig, axes = plt.subplots(1, len(batches), figsize=(6 * len(batches), 4.5), squeeze=False)
    for ax, b in zip(axes[0], batches):
        for k in kernels:
            xs, ys = [], []
            for c in sorted(c for bb, c, kk in pts if bb == b and kk == k):
                e = base.get(pts[(b, c, k)][4])
                t = ((e or {}).get(mode) or {}).get("median_us")
                if t:
                    xs.append(c)
                    ys.append(t / pts[(b, c, k)][0])
            if xs:
                ax.plot(xs, ys, marker="o", ms=4, label=k)
        ax.axhline(1.0, color="k", lw=1, ls=":")
        style_panel(ax, b, "speedup (Triton time / kernel time)")
    save(plt, fig, title, out)


def baseline_label(dump):
    """What the speedup tables call a dump: the SGLang that ran, or the release the builtin mirrors."""
    impl = dump.get("impl", "?")
    if impl == "sglang":
        return f"SGLang {dump.get('sglang_version', '(version not recorded)')}"
    return f"{impl} (SGLang {dump['mirrors_sglang']})" if dump.get("mirrors_sglang") else impl


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--baseline", help="a Triton baseline dump (scripts/triton_baseline.py)")
    ap.add_argument("--out", default=".", help="directory for the PNG files (default: .)")
    ap.add_argument("--mode", default="graph", choices=["graph", "eager"])
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_results.py: needs matplotlib (pip install matplotlib)")
    try:
        results = results_file.load(a.results)
        dump = None
        if a.baseline:
            with open(a.baseline) as f:
                dump = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_results.py: {e}")
    pts = load_points(results, a.mode)
    if not pts:
        sys.exit(f"plot_results.py: {a.results}: no timed scenario with one prefix length per request")
    os.makedirs(a.out, exist_ok=True)
    gpu = (results.get("gpu") or {}).get("name") or "no GPU"
    tag = f"{gpu}, commit {results['tool']['commit']}, {results['date'][:10]}, {a.mode} replay"
    cut = results_file.incomplete(results)
    if cut:  # drawn, but never mistaken for a whole run
        tag += f"; INCOMPLETE: {cut}"
        print(f"plot_results.py: {a.results}: complete: false ({cut}): the figures say so", file=sys.stderr)
    plot_times(plt, pts, os.path.join(a.out, "time_vs_context.png"), f"verify attention time vs context ({tag})")
    written = ["time_vs_context.png"]
    if dump:
        plot_speedups(plt, pts, dump, a.mode, os.path.join(a.out, "speedup_vs_context.png"),
                      f"speedup against Triton: {baseline_label(dump)} ({tag})")
        written.append("speedup_vs_context.png")
    print("wrote " + ", ".join(os.path.join(a.out, w) for w in written))


if __name__ == "__main__":
    main()
