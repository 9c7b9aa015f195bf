#!/usr/bin/env python3
"""Per-launch Nsight Compute metrics, summed up per kernel: reads what `ncu --metrics ...`
prints (its default page, to stdout or through --log-file) and prints, for every kernel, how
many launches were profiled and the median, lowest and highest value of each metric. Times are
given in µs and bytes in MB, whatever unit ncu chose for each launch.

This is how a replay's time was split between the main launch and the combine
(results/h200/NOTES.md, thirtieth and thirty-first sessions), e.g.:

    ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum \\
        -k regex:"wgmma_kernel|combine_pieces" --launch-skip 4 --launch-count 40 \\
        build-gpu/verifybench configs/context_lengths.json -f "size=1,batch.prefix_len=512" \\
        -k mla_wgmma -q --cold-l2 off --no-ceilings > ncu.txt
    scripts/ncu_launches.py ncu.txt

Caveat: with more metrics than one pass collects, ncu replays each launch and restores memory
between passes, so what one launch leaves in L2 for the next is not what graph replays leave
(in a 3-pass profile the combine read all its partials from DRAM). Read durations from
single-pass runs, and cross-launch cache effects from graph replay times, not from ncu.

usage: scripts/ncu_launches.py NCU_OUTPUT [NCU_OUTPUT ...] [--json]
"""
import argparse
import json
import re
import statistics
import sys

# "  void <unnamed>::onepass_kernel<9, 8>(vb_verify_params, void *, SchedConfig) (132, 1, 1)x(256, 1, 1), Context 1, ..."
LAUNCH = re.compile(r"^\s+(?:void\s+)?(.+?\)) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context \d+")
METRIC = re.compile(r"^\s+([A-Za-z_][\w.]*__[\w.]+)\s+(\S+)\s+([-+0-9.,]+|n/a)\s*$")
SCALE = {  # unit -> (normalised unit, factor)
    "ns": ("us", 1e-3), "us": ("us", 1.0), "usecond": ("us", 1.0), "ms": ("us", 1e3), "msecond": ("us", 1e3),
    "s": ("us", 1e6), "second": ("us", 1e6), "nsecond": ("us", 1e-3),
    "byte": ("MB", 1e-6), "Kbyte": ("MB", 1e-3), "Mbyte": ("MB", 1.0), "Gbyte": ("MB", 1e3), "Tbyte": ("MB", 1e6),
}


def short_name(signature):
    """The kernel's name without its parameters and namespaces: 'onepass_kernel<9, 8>'."""
    signature = signature.replace("<unnamed>::", "").replace("(anonymous namespace)::", "")
    depth = 0
    for i, ch in enumerate(signature):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            signature = signature[:i]
            break
    head, lt, tmpl = signature.partition("<")
    return head.split("::")[-1] + lt + tmpl


def parse(path):
    """[(kernel, {metric: (unit, value)})] in launch order."""
    launches = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LAUNCH.match(line)
            if m:
                launches.append((short_name(m.group(1)), {}))
                continue
            m = METRIC.match(line)
            if m and launches and m.group(3) != "n/a":
                unit, factor = SCALE.get(m.group(2), (m.group(2), 1.0))
                launches[-1][1][m.group(1)] = (unit, float(m.group(3).replace(",", "")) * factor)
    if not launches:
        raise ValueError(f"{path}: no profiled launch found (not the output of `ncu --metrics ...`?)")
    return launches


def summarise(launches):
    """{kernel: {'launches': n, 'metrics': {metric: {'unit', 'median', 'min', 'max', 'n'}}}}, kernels
    in order of first launch."""
    out = {}
    for name, metrics in launches:
        k = out.setdefault(name, {"launches": 0, "metrics": {}})
        k["launches"] += 1
        for metric, (unit, value) in metrics.items():
            k["metrics"].setdefault(metric, {"unit": unit, "values": []})["values"].append(value)
    for k in out.values():
        for m in k["metrics"].values():
            v = m.pop("values")
            m.update(n=len(v), median=statistics.median(v), min=min(v), max=max(v))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", metavar="NCU_OUTPUT")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args()
    for path in a.files:
        try:
            summary = summarise(parse(path))
        except (OSError, ValueError) as e:
            print(f"ncu_launches: {e}", file=sys.stderr)
            return 2
        if a.json:
            print(json.dumps({"file": path, "kernels": summary}))
            continue
        print(path)
        for name, k in summary.items():
            print(f"  {name}: {k['launches']} launches")
            for metric, m in k["metrics"].items():
                print(f"    {metric:40s} {m['unit']:>6s}  median {m['median']:10.3f}  "
                      f"min {m['min']:10.3f}  max {m['max']:10.3f}  ({m['n']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
