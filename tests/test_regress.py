#!/usr/bin/env python3
"""scripts/regress.py turns a change into a verdict. Checked without a GPU:
- the rule over rounds (a failure in any round counts, a slowdown only when every round saw it);
- the real verifybench on both sides: the same binary gives no regression; a planted CPU-model
  bug on the new side gives BROKEN records and exit 1;
- timed runs from stand-in builds (the real verifybench's results with timings written in, read
  by the real `verifybench compare`): a slowdown in both rounds is SLOWER, one in one round only
  is "same (mixed)", a speed-up in both is FASTER, and both rounds ran;
- a run that gives no verdict (a missing scenario file) and an unknown revision exit 2;
- the base built from git (sm_80 only, to keep it short) names its commit, and is reused; the
  same tree given as a directory (--base-src) is built and named as told;
- --base-src without a source tree, or with --base-bin, exits 2.
usage: test_regress.py VERIFYBENCH"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
script = os.path.join(repo, "scripts", "regress.py")
vb = os.path.abspath(sys.argv[1])
tiny = os.path.join(here, "data", "tiny.json")

spec = importlib.util.spec_from_file_location("regress", script)
regress = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regress)

# The rule over rounds.
assert regress.judge(["SLOWER", "SLOWER"]) == "SLOWER"
assert regress.judge(["SLOWER", "same"]) == "same"
assert regress.judge(["FASTER", "FASTER", "FASTER"]) == "FASTER"
assert regress.judge(["same", "BROKEN"]) == "BROKEN"
assert regress.judge(["TOKENS", "SLOWER"]) == "TOKENS"
assert regress.judge(["fixed", "same"]) == "fixed"
assert regress.judge(["untimed"]) == "untimed"
assert regress.judge(["new only", None]) == "same"


def rec(verdict, old, new):
    return {"scenario": "s", "variant": "base", "kernel": "k", "mode": "graph", "verdict": verdict,
            "old_status": "pass", "new_status": "pass", "old_median_us": old, "new_median_us": new}


rows = regress.aggregate([{"records": [rec("SLOWER", 100.0, 120.0)]}, {"records": [rec("same", 102.0, 101.0)]},
                          {"records": [rec("SLOWER", 101.0, 119.0)]}])
assert len(rows) == 1 and rows[0]["verdict"] == "same" and rows[0]["mixed"], rows
assert rows[0]["a_us"] == 101.0 and rows[0]["b_us"] == 119.0 and rows[0]["a_range"] == [100.0, 102.0], rows


def call(*args, expect):
    p = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    assert p.returncode == expect, (args, p.returncode, p.stdout, p.stderr)
    return p


def executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


# A stand-in build: the real verifybench without a GPU, then timings written into its results as a
# GPU run would have them. Round r of side a/b (from the results file's name, a_1.json...) gets
# mla_onepass graph: base 100, new 120 in every round (SLOWER); mla_wgmma graph: new 120 in round
# 1 only (mixed); flash_paged graph: new 80 in every round (FASTER). p10/p90 are ±1 µs.
TIMED = r'''import json, os, subprocess, sys
vb, args = sys.argv[1], sys.argv[2:]
if "--json" not in args:  # compare, --version: the real binary's
    os.execv(vb, [vb, *args])
path = args[args.index("--json") + 1]
side, rnd = os.path.basename(path)[0], int(os.path.basename(path)[2])
rc = subprocess.run([vb, *args, "--no-gpu"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
d = json.load(open(path))
d["gpu"] = {"present": True, "name": "Stand-in GPU", "compute_capability": "9.0", "sms": 132, "l2_bytes": 1,
            "memory_bytes": 1, "driver": "1.0", "driver_version": 1, "runtime_version": 1}
new = {"mla_onepass": 120.0, "mla_wgmma": 120.0 if rnd == 1 else 100.0, "flash_paged": 80.0}
for s in d["scenarios"]:
    for r in s["records"]:
        if r["mode"] == "graph" and r["kernel"] in new:
            t = 100.0 if side == "a" else new[r["kernel"]]
            r["status"] = "pass"
            r["timing"]["hot"].update(samples=20, median_us=t, p10_us=t - 1, p90_us=t + 1)
json.dump(d, open(path, "w"))
sys.exit(rc)
'''

with tempfile.TemporaryDirectory() as d:
    # The same binary on both sides, no GPU: one round, no regression.
    out = os.path.join(d, "same")
    p = call("HEAD", "--base-bin", vb, "--new-bin", vb, "--out", out, "--", tiny, "-q", "--no-gpu", expect=0)
    assert "verdict: no regression" in p.stdout and "one round decides" in p.stderr, (p.stdout, p.stderr)
    doc = json.load(open(os.path.join(out, "regress.json")))
    assert doc["schema"] == "verifybench.regress/1" and doc["rounds"] == 1 and doc["regressions"] == 0, doc
    assert not os.path.exists(os.path.join(out, "runs", "a_2.json"))

    # A planted bug in the new side's CPU model: its records break.
    bug = executable(os.path.join(d, "bug.sh"), f'#!/bin/sh\nexec "{vb}" "$@" --cpu-model-bug scale\n')
    md = os.path.join(d, "verdict.md")
    p = call("HEAD", "--base-bin", vb, "--new-bin", bug, "--out", os.path.join(d, "bug"), "--markdown", md,
             "--", tiny, "-q", "--no-gpu", expect=1)
    broken = [line for line in p.stdout.splitlines() if " BROKEN " in line]
    assert len(broken) == 2 and all("cpu_splitk" in line and "pass -> FAIL" in line for line in broken), p.stdout
    assert "2 regressions" in p.stdout and "| tiny-chain | base | cpu_splitk | cpu | BROKEN |" in open(md).read()

    # Timed stand-ins: SLOWER, mixed and FASTER, two rounds.
    fake = executable(os.path.join(d, "timed.py"), TIMED)
    sides = [executable(os.path.join(d, f"timed_{s}.sh"), f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "{vb}" "$@"\n')
             for s in "ab"]
    out = os.path.join(d, "timed")
    p = call("HEAD", "--base-bin", sides[0], "--new-bin", sides[1], "--out", out, "--", tiny, "-q", expect=1)
    doc = json.load(open(os.path.join(out, "regress.json")))
    assert doc["rounds"] == 2 and doc["gpu"] == "Stand-in GPU" and os.path.exists(os.path.join(out, "runs", "b_2.json"))
    by = {}
    for r in doc["records"]:
        if r["mode"] == "graph":
            by.setdefault(r["kernel"], set()).add((r["verdict"], r["mixed"]))
    assert by["mla_onepass"] == {("SLOWER", False)}, by
    assert by["mla_wgmma"] == {("same", True)}, by
    assert by["flash_paged"] == {("FASTER", False)}, by
    onepass = sum(r["kernel"] == "mla_onepass" and r["mode"] == "graph" for r in doc["records"])
    assert onepass == 3 and doc["counts"]["SLOWER"] == doc["regressions"] == 3, doc["counts"]  # replays too
    gm = {(g["kernel"], g["mode"]): g["ratio"] for g in doc["geomeans"]}
    assert abs(gm[("mla_onepass", "graph")] - 1.2) < 1e-9 and abs(gm[("flash_paged", "graph")] - 0.8) < 1e-9, gm
    assert "* mixed" in p.stdout and "geomean new / base" in p.stdout, p.stdout

    # No verdict: a run that rejects its input, a revision that does not exist.
    p = call("HEAD", "--base-bin", vb, "--new-bin", vb, "--out", os.path.join(d, "bad"), "--",
             tiny, os.path.join(d, "missing.json"), "-q", "--no-gpu", expect=2)
    assert "a run exited 2: no verdict" in p.stderr, p.stderr  # tiny.json ran, and still no verdict
    p = call("HEAD", "--base-bin", vb, "--new-bin", vb, "--out", os.path.join(d, "bad"), "--",
             os.path.join(d, "missing.json"), "-q", "--no-gpu", expect=2)
    assert "exited 2 and wrote no" in p.stderr, p.stderr
    p = call("no-such-revision-anywhere", "--new-bin", vb, "--out", os.path.join(d, "rev"), "--", tiny, expect=2)
    assert "not a commit" in p.stderr, p.stderr
    call("--new-bin", vb, "--", tiny, "--json", "x.json", expect=2)
    p = call("--new-bin", vb, "--markdown", os.path.join(d, "no", "such", "v.md"), "--", tiny, expect=2)
    assert "no such directory (said now" in p.stderr, p.stderr
    p = call("--build", d, "--out", os.path.join(d, "nobuild"), "--", tiny, expect=2)
    assert "not a meson build directory: run scripts/bootstrap.sh first" in p.stderr, p.stderr
    p = call("x", "--base-src", d, "--new-bin", vb, "--out", os.path.join(d, "nosrc"), "--", tiny, expect=2)
    assert "not a verifybench source tree" in p.stderr, p.stderr
    p = call("x", "--base-src", d, "--base-bin", vb, "--new-bin", vb, "--", tiny, expect=2)
    assert "give one" in p.stderr, p.stderr

    # The base built from git: only where this is a git checkout with the build tools.
    head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True)
    if os.environ.get("VB_SANITIZED") == "1":
        print("regress: a sanitized build: the base builds (plain ones) are left to the plain suite")
    elif head.returncode != 0:
        print("regress: not a git checkout: the base build is not exercised")
    else:
        out = os.path.join(d, "built")
        args = ["HEAD", "--new-bin", vb, "--gpu-archs", "80", "--out", out, "--", tiny, "-q", "--no-gpu"]
        p = call(*args, expect=0)
        base_bin = os.path.join(out, f"base-{head.stdout.strip()[:12]}", "build", "verifybench")
        version = subprocess.run([base_bin, "--version"], capture_output=True, text=True).stdout
        assert f"(commit {head.stdout.strip()[:12]})" in version, version
        p = call(*args, expect=0)
        assert "reusing" in p.stderr, p.stderr
        # The same tree given as a directory (as on a machine without the git history), named.
        src = os.path.join(out, f"base-{head.stdout.strip()[:12]}", "src")
        out2 = os.path.join(d, "from-src")
        call("tree-1", "--base-src", src, "--new-bin", vb, "--gpu-archs", "80", "--out", out2, "--", tiny, "-q",
             "--no-gpu", expect=0)
        version = subprocess.run([os.path.join(out2, "base-src-tree-1", "build", "verifybench"), "--version"],
                                 capture_output=True, text=True).stdout
        assert "(commit tree-1)" in version, version

print("regress: rounds' rule, no-GPU verdicts, planted bug, timed SLOWER/mixed/FASTER, no-verdict exits, base build")
