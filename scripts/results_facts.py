#!/usr/bin/env python3
"""The facts a results run's write-up quotes, read from the results file instead of by hand:

- the run: GPU, driver, date, commit and the measured ceilings; with --old, the read ceiling
  against an earlier run's (every share of it moves by as much at the same time);
- the records by status;
- which kernel is fastest on each scenario's graph replay (base variant), with the winners' time
  range and every other kernel's on those scenarios;
- every record, eager or graph, any variant, where a kernel is slower than one it should beat
  (mla_onepass, mla_onepass_ws and mla_wgmma against flash_paged, mla_wgmma against
  mla_onepass), with both
  medians and p10-p90 spreads;
- the README's target shapes (scripts/headline_table.py's list) for the scheduled kernels: the
  graph replay's median and its shares of the read, mma.sync and wgmma ceilings.

usage: scripts/results_facts.py RESULTS.json [--old OLD_RESULTS.json] [--json]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402
from headline_table import SHAPES  # noqa: E402

# (slower, faster): a record where the first kernel's median is above the second's is listed.
SHOULD_BEAT = [("mla_onepass", "flash_paged"), ("mla_onepass_ws", "flash_paged"), ("mla_wgmma", "flash_paged"),
               ("mla_wgmma", "mla_onepass")]
SCHEDULED = ["mla_wgmma", "mla_onepass", "mla_onepass_ws"]


def hot_of(record):
    """A record's hot timing, or None when it was not timed."""
    hot = ((record.get("timing") or {}).get("hot")) or {}
    return hot if hot.get("median_us") else None


def timed(results):
    """(scenario, variant, mode) -> kernel -> hot timing, over every timed record."""
    out = {}
    for s in results.get("scenarios", []):
        for r in s.get("records", []):
            hot = hot_of(r)
            if hot:
                out.setdefault((s["name"], r["variant"], r["mode"]), {})[r["kernel"]] = hot
    return out


def shares(hot, wgmma_tflops):
    """A timing's shares of the read, mma.sync and wgmma ceilings (the last derived from its
    TFLOP/s where the file predates the field, as `verifybench report` does)."""
    wg = hot.get("wgmma_share")
    if wg is None and wgmma_tflops and hot.get("tflops") is not None:
        wg = hot["tflops"] / wgmma_tflops
    return {"read": hot.get("bw_share"), "mma": hot.get("mma_share"), "wgmma": wg}


def fastest(by_record):
    """kernel -> the base graph scenarios it is fastest on, with its times and the others'."""
    wins = {}
    for (name, variant, mode), ks in sorted(by_record.items()):
        if variant != "base" or mode != "graph" or len(ks) < 2:
            continue
        best = min(ks, key=lambda k: ks[k]["median_us"])
        w = wins.setdefault(best, {"scenarios": [], "times": [], "others": {}})
        w["scenarios"].append(name)
        w["times"].append(ks[best]["median_us"])
        for k, h in ks.items():
            if k != best:
                w["others"].setdefault(k, []).append(h["median_us"])
    return wins


def slower(by_record):
    """(slower, faster) -> records where the first kernel took longer, and how many both ran."""
    out = {}
    for slow, fast in SHOULD_BEAT:
        both = [(key, ks) for key, ks in sorted(by_record.items()) if slow in ks and fast in ks]
        worse = [{"scenario": key[0], "variant": key[1], "mode": key[2],
                  slow: [ks[slow]["median_us"], ks[slow].get("p10_us"), ks[slow].get("p90_us")],
                  fast: [ks[fast]["median_us"], ks[fast].get("p10_us"), ks[fast].get("p90_us")]}
                 for key, ks in both if ks[slow]["median_us"] > ks[fast]["median_us"]]
        out[f"{slow} slower than {fast}"] = {"records_both_ran": len(both), "slower": worse}
    return out


def targets(by_record, wgmma_tflops):
    """label -> kernel -> graph median and shares, for the README's shapes."""
    out = {}
    for label, name in SHAPES:
        ks = by_record.get((name, "base", "graph"), {})
        out[label] = {k: {"median_us": ks[k]["median_us"], **shares(ks[k], wgmma_tflops)}
                      for k in SCHEDULED if k in ks}
    return out


