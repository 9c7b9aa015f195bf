#!/usr/bin/env python3
"""scripts/sass_diff.py: reading nvdisasm's text and ptxas -v's log, zeroing nvcc's per-file
namespace hashes, the verdicts (same, differs, new, gone), and a loop's counts, load-to-use
distances and encoded stall cycles, on fixtures; then, where nvcc
(argv[1]) and nvdisasm are found, the command itself on two small trees: an unchanged kernel
and one in an anonymous namespace (whose symbol hash differs between the trees) are `same`, an
edited one `differs`, an added one `new`, a removed one `gone`, exit 1; identical trees exit 0.
No GPU needed."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(root, "scripts"))
import sass_diff  # noqa: E402

# ---- the architecture each file is built for (as meson.build builds it) ----------------------

assert sass_diff.arch_of("kernels/verify_attn_mla_wgmma_sm90a.cu", "80") == "90a"
assert sass_diff.arch_of("kernels/verify_attn_mla_onepass_ws.cu", "90") == "90a"
assert sass_diff.arch_of("kernels/verify_attn_mla_onepass.cu", "90") == "90"
assert sass_diff.arch_of("kernels/verify_attn_mla_onepass_ws.cu", "120") == "120a"
assert sass_diff.arch_of("kernels/verify_attn_mla_onepass_ws.cu", "80") == "80"
assert sass_diff.arch_of("kernels/verify_attn_flash_paged.cu", "90") == "90"

# ---- fixtures: the parts that must not count as change --------------------------------------

a = "_ZN59_GLOBAL__N__b0424ee2_26_verify_attn_mla_onepass_cu_b98c1b5614onepass_kernelILi9EEEv16vb_verify_paramsPvN2vb11SchedConfigE"
b = "_ZN59_GLOBAL__N__1f2e3d4c_26_verify_attn_mla_onepass_cu_0badcafe14onepass_kernelILi9EEEv16vb_verify_paramsPvN2vb11SchedConfigE"
assert a != b and sass_diff.normalize_symbol(a) == sass_diff.normalize_symbol(b)
assert len(sass_diff.normalize_symbol(a)) == len(a)  # lengths kept: it still demangles
assert sass_diff.normalize_symbol("_Z6kernelPf") == "_Z6kernelPf"
if shutil.which("c++filt"):
    assert sass_diff.pretty(sass_diff.normalize_symbol(a)) == "onepass_kernel<9>", sass_diff.pretty(a)


def listing(name, body, label):
    lines = [f"\t.section\t.text.{name},\"ax\",@progbits", f".text.{name}:", f"{name}:"]
    for i, ins in enumerate(body):
        lines.append(f"        /*{16 * i:04x}*/                   {ins.format(L=label, pad=' ' * label)} ;")
    lines.append(f".L_x_{label}:")
    return "\n".join(lines)


body = ["LDC R1, c[0x0][0x28]", "@!P0 BRA `(.L_x_{L})", "HMMA.16816.F32.BF16 R4, R8, R12, R4",
        "STL [R1+0x4], R2 {pad}(*\"SpillRefill\"*)", "EXIT"]
one = sass_diff.functions(listing(a, body, 12) + "\n" + listing("_Z4keepPf", ["EXIT"], 3))
two = sass_diff.functions(listing(b, body, 977) + "\n" + listing("_Z5freshPf", ["EXIT"], 4))
key = sass_diff.normalize_symbol(a)
assert one[key] == two[key], (one[key], two[key])  # label numbers and the hash do not count
assert sass_diff.counts(one[key]) == {"instructions": 5, "mma": 1, "local": 1}, sass_diff.counts(one[key])
rows = {sym: (v, n) for sym, v, n in sass_diff.compare(one, two)}
assert rows == {key: ("same", 0), "_Z4keepPf": ("gone", 1), "_Z5freshPf": ("new", 1)}, rows
edited = {key: [i.replace("R4, R8", "R4, R9") for i in one[key]], "_Z4keepPf": one["_Z4keepPf"]}
assert sass_diff.compare(one, edited) == [("_Z4keepPf", "same", 0), (key, "differs", 2)], sass_diff.compare(one, edited)

log = f"""ptxas info    : Compiling entry function '{a}' for 'sm_90'
ptxas info    : Function properties for {a}
    104 bytes stack frame, 118 bytes spill stores, 148 bytes spill loads
