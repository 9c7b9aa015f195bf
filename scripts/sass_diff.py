#!/usr/bin/env python3
"""Did a change move a kernel's machine code? Compares, function by function, the SASS of the
kernels built from the working tree with BASE's.

    scripts/sass_diff.py [BASE] [--arch A]... [--file F]... [--base-src DIR] [--json FILE]
                         [--show NAME] [--loops NAME] [--nvdisasm PATH]

BASE is a git revision (default HEAD), unpacked with `git archive`; --base-src DIR takes a tree
unpacked elsewhere instead (a copy of the repository without git history). Each kernel file
(default: kernels/*.cu) of both trees is compiled to a cubin for each architecture (default
90; files named *_sm90a.cu for sm_90a alone and mla_onepass_ws's for sm_90a in place of sm_90, as
meson.build builds them) with the build's
device flags, and disassembled with nvdisasm. A function's instructions are compared after
what moves without the code changing is taken out: addresses, label numbers, the anonymous
namespace's per-file hash in symbol names, and nvdisasm's annotations.

One row a function: `same`, or how many instruction lines differ, with both sides' counts of
instructions, MMAs and local-memory accesses and ptxas's registers and spill bytes. A
refactor, a host-side change or a change aimed at one template instance must leave the other
functions `same`: that is the evidence that a timing difference there is noise, and that
results measured before the change still describe them.

--json FILE also writes every function's verdict and both sides' counts (schema
verifybench.sass_diff/1). --show NAME prints the unified diff of the functions whose name
contains NAME; --loops NAME lists their loops that hold MMAs (found by their backward
branches, outermost first, with the source line of that branch and the lines it was inlined
at) on both sides: instructions, MMAs, ldmatrix, local-memory accesses (spills inside a hot
loop) and barriers, how many instructions after each shared- or global-memory load the
first one reading its result comes (a load right before its use leaves the latency exposed,
unless another warp fills it), how many of its global loads are used within two instructions
(each such load waits out the memory's latency alone), and the cycles of stall the compiler
encoded in the loop's instructions (each instruction's control bits: the cycles the warp waits
before issuing its next one, e.g. 6 between two m16n8k16 HMMAs on sm_90, the SMSP's tensor
rate), summed over the body once: the loop's static issue length, every path of it counted,
scoreboard waits not; and on a second line those cycles by opcode, largest first.

Needs nvcc and nvdisasm (the CUDA toolkit; nvdisasm also comes in PyPI's nvidia-cuda-nvdisasm
wheel), no GPU. Exit status: 0 every function the same; 1 a function differs, is new or is
gone; 2 bad usage or a failed build (the compiler's message is shown).
"""
import argparse
import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regress  # noqa: E402  (a commit's tree from git archive, shared)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USAGE = ("scripts/sass_diff.py [BASE] [--arch A]... [--file F]... [--base-src DIR] [--show NAME] [--loops NAME] "
         "[--json FILE] [--nvdisasm PATH]")
# The device flags meson.build gives every kernel file (the optimisation level is ptxas's -O3).
NVCC_FLAGS = ["-lineinfo", "-Isrc", "-Ikernels", "-Ioracle"]


class Failure(Exception):
    """Why there is no answer: printed as one line, exit 2."""


# ---- reading nvdisasm's output ------------------------------------------------------------

SECTION = re.compile(r"^\.text\.(\S+):\s*$")
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;")
ANON_NAMESPACE = re.compile(r"_GLOBAL__N__([0-9a-f]{8})_(\d+)_")
LABEL = re.compile(r"\.L_x_\d+")


