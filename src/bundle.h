/* Input bundles: one scenario's inputs exactly as verifybench runs them (live batch), plus
 * the oracle's output, written as a manifest (JSON) and raw little-endian arrays so that
 * an outside implementation (scripts/triton_baseline.py) runs on the very same bits.
 *
 *   DIR/<name>/manifest.json   schema verifybench.bundle/1: shape, shape key, tolerance,
 *                              timing, and per array its file, dtype and shape
 *   DIR/<name>/<array>.bin     q, kv_buffer, kv_indptr, kv_indices, qo_indptr,
 *                              out_cache_loc, mask_indptr, custom_mask, o_ref, absw, lse_ref */
#ifndef VB_BUNDLE_H
#define VB_BUNDLE_H

#include <stddef.h>

#include "prepare.h"
#include "scenario.h"

#define VB_BUNDLE_SCHEMA "verifybench.bundle/1"

/* The directory name of a scenario's bundle: the name with '/', '%', a leading '.' and any
 * other byte outside [A-Za-z0-9+=,-_.] percent-encoded ("grp/b1" -> "grp%2Fb1", ".." ->
 * "%2E."), so two names never share a directory and none leaves the export directory. */
void vb_bundle_dirname(const char *scenario, char *out, size_t n);
/* Writes the bundle of prepared p (built without padding) under dir. 0, or -1 with why. */
int vb_bundle_write(const char *dir, const vb_scenario *s, const vb_prepared *p, char *why, size_t why_len);
/* Reads one array of a bundle: its bytes (malloc'd), byte count and dtype name. */
int vb_bundle_read_array(const char *bundle_dir, const char *array, void **data, size_t *bytes, char *dtype,
                         size_t dtype_len, char *why, size_t why_len);

#endif
