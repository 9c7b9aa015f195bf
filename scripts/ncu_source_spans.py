#!/usr/bin/env python3
"""Where a kernel's warps spend their time, from Nsight Compute's per-instruction warp-state
samples: reads the SASS source page that `ncu --import REPORT --page source --csv --print-source
sass` prints (collect the report with `--set full`, which includes the SourceCounters samples)
and prints

- the sample total and the stall reasons over the whole kernel;
- the spans between landmarks (barriers, wgmma waits, mbarrier try-waits: the places where a
  warp waits for another party), each with its samples, share and main stall reasons, largest
  first; a span is named by its first and last SASS index and the landmark that ends it;
- with --region NAME:FIRST-LAST (SASS indices, repeatable), the samples of hand-chosen ranges,
  e.g. the phases of a tile loop read off the listing that --list prints.

Samples are taken uniformly in time per warp, so a span's share of the samples of the warps
that run it is its share of their time.

An mbarrier's try-wait (SYNCS.PHASECHK...TRYWAIT) returns its result in a predicate, and the
instruction that tests it (mostly the branch back to the wait) stalls on the long scoreboard,
the reason global loads stall on: so the stall line is followed by the samples of those
instructions, found by following each try-wait's predicate to its first reader, by barrier
(the address offset: match it against the kernel's shared-memory layout), and the long
scoreboard stalls left elsewhere (memory, spills).

usage: scripts/ncu_source_spans.py SOURCE.csv[.gz] [--top N] [--list A-B] [--region NAME:A-B ...]
"""
import argparse
import csv
import gzip
import re
import sys

LANDMARK = re.compile(r"\b(BAR\.(SYNC|RED|ARV)|WARPGROUP\.DEPBAR|SYNCS\.PHASECHK|EXIT)\b")
TRY_WAIT = re.compile(r"SYNCS\.PHASECHK\S*TRYWAIT\s+(P\d)\b")
GUARD = re.compile(r"^\s*@!?(P\d)\s")
# The first operand after the opcode (and any guard): the destination, a predicate for ISETP,
# LOP3 ... P0, and the like.
DEST = re.compile(r"^\s*(?:@!?P\d\s+)?\S+\s+(P\d)\b")
LEAVES = re.compile(r"^\s*(BRA|EXIT|RET|JMP)\b")  # unguarded: the straight line ends there
SAMPLES = "Warp Stall Sampling (All Samples)"


def load(path):
    """The instruction rows of the source page: dicts with 'Source', the sample count and the
    stall_* columns (the all-samples ones, not the '(Not Issued)' ones)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"')), None)
    if start is None:
        raise ValueError(f"{path}: no \"Address\" header line: not an ncu --page source --csv listing")
    rows = list(csv.DictReader(lines[start:]))
    if not rows or SAMPLES not in rows[0]:
        raise ValueError(f"{path}: no '{SAMPLES}' column: collect the report with --set full")
    return rows


def samples(r):
    return int(r[SAMPLES] or 0)


def stall_columns(rows):
    return [k for k in rows[0] if k.startswith("stall_") and "Not Issued" not in k]


def top_stalls(rows, cols, n=3):
    totals = {k[len("stall_"):]: sum(int(r[k] or 0) for r in rows) for k in cols}
    return sorted(((v, k) for k, v in totals.items() if v), reverse=True)[:n]


def spans(rows):
    """(first, last) index pairs: each span ends at a landmark instruction (inclusive) or at the
    end of the listing."""
    out, first = [], 0
    for i, r in enumerate(rows):
        if LANDMARK.search(r["Source"]):
            out.append((first, i))
            first = i + 1
    if first < len(rows):
        out.append((first, len(rows) - 1))
    return out


def barrier_of(source):
    """A try-wait's barrier, as try_wait_readers names it."""
    addr = re.search(r"\[([^\]]*)\]", source)
    if not addr:
        return "?"
    off = re.search(r"0x[0-9a-fA-F]+", addr.group(1))
    return off.group(0) if off else addr.group(0)


def try_wait_readers(rows, reach=256):
    """{index: the try-wait's barrier} of the instructions that test a try-wait's predicate:
    for each try-wait, the first later instruction (in listing order, within REACH) guarded by
    its predicate, unless the predicate is written again or the straight line ends first. The
    barrier is the address operand's constant offset (its shared-memory offset where the base
    is the block's window; an array's first barrier where a register indexes it), else the
    whole operand."""
    out = {}
    for i, r in enumerate(rows):
        m = TRY_WAIT.search(r["Source"])
        if not m:
            continue
        pred = m.group(1)
        for j in range(i + 1, min(i + 1 + reach, len(rows))):
            src = rows[j]["Source"]
            g = GUARD.match(src)
            if g and g.group(1) == pred:
                out[j] = barrier_of(r["Source"])
                break
            d = DEST.match(src)
            if (d and d.group(1) == pred) or LEAVES.match(src):
                break
    return out


