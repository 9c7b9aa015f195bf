#!/usr/bin/env python3
"""scripts/gpu_proof.sh's check before the stages that run the binary: in a scratch directory
holding a copy of the script, no build-gpu/verifybench is one line saying it is not built and
exit 4; a binary that fails as the loader does when a library is missing is one line quoting its
error and exit 4, with no stage run; a binary that starts passes the check and the stage runs.
Needs no GPU."""
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
failures = []


def expect(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def stub(d, body):
    os.makedirs(os.path.join(d, "build-gpu"), exist_ok=True)
    path = os.path.join(d, "build-gpu", "verifybench")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)


def proof(d, *stages):
    out = os.path.join(d, "out")
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run(["sh", os.path.join(d, "scripts", "gpu_proof.sh"), out, *stages], cwd=d,
                       capture_output=True, text=True, timeout=60)
    with open(os.path.join(out, "proof.log")) as f:
        return p.returncode, f.read()


with tempfile.TemporaryDirectory() as d:
    os.mkdir(os.path.join(d, "scripts"))
    shutil.copy(os.path.join(root, "scripts", "gpu_proof.sh"), os.path.join(d, "scripts"))

    rc, log = proof(d, "tiny")
    expect("not built: exit 4", rc == 4)
    expect("not built: says so", "build-gpu/verifybench is not built" in log)

    missing = "build-gpu/verifybench: error while loading shared libraries: libcjson.so.1: cannot open shared object file"
    stub(d, 'echo "%s" >&2\nexit 127\n' % missing)
    rc, log = proof(d, "capture", "baseline")
    expect("library missing: exit 4", rc == 4)
    expect("library missing: the loader's line quoted", "does not run: " + missing in log)
    expect("library missing: no stage ran", "== capture" not in log and "== Triton" not in log)

    # Starts, and the capture stage runs it: this stub syncs nothing, so the check must fail.
    stub(d, 'case "$1" in --version) echo "verifybench 0.1.0";; *) echo "7 records";; esac\n')
    rc, log = proof(d, "capture")
    expect("starts: the stage runs", "== capture" in log and "capture: NOT rejected" in log)
    expect("starts: exit 1 (the stage's verdict, not the check's)", rc == 1)

sys.exit(1 if failures else 0)
