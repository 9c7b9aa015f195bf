#!/usr/bin/env python3
"""scripts/headline_table.py writes the README's headline table from a results file and two
baseline dumps: the floor and the kernels' times as the run measured them, the ratio with the
read ceiling's share on long bytes-bound shapes, the fastest time of a row in bold, each
baseline's time from the entry of the same scenario (not merely the same shape key), and a
clear refusal of a foreign file or a missing shape. Needs no GPU."""
import json
import os
import subprocess
import sys
import tempfile

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "headline_table.py")
sys.path.insert(0, os.path.dirname(script))
import headline_table  # noqa: E402

READ_GBPS = 4000.0  # bytes / ceiling: 8e8 bytes are a 200 µs floor


def scenario(name, key, nbytes, times, floor):
    """A results-file scenario with base graph records of the kernels (times: kernel -> µs)."""
    recs = []
    for kernel, us in times.items():
        hot = {"samples": 10, "median_us": us, "p10_us": us, "p90_us": us, "floor_us": floor,
               "bw_share": (nbytes / READ_GBPS / 1e3) / us}
        recs.append({"variant": "base", "kernel": kernel, "mode": "graph", "timing": {"hot": hot}})
    return {"name": name, "shape_key": key, "bytes": nbytes, "records": recs}


def results_with(scenarios):
    return {"schema": "verifybench.results/1", "ceilings": {"read_gbps": READ_GBPS}, "scenarios": scenarios}


def all_shapes():
    """Every shape of the table: long bytes-bound ones, a flops-bound one, launch-bound ones."""
    out = []
    for i, (label, name) in enumerate(headline_table.SHAPES):
        if "eagle64" in name:  # flops-bound: the floor above bytes / ceiling
            out.append(scenario(name, f"k{i}", 4e7, {"mla_wgmma": 110.0, "mla_onepass": 210.0}, 38.6))
        elif name.endswith(("prefix_len=512", "prefix_len=1")):
            out.append(scenario(name, f"k{i}", 2e5, {"mla_wgmma": 19.5, "mla_onepass": 24.3}, 0.05))
        else:  # bytes-bound: floor = bytes / ceiling
            nbytes = 3.6e7 if name.endswith("prefix_len=4096") else 8e8
            floor = nbytes / READ_GBPS / 1e3
            out.append(scenario(name, f"k{i}", nbytes, {"mla_wgmma": floor * 1.36, "mla_onepass": floor * 3.6},
                                floor))
    # bs 1 x 1: the portable kernel is the fastest there, and is the bold one
    for s in out:
        if s["name"].endswith("prefix_len=1"):
            for r in s["records"]:
                if r["kernel"] == "mla_onepass":
                    r["timing"]["hot"]["median_us"] = 17.6
    return out


def dump(impl, entries, **extra):
    d = {"schema": "verifybench.triton_baseline/1", "impl": impl, "entries": entries}
    d.update(extra)
    return d


