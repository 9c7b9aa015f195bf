#include "fields.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "result.h"

#define FIELD(T, member, key, kind, flags) {key, kind, offsetof(T, member), sizeof(((T *)0)->member), flags}
#define TABLE(name, rows) const vb_field_table name = {rows, (int)(sizeof rows / sizeof *rows)}

static const vb_field timing_fields[] = {
    FIELD(vb_timing, samples, "samples", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_timing, median_us, "median_us", VB_FIELD_DOUBLE, 0),
    FIELD(vb_timing, p10_us, "p10_us", VB_FIELD_DOUBLE, 0),
    FIELD(vb_timing, p90_us, "p90_us", VB_FIELD_DOUBLE, 0),
    FIELD(vb_timing, gbps, "gbps", VB_FIELD_DOUBLE, 0),
    FIELD(vb_timing, tflops, "tflops", VB_FIELD_DOUBLE, 0),
    FIELD(vb_timing, bw_share, "bw_share", VB_FIELD_DOUBLE, VB_FIELD_POSITIVE),
    FIELD(vb_timing, mma_share, "mma_share", VB_FIELD_DOUBLE, VB_FIELD_POSITIVE),
    FIELD(vb_timing, wgmma_share, "wgmma_share", VB_FIELD_DOUBLE, VB_FIELD_POSITIVE),
    FIELD(vb_timing, floor_us, "floor_us", VB_FIELD_DOUBLE, VB_FIELD_POSITIVE),
    FIELD(vb_timing, floor_ratio, "floor_ratio", VB_FIELD_DOUBLE, VB_FIELD_POSITIVE),
};
TABLE(vb_timing_table, timing_fields);

static const vb_field check_fields[] = {
    FIELD(vb_checks, ran, "ran", VB_FIELD_BOOL, VB_FIELD_ALWAYS),
    FIELD(vb_checks, elements, "elements", VB_FIELD_I64, 0),
    FIELD(vb_checks, unwritten, "unwritten", VB_FIELD_I64, 0),
    FIELD(vb_checks, nonfinite, "nonfinite", VB_FIELD_I64, 0),
    FIELD(vb_checks, stray, "stray_writes", VB_FIELD_I64, 0),
    FIELD(vb_checks, out_of_tol, "out_of_tolerance", VB_FIELD_I64, 0),
    FIELD(vb_checks, max_abs_err, "max_abs_err", VB_FIELD_DOUBLE, 0),
    FIELD(vb_checks, max_err_ratio, "max_err_ratio", VB_FIELD_DOUBLE, 0),
    FIELD(vb_checks, rel_l2, "rel_l2", VB_FIELD_DOUBLE, 0),
    FIELD(vb_checks, worst, "worst_index", VB_FIELD_I64X4, 0),
    FIELD(vb_checks, lse_max_err, "lse_max_err", VB_FIELD_DOUBLE, VB_FIELD_NAN_NULL),
    FIELD(vb_checks, lse_bad, "lse_bad", VB_FIELD_I64, 0),
    FIELD(vb_checks, rows, "rows", VB_FIELD_I64, 0),
    FIELD(vb_checks, token_mismatches, "token_mismatches", VB_FIELD_I64, 0),
    FIELD(vb_checks, near_ties, "near_ties", VB_FIELD_I64, 0),
    FIELD(vb_checks, requests, "requests", VB_FIELD_INT, 0),
    FIELD(vb_checks, paths_equal, "paths_equal", VB_FIELD_INT, 0),
    FIELD(vb_checks, paths_near_tie, "paths_near_tie", VB_FIELD_INT, 0),
    FIELD(vb_checks, accepted_mean, "accepted_mean", VB_FIELD_DOUBLE, 0),
};
TABLE(vb_checks_table, check_fields);

static const vb_field shape_fields[] = {
    FIELD(vb_scenario_info, batch, "batch", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, bucket, "bucket", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, draft, "draft_tokens", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, heads, "heads", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, d_qk, "d_qk", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, d_v, "d_v", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, page_size, "page_size", VB_FIELD_INT, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, tree, "tree", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, prefix, "prefix_len", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, layout, "layout", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, dtypes, "index_dtypes", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, total_prefix, "total_prefix", VB_FIELD_I64, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, num_slots, "num_slots", VB_FIELD_I64, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, n_replays, "replays", VB_FIELD_INT, VB_FIELD_ALWAYS),
};
TABLE(vb_shape_table, shape_fields);