def normalize_symbol(name):
    """A symbol with its anonymous namespace's two per-file hashes zeroed: they change with the
    file's path and contents although the function does not. The namespace is nvcc's
    _GLOBAL__N__<hash>_<n>_<n characters of file name>_<hash>; lengths are kept, so the name
    still demangles."""
    out, pos = [], 0
    for m in ANON_NAMESPACE.finditer(name):
        if m.start() < pos:
            continue
        tail = m.end() + int(m.group(2))
        if not re.fullmatch(r"_[0-9a-f]{8}", name[tail:tail + 9]):
            continue
        out += [name[pos:m.start()], f"_GLOBAL__N__00000000_{m.group(2)}_", name[m.end():tail], "_00000000"]
        pos = tail + 9
    return "".join(out) + name[pos:]


def normalize_instruction(text):
    """An instruction without what differs between two builds of the same code: label numbers,
    hashed symbol names (branch targets, calls), annotations and spacing."""
    text = re.sub(r"\(\*.*?\*\)", "", text)  # nvdisasm's annotations, e.g. (*"SpillRefill"*)
    return normalize_symbol(LABEL.sub(".L", re.sub(r"\s+", " ", text).strip()))


LABEL_LINE = re.compile(r"^\s*(\.L_x_\d+):\s*$")
ADDRESS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/")


LINE_INFO = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')


def listing(sass):
    """{symbol (normalized): ([(address, instruction)], {label: address}, {address: source})}
    from nvdisasm's text: the instructions as printed, where each label points, and, where
    nvdisasm printed line information (-gi), each instruction's source position with the
    positions it was inlined at, innermost first ("file.cu:12 < :40 < :77")."""
    out, current, pending, block, source = {}, None, [], [], ""
    for line in sass.splitlines():
        m = SECTION.match(line.strip())
        if m:
            current = normalize_symbol(m.group(1))
            out[current] = ([], {}, {})
            pending, block, source = [], [], ""
            continue
        if current is None:
            continue
        m = LINE_INFO.match(line)
        if m:  # a block of these, innermost first, comes before the instructions it describes
            block.append((os.path.basename(m.group(1)), m.group(2)))
            continue
        if block:
            source = " < ".join(f"{f}:{n}" if k == 0 or f != block[k - 1][0] else f":{n}"
                                for k, (f, n) in enumerate(block))
            block = []
        m = LABEL_LINE.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTRUCTION.match(line)
        if m:
            address = int(ADDRESS.match(line).group(1), 16)
            out[current][0].append((address, m.group(1)))
            for label in pending:
                out[current][1][label] = address
            pending = []
            if source:
                out[current][2][address] = source
    return out


def functions(sass):
    """{symbol (normalized): [instructions (normalized)]} from nvdisasm's text."""
    return {sym: [normalize_instruction(i) for _, i in code] for sym, (code, _, _) in listing(sass).items()}


def opcode(instruction):
    """The opcode of an instruction, its predicate left out."""
    parts = instruction.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0] if parts else ""


def counts(instructions):
    """Instructions, MMAs (mma.sync's HMMA and wgmma's HGMMA) and local-memory accesses."""
    ops = [opcode(i) for i in instructions]
    return {
        "instructions": len(ops),
        "mma": sum(op.startswith(("HMMA", "HGMMA")) for op in ops),
        "local": sum(op.startswith(("LDL", "STL")) for op in ops),
    }


def registers_of(operand):
    return [int(r) for r in re.findall(r"\bR(\d+)\b", operand)]


def load_width(op):
    """Registers a load writes: ldmatrix .x4/.x2/.x1, or the access width of LDG, LDS and LDL."""
    m = re.search(r"\.M(?:T)?88\.(\d)", op)
    if m:
        return int(m.group(1))
    m = re.search(r"\.(64|128)\b", op)
    return int(m.group(1)) // 32 if m else 1


