#!/usr/bin/env python3
"""ptxas must not serialize the Hopper kernels' wgmma: when it cannot keep a wgmma pipeline's
registers apart (accumulators held in flight across other MMAs, say), it inserts a wait after
every wgmma.mma_async of the function and says so only in an info line (C7511, "Potential
Performance Loss: wgmma.mma_async instructions are serialized"). The build succeeds and the
results stay correct; only the time moves: a build of mla_wgmma's 64-row kernel that held S's
accumulators in flight across the follower's P.V ran eagle64 1.3-1.4x slower
(results/h200/NOTES.md, thirty-fifth). This test compiles the sm_90a verify kernel and the wgmma
ceiling probe as meson does (sm_90a, -O3) with ptxas's report and fails on that line, naming
the functions. It first checks its own reading of a report on sample lines, so that the check
can be seen failing without a serialized kernel.

usage: tests/test_wgmma_pipeline.py NVCC SOURCE_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

SOURCES = ["kernels/verify_attn_mla_wgmma_sm90a.cu", "kernels/wgmma_probe_sm90a.cu"]
SERIALIZED = re.compile(r"\(C7511\).*wgmma\.mma_async instructions are serialized.*function '([^']+)'")


def serialized_functions(report):
    """The functions ptxas's report says it serialized the wgmma of."""
    return [m.group(1) for m in SERIALIZED.finditer(report)]


def self_test():
    bad = ("ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
           "insufficient register resources for the wgmma pipeline in the function '_Z6kernelv'\n")
    good = ("ptxas info    : Compiling entry function '_Z6kernelv' for 'sm_90a'\n"
            "ptxas info    : Used 128 registers, used 16 barriers\n")
    failures = []
    if serialized_functions(bad) != ["_Z6kernelv"]:
        failures.append("a C7511 line was not read as a serialized function")
    if serialized_functions(good):
        failures.append("a clean report was read as serialized")
    return failures


def compile_report(nvcc, root, source, out):
    cmd = [nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-std=c++17", "-I" + root,
           "-I" + os.path.join(root, "kernels"), "-I" + os.path.join(root, "src"), "-Xptxas", "-v", "-c",
           os.path.join(root, source), "-o", out]
    run = subprocess.run(cmd, capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    nvcc, root = argv[1], argv[2]
    failures = self_test()
    with tempfile.TemporaryDirectory() as tmp:
        for source in SOURCES:
            rc, report = compile_report(nvcc, root, source, os.path.join(tmp, "k.o"))
            if rc != 0:
                failures.append(f"{source}: nvcc exited {rc}:\n{report}")
                continue
            serialized = serialized_functions(report)
            failures += [f"{source}: ptxas serialized the wgmma of {fn}" for fn in serialized]
            print(f"{source}: {len(serialized)} functions with serialized wgmma")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
