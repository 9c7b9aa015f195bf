#!/usr/bin/env python3
"""scripts/ncu_launches.py sums up `ncu --metrics ...` output per kernel: checked on a recorded
output (tests/data/ncu_launches.txt: mla_onepass and its combine at bs 8 × 23k on the H200, four
launches each, the profiled process's name lines removed) and on a hand-written launch in other
units. Asserts the kernels' short names and launch counts, medians and ranges, the units
normalised to µs and MB (ns, ms, Kbyte, thousands separators), and a clear error and exit 2 for
a file with no profiled launch."""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "scripts", "ncu_launches.py")
recorded = os.path.join(here, "data", "ncu_launches.txt")


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def near(a, b):
    return abs(a - b) < 1e-6 * max(1.0, abs(b))


r = run(recorded, "--json")
assert r.returncode == 0, r.stderr
k = json.loads(r.stdout)["kernels"]
assert list(k) == ["onepass_kernel<9, 8>", "combine_pieces<512>"], list(k)
assert k["onepass_kernel<9, 8>"]["launches"] == 4 and k["combine_pieces<512>"]["launches"] == 4
w = k["onepass_kernel<9, 8>"]["metrics"]["dram__bytes_write.sum"]
assert w["unit"] == "MB" and near(w["median"], 9.155) and near(w["min"], 9.12) and near(w["max"], 18.77), w
t = k["combine_pieces<512>"]["metrics"]["gpu__time_duration.sum"]
assert t["unit"] == "us" and near(t["median"], 9.87) and near(t["max"], 11.01) and t["n"] == 4, t
cw = k["combine_pieces<512>"]["metrics"]["dram__bytes_write.sum"]  # printed in Kbyte
assert cw["unit"] == "MB" and near(cw["max"], 0.02893), cw
assert k["onepass_kernel<9, 8>"]["metrics"]["lts__t_sector_hit_rate.pct"]["unit"] == "%"

LAUNCH = """  {name}(vb_verify_params, void *, SchedConfig) (132, 1, 1)x(512, 1, 1), Context 1, Stream 13, Device 0, CC 9.0
    Section: Command line profiler metrics
    -------------------------- ----------- ------------
    Metric Name                Metric Unit Metric Value
    -------------------------- ----------- ------------
    gpu__time_duration.sum      {tu} {t}
    dram__bytes_read.sum        {bu} {b}
    -------------------------- ----------- ------------
"""
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "ncu.txt")
    with open(path, "w") as f:
        f.write(LAUNCH.format(name="<unnamed>::wgmma_kernel_72", tu="ns", t="9,870", bu="Kbyte", b="512"))
        f.write(LAUNCH.format(name="<unnamed>::wgmma_kernel_72", tu="ms", t="1.25", bu="Gbyte", b="1.5"))
        f.write(LAUNCH.format(name="<unnamed>::wgmma_kernel_72", tu="us", t="20", bu="byte", b="1,000,000"))
    r = run(path, "--json")
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["kernels"]["wgmma_kernel_72"]["metrics"]
    t, b = m["gpu__time_duration.sum"], m["dram__bytes_read.sum"]
    assert near(t["min"], 9.87) and near(t["median"], 20) and near(t["max"], 1250), t
    assert near(b["min"], 0.512) and near(b["median"], 1.0) and near(b["max"], 1500), b
    r = run(path)  # the table
    assert r.returncode == 0 and "wgmma_kernel_72: 3 launches" in r.stdout, r.stdout

    empty = os.path.join(d, "empty.txt")
    with open(empty, "w") as f:
        f.write("==PROF== nothing profiled\n")
    r = run(empty)
    assert r.returncode == 2 and "no profiled launch found" in r.stderr and r.stdout == "", (r.returncode, r.stderr)
    r = run(os.path.join(d, "missing.txt"))
    assert r.returncode == 2 and "missing.txt" in r.stderr, r.stderr
print("ncu_launches: ok")
