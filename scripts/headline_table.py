#!/usr/bin/env python3
"""Prints the README's headline table from a results file and its Triton baseline dumps: for
each target shape, its floor, the Hopper and portable kernels' graph-replay times (hot
medians) with their ratio to the floor (and mla_onepass_ws's, when the run holds it), and the
Triton baselines' times on the same inputs (matched by shape key): SGLang's own kernel, when the
run has its dump, and the builtin re-implementation. The table is written from the files, so
that the README shows what the run measured and nothing copied by hand.

- floor: the harness's, max(bytes / read ceiling, flops / fastest tensor ceiling); "launch-bound"
  below 1 µs, "(flops)" when the tensor term is the larger.
- time / floor: two decimals below 1.5, one above; for bytes-bound shapes whose floor is at least
  20 µs (the long contexts, where the read ceiling is the bound that matters) also the share of
  the read ceiling.
- A time is bold where it is the fastest in its row. The kernels' times are in µs, the Triton
  baselines' in ms above a millisecond. A baseline's time is the entry of the same scenario (two
  scenarios can share a shape key: the same inputs, timed twice), checked against its shape key.

usage: scripts/headline_table.py RESULTS.json [--sglang DUMP] --builtin DUMP
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402  (the schema check and whether a run is whole, shared)

# (label, scenario name): the shapes of issues 7 and 8, as the README names them.
SHAPES = [
    ("bs 8 × 91k", "ctx/batch.size=8,batch.prefix_len=91000"),
    ("bs 8 × 200k (page 64)", "bs8-200k-ddtree9"),
    ("bs 1 × 200k", "bs1-200k-ddtree9"),
    ("bs 8 × 23k", "ctx/batch.size=8,batch.prefix_len=23000"),
    ("bs 32 × 4096 (page 64)", "bs32-ddtree9-4k"),
    ("bs 8 × 4096, eagle64 (512 rows)", "tree-eagle64"),
    ("bs 8 × 4096", "ctx/batch.size=8,batch.prefix_len=4096"),
    ("bs 1 × 512", "ctx/batch.size=1,batch.prefix_len=512"),
    ("bs 1 × 1", "ctx/batch.size=1,batch.prefix_len=1"),
]
# (kernel, column title): always these two; mla_onepass_ws's column when the run holds it.
KERNELS = [("mla_wgmma", "`mla_wgmma` (sm_90a)"), ("mla_onepass", "`mla_onepass` (portable)")]
OPTIONAL = [("mla_onepass_ws", "`mla_onepass_ws` (setmaxnreg)")]


def columns(res):
    """The kernels the table shows for this run, with their titles."""
    ran = {r["kernel"] for s in res.get("scenarios", []) for r in s.get("records", [])}
    return KERNELS + [k for k in OPTIONAL if k[0] in ran]


def header(cols, baselines):
    """The table's title line and its alignment line; baselines: the dumps' column labels."""
    titles = "".join(f" {t} | time / floor |" for _, t in cols)
    return (f"| shape (9-node DDTree, 8 heads) | floor |{titles}" + "".join(f" {b} |" for b in baselines),
            "|---|---:|" + "---:|---:|" * len(cols) + "---:|" * len(baselines))


def fmt_us(us, ms=False):
    """Microseconds as the README writes them: whole above 100, one decimal below; with ms,
    milliseconds above 1000."""
    if ms and us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs" if us >= 100 else f"{us:.1f} µs"


def graph_hot(scenario, kernel):
    """A kernel's graph-replay hot timing of the scenario's base variant, or None."""
    for r in scenario.get("records", []):
        hot = ((r.get("timing") or {}).get("hot")) or {}
        if r["kernel"] == kernel and r["variant"] == "base" and r["mode"] == "graph" and hot.get("samples"):
            return hot
    return None


def baseline_times(path):
    """scenario -> (shape key, graph median) of a Triton baseline dump's correct entries; and
    the column's label (SGLang's own kernel by its release, the builtin by the one it mirrors)."""
    with open(path) as f:
        d = json.load(f)
    if d.get("schema") != "verifybench.triton_baseline/1":
        raise ValueError(f"{path}: not a Triton baseline dump (schema verifybench.triton_baseline/1)")
    times = {e["scenario"]: (e["shape_key"], e["graph"]["median_us"]) for e in d.get("entries", [])
             if e.get("correct") and (e.get("graph") or {}).get("median_us")}
    if d.get("impl") == "builtin":
        return times, f"builtin ({d.get('mirrors_sglang', '?')})"
    return times, f"SGLang {d.get('sglang_version', '?')}"


def baseline_time(times, s):
    """The dump's graph median for scenario s, None when it has none or timed other inputs."""
    key, us = times.get(s["name"], (None, None))
    return us if key == s["shape_key"] else None