/* The results header's integers: the reader checks them against their members as it does every
 * record field (a double past int's range converted as it stood is undefined behaviour; the
 * readers' fuzzer found host_cpus = 2539375241871). */
static const vb_field results_int_fields[] = {
    FIELD(vb_results, cpus, "host_cpus", VB_FIELD_INT, 0),
    FIELD(vb_results, scenarios_planned, "scenarios_planned", VB_FIELD_INT, 0),
};
TABLE(vb_results_int_table, results_int_fields);

static const vb_field gpu_int_fields[] = {
    FIELD(vb_gpu_info, sms, "sms", VB_FIELD_INT, 0),
    FIELD(vb_gpu_info, l2_bytes, "l2_bytes", VB_FIELD_I64, 0),
    FIELD(vb_gpu_info, mem_bytes, "memory_bytes", VB_FIELD_I64, 0),
    FIELD(vb_gpu_info, driver_version, "driver_version", VB_FIELD_INT, 0),
    FIELD(vb_gpu_info, runtime_version, "runtime_version", VB_FIELD_INT, 0),
};
TABLE(vb_gpu_int_table, gpu_int_fields);

static const vb_field scenario_fields[] = {
    FIELD(vb_scenario_info, name, "name", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, file, "file", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, shape_key, "shape_key", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, valid, "valid", VB_FIELD_BOOL, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, message, "message", VB_FIELD_STRING, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, bytes, "bytes", VB_FIELD_DOUBLE, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, flops, "flops", VB_FIELD_DOUBLE, VB_FIELD_ALWAYS),
    FIELD(vb_scenario_info, oracle_s, "oracle_seconds", VB_FIELD_DOUBLE, 0),
    FIELD(vb_scenario_info, pmax_median, "softmax_pmax_median", VB_FIELD_DOUBLE, 0),
    FIELD(vb_scenario_info, accepted_mean, "oracle_accepted_mean", VB_FIELD_DOUBLE, 0),
};
TABLE(vb_scenario_table, scenario_fields);

/* ---- members by kind ---------------------------------------------------------------------- */

static const void *at(const void *obj, const vb_field *f) { return (const char *)obj + f->offset; }
static void *at_mut(void *obj, const vb_field *f) { return (char *)obj + f->offset; }

/* The member as a number (strings and arrays: NaN). */
static double number_of(const void *obj, const vb_field *f)
{
    switch (f->kind) {
    case VB_FIELD_INT:
    case VB_FIELD_BOOL: return *(const int *)at(obj, f);
    case VB_FIELD_I64: return (double)*(const int64_t *)at(obj, f);
    case VB_FIELD_DOUBLE: return *(const double *)at(obj, f);
    default: return NAN;
    }
}

/* Whether the field carries a value (else null / an empty cell). */
static int has_value(const void *obj, const vb_field *f, int gate)
{
    if (!gate && !(f->flags & VB_FIELD_ALWAYS))
        return 0;
    if (f->kind == VB_FIELD_STRING || f->kind == VB_FIELD_I64X4 || f->kind == VB_FIELD_BOOL)
        return 1;
    const double x = number_of(obj, f);
    return isfinite(x) && (!(f->flags & VB_FIELD_POSITIVE) || x > 0);
}

void vb_fields_to_json(cJSON *o, const vb_field_table *t, const void *obj, int gate)
{
    for (int i = 0; i < t->count; i++) {
        const vb_field *f = &t->fields[i];
        if (!has_value(obj, f, gate)) {
            cJSON_AddItemToObject(o, f->key, f->kind == VB_FIELD_I64X4 ? cJSON_CreateArray() : cJSON_CreateNull());
            continue;
        }
        switch (f->kind) {
        case VB_FIELD_STRING: cJSON_AddStringToObject(o, f->key, (const char *)at(obj, f)); break;
        case VB_FIELD_BOOL: cJSON_AddBoolToObject(o, f->key, *(const int *)at(obj, f)); break;
        case VB_FIELD_I64X4: {
            cJSON *a = cJSON_AddArrayToObject(o, f->key);
            for (int k = 0; k < 4; k++)
                cJSON_AddItemToArray(a, cJSON_CreateNumber((double)((const int64_t *)at(obj, f))[k]));
            break;
        }
        default: cJSON_AddNumberToObject(o, f->key, number_of(obj, f)); break;
        }
    }
}

