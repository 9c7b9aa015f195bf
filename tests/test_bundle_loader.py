#!/usr/bin/env python3
"""The Triton script's bundle loader reads what `verifybench export` writes: every array with
its dtype and shape, and the oracle output within the bundle's own tolerance of itself.
Skipped (exit 77) where numpy is missing; needs no GPU."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts"))
import triton_baseline as tb  # noqa: E402

exe = sys.argv[1]
with tempfile.TemporaryDirectory() as out:
    subprocess.run([exe, "export", "--out", out, os.path.join(here, "data", "tiny.json")], check=True,
                   capture_output=True)
    bundles = tb.find_bundles([out])
    assert [os.path.basename(b) for b in bundles] == ["tiny-chain", "tiny-eagle-int32"], bundles
    m, a = tb.load_bundle(bundles[0])
    s = m["shape"]
    assert a["q"].shape == (s["tokens"], s["heads"], s["d_qk"]) and a["q"].dtype == np.dtype("<u2")
    assert a["kv_buffer"].shape == (s["num_slots"], s["d_qk"])
    assert a["kv_indptr"].dtype == np.dtype("<i4") and a["kv_indices"].dtype == np.dtype("<i8")
    assert list(np.diff(a["kv_indptr"])) == s["prefix_len"]
    assert a["qo_indptr"][-1] == s["tokens"]
    assert a["custom_mask"].size == a["mask_indptr"][-1]
    ratio, err = tb.tolerance_ratio(a["o_ref"].astype(np.float64), a["o_ref"].astype(np.float64), a["absw"],
                                    m["tolerance"])
    assert ratio == 0.0 and err == 0.0
    bad = a["o_ref"].copy()
    bad[0, 0, 0] += 1.0
    assert tb.tolerance_ratio(bad, a["o_ref"].astype(np.float64), a["absw"], m["tolerance"])[0] > 1.0
    m2, a2 = tb.load_bundle(bundles[1])
    assert a2["kv_indices"].dtype == np.dtype("<i4") and m2["arrays"]["custom_mask"]["dtype"] == "bool"
print("bundle loader ok")