def load_use_distances(code, kinds=("LDSM", "LDS", "LDG")):
    """For each load of CODE ([instruction]) whose opcode starts with one of KINDS (default:
    shared and global memory), how many instructions later the first one reading its
    destination comes (straight-line code only: the search stops at a branch or a barrier)."""
    out = []
    for i, ins in enumerate(code):
        parts = ins.split()
        if parts and parts[0].startswith("@"):
            parts = parts[1:]
        if not parts or not parts[0].startswith(kinds) or len(parts) < 2:
            continue
        operands = " ".join(parts[1:]).split(",")
        first = registers_of(operands[0])
        if not operands[0].strip().startswith("R") or not first:
            continue  # no register written: LDGSTS (cp.async) goes to shared memory, RZ nowhere
        dest = set(range(first[0], first[0] + load_width(parts[0])))
        for j in range(i + 1, len(code)):
            later = code[j].split()
            if later and later[0].startswith("@"):
                later = later[1:]
            if not later:
                continue
            # Stores, reductions and cp.async write no register: all their operands are read.
            reads_all = later[0].startswith(("ST", "RED", "ATOM", "LDGSTS"))
            sources = " ".join(later[1:]).split(",")[0 if reads_all else 1:]
            if any(r in dest for src in sources for r in registers_of(src)):
                out.append(j - i)
                break
            if later[0].startswith(("BRA", "BAR", "EXIT", "RET")):
                break
    return out


def loops(code, labels):
    """Loops of a function, found by their backward branches: [(first, last address, their
    instructions)], outermost first."""
    found = []
    index = {address: k for k, (address, _) in enumerate(code)}
    for k, (address, ins) in enumerate(code):
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", ins)
        if m and m.group(1) in labels and labels[m.group(1)] <= address:
            start = index[labels[m.group(1)]]
            found.append((code[start][0], address, [i for _, i in code[start:k + 1]]))
    return sorted(found, key=lambda x: (x[0], -x[1]))