def index_range(text):
    """'A-B' (or 'A') as SASS indices (A, B); argparse reports a malformed one."""
    a, _, b = text.partition("-")
    try:
        first, last = int(a), int(b or a)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': not a SASS index range A-B") from None
    if first < 0 or last < first:
        raise argparse.ArgumentTypeError(f"'{text}': not a SASS index range A-B with 0 <= A <= B")
    return first, last


def region(text):
    """'NAME:A-B' (or 'A-B') as (name, (A, B))."""
    name, _, rng = text.rpartition(":")
    return name or rng, index_range(rng)


def print_try_waits(rows, pct):
    """The samples of the instructions testing try-waits, their long-scoreboard stalls against
    the rest, and the samples by barrier; nothing when the kernel has no try-wait."""
    readers = try_wait_readers(rows)
    if not readers:
        return
    long_sb = lambda r: int(r.get("stall_long_sb") or 0)
    v = sum(samples(rows[i]) for i in readers)
    at = sum(long_sb(rows[i]) for i in readers)
    rest = sum(long_sb(r) for r in rows) - at
    print(f"mbarrier waits: {v} samples ({pct(v).strip()}) at the {len(readers)} instructions testing a "
          f"try-wait's result, long_sb {at} of them; long_sb elsewhere {rest} ({pct(rest).strip()})")
    by = {}
    for i, bar in readers.items():
        by[bar] = by.get(bar, 0) + samples(rows[i])
    top = sorted(((n, b) for b, n in by.items() if n), reverse=True)[:6]
    print("  by barrier (address offset): " + ", ".join(f"{b} {n} ({pct(n).strip()})" for n, b in top))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25, help="spans to print (default 25)")
    ap.add_argument("--list", metavar="A-B", type=index_range, help="print SASS indices A..B with their samples")
    ap.add_argument("--region", action="append", default=[], metavar="NAME:A-B", type=region)
    args = ap.parse_args()
    try:
        rows = load(args.csv)
    except (OSError, ValueError) as e:
        sys.exit(f"ncu_source_spans: {e}")
    for _, (a, _b) in args.region + ([("--list", args.list)] if args.list else []):
        if a >= len(rows):
            sys.exit(f"ncu_source_spans: {args.csv}: index {a} past the listing's {len(rows)} instructions")
    cols = stall_columns(rows)
    total = sum(samples(r) for r in rows)
    if not total:
        sys.exit(f"ncu_source_spans: {args.csv}: no warp-state samples")
    pct = lambda v: f"{100.0 * v / total:5.1f}%"
    print(f"{len(rows)} SASS instructions, {total} warp-state samples")
    print("stall reasons: " + ", ".join(f"{k} {pct(v).strip()}" for v, k in top_stalls(rows, cols, 8)))
    print_try_waits(rows, pct)
    if args.list:
        a, b = args.list
        for i in range(a, min(b, len(rows) - 1) + 1):
            r = rows[i]
            print(f"{i:6d} {samples(r):6d} {r['Source'].strip()[:90]}")
        return
    print(f"\nspans ending at a barrier or wait, largest first (top {args.top}):")
    print(f"{'first':>6} {'last':>6} {'samples':>8} {'share':>6}  main stalls / the landmark ending it")
    ranked = sorted(spans(rows), key=lambda s: -sum(samples(r) for r in rows[s[0]:s[1] + 1]))
    for a, b in ranked[:args.top]:
        part = rows[a:b + 1]
        v = sum(samples(r) for r in part)
        stalls = ", ".join(f"{k} {n}" for n, k in top_stalls(part, cols, 2))
        print(f"{a:6d} {b:6d} {v:8d} {pct(v)}  {stalls} / {rows[b]['Source'].strip()[:60]}")
    if args.region:
        print("\nregions:")
        for name, (a, b) in args.region:
            part = rows[a:b + 1]
            v = sum(samples(r) for r in part)
            stalls = ", ".join(f"{k} {n}" for n, k in top_stalls(part, cols, 2))
            print(f"  {name:44s} {a:6d}-{b:<6d} {v:7d} {pct(v)}  {stalls}")


if __name__ == "__main__":
    main()
