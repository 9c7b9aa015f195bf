#!/usr/bin/env python3
"""How much of each launch is streaming the KV and how much is everything else, from one results
run.

Between a kernel's two records that move the most bytes (its longest launches, where what a
launch pays once weighs least), its time grows by a fixed number of microseconds per byte: the
rate at which it streams. Each record's time less its bytes at that rate is what the launch pays
besides streaming: the launches themselves, each piece's prologue and partial, the combine, the
CTAs that finish early. A record where that rest is a large share is one that a faster tile loop
will not help much. The rate is also given as a share of the run's measured read ceiling; being
a marginal rate, it passes 100% where the longer record pays less besides streaming than the
shorter one.

The rate is a difference of two medians, so it holds what changes with length at those two
records (tiles a CTA, and any tile-loop cost that grows with them), and nothing is claimed for
shorter launches, whose walk may differ: their rest includes any difference in their tile rate,
and at records with more rows a byte than the pair's (more heads or draft tokens) the extra
arithmetic too.

usage: scripts/launch_fit.py RESULTS.json [-k KERNEL ...] [--mode graph|eager] [--timing hot|cold]
                             [--variant NAME] [--pair SCENARIO SCENARIO] [--json]
  -k         kernels to fit (default: every kernel with at least two timed records)
  --pair     the two scenarios that set the rate (default: the kernel's two with the most bytes)
  exit 2 on a file that is not a results file, an unknown kernel or scenario, or a pair whose
  bytes are too close to set a rate or whose longer record is not slower
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402

# The two records that set a rate must differ in bytes by at least this factor: closer than
# that, the difference of their medians is mostly noise.
MIN_BYTES_RATIO = 1.5


def points(results, kernel, mode, timing, variant):
    """[(scenario, bytes, median µs)] of one kernel's passing, timed records, by bytes."""
    out = []
    for s in results.get("scenarios", []):
        for r in s.get("records", []):
            if (r.get("kernel"), r.get("mode"), r.get("variant")) != (kernel, mode, variant):
                continue
            t = ((r.get("timing") or {}).get(timing)) or {}
            if r.get("status") == "pass" and t.get("median_us") and s.get("bytes"):
                out.append((s["name"], int(s["bytes"]), float(t["median_us"])))
    return sorted(out, key=lambda p: p[1])


def kernels_of(results, mode, timing, variant):
    names = {r.get("kernel") for s in results.get("scenarios", []) for r in s.get("records", [])}
    return sorted(k for k in names if k and len(points(results, k, mode, timing, variant)) >= 2)


def fit(pts, pair=None):
    """The streaming rate (µs per byte) and the two points that set it; ValueError when they
    cannot set one."""
    if pair:
        by_name = {p[0]: p for p in pts}
        missing = [n for n in pair if n not in by_name]
        if missing:
            raise ValueError(f"--pair: no timed record of scenario {missing[0]!r}")
        a, b = sorted((by_name[pair[0]], by_name[pair[1]]), key=lambda p: p[1])
    else:  # main fits only kernels with two or more points
        a, b = pts[-2], pts[-1]
    if b[1] < MIN_BYTES_RATIO * a[1]:
        raise ValueError(f"{a[0]} and {b[0]} move {a[1]} and {b[1]} bytes: less than "
                         f"{MIN_BYTES_RATIO}x apart, too close to set a rate")
    if b[2] <= a[2]:
        raise ValueError(f"{b[0]} moves more bytes than {a[0]} but is not slower ({b[2]:.1f} against "
                         f"{a[2]:.1f} µs): no rate")
    return (b[2] - a[2]) / (b[1] - a[1]), a, b


def table(pts, us_per_byte):
    rows = []
    for name, nbytes, us in pts:
        streaming = nbytes * us_per_byte
        rows.append({"scenario": name, "bytes": nbytes, "median_us": us, "streaming_us": streaming,
                     "rest_us": us - streaming, "rest_share": (us - streaming) / us})
    return rows


def report(kernel, fitted, read_gbps, mode, timing):
    us_per_byte, a, b = fitted["rate"], fitted["a"], fitted["b"]
    gbps = 1e-3 / us_per_byte
    ceiling = f", {gbps / read_gbps:.0%} of the read ceiling ({read_gbps:.0f} GB/s)" if read_gbps else ""
    lines = [f"## {kernel} ({mode}, {timing} medians)", "",
             f"Streams at {gbps:.0f} GB/s between `{a[0]}` and `{b[0]}`{ceiling}.", "",
             "| scenario | MB | median µs | streaming µs | rest µs | rest share |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in fitted["rows"]:
        lines.append(f"| {r['scenario']} | {r['bytes'] / 1e6:.1f} | {r['median_us']:.1f} | {r['streaming_us']:.1f} "
                     f"| {r['rest_us']:.1f} | {r['rest_share']:.0%} |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("-k", "--kernel", action="append", default=[])
    ap.add_argument("--mode", default="graph", choices=["graph", "eager"])
    ap.add_argument("--timing", default="hot", choices=["hot", "cold"])
    ap.add_argument("--variant", default="base")
    ap.add_argument("--pair", nargs=2, metavar="SCENARIO")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of markdown")
    args = ap.parse_args(argv)
    try:
        results = results_file.load(args.results)
    except (OSError, ValueError) as e:
        print(f"launch_fit.py: {e}", file=sys.stderr)
        return 2
    why = results_file.incomplete(results)
    if why:
        print(f"launch_fit.py: {args.results}: {why}; the fit covers only the scenarios it reached",
              file=sys.stderr)
    present = kernels_of(results, args.mode, args.timing, args.variant)
    kernels = args.kernel or present
    read_gbps = (results.get("ceilings") or {}).get("read_gbps")
    out = {}
    for k in kernels:
        if k not in present:
            print(f"launch_fit.py: {args.results}: kernel {k}: fewer than two timed {args.mode} records of variant "
                  f"{args.variant} (kernels that have them: {', '.join(present) or 'none'})", file=sys.stderr)
            return 2
        pts = points(results, k, args.mode, args.timing, args.variant)
        try:
            rate, a, b = fit(pts, args.pair)
        except ValueError as e:
            print(f"launch_fit.py: {args.results}: kernel {k}: {e}", file=sys.stderr)
            return 2
        out[k] = {"rate": rate, "a": a, "b": b, "rows": table(pts, rate)}
    if args.json:
        print(json.dumps({"file": args.results, "mode": args.mode, "timing": args.timing, "variant": args.variant,
                          "read_gbps": read_gbps,
                          "kernels": {k: {"streaming_gbps": 1e-3 / v["rate"],
                                          "pair": [v["a"][0], v["b"][0]], "records": v["rows"]}
                                      for k, v in out.items()}}, indent=1))
    else:
        print("\n\n".join(report(k, out[k], read_gbps, args.mode, args.timing) for k in kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
