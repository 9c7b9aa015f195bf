#!/usr/bin/env python3
"""Triton baseline for verifybench: SGLang's CUDA target-verify attention, on verifybench's inputs.

SGLang runs the MLA verify step of speculative decoding through its Triton extend-attention
kernel with a custom mask. This script re-implements that algorithm (the contract's "The Triton
baseline" section) faithfully -- same launch shape, block sizes, warps, stages and data types --
runs it on bundles written by `verifybench export`, checks its output against the bundle's oracle
output with verifybench's tolerance, times eager launches and CUDA-graph replays, and writes a
dump that `verifybench --baseline` turns into speedup tables.

    verifybench export --out bundles configs/*.json
    scripts/triton_baseline.py bundles --out triton_baseline.json

--impl sglang calls SGLang's own extend_attention_fwd instead, found wherever the installed
SGLang keeps it and called as SGLang's Triton backend calls it for MLA target-verify, with the
arguments bound by name from its signature (find_sglang_kernel, sglang_arguments). Every dump
records which kernel ran: the SGLang version and the sha256 of its source, or for the builtin
the SGLang release whose kernel it re-implements (BUILTIN_MIRRORS).
Bundle loading and the SGLang lookup need numpy at most; running needs torch and triton.
"""

import argparse
import datetime
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import math
import os
import subprocess
import sys
import urllib.parse

BUNDLE_SCHEMA = "verifybench.bundle/1"
DUMP_SCHEMA = "verifybench.triton_baseline/1"
# The SGLang release whose _fwd_kernel (extend_attention.py, the custom-mask path with
# skip_prefix_custom_mask) build_kernel() re-implements: the last before 0.5.10 added the KV
# cache's k_scale / v_scale to the kernel and its signature.
BUILTIN_MIRRORS = "0.5.9"
# Where SGLang keeps extend_attention_fwd, newest first: 0.5.16 moved it out of srt/.
SGLANG_KERNEL_MODULES = ("sglang.kernels.ops.attention.extend_attention",
                         "sglang.srt.layers.attention.triton_ops.extend_attention")
NUMPY_DTYPES = {"bfloat16": "<u2", "float32": "<f4", "int32": "<i4", "int64": "<i8", "bool": "u1", "uint8": "u1"}


# ---- bundles (numpy only) -------------------------------------------------------------------

def find_bundles(paths):
    """Every directory holding a manifest.json, given bundle directories or their parents."""
    found = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "manifest.json")):
            found.append(p)
        elif os.path.isdir(p):
            found += sorted(os.path.join(p, d) for d in os.listdir(p)
                            if os.path.isfile(os.path.join(p, d, "manifest.json")))
        else:
            raise SystemExit(f"{p}: not a bundle or a directory of bundles")
    return found


def load_bundle(path):
    """The manifest and every array of a bundle, as numpy arrays of the recorded shapes."""
    import numpy as np

    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("schema") != BUNDLE_SCHEMA:
        raise ValueError(f"{path}: schema is {manifest.get('schema')!r}, not {BUNDLE_SCHEMA}")
    arrays = {}
    for name, a in manifest["arrays"].items():
        data = np.fromfile(os.path.join(path, a["file"]), dtype=NUMPY_DTYPES[a["dtype"]])
        count = int(np.prod(a["shape"])) if a["shape"] else 1
        if data.size != count:
            raise ValueError(f"{path}: {a['file']} holds {data.size} values, the manifest says {count}")
        arrays[name] = data.reshape(a["shape"])
    return manifest, arrays


def tolerance_ratio(out, ref, absw, tol):
    """Largest |out - ref| / (rel * (|ref| + absw) + abs); inf when anything is NaN."""
    import numpy as np

    err = np.abs(out.astype(np.float64) - ref)
    ratio = err / (tol["rel"] * (np.abs(ref) + absw) + tol["abs"])
    if not np.all(np.isfinite(ratio)):
        return math.inf, float(np.nanmax(err)) if np.any(np.isfinite(err)) else math.inf
    return float(ratio.max()), float(err.max())


