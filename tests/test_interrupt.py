#!/usr/bin/env python3
"""A run stopped by a signal, or killed, keeps what it finished (no GPU needed):
- SIGINT or SIGTERM: the scenario under way finishes its stage, the rest are listed as not run,
  the reports are written with complete: false and interrupted_by, and the exit status is
  128 + the signal; a second SIGINT ends the process at once; a SIGINT ignored at the start
  (a shell's background job) stays ignored;
- SIGKILL: the --json file written after the last finished scenario is whole (written under a
  temporary name and renamed), says complete: false, and `report` and `compare` say so;
- a complete run says complete: true, and a --json that is not a regular file gets the final
  document alone.
usage: test_interrupt.py VERIFYBENCH"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

verifybench = os.path.abspath(sys.argv[1])
# s1 is quick, so its checkpoint comes at once; each of the others takes the oracle about half a
# second (17 s under the sanitizers), time enough for a signal to arrive before s6 starts.
scenarios = [{"name": "s1", "batch": {"size": 1, "prefix_len": 64}}] + [
    {"name": f"s{i}", "batch": {"size": 8, "prefix_len": 1024}, "seed": i} for i in range(2, 7)]
names = [s["name"] for s in scenarios]


def start(d, out, *extra, which=scenarios, ignore_sigint=False):
    path = os.path.join(d, "scen.json")
    with open(path, "w") as f:
        json.dump(which, f)
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen([verifybench, path, "--no-gpu", "-q", "--json", out, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pre)


def after_first_checkpoint(p, out):
    deadline = time.time() + 120
    while not os.path.exists(out):
        assert p.poll() is None, "the run ended before its first checkpoint"
        assert time.time() < deadline, "no checkpoint after 120 s"
        time.sleep(0.02)


def load(path):
    with open(path) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as d:
    # SIGINT and SIGTERM: stop after the stage under way, report everything, exit 128 + signal
    for sig, name in ((signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")):
        out = os.path.join(d, f"{name}.json")
        p = start(d, out)
        after_first_checkpoint(p, out)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 128 + sig, (p.returncode, stderr)
        assert "interrupted: stopping after the current stage" in stderr, stderr
        r = load(out)
        assert r["complete"] is False and r["interrupted_by"] == name and r["scenarios_planned"] == 6, r
        got = {s["name"]: s for s in r["scenarios"]}
        assert sorted(got) == names, sorted(got)  # none vanishes
        assert got["s1"]["valid"] and got["s1"]["records"][0]["status"] == "pass", got["s1"]
        assert got["s6"]["message"] == f"not run: interrupted by {name}" and not got["s6"]["valid"], got["s6"]
        assert f"INCOMPLETE: interrupted by {name} after" in stdout and "not run: s6:" in stdout, stdout[-800:]
        assert not glob.glob(out + ".tmp*"), "a temporary file was left behind"

    # a second SIGINT ends the process at once, as SIGINT does
    out = os.path.join(d, "twice.json")
    p = start(d, out)
    after_first_checkpoint(p, out)
    p.send_signal(signal.SIGINT)
    time.sleep(0.05)  # the first is handled (a second one pending with it would merge into it)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=300)
    assert p.returncode == -signal.SIGINT, p.returncode

    # started with SIGINT ignored (a shell's background job): it stays ignored, the run finishes
    out = os.path.join(d, "ignored.json")
    p = start(d, out, which=scenarios[:2], ignore_sigint=True)
    after_first_checkpoint(p, out)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=300)
    assert p.returncode == 0 and load(out)["complete"] is True, p.returncode

    # SIGKILL: the checkpoint is a whole results file, marked incomplete
    out = os.path.join(d, "killed.json")
    p = start(d, out)
    after_first_checkpoint(p, out)
    p.kill()
    p.communicate(timeout=60)
    r = load(out)
    assert r["complete"] is False and r["interrupted_by"] is None and r["scenarios_planned"] == 6, r
    assert [s["name"] for s in r["scenarios"]][:1] == ["s1"] and len(r["scenarios"]) < 6, r["scenarios"]
    rep = subprocess.run([verifybench, "report", out], capture_output=True, text=True)
    assert rep.returncode == 0 and "INCOMPLETE: a checkpoint of a run that had finished" in rep.stdout, rep.stdout

    # a complete run, with --json on a pipe-like path: one document, complete: true
    quick = os.path.join(d, "quick.json")
    with open(quick, "w") as f:
        json.dump(scenarios[:1], f)
    full = os.path.join(d, "full.json")
    p = subprocess.run([verifybench, quick, "--no-gpu", "-q", "--json", full], capture_output=True, text=True)
    assert p.returncode == 0 and "INCOMPLETE" not in p.stdout, p.stderr
    assert load(full)["complete"] is True and load(full)["interrupted_by"] is None
    p = subprocess.run([verifybench, quick, "--no-gpu", "-q", "--format", "csv", "--json", "/dev/stdout"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.count('"schema"') == 1, p.stdout[:400]

    # compare refuses a run that did not finish, naming the file
    cmp = subprocess.run([verifybench, "compare", full, out], capture_output=True, text=True)
    assert cmp.returncode == 2 and f"{out}: complete: false" in cmp.stderr, cmp.stderr
print("interrupt: SIGINT/SIGTERM stop at a stage and report all (exit 128 + signal), a second SIGINT ends the "
      "process, an ignored SIGINT stays ignored, a killed run leaves a whole checkpoint, compare refuses cut runs")
