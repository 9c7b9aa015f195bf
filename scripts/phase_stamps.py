#!/usr/bin/env python3
"""Where the launches of a phase-stamps build spend their time, from the lines it printed.

A build configured with -Dphase_stamps=true (kernels/phase_stamps.cuh) has mla_onepass and
mla_onepass_ws print one "PH" line per sampled CTA (every eleventh) and the combine one "CB" line
per sampled block (every 37th), each with %globaltimer stamps. Run one scenario at a time, e.g.

  build-stamps/verifybench configs/context_lengths.json -f size=8,batch.prefix_len=23000 \\
      -k mla_onepass_ws -q --no-ceilings --iterations 1 --cold-l2 off > stamps.txt
  scripts/phase_stamps.py stamps.txt

The lines are grouped into launches (a CTA starting more than --gap µs after the one before it
opens a new launch; every CTA of a launch starts within a few µs, one an SM), and each phase is
summarised over the sampled CTAs of every launch: median and range, in µs.

  start → piece    the CTA's start to its first piece's (the schedule's cut)
  q copy           a piece's start to its q copied (begin_piece), every stamped piece
  tile loop        q copied to the loop's end
  loop end → written  the loop's end to the piece's output or partial written
  CTA end          the CTA's exit, from the launch's first CTA start
  CTA end spread   last sampled CTA's exit less the first's, per launch
  main → combine   the last sampled CTA's exit to the first sampled combine block's entry. In
                   a stamps build this is not the launches' own gap: every kernel that prints
                   leaves one before the next starts (54-65 µs on an H100 at 5a0fd6f, main to
                   combine and combine to the next replay's main alike, more than a whole
                   replay of the ordinary build at bs 8 × 4096)
  combine          the first sampled combine entry to the last sampled combine exit

The stamps change the code around them, so these are the shares of a build that is not the one
measured elsewhere; compare phases, not totals.

usage: scripts/phase_stamps.py FILE... [--gap US] [--json] [-v]
  -v      also one line per launch and per sampled CTA
  exit 2 on a missing file or a file with no PH lines (not a phase-stamps build's output)
"""
import argparse
import json
import re
import statistics
import sys

PH = re.compile(r"PH cta (\d+) pieces (\d+) t0 (\d+) p0 (\d+) (\d+) (\d+) (\d+) p1 (\d+) (\d+) (\d+) (\d+) "
                r"p2 (\d+) (\d+) (\d+) (\d+) end (\d+)")
CB = re.compile(r"CB block (\d+) entry (\d+) waited (\d+) end (\d+)")
PHASES = ["start → piece", "q copy", "tile loop", "loop end → written", "CTA end", "CTA end spread",
          "main → combine", "combine"]


def parse(text):
    """([cta dict], [combine dict]) of the PH and CB lines in text, times in ns."""
    ctas, combines = [], []
    for line in text.splitlines():
        m = PH.search(line)
        if m:
            v = [int(x) for x in m.groups()]
            pieces = [v[3 + 4 * i:7 + 4 * i] for i in range(3)]
            ctas.append({"cta": v[0], "pieces": v[1], "t0": v[2], "stamps": [p for p in pieces if p[0]],
                         "end": v[15]})
            continue
        m = CB.search(line)
        if m:
            b, entry, waited, end = (int(x) for x in m.groups())
            combines.append({"block": b, "entry": entry, "waited": waited, "end": end})
    return ctas, combines


def launches(ctas, combines, gap_us):
    """The CTAs grouped by start time, each group with the combine blocks that entered after it."""
    out = []
    for c in sorted(ctas, key=lambda c: c["t0"]):
        if not out or c["t0"] - out[-1]["ctas"][-1]["t0"] > gap_us * 1000:
            out.append({"ctas": [], "combines": []})
        out[-1]["ctas"].append(c)
    for cb in combines:
        before = [la for la in out if la["ctas"][0]["t0"] <= cb["entry"]]
        if before:
            before[-1]["combines"].append(cb)
    return out