/* An integral JSON number in [lo, hi], else why. */
static int integral(const cJSON *v, double lo, double hi, const char *path, const char *key, char *why, size_t n)
{
    const double x = v->valuedouble;
    if (isfinite(x) && x == floor(x) && x >= lo && x <= hi)
        return 0;
    snprintf(why, n, "%s%s%s: expected an integer in [%.0f, %.0f], got %g", path, *path ? "." : "", key, lo, hi, x);
    return -1;
}

static int read_one(const cJSON *v, const vb_field *f, void *obj, const char *path, char *why, size_t n)
{
    const char *dot = *path ? "." : "";
    if (!v || cJSON_IsNull(v)) {
        if (f->kind == VB_FIELD_DOUBLE && (f->flags & VB_FIELD_NAN_NULL))
            *(double *)at_mut(obj, f) = NAN;
        return 0;
    }
    switch (f->kind) {
    case VB_FIELD_STRING:
        if (!cJSON_IsString(v))
            break;
        snprintf((char *)at_mut(obj, f), f->size, "%s", v->valuestring);
        return 0;
    case VB_FIELD_BOOL:
        if (!cJSON_IsBool(v))
            break;
        *(int *)at_mut(obj, f) = cJSON_IsTrue(v);
        return 0;
    case VB_FIELD_I64X4: {
        if (!cJSON_IsArray(v) || (cJSON_GetArraySize(v) != 4 && cJSON_GetArraySize(v) != 0))
            break;
        int k = 0;
        for (const cJSON *e = v->child; e; e = e->next, k++) {
            if (!cJSON_IsNumber(e)) {
                snprintf(why, n, "%s%s%s[%d]: expected a number", path, dot, f->key, k);
                return -1;
            }
            if (integral(e, -9.0e15, 9.0e15, path, f->key, why, n))
                return -1;
            ((int64_t *)at_mut(obj, f))[k] = (int64_t)e->valuedouble;
        }
        return 0;
    }
    default:
        if (!cJSON_IsNumber(v))
            break;
        if (f->kind == VB_FIELD_INT) {
            if (integral(v, INT_MIN, INT_MAX, path, f->key, why, n))
                return -1;
            *(int *)at_mut(obj, f) = (int)v->valuedouble;
        } else if (f->kind == VB_FIELD_I64) {
            if (integral(v, -9.0e15, 9.0e15, path, f->key, why, n)) /* exact in a double */
                return -1;
            *(int64_t *)at_mut(obj, f) = (int64_t)v->valuedouble;
        } else {
            *(double *)at_mut(obj, f) = v->valuedouble;
        }
        return 0;
    }
    static const char *const wanted[] = {"a number", "a number", "a number", "a string", "true or false",
                                         "an array of 4 numbers"};
    snprintf(why, n, "%s%s%s: expected %s", path, dot, f->key, wanted[f->kind]);
    return -1;
}

int vb_fields_from_json(const cJSON *o, const vb_field_table *t, void *obj, const char *path, char *why,
                        size_t why_len)
{
    if (!o || cJSON_IsNull(o))
        return 0;
    if (!cJSON_IsObject(o)) {
        snprintf(why, why_len, "%s: expected an object", path);
        return -1;
    }
    for (int i = 0; i < t->count; i++)
        if (read_one(cJSON_GetObjectItemCaseSensitive(o, t->fields[i].key), &t->fields[i], obj, path, why, why_len))
            return -1;
    return 0;
}

void vb_csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void vb_fields_csv_header(FILE *f, const vb_field_table *t, const char *prefix)
{
    for (int i = 0; i < t->count; i++)
        if (t->fields[i].kind != VB_FIELD_I64X4)
            fprintf(f, ",%s%s", prefix, t->fields[i].key);
}

void vb_fields_csv_row(FILE *f, const vb_field_table *t, const void *obj, int gate)
{
    for (int i = 0; i < t->count; i++) {
        const vb_field *fl = &t->fields[i];
        if (fl->kind == VB_FIELD_I64X4)
            continue;
        fputc(',', f);
        if (!has_value(obj, fl, gate))
            continue;
        if (fl->kind == VB_FIELD_STRING) {
            vb_csv_string(f, (const char *)at(obj, fl));
        } else if (fl->kind == VB_FIELD_BOOL) {
            fputs(*(const int *)at(obj, fl) ? "true" : "false", f);
        } else {
            fprintf(f, "%.6g", number_of(obj, fl));
        }
    }
}
