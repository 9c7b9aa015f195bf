#!/usr/bin/env python3
"""scripts/ncu_source_spans.py splits a kernel's SASS at its waits and barriers and sums
Nsight Compute's warp-state samples: checked on a small hand-written source page (the layout
`ncu --page source --csv --print-source sass` prints), gzipped as it is kept. Asserts the
total, the spans (each ending at its landmark, largest first, shares of the total), a named
region's sum, and clear errors for a malformed or out-of-range region and for a file that is not
such a listing; then, on a second page, which instructions count as testing an mbarrier
try-wait's result (and which do not) and the samples by barrier."""
import gzip
import os
import subprocess
import sys
import tempfile

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "ncu_source_spans.py")

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)",'
          '"stall_barrier","stall_wait","stall_barrier (Not Issued)"')
# (SASS, samples, barrier stalls, wait stalls): spans 0-2 (ends at BAR.SYNC) = 1 + 2 + 40,
# 3-4 (ends at WARPGROUP.DEPBAR) = 5 + 30, 5-6 (the end of the listing) = 7 + 8.
ROWS = [("IMAD R1, R2, R3, RZ", 1, 0, 1), ("LDS R4, [R5]", 2, 0, 2), ("BAR.SYNC.DEFER_BLOCKING 0x1, 0x100", 40, 39, 1),
        ("HGMMA.64x72x16.F32.BF16 R24, gdesc[UR4], R24", 5, 0, 5), ("WARPGROUP.DEPBAR.LE gsb0, 0x0", 30, 30, 0),
        ("FADD R1, R1, R2", 7, 0, 7), ("STS [R1], R2", 8, 0, 8)]


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "src.csv.gz")
    with gzip.open(path, "wt") as f:
        f.write('"Kernel Name","k(void)",\n' + HEADER + "\n")
        for i, (sass, n, bar, wait) in enumerate(ROWS):
            f.write(f'"0x{i:04x}","      {sass}","{n}","{n}","{bar}","{wait}","{bar}"\n')
    r = run(path, "--region", "mma:3-4", "--region", "5-6")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "7 SASS instructions, 93 warp-state samples" in out, out
    assert "barrier 74.2%" in out and "wait 25.8%" in out, out  # 69 and 24 of 93
    lines = [l.split() for l in out.splitlines()]
    spans = [l for l in lines if len(l) > 4 and l[0].isdigit() and l[1].isdigit()]
    assert [(s[0], s[1], s[2]) for s in spans] == [("0", "2", "43"), ("3", "4", "35"), ("5", "6", "15")], spans
    assert spans[0][3] == "46.2%" and "BAR.SYNC" in " ".join(spans[0]), spans[0]
    assert any(l[:3] == ["mma", "3-4", "35"] for l in lines), out
    assert any(l[:3] == ["5-6", "5-6", "15"] for l in lines), out
    r = run(path, "--region", "mma:x-4")
    assert r.returncode == 2 and "not a SASS index range" in r.stderr, (r.returncode, r.stderr)
    r = run(path, "--region", "far:9-12")
    assert r.returncode == 1 and "index 9 past the listing's 7 instructions" in r.stderr, (r.returncode, r.stderr)
    bad = os.path.join(d, "bad.csv")
    with open(bad, "w") as f:
        f.write("a,b\n1,2\n")
    r = run(bad)
    assert r.returncode != 0 and "not an ncu --page source --csv listing" in r.stderr, (r.returncode, r.stderr)

# mbarrier try-waits: the instruction testing the predicate carries the long_sb stall. Rows:
# (SASS, samples, long_sb). Counted: row 2 (P0 tested after an ISETP that writes P1 only) and
# row 8 (a register-indexed barrier, named by its base). Not counted: row 5 (P1 rewritten by the
# ISETP first), row 11 (an unguarded branch ends the straight line first), the LDG's stall.
WAITS = [("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR8+0x1d878], R0", 1, 0),
         ("ISETP.NE.AND P1, PT, R1, R2, PT", 1, 0),
         ("@!P0  BRA 0x100", 50, 48),
         ("SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR8+0x1d8a0], R0", 1, 0),
         ("ISETP.NE.AND P1, PT, R3, R4, PT", 1, 0),
         ("@!P1  BRA 0x200", 9, 9),
         ("LDG.E R5, desc[UR4][R6.64]", 20, 20),
         ("SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [R3+URZ+0x1d860], R2", 1, 0),
         ("@!P2  BRA 0x300", 10, 10),
         ("SYNCS.PHASECHK.TRANS64.TRYWAIT P3, [UR8+0x1d898], R0", 1, 0),
         ("BRA 0x400", 1, 0),
         ("@!P3  BRA 0x500", 5, 5)]
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "waits.csv")
    with open(path, "w") as f:
        f.write('"Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb"\n')
        for i, (sass, n, lsb) in enumerate(WAITS):
            f.write(f'"0x{i:04x}","      {sass}","{n}","{lsb}"\n')
    r = run(path, "--top", "0")
    assert r.returncode == 0, r.stderr
    out = r.stdout  # 101 samples; long_sb 92: 58 at the two readers, 34 elsewhere
    assert "mbarrier waits: 60 samples (59.4%) at the 2 instructions" in out, out
    assert "long_sb 58 of them; long_sb elsewhere 34 (33.7%)" in out, out
    assert "0x1d878 50 (49.5%), 0x1d860 10 (9.9%)" in out and "0x1d8a0" not in out, out
    r = run(path)  # the default listing (spans too) runs on the same page
    assert r.returncode == 0, r.stderr
with tempfile.TemporaryDirectory() as d:  # no try-wait: no such line
    path = os.path.join(d, "plain.csv")
    with open(path, "w") as f:
        f.write('"Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb"\n"0x0","LDG.E R1, [R2.64]","3","3"\n')
    r = run(path)
    assert r.returncode == 0 and "mbarrier waits" not in r.stdout, (r.returncode, r.stdout, r.stderr)
print("ncu_source_spans: ok")