def loop_summary(body, stall_cycles=None):
    ops = [opcode(i) for i in body]
    d = sorted(load_use_distances(body))
    median = d[len(d) // 2] if d else "-"
    near = sum(1 for x in d if x <= 2)
    stalls = "" if stall_cycles is None else f"; {stall_cycles} cycles of encoded stalls"
    # A global load used within two instructions waits out the memory's whole latency (hundreds
    # of cycles) unless other warps fill it; loads in a row before their uses share one wait.
    g = load_use_distances(body, ("LDG",))
    glob = f"; global loads {sum(1 for x in g if x <= 2)} of {len(g)} used within 2" if g else ""
    return (f"{len(ops)} ins, {counts(body)['mma']} mma, {sum(op.startswith('LDSM') for op in ops)} ldsm, "
            f"{counts(body)['local']} local, {sum(op.startswith('BAR') for op in ops)} bar; "
            f"load to first use median {median} ({near} of {len(d)} within 2){glob}{stalls}")


def stalls_by_opcode(code, at, first, last, top=6):
    """The encoded stalls of the instructions at addresses FIRST..LAST of CODE ([(address,
    instruction)]), summed by opcode (its first dot-separated part), largest first: where a
    loop's static issue time goes. AT: {address: cycles} (encoded_stalls)."""
    by = {}
    for address, ins in code:
        if first <= address <= last and address in at:
            op = opcode(ins).split(".")[0]
            by[op] = by.get(op, 0) + at[address]
    ranked = sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return ", ".join(f"{op} {cycles}" for op, cycles in ranked)


CONTROL_WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def encoded_stalls(hex_sass):
    """{symbol (normalized): {address: stall cycles}} from `nvdisasm -hex`'s text, which prints
    each 128-bit instruction as two 64-bit words, the second on the next line. From Volta on,
    bits 105-108 of an instruction (bits 41-44 of its second word) are the cycles the warp
    waits before it may issue its next instruction."""
    out, current, address = {}, None, None
    for line in hex_sass.splitlines():
        m = SECTION.match(line.strip())
        if m:
            current, address = normalize_symbol(m.group(1)), None
            out[current] = {}
            continue
        words = CONTROL_WORD.findall(line)
        if current is None or not words:
            continue
        at = ADDRESS.match(line)
        if at:  # the instruction's line: its first word
            address = int(at.group(1), 16)
        elif address is not None:  # the next line: the second word
            out[current][address] = (int(words[0], 16) >> 41) & 0xF
            address = None
    return out


def ptxas_resources(log):
    """{symbol (normalized): (registers, spill stores, spill loads)} from ptxas -v's output."""
    out, fn, spills = {}, None, (0, 0)
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            if m.group(1) != fn:
                fn, spills = m.group(1), (0, 0)
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            spills = (int(m.group(1)), int(m.group(2)))
        m = re.search(r"Used (\d+) registers", line)
        if m and fn:
            out[normalize_symbol(fn)] = (int(m.group(1)), *spills)
            fn = None
    return out


# ---- building ------------------------------------------------------------------------------


def find_nvdisasm(explicit):
    """nvdisasm: --nvdisasm, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, or a pip wheel's."""
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise Failure(f"--nvdisasm {explicit}: not an executable file")
        return explicit
    found = shutil.which("nvdisasm")
    if found:
        return found
    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    candidates = [os.path.join(h, "bin", "nvdisasm") for h in homes if h]
    for entry in sys.path:
        candidates += sorted(glob.glob(os.path.join(entry, "nvidia", "*", "bin", "nvdisasm")))
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    raise Failure("nvdisasm not found: install the CUDA toolkit's (or `python3 -m pip install "
                  "nvidia-cuda-nvdisasm`), or pass --nvdisasm PATH")


# Files meson.build builds for the arch-specific targets in place of sm_90, sm_100 and sm_120.
ARCH_SPECIFIC = ("verify_attn_mla_onepass_ws.cu",)


def arch_of(path, arch):
    """The architecture a file is built for: its own sm_90a for Hopper-only files, the
    arch-specific target of sm_90, sm_100 and sm_120 for the files in ARCH_SPECIFIC."""
    if path.endswith("_sm90a.cu"):
        return "90a"
    if os.path.basename(path) in ARCH_SPECIFIC and arch in ("90", "100", "120"):
        return arch + "a"
    return arch


def compile_file(tree, path, arch, cubin):
    """ptxas -v's log of PATH (relative to TREE) compiled to CUBIN for sm_ARCH."""
    cmd = ["nvcc", "-cubin", f"-gencode=arch=compute_{arch},code=sm_{arch}", *NVCC_FLAGS, "-Xptxas", "-v",
           path, "-o", cubin]
    p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write("\n".join((p.stdout + p.stderr).splitlines()[-30:]) + "\n")
        raise Failure(f"nvcc failed on {path} for sm_{arch} in {tree}")
    return p.stdout + p.stderr


def disassemble(nvdisasm, cubin, *flags):
    # -gi: line information with inlining (the kernels are built with -lineinfo), for --loops
    p = subprocess.run([nvdisasm, "-c", "-gi", *flags, cubin], capture_output=True, text=True)
    if p.returncode != 0:
        raise Failure(f"nvdisasm failed on {cubin}: {p.stderr.strip()}")
    return p.stdout


def side(tree, path, arch, nvdisasm, work, tag, stalls=False):
    """(nvdisasm's text, {symbol: resources}, and with stalls the encoded stalls) of one file
    built from one tree; a file the tree lacks has no functions."""
    if not os.path.exists(os.path.join(tree, path)):
        return "", {}, {}
    cubin = os.path.join(work, f"{tag}.cubin")
    log = compile_file(tree, path, arch, cubin)
    # -hex adds each instruction's encoding after its ';' and on the next line, which the
    # instruction parser (INSTRUCTION, up to the ';') leaves out: one disassembly serves both.
    sass = disassemble(nvdisasm, cubin, *(["-hex"] if stalls else []))
    return sass, ptxas_resources(log), encoded_stalls(sass) if stalls else {}


# ---- comparing and reporting ---------------------------------------------------------------


def compare(base, new):
    """Rows (symbol, verdict, lines differing) for the union of both sides' functions."""
    rows = []
    for sym in sorted(set(base) | set(new)):
        if sym not in base:
            rows.append((sym, "new", len(new[sym])))
        elif sym not in new:
            rows.append((sym, "gone", len(base[sym])))
        elif base[sym] == new[sym]:
            rows.append((sym, "same", 0))
        else:
            changed = sum(1 for line in difflib.unified_diff(base[sym], new[sym], lineterm="", n=0)
                          if line[:1] in "+-" and not line.startswith(("+++", "---")))
            rows.append((sym, "differs", changed))
    return rows


@lru_cache(maxsize=None)  # one c++filt a symbol, however many rows and loops name it
def pretty(symbol):
    """A demangled name without the namespace noise and the parameter list."""
    try:
        text = subprocess.run(["c++filt", symbol], capture_output=True, text=True).stdout.strip() or symbol
    except OSError:
        text = symbol
    text = text.replace("(anonymous namespace)::", "").replace("void ", "")
    return re.sub(r"\(.*", "", text)


def pair(a, b):
    return str(a) if a == b else f"{a} → {b}"


def cell(side_counts, side_res, sym, key):
    if sym not in side_counts:
        return "-"
    if key == "regs":
        return str(side_res.get(sym, ("?",))[0])
    if key == "spills":
        r = side_res.get(sym)
        return f"{r[1]}/{r[2]}" if r else "?"
    return str(counts(side_counts[sym])[key])


def report(path, arch, rows, base, new, base_res, new_res):
    print(f"{path} sm_{arch}")
    for sym, verdict, changed in rows:
        what = f"differs ({changed} lines)" if verdict == "differs" else verdict
        stats = "  ".join(
            f"{label} {pair(cell(base, base_res, sym, key), cell(new, new_res, sym, key))}"
            for label, key in (("ins", "instructions"), ("mma", "mma"), ("local", "local"), ("regs", "regs"),
                               ("spills", "spills")))
        print(f"  {what:<22} {pretty(sym)}  [{stats}]")


def record(path, arch, row, base, new, base_res, new_res):
    """One function's row as JSON (--json): both sides' counts, null where a side lacks it."""
    sym, verdict, changed = row

    def one(code, res):
        if sym not in code:
            return None
        regs, stores, loads = res.get(sym, (None, None, None))
        return {**counts(code[sym]), "registers": regs, "spill_stores": stores, "spill_loads": loads}

    return {"file": path, "arch": f"sm_{arch}", "symbol": sym, "name": pretty(sym), "verdict": verdict,
            "lines_changed": changed, "base": one(base, base_res), "new": one(new, new_res)}


def matches(name, sym):
    return name in sym or name in pretty(sym)


def show(name, base, new):
    for sym in sorted(set(base) | set(new)):
        if matches(name, sym):
            sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
                base.get(sym, []), new.get(sym, []), f"base/{pretty(sym)}", f"new/{pretty(sym)}", lineterm=""))