def ratio_cell(hot, floor, bytes_bound, first):
    """time / floor, with the read ceiling's share on long bytes-bound shapes."""
    r = hot["median_us"] / floor
    cell = f"{r:.2f}" if r < 1.5 else f"{r:.1f}"
    if bytes_bound and floor >= 20:
        share = round(100 * hot["bw_share"])
        cell += f" ({share}% of the read ceiling)" if first else f" ({share}%)"
    return cell


def row(label, s, ceilings, baselines, first_pct, kernels):
    """The table's line for scenario s, and whether it named the read ceiling's share (which
    only the first such line spells out)."""
    hots = {k: graph_hot(s, k) for k in kernels}
    if any(h is None for h in hots.values()):
        missing = ", ".join(k for k, h in hots.items() if h is None)
        raise ValueError(f"scenario {s['name']}: no graph timing for {missing}")
    # The bytes term of the floor of the run that timed mla_wgmma (its median times its share of
    # that run's read ceiling), so that a merged file's rows compare one run's terms.
    ref = hots["mla_wgmma"]
    bytes_floor = ref["median_us"] * ref["bw_share"] if ref.get("bw_share") else s["bytes"] / ceilings["read_gbps"] / 1e3
    floor = ref["floor_us"]
    bytes_bound = bytes_floor >= floor * 0.999
    launch_bound = floor < 1
    times = {k: h["median_us"] for k, h in hots.items()}
    trit = [baseline_time(dump, s) for dump in baselines]
    fastest = min([t for t in list(times.values()) + trit if t])
    cells = [label, "launch-bound" if launch_bound else fmt_us(floor) + ("" if bytes_bound else " (flops)")]
    pct_used = False
    for k in kernels:
        t = fmt_us(times[k])
        cells.append(f"**{t}**" if times[k] == fastest else t)
        if launch_bound:
            cells.append("–")
        else:
            cells.append(ratio_cell(hots[k], floor, bytes_bound, first_pct and not pct_used))
            pct_used = pct_used or (bytes_bound and floor >= 20)
    cells += [("**{}**" if t == fastest else "{}").format(fmt_us(t, ms=True)) if t else "–" for t in trit]
    return "| " + " | ".join(cells) + " |", pct_used


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--sglang", help="SGLang's own kernel's dump (triton_sglang-VERSION.json); without it, no column")
    ap.add_argument("--builtin", required=True, help="the builtin re-implementation's dump (triton_baseline.json)")
    a = ap.parse_args()
    try:
        res = results_file.load(a.results)
        cut = results_file.incomplete(res)
        if cut:
            raise ValueError(f"{a.results}: complete: false ({cut}): the headline table needs a whole run")
        dumps = [baseline_times(path) for path in (a.sglang, a.builtin) if path]
        by_name = {s["name"]: s for s in res.get("scenarios", [])}
        cols = columns(res)
        lines = list(header(cols, [name for _, name in dumps]))
        first = True
        for label, name in SHAPES:
            if name not in by_name:
                raise ValueError(f"{a.results}: no scenario {name}")
            line, used = row(label, by_name[name], res["ceilings"], [t for t, _ in dumps], first, [k for k, _ in cols])
            first = first and not used
            lines.append(line)
    except (OSError, ValueError, KeyError) as e:
        print(f"headline_table: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    parts = res.get("merged_from") or []
    if parts:
        reads = [p["ceilings"]["read_gbps"] for p in parts if (p.get("ceilings") or {}).get("read_gbps")]
        span = f"; their read ceilings {min(reads):.0f}-{max(reads):.0f} GB/s" if reads else ""
        print(f"\n(merged from {len(parts)} runs of one build{span}: each row's floor is the one mla_wgmma's run "
              "measured, each share of a ceiling its own run's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