# ---- the kernel ---------------------------------------------------------------------------------

def block_sizes(capability):
    """SGLang's choice for D_QK = 576: (32, 64) on sm_80 and sm_90, (32, 32) on sm_86/89/120."""
    if capability in ((8, 0), (9, 0)) or capability[0] in (9, 10):
        return 32, 64
    return 32, 32


def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def verify_extend_kernel(Q, KV, KExt, VExt, O, KvIndptr, KvIndices, QoIndptr, CustomMask, MaskIndptr,
                             sm_scale, stride_qt, stride_qh, stride_kv, stride_kext, stride_vext,
                             stride_ot, stride_oh,
                             BLOCK_DMODEL: tl.constexpr, BLOCK_DPE: tl.constexpr, BLOCK_DV: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        # One program per (request, head, M-tile of draft tokens).
        b = tl.program_id(0)
        h = tl.program_id(1)
        m_tile = tl.program_id(2)
        q0 = tl.load(QoIndptr + b)
        n_draft = tl.load(QoIndptr + b + 1) - q0
        kv0 = tl.load(KvIndptr + b)
        n_prefix = tl.load(KvIndptr + b + 1) - kv0
        mask0 = tl.load(MaskIndptr + b)

        offs_m = m_tile * BLOCK_M + tl.arange(0, BLOCK_M)
        mask_m = offs_m < n_draft
        offs_d = tl.arange(0, BLOCK_DMODEL)
        offs_dpe = BLOCK_DMODEL + tl.arange(0, BLOCK_DPE)
        offs_dv = tl.arange(0, BLOCK_DV)
        q_rows = (q0 + offs_m)[:, None] * stride_qt + h * stride_qh
        q = tl.load(Q + q_rows + offs_d[None, :], mask=mask_m[:, None], other=0.0)
        qpe = tl.load(Q + q_rows + offs_dpe[None, :], mask=mask_m[:, None], other=0.0)

        acc = tl.zeros([BLOCK_M, BLOCK_DV], dtype=tl.float32)
        deno = tl.zeros([BLOCK_M], dtype=tl.float32)
        e_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")

        # Stage 1: the prefix, gathered through kv_indices. Its mask columns are all ones and
        # are not read (SGLang's skip_prefix_custom_mask).
        for start in range(0, n_prefix, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask_n = offs_n < n_prefix
            slot = tl.load(KvIndices + kv0 + offs_n, mask=mask_n, other=0).to(tl.int64)
            k = tl.load(KV + slot[None, :] * stride_kv + offs_d[:, None], mask=mask_n[None, :], other=0.0)
            kpe = tl.load(KV + slot[None, :] * stride_kv + offs_dpe[:, None], mask=mask_n[None, :], other=0.0)
            qk = tl.dot(q, k) + tl.dot(qpe, kpe)
            qk *= sm_scale
            qk = tl.where(mask_m[:, None] & mask_n[None, :], qk, float("-inf"))
            row_max = tl.max(qk, 1)
            row_max = tl.where(row_max == float("-inf"), -1e20, row_max)
            n_e_max = tl.maximum(row_max, e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            deno = deno * re_scale + tl.sum(p, 1)
            v = tl.load(KV + slot[:, None] * stride_kv + offs_dv[None, :], mask=mask_n[:, None], other=0.0)
            acc = acc * re_scale[:, None] + tl.dot(p.to(v.dtype), v)
            e_max = n_e_max

        # Stage 2: the draft tokens, from contiguous per-token K/V, under the tree mask at
        # mask_indptr[b] + row * (P + T) + P + col.
        for start in range(0, n_draft, BLOCK_N):
            offs_n = start + tl.arange(0, BLOCK_N)
            mask_n = offs_n < n_draft
            k_rows = (q0 + offs_n)[None, :] * stride_kext
            k = tl.load(KExt + k_rows + offs_d[:, None], mask=mask_n[None, :], other=0.0)
            kpe = tl.load(KExt + k_rows + offs_dpe[:, None], mask=mask_n[None, :], other=0.0)
            qk = tl.dot(q, k) + tl.dot(qpe, kpe)
            qk *= sm_scale
            visible = tl.load(CustomMask + mask0 + offs_m[:, None] * (n_prefix + n_draft) + n_prefix
                              + offs_n[None, :], mask=mask_m[:, None] & mask_n[None, :], other=0)
            qk = tl.where((visible != 0) & mask_m[:, None] & mask_n[None, :], qk, float("-inf"))
            row_max = tl.max(qk, 1)
            row_max = tl.where(row_max == float("-inf"), -1e20, row_max)
            n_e_max = tl.maximum(row_max, e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            deno = deno * re_scale + tl.sum(p, 1)
            v = tl.load(VExt + (q0 + offs_n)[:, None] * stride_vext + offs_dv[None, :], mask=mask_n[:, None],
                        other=0.0)
            acc = acc * re_scale[:, None] + tl.dot(p.to(v.dtype), v)
            e_max = n_e_max

        o_rows = (q0 + offs_m)[:, None] * stride_ot + h * stride_oh
        tl.store(O + o_rows + offs_dv[None, :], (acc / deno[:, None]).to(O.dtype.element_ty), mask=mask_m[:, None])

    return verify_extend_kernel


# ---- SGLang's own kernel (no GPU needed to find and bind it) ------------------------------------

def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sglang_version():
    """The installed SGLang's version: its distribution metadata, else sglang.version."""
    try:
        return importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError:
        try:
            return importlib.import_module("sglang.version").__version__
        except (ImportError, AttributeError):
            return "unknown"


def find_sglang_kernel():
    """(extend_attention_fwd, module name, source file) from the installed SGLang, trying each
    place SGLang has kept it. A module that exists but cannot be imported (a dependency of
    SGLang's is missing) stops here with the dependency's name rather than trying the next."""
    tried = []
    for name in SGLANG_KERNEL_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name and (name == e.name or name.startswith(e.name + ".")):
                tried.append(f"{name}: absent")
                continue
            raise SystemExit(f"--impl sglang: importing {name} needs the module {e.name!r}, which is not installed "
                             "(bring SGLang's dependencies as wheels: results/h200/README.md says how)")
        fwd = getattr(module, "extend_attention_fwd", None)
        if callable(fwd):
            return fwd, name, module.__file__
        tried.append(f"{name}: has no extend_attention_fwd")
    raise SystemExit("--impl sglang: no extend_attention_fwd in the installed SGLang (" + "; ".join(tried) + ")")


def sglang_arguments(fwd, t, draft, sm_scale):
    """extend_attention_fwd's keyword arguments, bound by name from its signature, as SGLang's
    Triton backend passes them in target-verify mode for MLA (TritonAttnBackend.forward_extend):
    the draft tokens' own K and V as k_extend / v_extend; the whole latent cache as k_buffer and
    its first d_v columns as v_buffer, read through kv_indices; the custom mask with is_causal
    (the mask decides); max_len_extend = the draft tokens per request; k_scale = v_scale = 1.0
    (a bf16 cache; 0.5.10+); page_size 1 (0.5.16+); no logit cap, window, sinks or score mod.
    t holds the tensors by those names. A parameter without a default that is not known here
    is an error naming it, so a future signature change fails loudly instead of binding wrong."""
    known = dict(t, is_causal=True, max_len_extend=draft, sm_scale=sm_scale, k_scale=1.0, v_scale=1.0,
                 page_size=1, logit_cap=0.0, sliding_window_size=-1, sinks=None, window_kv_offsets=None,
                 xai_temperature_len=-1, skip_prefix_custom_mask=True)
    params = inspect.signature(fwd).parameters
    bound, missing = {}, []
    for name, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if name in known:
            bound[name] = known[name]
        elif p.default is p.empty:
            missing.append(name)
    if missing:
        raise TypeError(f"extend_attention_fwd wants {', '.join(missing)}, which this script does not fill")
    for name in ("q_extend", "k_extend", "v_extend", "o_extend", "k_buffer", "v_buffer", "kv_indices",
                 "custom_mask", "mask_indptr"):
        if name not in bound:
            raise TypeError(f"extend_attention_fwd has no parameter {name!r}: not the target-verify kernel this "
                            "script knows")
    return bound


def compiled_resources(jit_fn):
    """Registers, spilled bytes and shared memory of what a Triton JITFunction compiled so far,
    as Triton's per-device cache holds them (best effort: None where this Triton keeps them
    elsewhere). These explain time differences between two versions of one algorithm."""
    try:
        found = []
        for cache in getattr(jit_fn, "device_caches", {}).values():
            kernels = cache[0] if isinstance(cache, tuple) else cache
            for k in kernels.values():
                if hasattr(k, "_init_handles"):
                    k._init_handles()
                found.append({"n_regs": int(k.n_regs), "n_spills": int(k.n_spills),
                              "shared_bytes": int(k.metadata.shared)})
        return found or None
    except Exception:  # noqa: BLE001 -- a diagnostic only; never fail a run over it
        return None


def kernel_identity(impl, fwd_module=None, fwd_file=None):
    """What the dump says about the kernel that ran."""
    if impl == "sglang":
        return {"sglang_version": sglang_version(), "kernel_module": fwd_module,
                "kernel_sha256": sha256_file(fwd_file)}
    source = inspect.getsource(build_kernel)
    return {"mirrors_sglang": BUILTIN_MIRRORS, "kernel_module": "scripts/triton_baseline.py:build_kernel",
            "kernel_sha256": hashlib.sha256(source.encode()).hexdigest()}


class Problem:
    """One bundle on the GPU, with the launch that SGLang's verify path makes for it."""

    def __init__(self, manifest, arrays, impl, sglang_fwd=None):
        import torch

        self.manifest, self.impl = manifest, impl
        shape = manifest["shape"]
        dev = torch.device("cuda")

        def bf16(a):
            return torch.from_numpy(a.view("<i2").copy()).to(dev).view(torch.bfloat16)

        def ints(a):
            return torch.from_numpy(a.copy()).to(dev)

        self.q = bf16(arrays["q"])
        self.kv_buffer = bf16(arrays["kv_buffer"])
        self.kv_indptr = ints(arrays["kv_indptr"])
        self.kv_indices = ints(arrays["kv_indices"])
        self.qo_indptr = ints(arrays["qo_indptr"])
        self.mask_indptr = ints(arrays["mask_indptr"])
        mask = ints(arrays["custom_mask"])
        self.custom_mask = mask.to(torch.bool) if manifest["arrays"]["custom_mask"]["dtype"] == "bool" else mask
        out_cache_loc = ints(arrays["out_cache_loc"])
        # SGLang hands the draft tokens' K and V to the kernel as the forward's own contiguous
        # tensors (and writes them into the cache at out_cache_loc): rebuild them from the cache.
        self.k_extend = self.kv_buffer[out_cache_loc.long()].contiguous()
        self.v_extend = self.k_extend[:, : shape["d_v"]]
        self.o = torch.empty(self.q.shape[0], shape["heads"], shape["d_v"], dtype=torch.bfloat16, device=dev)
        self.sm_scale = shape["sm_scale"]
        self.heads, self.batch, self.draft = shape["heads"], shape["batch"], shape["draft_tokens"]
        self.d_qk, self.d_v = shape["d_qk"], shape["d_v"]
        cap = torch.cuda.get_device_capability()
        self.block_m, self.block_n = block_sizes(cap)
        self.num_warps, self.num_stages = 8, 1
        if impl == "builtin":
            if (self.d_qk, self.d_v) != (576, 512):
                raise ValueError(f"the builtin kernel is SGLang's MLA path (576/512), not {self.d_qk}/{self.d_v}")
            self.kernel = build_kernel()
            # The kernel reads the mask as bytes: a bool tensor is viewed as uint8, not copied.
            self.mask_bytes = self.custom_mask.view(torch.uint8)
        else:
            fwd = sglang_fwd
            # Record SGLang's own launch choice where the release exposes it, not the builtin's.
            sizes = getattr(inspect.getmodule(fwd), "_get_block_sizes_for_extend_attention", None)
            try:
                *_, self.block_m, self.block_n, self.num_warps = sizes(self.d_qk, self.d_v)
            except (TypeError, ValueError):
                self.block_m = self.block_n = self.num_warps = None
            self.num_stages = None  # chosen inside extend_attention_fwd
            tensors = {"q_extend": self.q, "k_extend": self.k_extend.unsqueeze(1),
                       "v_extend": self.v_extend.unsqueeze(1), "o_extend": self.o,
                       "k_buffer": self.kv_buffer.unsqueeze(1), "v_buffer": self.kv_buffer[:, : self.d_v].unsqueeze(1),
                       "qo_indptr": self.qo_indptr, "kv_indptr": self.kv_indptr, "kv_indices": self.kv_indices,
                       "custom_mask": self.custom_mask, "mask_indptr": self.mask_indptr}
            self.sglang_fwd, self.sglang_kwargs = fwd, sglang_arguments(fwd, tensors, self.draft, self.sm_scale)

    def launch(self):
        if self.impl == "sglang":
            self.sglang_fwd(**self.sglang_kwargs)
            return
        grid = (self.batch, self.heads, (self.draft + self.block_m - 1) // self.block_m)
        self.kernel[grid](self.q, self.kv_buffer, self.k_extend, self.v_extend, self.o, self.kv_indptr,
                          self.kv_indices, self.qo_indptr, self.mask_bytes, self.mask_indptr, self.sm_scale,
                          self.q.stride(0), self.q.stride(1), self.kv_buffer.stride(0), self.k_extend.stride(0),
                          self.v_extend.stride(0), self.o.stride(0), self.o.stride(1),
                          BLOCK_DMODEL=512, BLOCK_DPE=64, BLOCK_DV=512, BLOCK_M=self.block_m, BLOCK_N=self.block_n,
                          num_warps=self.num_warps, num_stages=self.num_stages)


# ---- checking and timing ------------------------------------------------------------------------

def check(problem, run, arrays, tol):
    """Poison the output, run, compare with the oracle: (passes, max err/tol, max |err|)."""
    import torch

    problem.o.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    out = problem.o.float().cpu().numpy()
    ratio, err = tolerance_ratio(out, arrays["o_ref"], arrays["absw"], tol)
    return ratio <= 1.0, ratio, err


def measure(run, warmup, iterations, max_time_ms, flush=None):
    """Median, p10 and p90 in microseconds of `iterations` event-timed samples (fewer, at least
    3, when a sample is slow); flush, if given, runs before each sample outside the events."""
    import torch

    for _ in range(warmup):
        run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    probe = start.elapsed_time(end)
    n = iterations
    if probe > 0 and probe * n > max_time_ms:
        n = max(3, int(max_time_ms / probe))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in events:
        if flush is not None:
            flush.zero_()
        s.record()
        run()
        e.record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in events)
    return {"samples": n, "median_us": 1e3 * ms[n // 2], "p10_us": 1e3 * ms[(n - 1) // 10],
            "p90_us": 1e3 * ms[(n - 1) - (n - 1) // 10]}


def run_bundle(path, args, flush, sglang_fwd=None):
    import torch

    manifest, arrays = load_bundle(path)
    tol, timing = manifest["tolerance"], manifest["timing"]
    iterations = args.iterations or timing["iterations"]
    problem = Problem(manifest, arrays, args.impl, sglang_fwd)
    entry = {"scenario": manifest["scenario"], "shape_key": manifest["shape"]["shape_key"], "impl": args.impl,
             "block_m": problem.block_m, "block_n": problem.block_n, "num_warps": problem.num_warps,
             "num_stages": problem.num_stages}
    ok, ratio, err = check(problem, problem.launch, arrays, tol)
    entry.update(correct=ok, max_err_ratio=ratio if math.isfinite(ratio) else None,
                 max_abs_err=err if math.isfinite(err) else None)
    cold = flush if timing.get("cold_l2") else None
    entry["eager"] = measure(problem.launch, timing["warmup"], iterations, args.max_time_ms, cold)

    # CUDA graph: capture one launch on a side stream (the kernel is compiled by then), replay.
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        problem.launch()
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        problem.launch()
    g_ok, g_ratio, _ = check(problem, graph.replay, arrays, tol)
    entry["graph_correct"] = g_ok
    entry["graph"] = measure(graph.replay, timing["warmup"], iterations, args.max_time_ms, cold)
    entry["correct"] = ok and g_ok
    jit = problem.kernel if args.impl == "builtin" else getattr(inspect.getmodule(problem.sglang_fwd), "_fwd_kernel", None)
    entry["compiled"] = compiled_resources(jit)
    del graph, problem
    torch.cuda.empty_cache()
    return entry


def driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError, IndexError):
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundles", nargs="+", help="bundle directories, or directories of bundles")
    ap.add_argument("--out", required=True, help="where the dump (JSON) goes")
    ap.add_argument("--impl", choices=["builtin", "sglang"], default="builtin",
                    help="builtin: this script's kernel (default); sglang: SGLang's extend_attention_fwd")
    ap.add_argument("--filter", action="append", default=[], help="only scenarios containing this text")
    ap.add_argument("--iterations", type=int, default=0, help="override the bundles' timing.iterations")
    ap.add_argument("--max-time-ms", type=float, default=2000.0,
                    help="fewer samples (at least 3) past this much kernel time per measurement")
    args = ap.parse_args()

    import torch
    import triton

    sglang_fwd = None
    if args.impl == "sglang":
        sglang_fwd, module, source = find_sglang_kernel()
        identity = kernel_identity("sglang", module, source)
        print(f"SGLang {identity['sglang_version']}: {module} ({source}), sha256 {identity['kernel_sha256'][:12]}",
              flush=True)
    else:
        identity = kernel_identity("builtin")
    bundles = [b for b in find_bundles(args.bundles)
               if not args.filter or any(f in urllib.parse.unquote(os.path.basename(b)) for f in args.filter)]
    if not bundles:
        raise SystemExit("no bundles found")
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(2 * max(getattr(props, "L2_cache_size", 0), 64 << 20), dtype=torch.uint8, device="cuda")
    entries, failures = [], 0
    for i, path in enumerate(bundles):
        entry = run_bundle(path, args, flush, sglang_fwd)
        entries.append(entry)
        failures += not entry["correct"]
        print(f"[{i + 1}/{len(bundles)}] {entry['scenario']}: {'ok' if entry['correct'] else 'WRONG'} "
              f"err/tol {entry['max_err_ratio']}, eager {entry['eager']['median_us']:.1f} us, "
              f"graph {entry['graph']['median_us']:.1f} us", flush=True)
    cap = torch.cuda.get_device_capability()
    dump = {"schema": DUMP_SCHEMA, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpu": torch.cuda.get_device_name(0), "compute_capability": f"{cap[0]}.{cap[1]}",
            "driver": driver_version(), "cuda": torch.version.cuda, "torch": torch.__version__,
            "triton": triton.__version__, "impl": args.impl, **identity, "entries": entries}
    with open(args.out, "w") as f:
        json.dump(dump, f, indent=1)
    print(f"{len(entries)} scenarios, {failures} wrong; dump written to {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