ptxas info    : Used 255 registers, used 16 barriers, 104 bytes cumulative stack size
ptxas info    : Compiling entry function '_Z4keepPf' for 'sm_90'
ptxas info    : Function properties for _Z4keepPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
"""
res = sass_diff.ptxas_resources(log)
assert res == {key: (255, 118, 148), "_Z4keepPf": (8, 0, 0)}, res
# A loop (its backward branch), its MMA and spill, and how far each load's first use is.
loop_text = "\n".join([
    ".text._Z4loopPf:",
    "        /*0000*/                   MOV R1, RZ ;",
    ".L_x_7:",
    "        /*0010*/                   LDSM.16.M88.4 R8, [R2] ;",
    "        /*0020*/                   LDG.E.128 R20, desc[UR4][R4.64] ;",
    "        /*0030*/                   LDGSTS.E.BYPASS.128 [R40], desc[UR4][R20.64] ;",
    "        /*0040*/                   HMMA.16816.F32.BF16 R12, R8, R22, R12 ;",
    "        /*0050*/                   IADD3 R44, R40, 0x10, RZ ;",
    "        /*0060*/                   STL [R1+0x4], R9 ;",
    "        /*0070*/                   LDS R30, [R3] ;",
    "        /*0078*/              @!PT LDS RZ, [RZ] ;",
    "        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;",
    "        /*0090*/                   FADD R31, R30, 1 ;",
    '\t//## File "/src/kernels/k.cu", line 12 inlined at "/src/kernels/k.cuh", line 5',
    '\t//## File "/src/kernels/k.cuh", line 5 inlined at "/src/kernels/k.cuh", line 9',
    '\t//## File "/src/kernels/k.cuh", line 9 inlined at "/src/kernels/k.cu", line 40',
    '\t//## File "/src/kernels/k.cu", line 40',
    "        /*00a0*/               @P0 BRA `(.L_x_7) ;",
    "        /*00b0*/                   EXIT ;"])
code, labels, sources = sass_diff.listing(loop_text)["_Z4loopPf"]
assert labels == {".L_x_7": 0x10}, labels
# the loop's branch back, and the lines it was inlined at, innermost first
assert sources == {0xa0: "k.cu:12 < k.cuh:5 < :9 < k.cu:40", 0xb0: "k.cu:12 < k.cuh:5 < :9 < k.cu:40"}, sources
found = sass_diff.loops(code, labels)
assert [(a, b, len(body)) for a, b, body in found] == [(0x10, 0xa0, 11)], found
body = found[0][2]
assert sass_diff.counts(body) == {"instructions": 11, "mma": 1, "local": 1}, sass_diff.counts(body)
# LDSM's R8-R11 are first read by the HMMA 3 later; LDG's R20-R23 by the LDGSTS's source
# address 1 later. The LDGSTS writes no register (R40 is its shared-memory address), so the
# IADD3 reading R40 is no use of a load; LDS's R30 is read only after the barrier, where the
# search stops; the predicated-off LDS to RZ (ptxas's padding) writes nothing.
assert sass_diff.load_use_distances(body) == [3, 1], sass_diff.load_use_distances(body)
assert "1 mma" in sass_diff.loop_summary(body) and "median 3" in sass_diff.loop_summary(body)
# The global loads alone: LDG's first use is 1 later, so its latency is exposed.
assert sass_diff.load_use_distances(body, ("LDG",)) == [1], sass_diff.load_use_distances(body, ("LDG",))
assert "global loads 1 of 1 used within 2" in sass_diff.loop_summary(body), sass_diff.loop_summary(body)
no_global = [i for i in body if not i.split()[0].startswith(("LDG.", "LDGSTS"))]
assert "global loads" not in sass_diff.loop_summary(no_global), sass_diff.loop_summary(no_global)
# Encoded stalls by opcode over an address range: the LDS pair sums, BAR (0x80) lies outside
# the range and the EXIT at 0xb0 has no stall recorded.
at = {0x10: 4, 0x20: 1, 0x40: 6, 0x70: 2, 0x78: 3, 0x80: 9}
by = sass_diff.stalls_by_opcode(code, at, 0x10, 0x78)
assert by == "HMMA 6, LDS 5, LDSM 4, LDG 1", by
assert sass_diff.stalls_by_opcode(code, at, 0x10, 0x78, top=2) == "HMMA 6, LDS 5"
# `nvdisasm -hex`: each instruction's second 64-bit word on the next line, bits 41-44 the stall
# cycles its control bits encode (two HMMAs of an sm_90a build: 6 before another HMMA, 1 before
# a load); line information between instructions does not break the pairing.
hex_text = "\n".join([
    ".text._Z4loopPf:",
    "        /*0000*/                   HMMA.16816.F32.BF16 R104, R104, R64.reuse, RZ ;   /* 0x000000406868723c */",
    "                                                                                     /* 0x084fec00000418ff */",
    '\t//## File "/src/kernels/k.cu", line 40',
    "        /*0010*/                   HMMA.16816.F32.BF16 R60, R60, R64, RZ ;   /* 0x000000403c3c723c */",
    "                                                                             /* 0x002fe200000418ff */",
    ".text._Z4nextPf:",
    "        /*0000*/                   EXIT ;   /* 0x000000000000794d */",
    "                                            /* 0x000fea0003800000 */"])
st = sass_diff.encoded_stalls(hex_text)
assert st == {"_Z4loopPf": {0x0: 6, 0x10: 1}, "_Z4nextPf": {0x0: 5}}, st
assert sass_diff.loop_summary(body, 7).endswith("; 7 cycles of encoded stalls"), sass_diff.loop_summary(body, 7)
assert "encoded" not in sass_diff.loop_summary(body)
print("sass_diff: fixtures as expected")

# ---- the command on two small trees ----------------------------------------------------------

nvcc = shutil.which(sys.argv[1] if len(sys.argv) > 1 else "nvcc")
try:
    nvdisasm, why = sass_diff.find_nvdisasm(None), None
except sass_diff.Failure as e:
    nvdisasm, why = None, str(e)
if nvcc is None or nvdisasm is None:
    print(f"sass_diff: the build part skipped ({why or 'nvcc not found'})")
    sys.exit(0)

BASE = """__global__ void keep(float *x) { x[threadIdx.x] *= 2.f; }
__global__ void edit(float *x) { x[threadIdx.x] += 1.f; }
__global__ void gone(float *x) { x[threadIdx.x] = 0.f; }
namespace { __global__ void hidden(float *x) { x[threadIdx.x] -= 3.f; } }
void launch(float *x) { hidden<<<1, 32>>>(x); }
"""
NEW = BASE.replace("+= 1.f", "+= 5.f").replace("__global__ void gone(float *x) { x[threadIdx.x] = 0.f; }",
                                                "__global__ void fresh(float *x) { x[threadIdx.x] = 1.f; }")
assert NEW != BASE

with tempfile.TemporaryDirectory() as d:
    def tree(name, text):
        path = os.path.join(d, name)
        os.makedirs(os.path.join(path, "kernels"))
        os.makedirs(os.path.join(path, "scripts"))
        for script in ("sass_diff.py", "regress.py", "ab_runs.py", "results_file.py"):  # and what it imports
            shutil.copy(os.path.join(root, "scripts", script), os.path.join(path, "scripts"))
        with open(os.path.join(path, "kernels", "tiny.cu"), "w") as f:
            f.write(text)
        return path

    base, new, copy = tree("base", BASE), tree("new", NEW), tree("copy", NEW)
    env = dict(os.environ, PATH=os.path.dirname(nvcc) + os.pathsep + os.environ.get("PATH", ""))

    def run(tree_dir, base_dir, *extra):
        p = subprocess.run([sys.executable, os.path.join(tree_dir, "scripts", "sass_diff.py"), "--base-src", base_dir,
                            "--nvdisasm", nvdisasm, *extra], env=env, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    verdict_json = os.path.join(d, "verdict.json")
    rc, out, err = run(new, base, "--show", "edit", "--loops", "keep", "--json", verdict_json)
    assert rc == 1, (rc, out, err)
    with open(verdict_json) as f:
        doc = json.load(f)
    assert doc["schema"] == "verifybench.sass_diff/1" and doc["moved"] is True, doc
    by_name = {r["name"]: r for r in doc["records"]}
    assert by_name["edit"]["verdict"] == "differs" and by_name["edit"]["lines_changed"] > 0, by_name["edit"]
    assert by_name["gone"]["new"] is None and by_name["fresh"]["base"] is None, doc
    assert by_name["keep"]["base"] == by_name["keep"]["new"] and by_name["keep"]["new"]["registers"] > 0, doc
    # rows: "  VERDICT [(N lines)]  NAME  [counts]"
    verdicts = {line.split("[")[0].split()[-1]: line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert verdicts.get("keep") == "same", out
    assert verdicts.get("hidden") == "same", out  # its namespace hash differs between the trees
    assert verdicts.get("edit") == "differs", out
    assert verdicts.get("gone") == "gone" and verdicts.get("fresh") == "new", out
    assert "--- base/edit" in out and "+++ new/edit" in out, out  # --show's diff
    assert "loops holding MMAs in keep" in out, out  # --loops (none: these kernels have no MMA)

    rc, out, err = run(new, copy)
    assert rc == 0 and "differs" not in out and out.count("same") == 4, (rc, out, err)
print("sass_diff: the command as expected")
