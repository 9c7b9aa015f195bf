#!/usr/bin/env python3
"""scripts/plot_results.py draws both figures from a results file and a baseline dump, one
line per kernel, and refuses a file that is not a results file. Skipped (exit 77) where
matplotlib is missing; needs no GPU."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is not installed: skipped")
    sys.exit(77)

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "plot_results.py")


def scenario(ctx, median):
    hot = {"samples": 10, "median_us": median, "p10_us": median * 0.98, "p90_us": median * 1.02,
           "bw_share": 0.25, "mma_share": 0.1}
    return {"name": f"ctx{ctx}", "valid": True, "shape_key": f"key{ctx}",
            "shape": {"batch": 8, "prefix_len": str(ctx)},
            "records": [{"variant": "base", "kernel": "k", "mode": "graph", "timing": {"hot": hot, "cold": {}}}]}


with tempfile.TemporaryDirectory() as d:
    res = {"schema": "verifybench.results/1", "tool": {"commit": "abc"}, "date": "2026-11-30T00:00:00Z",
           "gpu": {"name": "NVIDIA H200"}, "scenarios": [scenario(512, 40.0), scenario(4096, 100.0)]}
    dump = {"impl": "builtin", "entries": [{"shape_key": "key512", "correct": True, "graph": {"median_us": 80.0}},
                                           {"shape_key": "key4096", "correct": True, "graph": {"median_us": 600.0}}]}
    paths = {n: os.path.join(d, n) for n in ("r.json", "b.json", "bad.json")}
    json.dump(res, open(paths["r.json"], "w"))
    json.dump(dump, open(paths["b.json"], "w"))
    json.dump({"schema": "other"}, open(paths["bad.json"], "w"))
    out = os.path.join(d, "plots")
    p = subprocess.run([sys.executable, script, paths["r.json"], "--baseline", paths["b.json"], "--out", out],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for name in ("time_vs_context.png", "speedup_vs_context.png"):
        with open(os.path.join(out, name), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
    p = subprocess.run([sys.executable, script, paths["bad.json"], "--out", out], capture_output=True, text=True)
    assert p.returncode != 0 and "not a verifybench.results/1 file" in p.stderr, p.stderr
    # A checkpoint is drawn, and the warning says the figures are marked.
    json.dump(dict(res, complete=False), open(paths["r.json"], "w"))
    p = subprocess.run([sys.executable, script, paths["r.json"], "--out", out], capture_output=True, text=True)
    assert p.returncode == 0 and "complete: false (a checkpoint of an unfinished run)" in p.stderr, p.stderr
# The figure's title names the baseline the way the speedup tables do.
sys.path.insert(0, os.path.dirname(script))
import plot_results  # noqa: E402
assert plot_results.baseline_label({"impl": "sglang", "sglang_version": "0.5.23"}) == "SGLang 0.5.23"
assert plot_results.baseline_label({"impl": "builtin", "mirrors_sglang": "0.5.9"}) == "builtin (SGLang 0.5.9)"
assert plot_results.baseline_label({"impl": "builtin"}) == "builtin"
# The floor line is the harness's: the larger of the bandwidth share and the fastest tensor
# ceiling's share, the wgmma one derived from the ceiling where the file predates the field.
flops_bound = {"median_us": 200.0, "bw_share": 0.05, "mma_share": 0.5, "tflops": 326.4}
assert abs(plot_results.floor_of(flops_bound, 960.0) - 68.0) < 1e-9
assert abs(plot_results.floor_of(flops_bound, 0) - 100.0) < 1e-9  # no wgmma ceiling: mma.sync's
assert abs(plot_results.floor_of(dict(flops_bound, bw_share=0.9), 960.0) - 180.0) < 1e-9
print("plot_results: 2 figures written, a foreign file refused, baselines named, floors as the harness's")