def entry(scenario_name, key, us):
    return {"scenario": scenario_name, "shape_key": key, "correct": True, "graph": {"median_us": us}}


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    scen = all_shapes()
    # Another scenario with the first shape's key (the same inputs, timed again): its baseline
    # entry must not be taken for the first shape's.
    scen.append(scenario("tree-twin", "k0", 8e8, {"mla_wgmma": 1.0, "mla_onepass": 1.0}, 200.0))
    res = results_with(scen)
    sg = dump("sglang", [entry(s["name"], s["shape_key"], 16820.0) for s in scen[:-1]] + [entry("tree-twin", "k0", 1.0)],
              sglang_version="0.5.23")
    short = {"ctx/batch.size=1,batch.prefix_len=512": 95.7, "ctx/batch.size=1,batch.prefix_len=1": 21.4}
    bi = dump("builtin", [entry(s["name"], s["shape_key"], short.get(s["name"], 13690.0)) for s in scen[:-1]],
              mirrors_sglang="0.5.9")
    paths = {n: os.path.join(d, n) for n in ("r.json", "sg.json", "bi.json", "bad.json", "short.json")}
    for n, obj in (("r.json", res), ("sg.json", sg), ("bi.json", bi), ("bad.json", {"schema": "other"}),
                   ("short.json", results_with(scen[:3]))):
        with open(paths[n], "w") as f:
            json.dump(obj, f)

    p = run(paths["r.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().split("\n")
    assert len(lines) == 2 + len(headline_table.SHAPES), p.stdout
    assert lines[0].endswith("| SGLang 0.5.23 | builtin (0.5.9) |"), lines[0]
    rows = {line.split(" | ")[0][2:]: line for line in lines[2:]}
    # bs 8 x 91k: floor 200 µs, 272 µs, 1.36 with the share named once, in the first such row;
    # the kernels in µs, the baseline in ms; its twin's 1.0 µs entry ignored.
    assert rows["bs 8 × 91k"] == ("| bs 8 × 91k | 200 µs | **272 µs** | 1.36 (74% of the read ceiling) | 720 µs"
                                  " | 3.6 (28%) | 16.82 ms | 13.69 ms |"), rows["bs 8 × 91k"]
    assert "(74%)" in rows["bs 8 × 200k (page 64)"] and "of the read ceiling" not in rows["bs 8 × 200k (page 64)"]
    # a short bytes-bound shape (floor under 20 µs): no share; a flops-bound one: "(flops)"
    assert "| 9.0 µs | **12.2 µs** | 1.36 | 32.4 µs | 3.6 |" in rows["bs 8 × 4096"], rows["bs 8 × 4096"]
    assert "| 38.6 µs (flops) | **110 µs** | 2.8 |" in rows["bs 8 × 4096, eagle64 (512 rows)"]
    # launch-bound: no ratios; the fastest time of the row in bold, whichever kernel's it is
    assert rows["bs 1 × 512"].startswith("| bs 1 × 512 | launch-bound | **19.5 µs** | – | 24.3 µs | – |")
    assert "| **19.5 µs** |" not in rows["bs 1 × 1"] and "| **17.6 µs** |" in rows["bs 1 × 1"], rows["bs 1 × 1"]

    assert "mla_onepass_ws" not in p.stdout, lines[0]  # a run without it: no column for it

    # A run that holds mla_onepass_ws: its column after the portable kernel's, a time in every row.
    ws = json.loads(json.dumps(res))
    for sc in ws["scenarios"]:
        hot = dict(sc["records"][1]["timing"]["hot"])
        hot["median_us"] *= 0.9
        hot["bw_share"] /= 0.9
        sc["records"].append({"variant": "base", "kernel": "mla_onepass_ws", "mode": "graph", "timing": {"hot": hot}})
    with open(paths["r.json"], "w") as f:
        json.dump(ws, f)
    p = run(paths["r.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().split("\n")
    assert "| `mla_onepass` (portable) | time / floor | `mla_onepass_ws` (setmaxnreg) | time / floor | SGLang" in lines[0]
    assert lines[1] == "|---|---:|" + "---:|---:|" * 3 + "---:|---:|", lines[1]
    row91 = [line for line in lines if line.startswith("| bs 8 × 91k |")][0]
    assert "| 720 µs | 3.6 (28%) | 648 µs | 3.2 (31%) | 16.82 ms |" in row91, row91
    # ... and a run where it has no time for a shape is refused, as for the other two.
    del ws["scenarios"][0]["records"][-1]
    with open(paths["r.json"], "w") as f:
        json.dump(ws, f)
    p = run(paths["r.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 2 and "no graph timing for mla_onepass_ws" in p.stderr, p.stderr

    # A merged file (verifybench merge) whose first run measured a 1% higher read ceiling than the
    # run that timed mla_wgmma: the rows still take that run's bytes term, so the long shapes stay
    # bytes-bound with their shares, and a line after the table says the file was merged.
    merged = dict(res, ceilings={"read_gbps": READ_GBPS * 1.01},
                  merged_from=[{"date": "a", "ceilings": {"read_gbps": READ_GBPS * 1.01}},
                               {"date": "b", "ceilings": {"read_gbps": READ_GBPS}}])
    with open(paths["r.json"], "w") as f:
        json.dump(merged, f)
    p = run(paths["r.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 0, p.stderr
    assert "| bs 8 × 91k | 200 µs | **272 µs** | 1.36 (74% of the read ceiling) |" in p.stdout, p.stdout
    assert "(merged from 2 runs of one build; their read ceilings 4000-4040 GB/s" in p.stdout, p.stdout

    # A run without SGLang's dump (its baseline did not finish): the builtin's column alone.
    p = run(paths["r.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 0, p.stderr
    assert "SGLang" not in p.stdout and p.stdout.split("\n")[0].endswith("| builtin (0.5.9) |"), p.stdout
    assert p.stdout.split("\n")[1] == "|---|---:|" + "---:|---:|" * 2 + "---:|", p.stdout
    assert "| 1.36 (74% of the read ceiling) | 720 µs | 3.6 (28%) | 13.69 ms |" in p.stdout, p.stdout

    p = run(paths["bad.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 2 and "not a verifybench.results/1 file" in p.stderr, p.stderr
    p = run(paths["r.json"], "--sglang", paths["r.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 2 and "not a Triton baseline dump" in p.stderr, p.stderr
    p = run(paths["short.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 2 and "no scenario" in p.stderr, p.stderr
    # A run stopped early is refused even when it reached every shape: the table is a whole run's.
    with open(paths["short.json"], "w") as f:
        json.dump(dict(res, complete=False, interrupted_by="SIGINT"), f)
    p = run(paths["short.json"], "--sglang", paths["sg.json"], "--builtin", paths["bi.json"])
    assert p.returncode == 2 and "complete: false (interrupted by SIGINT)" in p.stderr, p.stderr
print("headline_table: the table as measured, shares, bold, baselines by scenario; foreign files refused")