def phase_samples(launch):
    """{phase: [µs]} of one launch."""
    us = lambda ns: ns / 1000.0
    s = {k: [] for k in PHASES}
    start = launch["ctas"][0]["t0"]
    for c in launch["ctas"]:
        for i, (p_start, q, loop_end, written) in enumerate(c["stamps"]):
            if i == 0:
                s["start → piece"].append(us(p_start - c["t0"]))
            if q:
                s["q copy"].append(us(q - p_start))
            if q and loop_end:
                s["tile loop"].append(us(loop_end - q))
            if loop_end and written:
                s["loop end → written"].append(us(written - loop_end))
        s["CTA end"].append(us(c["end"] - start))
    ends = [c["end"] for c in launch["ctas"]]
    s["CTA end spread"].append(us(max(ends) - min(ends)))
    cbs = launch["combines"]
    if cbs:
        s["main → combine"].append(us(min(b["entry"] for b in cbs) - max(ends)))
        s["combine"].append(us(max(b["end"] for b in cbs) - min(b["entry"] for b in cbs)))
    return s


def summary(samples):
    return {k: ({"median_us": statistics.median(v), "min_us": min(v), "max_us": max(v), "samples": len(v)}
                if v else None) for k, v in samples.items()}


def analyse(path, gap_us):
    with open(path, encoding="utf-8", errors="replace") as f:
        ctas, combines = parse(f.read())
    if not ctas:
        raise ValueError(f"{path}: no PH lines (is it the output of a build with -Dphase_stamps=true?)")
    groups = launches(ctas, combines, gap_us)
    per_launch = [phase_samples(la) for la in groups]
    merged = {k: [x for s in per_launch for x in s[k]] for k in PHASES}
    return {"file": path, "launches": len(groups), "ctas": len(ctas), "combine_blocks": len(combines),
            "phases": summary(merged), "per_launch": [summary(s) for s in per_launch], "groups": groups}


def fmt(v):
    return "-" if v is None else f"{v['median_us']:.1f} ({v['min_us']:.1f}-{v['max_us']:.1f})"


def print_text(a, verbose):
    print(f"## {a['file']}: {a['launches']} launches, {a['ctas']} sampled CTAs, {a['combine_blocks']} combine blocks")
    print()
    print("| phase | median µs (range) | samples |")
    print("|---|---:|---:|")
    for k in PHASES:
        v = a["phases"][k]
        print(f"| {k} | {fmt(v)} | {v['samples'] if v else 0} |")
    if not verbose:
        return
    for i, (s, g) in enumerate(zip(a["per_launch"], a["groups"])):
        print(f"\nlaunch {i}: " + ", ".join(f"{k} {fmt(s[k])}" for k in PHASES if s[k]))
        t = g["ctas"][0]["t0"]
        for c in g["ctas"]:
            parts = " | ".join(" ".join(f"{(x - t) / 1000:.1f}" if x else "-" for x in p) for p in c["stamps"])
            print(f"  cta {c['cta']:4d} pieces {c['pieces']} start {(c['t0'] - t) / 1000:.1f} "
                  f"[{parts}] end {(c['end'] - t) / 1000:.1f}")


def main(argv):
    ap = argparse.ArgumentParser(description="Phase times from a phase-stamps build's output.")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--gap", type=float, default=20.0, help="µs between CTA starts that opens a new launch")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", action="store_true", dest="verbose")
    args = ap.parse_args(argv)
    out = []
    for path in args.files:
        try:
            out.append(analyse(path, args.gap))
        except (OSError, ValueError) as e:
            print(f"phase_stamps: {e}", file=sys.stderr)
            return 2
    if args.json:
        json.dump([{k: v for k, v in a.items() if k != "groups"} for a in out], sys.stdout, indent=1)
        print()
    else:
        for i, a in enumerate(out):
            if i:
                print()
            print_text(a, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
