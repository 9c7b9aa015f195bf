#!/usr/bin/env python3
"""scripts/fault_records.py, the checks of gpu_proof.sh's faults stage, without a GPU: the four
runs the stage makes are run here (argv[1], verifybench) on tests/data/tiny.json with --no-gpu,
so every GPU record is skipped, and their records are then set as a GPU run reports its test-only
kernels (an illegal address, a refused launch, too many registers, a kernel that never ends).
Those documents must pass; each property the stage relies on, broken on its own, must fail
with its own line; a file that is no results file exits 2."""
import copy
import json
import os
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
binary = sys.argv[1]
script = os.path.join(root, "scripts", "fault_records.py")
tiny = os.path.join(root, "tests", "data", "tiny.json")


def results(d, name, *kernels):
    path = os.path.join(d, name)
    args = [a for k in kernels for a in ("-k", k)]
    # --no-gpu: on a GPU machine these kernels would really fault and hang
    p = subprocess.run([binary, tiny, *args, "--no-gpu", "--no-cpu-model", "-q", "--iterations", "1", "--json", path],
                       capture_output=True, text=True)
    assert p.returncode == 0, (p.returncode, p.stderr)
    with open(path) as f:
        return json.load(f)


def each(doc):
    for s in doc["scenarios"]:
        for r in s["records"]:
            yield s, r


def set_status(doc, status, message, kernel=None, mode=None, first_only=False):
    for s, r in each(doc):
        if (kernel is None or r["kernel"] == kernel) and (mode is None or r["mode"] == mode) and \
                (not first_only or s is doc["scenarios"][0]):
            r["status"], r["message"] = status, message


def check(d, *docs, mode="faults"):
    paths = []
    for i, doc in enumerate(docs):
        paths.append(os.path.join(d, f"case{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
    p = subprocess.run([sys.executable, script, mode, *paths], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


ENDED = "skipped: an earlier CUDA error ended the GPU stages"
NOT_RUN = "not run: the GPU stopped answering (--gpu-timeout)"

with tempfile.TemporaryDirectory() as d:
    # As a GPU run reports them (messages as src/main.c and vb_gpu_check write them).
    address = results(d, "address.json", "mla_onepass", "fault_address", "naive_gpu")
    set_status(address, "skipped", ENDED)
    set_status(address, "pass", "", "mla_onepass", "eager", first_only=True)
    set_status(address, "ERROR", "cudaErrorIllegalAddress: an illegal memory access was encountered",
               "fault_address", "eager", first_only=True)
    launch = results(d, "launch.json", "fail_launch", "naive_gpu")
    set_status(launch, "pass", "")
    set_status(launch, "ERROR", "cudaErrorInvalidConfiguration: invalid configuration argument", "fail_launch")
    registers = results(d, "registers.json", "out_of_registers", "naive_gpu")
    set_status(registers, "pass", "")
    set_status(registers, "ERROR", "cudaErrorLaunchOutOfResources: too many resources requested for launch",
               "out_of_registers", "eager")
    set_status(registers, "FAIL", "cudaGraphInstantiate: cudaErrorLaunchOutOfResources", "out_of_registers", "graph")
    hang = results(d, "hang.json", "naive_gpu", "hang")
    hang["complete"], hang["interrupted_by"] = False, "GPU timeout"
    set_status(hang, "skipped", NOT_RUN)
    set_status(hang, "pass", "", "naive_gpu", "eager", first_only=True)
    set_status(hang, "ERROR", "timed out: not finished after 10 s (--gpu-timeout 10); a kernel that never ends?",
               "hang", "eager", first_only=True)

    rc, out = check(d, address, launch, registers)
    assert rc == 0 and "fault records as expected" in out, (rc, out)
    rc, out = check(d, hang, mode="hang")
    assert rc == 0 and "hang reported as expected" in out, (rc, out)

    def broken(which, change, expect):
        docs = [copy.deepcopy(x) for x in (address, launch, registers)]
        change(docs[which])
        rc, out = check(d, *docs)
        assert rc == 1 and expect in out, (expect, rc, out)

    broken(0, lambda x: set_status(x, "skipped", ENDED, "fault_address"), "no ERROR naming cudaErrorIllegalAddress")
    broken(0, lambda x: set_status(x, "FAIL", "wrong", "naive_gpu", "graph", first_only=True), "a record failed")
    def no_ended_reason(x):
        for _, r in each(x):
            if r["status"] == "skipped":
                r["message"] = "skipped: no usable GPU"

    broken(0, no_ended_reason, "no record skipped because the CUDA error ended")
    broken(1, lambda x: set_status(x, "skipped", ENDED, "naive_gpu"), "naive_gpu did not pass (a sticky error?)")
    broken(2, lambda x: set_status(x, "pass", "", "out_of_registers", "graph"), "no graph FAIL naming OutOfResources")
    # the refused launch's error picked up by the next kernel's capture
    broken(2, lambda x: set_status(x, "FAIL", "not capture-safe: during capture the launch returned "
                                   "cudaErrorLaunchOutOfResources", "naive_gpu", "graph"),
           "naive_gpu did not pass in both modes")
    # naive_gpu's graph records missing altogether must not pass for "every naive_gpu record passed"
    broken(2, lambda x: [s["records"].__setitem__(slice(None), [r for r in s["records"]
                         if not (r["kernel"] == "naive_gpu" and r["mode"] == "graph")]) for s in x["scenarios"]],
           "naive_gpu did not pass in both modes")

    def broken_hang(change, expect):
        doc = copy.deepcopy(hang)
        change(doc)
        rc, out = check(d, doc, mode="hang")
        assert rc == 1 and expect in out, (expect, rc, out)

    broken_hang(lambda x: x.__setitem__("complete", True), "expected false and 'GPU timeout'")
    broken_hang(lambda x: set_status(x, "ERROR", "cudaErrorLaunchFailure", "hang", "eager"), "no ERROR that timed out")
    broken_hang(lambda x: set_status(x, "skipped", NOT_RUN, "naive_gpu"), "naive_gpu did not pass")
    broken_hang(lambda x: set_status(x, "skipped", ENDED, "hang", "graph"), "graph replay two-reqs as not run")

    with open(os.path.join(d, "not-results.json"), "w") as f:
        f.write("[1, 2]")
    p = subprocess.run([sys.executable, script, "hang", os.path.join(d, "not-results.json")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "not a readable results file" in p.stderr, (p.returncode, p.stderr)
print("fault_records: the expected reports pass, each broken property fails")
