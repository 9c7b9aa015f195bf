#!/usr/bin/env python3
"""scripts/ab_runs.py runs builds interleaved and compares their records with the first's:
checked with stand-in "builds" (small scripts that log each call and write a results file), so
no GPU is needed. Asserts the run order, the medians over rounds and B / A, that a record whose
status differs is listed, that the worst exit code is returned, and that a third build gets its
own table against A from the same runs of A, that --timing cold compares the cold medians, and
that the table keeps long scenario names whole."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "ab_runs.py")

spec = importlib.util.spec_from_file_location("ab_runs", script)
ab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab)

FAKE = r'''#!/usr/bin/env python3
import json, os, sys
side, log = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
path = args[args.index("--json") + 1]
with open(log, "a") as f:
    f.write(side + " " + " ".join(args[:args.index("--json")]) + "\n")
n = int(os.path.basename(path).split("_")[1].split(".")[0])  # this build's round, from a_N.json
# k1: A 100, 102 / B 90, 91 (B faster); k2: A 50 / B 55 (slower); k3 fails in B only.
# C: k1 80, 82 (0.8 of A), k2 and k3 as A.
times = {"a": {"k1": [100.0, 102.0], "k2": [50.0, 50.0], "k3": [10.0, 10.0]},
         "b": {"k1": [90.0, 91.0], "k2": [55.0, 55.0], "k3": [None, None]},
         "c": {"k1": [80.0, 81.6], "k2": [50.0, 50.0], "k3": [10.0, 10.0]},
         "d": {"k1": [90.0, 91.0], "k2": [55.0, 55.0], "k3": [10.0, 10.0]},
         "e": {"k1": [90.0, 91.0], "k2": [55.0, 55.0], "k3": [10.0, 10.0]}}[side]
recs = []
for k, t in times.items():
    for mode in ("eager", "graph"):
        ok = t[n - 1] is not None
        recs.append({"variant": "base", "kernel": k, "mode": mode, "status": "pass" if ok else "FAIL",
                     "timing": {"hot": {"samples": 10, "median_us": t[n - 1] if mode == "graph" else 1.0} if ok
                                else {"samples": 0},
                                "cold": {"samples": 10, "median_us": 2 * t[n - 1]} if ok else {}}})
json.dump({"schema": "verifybench.results/1", "scenarios": [{"name": "s", "records": recs}]}, open(path, "w"))
if (side, n) in (("d", 2), ("e", 1)):  # killed in that round, leaving a checkpoint (k1's records)
    json.dump({"schema": "verifybench.results/1", "complete": False, "scenarios": [{"name": "s", "records": recs[:2]}]},
              open(path, "w"))
    os.kill(os.getpid(), 9)
print("the run's own table")
sys.exit(1 if side == "b" else 0)
'''

with tempfile.TemporaryDirectory() as d:
    log = os.path.join(d, "calls.log")
    bins = {}
    for side in ("a", "b", "c", "d", "e"):
        bins[side] = os.path.join(d, f"build_{side}")
        with open(bins[side], "w") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.join(d, 'fake.py')} {side} {log} \"$@\"\n")
        os.chmod(bins[side], 0o755)
    with open(os.path.join(d, "fake.py"), "w") as f:
        f.write(FAKE)
    out = os.path.join(d, "ab")
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], out, "--rounds", "2", "--",
                        "configs/x.json", "-k", "k1"], capture_output=True, text=True)
    assert p.returncode == 1, (p.returncode, p.stderr)  # B's runs exited 1: a check failed there
    calls = [line.split()[0] for line in open(log)]
    assert calls == ["a", "b", "a", "b"], calls  # interleaved, A first
    assert all(line.split()[1:] == ["configs/x.json", "-k", "k1"] for line in open(log))
    rows = {r["kernel"]: r for r in json.load(open(os.path.join(out, "ab.json")))["rows"]}
    assert set(rows) == {"k1", "k2", "k3"} and all(r["mode"] == "graph" for r in rows.values())
    assert rows["k1"]["a_us"] == 101.0 and rows["k1"]["b_us"] == 90.5, rows["k1"]
    assert abs(rows["k1"]["ratio"] - 90.5 / 101.0) < 1e-12 and rows["k1"]["a_range"] == [100.0, 102.0]
    assert abs(rows["k2"]["ratio"] - 1.1) < 1e-12
    assert rows["k3"]["status_a"] == "pass" and rows["k3"]["status_b"] == "FAIL" and "ratio" not in rows["k3"]
    assert "status A pass, B FAIL" in p.stdout and "0.896" in p.stdout and "1.100" in p.stdout, p.stdout
    assert "geomean B / A: k1 graph 0.896 (1), k2 graph 1.100 (1)" in p.stdout, p.stdout  # k3: untimed in B
    means = {(g["kernel"], g["mode"]): g for g in json.load(open(os.path.join(out, "ab.json")))["geomeans"]}
    assert set(means) == {("k1", "graph"), ("k2", "graph")} and means[("k2", "graph")]["records"] == 1
    assert "the run's own table" not in p.stdout  # each run's stdout goes to its .txt
    assert open(os.path.join(out, "b_2.txt")).read().strip() == "the run's own table"
    # --mode both also compares the eager records; bad arguments are refused with one line.
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], out, "--rounds", "1", "--mode", "both", "--"],
                       capture_output=True, text=True)
    rows = json.load(open(os.path.join(out, "ab.json")))["rows"]
    assert {r["mode"] for r in rows} == {"eager", "graph"}, rows
    p = subprocess.run([sys.executable, script, bins["a"], os.path.join(d, "missing"), out, "--"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "not an executable" in p.stderr, p.stderr
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], out], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr, p.stderr
    p = subprocess.run([sys.executable, script, bins["a"], out, "--"], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr, p.stderr  # one build: nothing to compare
    p = subprocess.run([sys.executable, script, *[bins["a"]] * 9, out, "--"], capture_output=True, text=True)
    assert p.returncode == 2 and "at most 8 builds" in p.stderr, p.stderr
    # Three builds: A, B, C interleaved; B's and C's tables each against the same runs of A.
    os.remove(log)
    out3 = os.path.join(d, "abc")
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], bins["c"], out3, "--rounds", "2", "--",
                        "configs/x.json"], capture_output=True, text=True)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert [line.split()[0] for line in open(log)] == ["a", "b", "c", "a", "b", "c"]
    ab3 = json.load(open(os.path.join(out3, "ab.json")))
    assert [b["side"] for b in ab3["builds"]] == ["b", "c"] and ab3["builds"][1]["bin"] == bins["c"]
    assert ab3["rows"] == ab3["builds"][0]["rows"]  # the top level stays B's table
    crow = {r["kernel"]: r for r in ab3["builds"][1]["rows"]}
    assert crow["k1"]["b_us"] == 80.8 and abs(crow["k1"]["ratio"] - 0.8) < 1e-12, crow["k1"]
    assert crow["k3"]["status_b"] == "pass" and abs(crow["k3"]["ratio"] - 1.0) < 1e-12
    assert f"C: {bins['c']} against A: {bins['a']}" in p.stdout, p.stdout
    assert "geomean B / A: k1 graph 0.896 (1), k2 graph 1.100 (1)" in p.stdout, p.stdout
    assert "geomean C / A: k1 graph 0.800 (1), k2 graph 1.000 (1), k3 graph 1.000 (1)" in p.stdout, p.stdout
    assert " C us " in p.stdout and "C/A" in p.stdout, p.stdout
    assert os.path.exists(os.path.join(out3, "c_2.json"))
    # --timing cold: the same runs' cold medians (the stand-ins write twice the hot ones).
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], out, "--rounds", "2", "--timing", "cold", "--"],
                       capture_output=True, text=True)
    ab2 = json.load(open(os.path.join(out, "ab.json")))
    rows = {r["kernel"]: r for r in ab2["rows"]}
    assert ab2["timing"] == "cold" and rows["k1"]["a_us"] == 202.0 and rows["k1"]["b_us"] == 181.0, rows["k1"]
    assert "cold medians" in p.stdout, p.stdout
    p = subprocess.run([sys.executable, script, bins["a"], bins["b"], out, "--timing", "warm", "--"],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "invalid choice" in p.stderr, p.stderr
    # A build killed in round 2 leaves a checkpoint: round 2 is dropped for every build, round 1
    # is compared, the exit code is the kill's (128 + 9) and ab.json says one round.
    out4 = os.path.join(d, "killed")
    p = subprocess.run([sys.executable, script, bins["a"], bins["d"], out4, "--rounds", "3", "--"],
                       capture_output=True, text=True)
    assert p.returncode == 137, (p.returncode, p.stderr)
    assert "B round 2 did not finish (exit 137" in p.stderr and "rounds 1-1 compared" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(out4, "a_3.json")), "no run after the kill"
    ab4 = json.load(open(os.path.join(out4, "ab.json")))
    rows = {r["kernel"]: r for r in ab4["rows"]}
    assert ab4["rounds"] == 1 and rows["k1"]["b_us"] == 90.0 and rows["k1"]["b_range"] == [90.0, 90.0], ab4
    assert ab4["partial"] is False and ab4["stopped_by_signal"] == 0, ab4
    # Killed in the first round it runs: no round is whole, which is an error, not a table, when
    # another build has no record of that round or the caller wants whole rounds only.
    for b, partial_ok in (([bins["d"], bins["a"]], True), ([bins["a"], bins["e"]], False)):
        try:
            ab.run_builds(b, os.path.join(d, "killed1"), 2, [], first=2 if b[0] == bins["d"] else 1,
                          partial_ok=partial_ok)
            raise AssertionError("a round killed before any finished must raise")
        except ab.RunError as e:
            assert "no round finished in every build (exit 137)" in str(e), e
    # B killed in its first run, A's whole: ab.json compares the records both finished (k1), says
    # 0 rounds and partial, and the exit is the kill's.
    out5 = os.path.join(d, "killed-first")
    p = subprocess.run([sys.executable, script, bins["a"], bins["e"], out5, "--rounds", "2", "--"],
                       capture_output=True, text=True)
    assert p.returncode == 137, (p.returncode, p.stderr)
    ab5 = json.load(open(os.path.join(out5, "ab.json")))
    assert ab5["rounds"] == 0 and ab5["partial"] is True and ab5["rounds_planned"] == 2, ab5
    assert [r["kernel"] for r in ab5["rows"]] == ["k1"] and ab5["rows"][0]["ratio"] == 0.9, ab5["rows"]
    assert "partial: no round finished in every build" in p.stdout and "round 1's 1 record(s)" in p.stderr, p
# Signals. A stand-in that waits for one, counts what it gets (a second signal would land in its
# half-second grace), writes a checkpoint with one record and exits 128 + the signal.
SLOW = r'''#!/usr/bin/env python3
import json, signal, sys, time
marks, args = sys.argv[1], sys.argv[2:]
path = args[args.index("--json") + 1]
got = []
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda s, f: got.append(s))
open(marks + ".started", "w").close()
deadline = time.time() + 30
while not got and time.time() < deadline:
    time.sleep(0.01)
time.sleep(0.5)
open(marks, "a").write(" ".join(map(str, got)) + "\n")
rec = {"variant": "base", "kernel": "k1", "mode": "graph", "status": "pass",
       "timing": {"hot": {"samples": 10, "median_us": 90.0}}}
json.dump({"schema": "verifybench.results/1", "complete": False, "interrupted_by": "SIGINT",
           "scenarios": [{"name": "s", "records": [rec]}]}, open(path, "w"))
sys.exit(128 + got[0] if got else 0)
'''


def wait_for(path, what):
    deadline = time.time() + 30
    while not os.path.exists(path):
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


with tempfile.TemporaryDirectory() as d:
    fast, slow, marks = os.path.join(d, "fast"), os.path.join(d, "slow"), os.path.join(d, "marks")
    with open(os.path.join(d, "fake.py"), "w") as f:
        f.write(FAKE)
    with open(os.path.join(d, "slow.py"), "w") as f:
        f.write(SLOW)
    with open(fast, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.join(d, 'fake.py')} a {os.path.join(d, 'log')} \"$@\"\n")
    with open(slow, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.join(d, 'slow.py')} {marks} \"$@\"\n")
    os.chmod(fast, 0o755)
    os.chmod(slow, 0o755)
    # SIGINT to the whole process group, as Ctrl-C and `timeout -s INT` send it: the run under
    # way gets it once (not twice, which would end it at once), no run follows, and ab.json
    # holds what both builds finished, with the exit 130.
    out = os.path.join(d, "int")
    p = subprocess.Popen([sys.executable, script, fast, slow, out, "--rounds", "2", "--"], start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(marks + ".started", "B's first run")
    os.killpg(p.pid, signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, (p.returncode, stderr)
    assert open(marks).read() == "2\n", open(marks).read()
    assert not os.path.exists(os.path.join(out, "a_2.json")), "no run after the signal"
    abi = json.load(open(os.path.join(out, "ab.json")))
    assert abi["partial"] is True and abi["stopped_by_signal"] == 2 and abi["rows"][0]["ratio"] == 0.9, abi
    # The script killed outright: its run is sent SIGTERM rather than left running.
    os.remove(marks)
    os.remove(marks + ".started")
    p = subprocess.Popen([sys.executable, script, fast, slow, os.path.join(d, "kill"), "--"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(marks + ".started", "B's run")
    p.kill()
    p.wait()
    wait_for(marks, "the orphaned run to be stopped")
    time.sleep(0.1)
    assert open(marks).read() == "15\n", open(marks).read()
# The geometric mean over several records of a kernel: (0.5 * 2 * 1.0) ** (1/3) = 1, and modes apart.
rows = [{"kernel": "k", "mode": "graph", "ratio": x} for x in (0.5, 2.0, 1.0)] + \
       [{"kernel": "k", "mode": "eager", "ratio": 0.81}, {"kernel": "k", "mode": "eager", "ratio": 0.64},
        {"kernel": "k", "mode": "eager"}]  # untimed: not counted
means = ab.geomeans(rows)
assert abs(means[("k", "graph")][0] - 1.0) < 1e-12 and means[("k", "graph")][1] == 3, means
assert abs(means[("k", "eager")][0] - 0.72) < 1e-12 and means[("k", "eager")][1] == 2, means
assert ab.format_geomeans(means) == "geomean B / A: k eager 0.720 (2), k graph 1.000 (3)", ab.format_geomeans(means)
assert ab.format_geomeans({}) == ""
# Swept scenarios whose names differ only past the 44th character stay apart, and short times
# keep two decimals (long ones one).
long = "few-heads/model.heads=4,batch.size=1,batch.prefix_len="
table = ab.format_rows([{"scenario": long + n, "variant": "base", "kernel": "k", "mode": "graph", "status_a": "pass",
                         "status_b": "pass", "a_us": a, "b_us": b, "ratio": b / a, "a_range": [a, a], "b_range": [b, b]}
                        for n, a, b in (("512", 13.28, 12.70), ("32768", 127.5, 127.0))])
assert long + "512 " in table and long + "32768 " in table, table
assert " 13.28 " in table and " 12.70 " in table and " 127.5 " in table, table
print("ab_runs: interleaved A/B(/C...) runs, medians over rounds (hot or cold), B / A, status changes, exit codes, "
      "geomeans, a partial first round, signals passed on once")
