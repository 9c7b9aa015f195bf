#define _POSIX_C_SOURCE 200809L
#include "bundle.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileutil.h"
#include "tolerance.h"

void vb_bundle_dirname(const char *scenario, char *out, size_t n)
{
    size_t k = 0;
    for (const char *c = scenario; *c && k + 4 < n; c++) {
        const unsigned char ch = (unsigned char)*c;
        const int plain = (isalnum(ch) || strchr("+=,-_", ch) || (ch == '.' && c != scenario)) && ch != 0;
        if (plain)
            out[k++] = (char)ch;
        else
            k += (size_t)snprintf(out + k, n - k, "%%%02X", ch);
    }
    out[k < n ? k : n - 1] = 0;
}

static int make_dir(const char *path, char *why, size_t n)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return 0;
    snprintf(why, n, "%s: cannot create the directory: %s", path, strerror(errno));
    return -1;
}

static int write_raw(const char *dir, const char *file, const void *data, size_t bytes, char *why, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    vb_output out;
    if (vb_output_open(&out, path, why, n))
        return -1;
    if (bytes)
        fwrite(data, 1, bytes, out.f);
    return vb_output_close(&out, why, n);
}

/* Records an array in the manifest and writes its file. */
static int add_array(cJSON *arrays, const char *dir, const char *name, const char *dtype, const int64_t *shape,
                     int rank, const void *data, size_t bytes, char *why, size_t n)
{
    char file[96];
    snprintf(file, sizeof file, "%s.bin", name);
    cJSON *a = cJSON_AddObjectToObject(arrays, name);
    cJSON_AddStringToObject(a, "file", file);
    cJSON_AddStringToObject(a, "dtype", dtype);
    cJSON *sh = cJSON_AddArrayToObject(a, "shape");
    for (int i = 0; i < rank; i++)
        cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[i]));
    return write_raw(dir, file, data, bytes, why, n);
}

static float *to_f32(const double *x, int64_t n)
{
    float *f = malloc(sizeof *f * (size_t)(n ? n : 1));
    for (int64_t i = 0; f && i < n; i++)
        f[i] = (float)x[i];
    return f;
}

static cJSON *shape_json(const vb_scenario *s, const vb_instance *in, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "shape_key", key);
    cJSON_AddNumberToObject(o, "batch", in->live_batch);
    cJSON_AddNumberToObject(o, "draft_tokens", in->draft);
    cJSON_AddNumberToObject(o, "heads", in->heads);
    cJSON_AddNumberToObject(o, "d_qk", in->d_qk);
    cJSON_AddNumberToObject(o, "d_v", in->d_v);
    cJSON_AddNumberToObject(o, "sm_scale", in->sm_scale);
    cJSON_AddNumberToObject(o, "page_size", in->page_size);
    cJSON_AddStringToObject(o, "layout", vb_layout_name(s->base.layout));
    cJSON_AddStringToObject(o, "tree", in->tree.label);
    cJSON_AddNumberToObject(o, "num_slots", (double)in->num_slots);
    cJSON_AddNumberToObject(o, "tokens", (double)in->live_tokens);
    cJSON *pl = cJSON_AddArrayToObject(o, "prefix_len");
    for (int b = 0; b < in->live_batch; b++)
        cJSON_AddItemToArray(pl, cJSON_CreateNumber((double)in->prefix_len[b]));
    return o;
}

