#!/usr/bin/env python3
"""`triton_baseline.py --impl sglang` finds SGLang's extend_attention_fwd and binds its
arguments by name, checked on the CPU against stand-in SGLang packages with the three
signatures and module paths SGLang has shipped:
  0.5.9   sglang/srt/layers/attention/triton_ops/extend_attention.py, ... max_len_extend, sm_scale
  0.5.10  same path, k_scale and v_scale inserted before sm_scale
  0.5.16+ sglang/kernels/ops/attention/extend_attention.py, with page_size and more keywords
The stand-ins record what they were called with. No GPU, torch or numpy needed."""
import hashlib
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts"))
import triton_baseline as tb  # noqa: E402

HEAD = ("q_extend, k_extend, v_extend, o_extend, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, "
        "custom_mask, is_causal, mask_indptr, max_len_extend")
SIGNATURES = {
    "0.5.9": HEAD + ", sm_scale=None, logit_cap=0.0, skip_prefix_custom_mask=True, sliding_window_size=-1, "
                    "sinks=None, window_kv_offsets=None, xai_temperature_len=-1",
    "0.5.10": HEAD + ", k_scale, v_scale, sm_scale=None, logit_cap=0.0, skip_prefix_custom_mask=True, "
                     "sliding_window_size=-1, sinks=None, window_kv_offsets=None, xai_temperature_len=-1",
    "0.5.23": HEAD + ", k_scale, v_scale, sm_scale=None, logit_cap=0.0, skip_prefix_custom_mask=True, "
                     "sliding_window_size=-1, sinks=None, window_kv_offsets=None, xai_temperature_len=-1, "
                     "lse_extend=None, skip_prefix=False, skip_extend=False, page_size: int = 1, score_mod=None, "
                     "aux_tensors=None, extend_seq_lens_cpu=None, identity_kv_indices: bool = False",
}
OLD_PATH = "sglang/srt/layers/attention/triton_ops/extend_attention.py"
NEW_PATH = "sglang/kernels/ops/attention/extend_attention.py"
TENSORS = {n: f"<{n}>" for n in ("q_extend", "k_extend", "v_extend", "o_extend", "k_buffer", "v_buffer",
                                 "qo_indptr", "kv_indptr", "kv_indices", "custom_mask", "mask_indptr")}
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def stand_in(root, version, rel_path, params, body="CALLS.append(dict(locals()))"):
    """An installed SGLang: packages down to rel_path, whose extend_attention_fwd has `params`."""
    d = root
    for part in rel_path.split("/")[:-1]:
        d = os.path.join(d, part)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "__init__.py"), "a").close()
    path = os.path.join(root, rel_path)
    with open(path, "w") as f:
        f.write(f"CALLS = []\n\ndef extend_attention_fwd({params}):\n    {body}\n")
    info = os.path.join(root, f"sglang-{version}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n")
    return path


def fresh(root):
    """Import from root only: forget any sglang imported before."""
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if not p.startswith(tempfile.gettempdir())]
    sys.path.insert(0, root)
    import importlib
    importlib.invalidate_caches()


def test_layout(version, rel_path, module):
    with tempfile.TemporaryDirectory() as root:
        path = stand_in(root, version, rel_path, SIGNATURES[version])
        fresh(root)
        fwd, name, source = tb.find_sglang_kernel()
        check(name == module and os.path.realpath(source) == os.path.realpath(path), f"{version}: found {name}")
        kwargs = tb.sglang_arguments(fwd, TENSORS, draft=9, sm_scale=0.125)
        fwd(**kwargs)
        got = sys.modules[module].CALLS[-1]
        for n, v in TENSORS.items():
            check(got[n] == v, f"{version}: {n} bound to {got[n]}")
        check(got["is_causal"] is True and got["max_len_extend"] == 9 and got["sm_scale"] == 0.125,
              f"{version}: causal flag, max extend length, sm_scale")
        check(got["logit_cap"] == 0.0 and got["sliding_window_size"] == -1 and got["sinks"] is None,
              f"{version}: no logit cap, window or sinks")
        if "k_scale" in got:  # 0.5.10+: a bf16 cache is not scaled
            check(got["k_scale"] == 1.0 and got["v_scale"] == 1.0, f"{version}: k_scale, v_scale")
        else:
            check(version == "0.5.9", f"{version}: k_scale expected")
        if "page_size" in got:
            check(got["page_size"] == 1 and got["score_mod"] is None, f"{version}: page size 1, no score mod")
        ident = tb.kernel_identity("sglang", name, source)
        check(ident["sglang_version"] == version, f"{version}: version recorded as {ident['sglang_version']}")
        check(ident["kernel_module"] == module, f"{version}: module recorded")
        with open(path, "rb") as f:
            check(ident["kernel_sha256"] == hashlib.sha256(f.read()).hexdigest(), f"{version}: sha256 of the source")
        # The positional call the script used to make (14 arguments, sm_scale last) is what broke
        # on 0.5.10: binding by name is what makes every layout work.
        if "k_scale" in got:
            try:
                fwd(*[f"a{i}" for i in range(14)])
                check(False, f"{version}: a 14-argument positional call should fail")
            except TypeError as e:
                check("v_scale" in str(e), f"{version}: {e}")


def test_errors():
    with tempfile.TemporaryDirectory() as root:
        # A future signature with a required parameter this script does not know: named, not guessed.
        stand_in(root, "9.9.9", NEW_PATH, SIGNATURES["0.5.23"] + ", *, new_required")
        fresh(root)
        fwd, _, _ = tb.find_sglang_kernel()
        try:
            tb.sglang_arguments(fwd, TENSORS, 9, 0.125)
            check(False, "an unknown required parameter should be refused")
        except TypeError as e:
            check("new_required" in str(e), str(e))
    with tempfile.TemporaryDirectory() as root:
        # The kernel module exists but one of SGLang's own dependencies is missing: say which.
        stand_in(root, "0.5.23", NEW_PATH, SIGNATURES["0.5.23"])
        with open(os.path.join(root, NEW_PATH), "a") as f:
            f.write("import nonexistent_dependency_xyz\n")
        fresh(root)
        try:
            tb.find_sglang_kernel()
            check(False, "a missing dependency should stop the lookup")
        except SystemExit as e:
            check("nonexistent_dependency_xyz" in str(e), str(e))
    with tempfile.TemporaryDirectory() as root:
        # An SGLang without the kernel at either place.
        os.makedirs(os.path.join(root, "sglang"))
        open(os.path.join(root, "sglang", "__init__.py"), "w").close()
        fresh(root)
        try:
            tb.find_sglang_kernel()
            check(False, "no kernel should be an error")
        except SystemExit as e:
            check("no extend_attention_fwd" in str(e) and "absent" in str(e), str(e))


def test_builtin_identity():
    ident = tb.kernel_identity("builtin")
    check(ident["mirrors_sglang"] == tb.BUILTIN_MIRRORS and len(ident["kernel_sha256"]) == 64, str(ident))


test_layout("0.5.9", OLD_PATH, "sglang.srt.layers.attention.triton_ops.extend_attention")
test_layout("0.5.10", OLD_PATH, "sglang.srt.layers.attention.triton_ops.extend_attention")
test_layout("0.5.23", NEW_PATH, "sglang.kernels.ops.attention.extend_attention")
test_errors()
test_builtin_identity()
print(f"{checks} checks, 0 failed")