def facts(results, old=None):
    """Everything the write-up quotes, as one dict."""
    ceil = results.get("ceilings") or {}
    gpu = results.get("gpu") or {}
    run = {"gpu": gpu.get("name"), "driver": gpu.get("driver"), "date": results.get("date"),
           "commit": (results.get("tool") or {}).get("commit"), "ceilings": ceil,
           "complete": results.get("complete", True), "interrupted_by": results.get("interrupted_by"),
           "incomplete": results_file.incomplete(results),
           "merged_from": [{"date": p.get("date"), "read_gbps": (p.get("ceilings") or {}).get("read_gbps")}
                           for p in results.get("merged_from") or []]}
    if old is not None:
        old_read = (old.get("ceilings") or {}).get("read_gbps")
        if old_read and ceil.get("read_gbps"):
            run["old_read_gbps"] = old_read
            run["read_vs_old"] = ceil["read_gbps"] / old_read
    status = {}
    for s in results.get("scenarios", []):
        for r in s.get("records", []):
            status[r["status"]] = status.get(r["status"], 0) + 1
    by_record = timed(results)
    return {"run": run, "status": status, "fastest": fastest(by_record), "slower": slower(by_record),
            "targets": targets(by_record, ceil.get("wgmma_bf16_tflops"))}


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def spread(t):
    med, lo, hi = t
    return f"{med:.2f}" + (f" (p10-p90 {lo:.2f}-{hi:.2f})" if lo is not None and hi is not None else "")


def print_text(f):
    run = f["run"]
    c = run["ceilings"]
    print(f"run: {run['gpu']}, driver {run['driver']}, {run['date']}, commit {run['commit']}")
    if run["incomplete"]:
        print(f"INCOMPLETE: {run['incomplete']}: not a whole run")
    line = (f"ceilings: read {c.get('read_gbps', 0):.0f} GB/s, mma.sync {c.get('mma_bf16_tflops', 0):.0f} TFLOP/s"
            + (f", wgmma {c['wgmma_bf16_tflops']:.0f} TFLOP/s" if c.get("wgmma_bf16_tflops") else ""))
    if "read_vs_old" in run:
        line += f"; read {100 * (run['read_vs_old'] - 1):+.1f}% against the old run's {run['old_read_gbps']:.0f}"
    print(line)
    if run["merged_from"]:
        print(f"merged from {len(run['merged_from'])} runs (verifybench merge): "
              + "; ".join(f"{p['date']} read {p['read_gbps'] or 0:.0f} GB/s" for p in run["merged_from"])
              + ": each record's shares are of its own run's ceilings")
    total = sum(f["status"].values())
    print(f"records: {total}: " + ", ".join(f"{n} {k}" for k, n in sorted(f["status"].items())))
    n = sum(len(w["scenarios"]) for w in f["fastest"].values())
    print(f"fastest on the graph replays of {n} scenarios (base variant):")
    for k, w in sorted(f["fastest"].items(), key=lambda kv: -len(kv[1]["scenarios"])):
        others = ", ".join(f"{o} {min(t):.2f}-{max(t):.2f}" for o, t in sorted(w["others"].items()))
        print(f"  {k}: {len(w['scenarios'])}, {min(w['times']):.2f}-{max(w['times']):.2f} µs (others: {others})")
        if len(w["scenarios"]) <= 3:
            for name in w["scenarios"]:
                print(f"    {name}")
    for what, s in f["slower"].items():
        print(f"{what}: {len(s['slower'])} of {s['records_both_ran']} records")
        slow, fast = what.split(" slower than ")
        for r in s["slower"]:
            print(f"  {r['scenario']} [{r['variant']}, {r['mode']}]: {spread(r[slow])} against {spread(r[fast])} µs")
    print("target shapes, graph replay: median µs, shares of the read / mma.sync / wgmma ceilings")
    for label, ks in f["targets"].items():
        for k, t in ks.items():
            print(f"  {label:34s} {k:12s} {t['median_us']:9.2f}  {pct(t['read']):>6s} {pct(t['mma']):>6s} "
                  f"{pct(t['wgmma']):>6s}")


def load(path):
    with open(path) as fh:
        d = json.load(fh)
    if d.get("schema") != "verifybench.results/1":
        raise ValueError(f"{path}: not a verifybench results file (schema verifybench.results/1)")
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--old", help="an earlier run's results file, for the read ceiling's change")
    ap.add_argument("--json", action="store_true", help="print the facts as JSON")
    a = ap.parse_args()
    try:
        f = facts(load(a.results), load(a.old) if a.old else None)
    except (OSError, ValueError, KeyError) as e:
        print(f"results_facts: {e}", file=sys.stderr)
        return 2
    if a.json:
        json.dump(f, sys.stdout, indent=1)
        print()
    else:
        print_text(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