int vb_bundle_write(const char *dir, const vb_scenario *s, const vb_prepared *p, char *why, size_t n)
{
    const vb_instance *in = &p->in;
    char sub[VB_NAME_MAX + 8], path[1024], key[192];
    if (in->batch != in->live_batch) {
        snprintf(why, n, "internal: bundles hold the live batch only");
        return -1;
    }
    vb_bundle_dirname(s->name, sub, sizeof sub);
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (make_dir(dir, why, n) || make_dir(path, why, n))
        return -1;
    vb_shape_key(in, s, key, sizeof key);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "schema", VB_BUNDLE_SCHEMA);
    cJSON_AddStringToObject(m, "scenario", s->name);
    cJSON_AddItemToObject(m, "shape", shape_json(s, in, key));
    cJSON *tol = cJSON_AddObjectToObject(m, "tolerance");
    cJSON_AddNumberToObject(tol, "rel", VB_TOL_REL);
    cJSON_AddNumberToObject(tol, "abs", VB_TOL_ABS);
    cJSON_AddNumberToObject(tol, "lse", VB_TOL_LSE);
    cJSON_AddStringToObject(tol, "rule", "|o - o_ref| <= rel * (|o_ref| + absw) + abs, elementwise");
    cJSON *tm = cJSON_AddObjectToObject(m, "timing");
    cJSON_AddNumberToObject(tm, "warmup", s->timing.warmup);
    cJSON_AddNumberToObject(tm, "iterations", s->timing.iterations);
    cJSON_AddNumberToObject(tm, "min_samples", s->timing.min_samples);
    cJSON_AddNumberToObject(tm, "noise", s->timing.noise);
    cJSON_AddNumberToObject(tm, "max_time_ms", s->timing.max_time_ms);
    cJSON_AddBoolToObject(tm, "cold_l2", s->timing.cold_l2);

    const int64_t T = in->live_tokens, H = in->heads;
    const int64_t q_shape[] = {T, H, in->d_qk}, kv_shape[] = {in->num_slots, in->d_qk};
    const int64_t o_shape[] = {T, H, in->d_v}, lse_shape[] = {T, H}, ptr_shape[] = {in->live_batch + 1};
    const int64_t idx_shape[] = {in->kv_indices.count}, ocl_shape[] = {T}, mask_shape[] = {in->mask_bytes};
    const char *w[2] = {"int32", "int64"};
    float *o_ref = to_f32(p->ref.o, T * H * in->d_v), *absw = to_f32(p->ref.absw, T * H * in->d_v);
    float *lse = to_f32(p->ref.lse, T * H);
    cJSON *arr = cJSON_AddObjectToObject(m, "arrays");
    int rc = !o_ref || !absw || !lse ||
             add_array(arr, path, "q", "bfloat16", q_shape, 3, in->q, 2 * (size_t)(T * H * in->d_qk), why, n) ||
             add_array(arr, path, "kv_buffer", "bfloat16", kv_shape, 2, in->kv, 2 * (size_t)(in->num_slots * in->d_qk), why, n) ||
             add_array(arr, path, "kv_indptr", w[in->kv_indptr.width == VB_I64], ptr_shape, 1, in->kv_indptr.data,
                       vb_ibuf_bytes(&in->kv_indptr), why, n) ||
             add_array(arr, path, "kv_indices", w[in->kv_indices.width == VB_I64], idx_shape, 1, in->kv_indices.data,
                       vb_ibuf_bytes(&in->kv_indices), why, n) ||
             add_array(arr, path, "qo_indptr", w[in->qo_indptr.width == VB_I64], ptr_shape, 1, in->qo_indptr.data,
                       vb_ibuf_bytes(&in->qo_indptr), why, n) ||
             add_array(arr, path, "out_cache_loc", w[in->out_cache_loc.width == VB_I64], ocl_shape, 1,
                       in->out_cache_loc.data, vb_ibuf_bytes(&in->out_cache_loc), why, n) ||
             add_array(arr, path, "mask_indptr", w[in->mask_indptr.width == VB_I64], ptr_shape, 1, in->mask_indptr.data,
                       vb_ibuf_bytes(&in->mask_indptr), why, n) ||
             add_array(arr, path, "custom_mask", s->dtypes.mask_is_bool ? "bool" : "uint8", mask_shape, 1,
                       in->custom_mask, (size_t)in->mask_bytes, why, n) ||
             add_array(arr, path, "o_ref", "float32", o_shape, 3, o_ref, 4 * (size_t)(T * H * in->d_v), why, n) ||
             add_array(arr, path, "absw", "float32", o_shape, 3, absw, 4 * (size_t)(T * H * in->d_v), why, n) ||
             add_array(arr, path, "lse_ref", "float32", lse_shape, 2, lse, 4 * (size_t)(T * H), why, n);
    if (!o_ref || !absw || !lse)
        snprintf(why, n, "out of host memory");
    free(o_ref), free(absw), free(lse);
    char *text = cJSON_Print(m);
    cJSON_Delete(m);
    if (!rc)
        rc = write_raw(path, "manifest.json", text, strlen(text), why, n);
    free(text);
    return rc ? -1 : 0;
}

int vb_bundle_read_array(const char *bundle_dir, const char *array, void **data, size_t *bytes, char *dtype,
                         size_t dtype_len, char *why, size_t why_len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.json", bundle_dir);
    char *text = vb_read_file(path, (size_t)64 << 20, NULL);
    cJSON *m = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "arrays"), array);
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(a, "file"), *dt = cJSON_GetObjectItemCaseSensitive(a, "dtype");
    if (!cJSON_IsString(file) || !cJSON_IsString(dt)) {
        snprintf(why, why_len, "%s: no array '%s'", path, array);
        cJSON_Delete(m);
        return -1;
    }
    snprintf(dtype, dtype_len, "%s", dt->valuestring);
    snprintf(path, sizeof path, "%s/%s", bundle_dir, file->valuestring);
    cJSON_Delete(m);
    *data = vb_read_file(path, SIZE_MAX, bytes);
    if (!*data) {
        snprintf(why, why_len, "%s: cannot read", path);
        return -1;
    }
    return 0;
}