def show_loops(name, base_listing, new_listing, base_stalls=None, new_stalls=None):
    """The MMA loops of the functions whose name contains NAME, on both sides, with their
    encoded stalls where given ({symbol: {address: cycles}}, encoded_stalls)."""
    for sym in sorted(set(base_listing) | set(new_listing)):
        if not matches(name, sym):
            continue
        print(f"  loops holding MMAs in {pretty(sym)}:")
        for label, lst, stalls in (("base", base_listing, base_stalls), ("new", new_listing, new_stalls)):
            if sym not in lst:
                print(f"    {label}: no such function")
                continue
            code, labels, sources = lst[sym]
            at = (stalls or {}).get(sym)
            for first, last, body in loops(code, labels):
                if counts(body)["mma"]:
                    where = f" (branch back at {sources[last]})" if last in sources else ""
                    cycles = sum(c for a, c in at.items() if first <= a <= last) if at else None
                    print(f"    {label} {first:#07x}-{last:#07x}{where}: {loop_summary(body, cycles)}")
                    if at:
                        print(f"      encoded stalls by opcode: {stalls_by_opcode(code, at, first, last)}")


# ---- the command ---------------------------------------------------------------------------


def parse(argv):
    ap = argparse.ArgumentParser(prog="sass_diff.py", usage=USAGE, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", nargs="?", default="HEAD", help="git revision to compare with (default HEAD)")
    ap.add_argument("--arch", action="append", help="compute capability, e.g. 90 (repeatable; default 90)")
    ap.add_argument("--file", action="append", help="kernel file under the repository (repeatable; default kernels/*.cu)")
    ap.add_argument("--base-src", help="compare with this source tree instead of BASE's")
    ap.add_argument("--show", metavar="NAME", help="print the diff of the functions whose name contains NAME")
    ap.add_argument("--json", metavar="FILE", help="also write every function's verdict and counts as JSON")
    ap.add_argument("--loops", metavar="NAME", help="list the loops holding MMAs of the functions whose name contains NAME")
    ap.add_argument("--nvdisasm", help="nvdisasm to use (default: found on PATH, in CUDA_HOME or a pip wheel)")
    opt = ap.parse_args(argv)
    for a in opt.arch or []:
        if not re.fullmatch(r"\d{2,3}a?", a):
            ap.error(f"--arch {a}: expected a compute capability such as 80, 90 or 120")
    return opt


def kernel_files(opt, base_tree):
    if opt.file:
        for f in opt.file:
            if not os.path.exists(os.path.join(REPO, f)) and not os.path.exists(os.path.join(base_tree, f)):
                raise Failure(f"--file {f}: in neither tree")
        return opt.file
    names = {os.path.relpath(p, tree) for tree in (REPO, base_tree) for p in glob.glob(os.path.join(tree, "kernels", "*.cu"))}
    return sorted(names)


def main(argv):
    opt = parse(argv)
    try:
        if opt.json:  # before the builds, not after them
            try:
                open(opt.json, "a").close()
            except OSError as e:
                raise Failure(f"--json {opt.json}: {e.strerror}")
        with tempfile.TemporaryDirectory(prefix="sass_diff.") as work:
            base_tree = opt.base_src
            if base_tree is None:
                base_tree = os.path.join(work, "base")
                regress.unpack(regress.commit_of(opt.base), base_tree)
            elif not os.path.isdir(base_tree):
                raise Failure(f"--base-src {base_tree}: not a directory")
            files = kernel_files(opt, base_tree)
            if not shutil.which("nvcc"):
                raise Failure("nvcc not found on PATH")
            nvdisasm = find_nvdisasm(opt.nvdisasm)
            moved, records = False, []
            archs = opt.arch or ["90"]
            for path in files:
                for arch in sorted({arch_of(path, a) for a in archs}, key=lambda a: (int(a.rstrip("a")), a)):
                    base_sass, base_res, base_stalls = side(base_tree, path, arch, nvdisasm, work, "base", bool(opt.loops))
                    new_sass, new_res, new_stalls = side(REPO, path, arch, nvdisasm, work, "new", bool(opt.loops))
                    base, new = functions(base_sass), functions(new_sass)
                    rows = compare(base, new)
                    moved |= any(v != "same" for _, v, _ in rows)
                    report(path, arch, rows, base, new, base_res, new_res)
                    records += [record(path, arch, r, base, new, base_res, new_res) for r in rows]
                    if opt.loops:
                        show_loops(opt.loops, listing(base_sass), listing(new_sass), base_stalls, new_stalls)
                    if opt.show:
                        show(opt.show, base, new)
        if opt.json:
            doc = {"schema": "verifybench.sass_diff/1", "base": opt.base_src or opt.base, "moved": moved,
                   "records": records}
            try:
                with open(opt.json, "w") as f:
                    json.dump(doc, f, indent=1)
                    f.write("\n")
            except OSError as e:
                raise Failure(f"--json {opt.json}: {e.strerror}")
    except (Failure, regress.Failure) as e:
        print(f"sass_diff: {e}", file=sys.stderr)
        return 2
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
