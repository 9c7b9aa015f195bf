#include "scenario.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"
#include "oracle.h"
#include "prng.h"
#include "tree.h"

/* ---- diagnostics -------------------------------------------------------------------- */

typedef struct parse_ctx {
    const char *file;
    int errors;
} parse_ctx;

/* One line on stderr, "file: path: reason"; bytes a terminal would act on (newlines, escape
 * sequences from a name or a key) are written as \xNN so that the line stays one line. */
static void perr(parse_ctx *c, const char *path, const char *fmt, ...)
{
    char msg[1024], line[1400], shown[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s: %s: %s", c->file, *path ? path : "(top level)", msg);
    vb_printable(line, shown, sizeof shown);
    fprintf(stderr, "%s\n", shown);
    c->errors++;
}

static void join(char *out, size_t n, const char *path, const char *key)
{
    snprintf(out, n, "%s%s%s", path, *path ? "." : "", key);
}

static const char *json_type_name(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "a list";
    return "an object";
}

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    int d[41][41];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

/* Rejects keys not in allowed (a NULL-terminated list): typos must not pass silently. */
static void check_keys(parse_ctx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        int known = 0, best = 99;
        const char *guess = NULL;
        for (const char *const *k = allowed; *k; k++) {
            if (!strcmp(it->string, *k)) { known = 1; break; }
            int d = edit_distance(it->string, *k);
            if (d < best) best = d, guess = *k;
        }
        if (known)
            continue;
        char p[256];
        join(p, sizeof p, path, it->string);
        if (guess && best <= 2)
            perr(c, p, "unknown key (did you mean '%s'?)", guess);
        else
            perr(c, p, "unknown key");
    }
}

/* ---- typed getters: absent -> default; wrong type or out of range -> error ---------- */

static int want_object(parse_ctx *c, const cJSON *v, const char *path)
{
    if (v && !cJSON_IsObject(v)) {
        perr(c, path, "expected an object, got %s", json_type_name(v));
        return 0;
    }
    return v != NULL;
}

static int as_int(parse_ctx *c, const cJSON *v, const char *path, int64_t lo, int64_t hi, int64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9e15) {
        if (cJSON_IsNumber(v))
            perr(c, path, "expected an integer, got %g", v->valuedouble);
        else
            perr(c, path, "expected an integer, got %s", json_type_name(v));
        return -1;
    }
    int64_t x = (int64_t)v->valuedouble;
    if (x < lo && hi == INT64_MAX) {
        perr(c, path, "%lld is below the minimum %lld", (long long)x, (long long)lo);
        return -1;
    }
    if (x < lo || x > hi) {
        perr(c, path, "%lld is out of range [%lld, %lld]", (long long)x, (long long)lo, (long long)hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int get_int(parse_ctx *c, const cJSON *obj, const char *path, const char *key, int64_t lo,
                   int64_t hi, int64_t def, int64_t *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = def;
    if (!v)
        return 0;
    char p[256];
    join(p, sizeof p, path, key);
    return as_int(c, v, p, lo, hi, out);
}

static int get_int32(parse_ctx *c, const cJSON *obj, const char *path, const char *key, int lo,
                     int hi, int def, int *out)
{
    int64_t x;
    int rc = get_int(c, obj, path, key, lo, hi, def, &x);
    *out = (int)x;
    return rc;
}

static int get_num(parse_ctx *c, const cJSON *obj, const char *path, const char *key, double lo,
                   double hi, double def, double *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = def;
    if (!v)
        return 0;
    char p[256];
    join(p, sizeof p, path, key);
    if (!cJSON_IsNumber(v)) {
        perr(c, p, "expected a number, got %s", json_type_name(v));
        return -1;
    }
    if (!(v->valuedouble >= lo && v->valuedouble <= hi)) {
        perr(c, p, "%g is out of range [%g, %g]", v->valuedouble, lo, hi);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

static int get_bool(parse_ctx *c, const cJSON *obj, const char *path, const char *key, int def, int *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = def;
    if (!v)
        return 0;
    char p[256];
    join(p, sizeof p, path, key);
    if (!cJSON_IsBool(v)) {
        perr(c, p, "expected true or false, got %s", json_type_name(v));
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

/* names: NULL-terminated; *out is the index of the match. */
static int get_enum(parse_ctx *c, const cJSON *obj, const char *path, const char *key,
                    const char *const *names, int def, int *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    *out = def;
    if (!v)
        return 0;
    char p[256], list[160] = "";
    join(p, sizeof p, path, key);
    for (int i = 0; names[i]; i++) {
        if (cJSON_IsString(v) && !strcmp(v->valuestring, names[i])) {
            *out = i;
            return 0;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", names[i]);
    }
    if (cJSON_IsString(v))
        perr(c, p, "'%s' is not one of %s", v->valuestring, list);
    else
        perr(c, p, "expected one of %s, got %s", list, json_type_name(v));
    return -1;
}

/* ---- sections ------------------------------------------------------------------------ */

static const char *const layout_names[] = {"contiguous", "shuffled", "fragmented", NULL};

const char *vb_layout_name(vb_layout l) { return layout_names[l]; }
const char *vb_index_width_name(vb_index_width w) { return w == VB_I64 ? "int64" : "int32"; }

static int parse_model(parse_ctx *c, const cJSON *root, vb_scenario *s)
{
    static const char *const keys[] = {"heads", "latent_dim", "rope_dim", "sm_scale", NULL};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    int e0 = c->errors;
    if (want_object(c, m, "model"))
        check_keys(c, m, "model", keys);
    else
        m = NULL;
    get_int32(c, m, "model", "heads", 1, VB_ORACLE_MAX_HEADS, 8, &s->heads);
    get_int32(c, m, "model", "latent_dim", 2, 512, 512, &s->latent_dim);
    get_int32(c, m, "model", "rope_dim", 0, 64, 64, &s->rope_dim);
    get_num(c, m, "model", "sm_scale", 1e-6, 100.0, 0.14468, &s->sm_scale);
    if (c->errors == e0 && (s->latent_dim + s->rope_dim) % 2)
        perr(c, "model.rope_dim", "latent_dim + rope_dim must be even (bf16 pairs), got %d",
             s->latent_dim + s->rope_dim);
    if (c->errors == e0 && s->latent_dim % 2)
        perr(c, "model.latent_dim", "must be even (bf16 pairs), got %d", s->latent_dim);
    return c->errors == e0 ? 0 : -1;
}

static const char *const tree_presets[] = {"chain", "eagle", "ddtree", "explicit", NULL};

/* A key the chosen preset would ignore is an error, so that a mistyped tree is not silently
 * another one. */
static void check_preset_keys(parse_ctx *c, const cJSON *t, const char *path, int preset)
{
    static const char *const takes[][5] = {{"nodes"}, {"nodes", "topk", "depth", "seed"},
                                           {"nodes", "seed"}, {"parents"}};
    for (const cJSON *it = t ? t->child : NULL; it; it = it->next) {
        if (!strcmp(it->string, "preset") || !strcmp(it->string, "accept_prob"))
            continue;
        int ok = 0;
        for (int k = 0; k < 5 && takes[preset][k]; k++)
            ok |= !strcmp(it->string, takes[preset][k]);
        if (!ok) {
            char p[256];
            join(p, sizeof p, path, it->string);
            perr(c, p, "the %s preset does not take this key", tree_presets[preset]);
        }
    }
}

/* An explicit tree: tree.parents lists each node's parent (-1: the root). 0, or -1 after saying
 * which entry is wrong and why (out of range, a cycle, ...). */
static int parse_parents(parse_ctx *c, const cJSON *parents, const char *path, vb_variant *v)
{
    char p[256];
    join(p, sizeof p, path, "parents");
    if (!cJSON_IsArray(parents) || cJSON_GetArraySize(parents) < 1 || cJSON_GetArraySize(parents) > VB_MAX_NODES) {
        perr(c, p, "expected a list of 1 to %d parent indices", VB_MAX_NODES);
        return -1;
    }
    int par[VB_MAX_NODES], n = 0, e0 = c->errors, bad;
    for (const cJSON *it = parents->child; it; it = it->next, n++) {
        char pi[280];
        int64_t x = 0;
        snprintf(pi, sizeof pi, "%s[%d]", p, n);
        as_int(c, it, pi, -1, VB_MAX_NODES, &x);
        par[n] = (int)x;
    }
    if (c->errors != e0)
        return -1;
    char why[200];
    const int rc = vb_tree_from_parents(par, n, &v->tree, &bad, why, sizeof why);
    if (rc > 0) {
        char pi[280];
        snprintf(pi, sizeof pi, "%s[%d]", p, bad);
        perr(c, pi, "%s", why);
    }
    return rc ? -1 : 0;
}

static int parse_tree(parse_ctx *c, const cJSON *t, const char *path, uint64_t seed, vb_variant *v)
{
    static const char *const keys[] = {"preset", "nodes", "topk", "depth", "seed", "parents",
                                       "accept_prob", NULL};
    int e0 = c->errors, preset = 2;
    if (want_object(c, t, path))
        check_keys(c, t, path, keys);
    else
        t = NULL;
    const cJSON *parents = t ? cJSON_GetObjectItemCaseSensitive(t, "parents") : NULL;
    get_enum(c, t, path, "preset", tree_presets, parents ? 3 : 2, &preset);
    get_num(c, t, path, "accept_prob", 0.0, 1.0, 0.7, &v->accept_prob);
    if (c->errors == e0)
        check_preset_keys(c, t, path, preset);
    if (c->errors != e0)
        return -1;
    int nodes, topk, depth, rc = 0;
    int64_t tseed;
    char why[200], p[256];
    get_int32(c, t, path, "nodes", 1, VB_MAX_NODES, preset == 1 ? 8 : preset == 0 ? 16 : 9, &nodes);
    get_int32(c, t, path, "topk", 1, 16, 4, &topk);
    get_int32(c, t, path, "depth", 1, 32, 4, &depth);
    get_int(c, t, path, "seed", 0, INT64_MAX, (int64_t)seed, &tseed);
    if (c->errors != e0)
        return -1;
    switch (preset) {
    case 0: rc = vb_tree_chain(nodes, &v->tree); break;
    case 1:
        rc = vb_tree_eagle(topk, depth, nodes, (uint64_t)tseed, &v->tree, why, sizeof why);
        if (rc > 0) {
            join(p, sizeof p, path, "nodes");
            perr(c, p, "%s", why);
        }
        break;
    case 2: rc = vb_tree_ddtree(nodes, (uint64_t)tseed, &v->tree); break;
    default: rc = parse_parents(c, parents, path, v); break;
    }
    return c->errors == e0 && rc == 0 ? 0 : -1;
}

static int parse_prefix(parse_ctx *c, const cJSON *b, const char *path, uint64_t seed, vb_variant *v)
{
    char p[256];
    join(p, sizeof p, path, "prefix_len");
    const cJSON *pl = b ? cJSON_GetObjectItemCaseSensitive(b, "prefix_len") : NULL;
    int e0 = c->errors, T = v->tree.nodes;
    int64_t most = VB_MAX_CONTEXT - T;
    v->prefix_len = calloc((size_t)v->batch, sizeof *v->prefix_len);
    if (!pl || cJSON_IsNumber(pl)) {
        int64_t x = 4096;
        if (pl && as_int(c, pl, p, 0, INT64_MAX, &x))
            return -1;
        if (x > VB_MAX_CONTEXT) {
            perr(c, p, "%lld exceeds the maximum context %d", (long long)x, VB_MAX_CONTEXT);
            return -1;
        }
        if (x > most) {
            perr(c, p, "%lld plus %d draft tokens exceeds the maximum context %d", (long long)x, T,
                 VB_MAX_CONTEXT);
            return -1;
        }
        for (int i = 0; i < v->batch; i++)
            v->prefix_len[i] = x;
        snprintf(v->prefix_label, sizeof v->prefix_label, "%lld", (long long)x);
    } else if (cJSON_IsArray(pl)) {
        if (cJSON_GetArraySize(pl) != v->batch) {
            perr(c, p, "the list has %d entries but batch.size is %d", cJSON_GetArraySize(pl), v->batch);
            return -1;
        }
        int i = 0;
        for (const cJSON *it = pl->child; it; it = it->next, i++) {
            char pi[280];
            snprintf(pi, sizeof pi, "%s[%d]", p, i);
            if (as_int(c, it, pi, 0, INT64_MAX, &v->prefix_len[i]))
                continue;
            if (v->prefix_len[i] > most)
                perr(c, pi, "%lld plus %d draft tokens exceeds the maximum context %d",
                     (long long)v->prefix_len[i], T, VB_MAX_CONTEXT);
        }
        snprintf(v->prefix_label, sizeof v->prefix_label, "list");
    } else if (cJSON_IsObject(pl)) {
        static const char *const keys[] = {"min", "max", "seed", NULL};
        int64_t lo, hi, rseed;
        check_keys(c, pl, p, keys);
        get_int(c, pl, p, "min", 0, most, 1, &lo);
        get_int(c, pl, p, "max", 0, most, 4096, &hi);
        get_int(c, pl, p, "seed", 0, INT64_MAX, (int64_t)seed, &rseed);
        if (c->errors != e0)
            return -1;
        if (lo > hi) {
            perr(c, p, "min %lld is larger than max %lld", (long long)lo, (long long)hi);
            return -1;
        }
        vb_prng rng = vb_prng_make((uint64_t)rseed, 0x9EF1);
        for (int i = 0; i < v->batch; i++)
            v->prefix_len[i] = vb_prng_range(&rng, lo, hi);
        snprintf(v->prefix_label, sizeof v->prefix_label, "rand[%lld,%lld]", (long long)lo, (long long)hi);
    } else {
        perr(c, p, "expected a length, a list of lengths or {\"min\", \"max\"}, got %s", json_type_name(pl));
    }
    return c->errors == e0 ? 0 : -1;
}

static int parse_kv_cache(parse_ctx *c, const cJSON *k, const char *path, vb_variant *v)
{
    char p[256], q[300];
    join(p, sizeof p, path, "kv_cache");
    static const char *const keys[] = {"page_size", "layout", "free_fraction", "amplitude", "dtype", NULL};
    static const char *const dtypes[] = {"bf16", "fp8_e4m3", NULL};
    int e0 = c->errors, layout, dtype;
    if (want_object(c, k, p))
        check_keys(c, k, p, keys);
    else
        k = NULL;
    get_int32(c, k, p, "page_size", 1, 64, 1, &v->page_size);
    if (c->errors == e0 && v->page_size != 1 && v->page_size != 16 && v->page_size != 64)
        join(q, sizeof q, p, "page_size"), perr(c, q, "must be 1, 16 or 64, got %d", v->page_size);
    get_enum(c, k, p, "layout", layout_names, VB_LAYOUT_SHUFFLED, &layout);
    v->layout = (vb_layout)layout;
    get_num(c, k, p, "free_fraction", 0.0, 0.9, 0.25, &v->free_fraction);
    if (k && cJSON_GetObjectItemCaseSensitive(k, "free_fraction") && v->layout != VB_LAYOUT_FRAGMENTED)
        join(q, sizeof q, p, "free_fraction"), perr(c, q, "only the fragmented layout leaves pages free");
    /* Up to 1e30: far past fp16's range (65504), which a kernel's partials may use, and inside
     * bf16's (3.4e38) with room for the products a reference forms. */
    get_num(c, k, p, "amplitude", 1e-3, 1e30, 1.0, &v->kv_amplitude);
    if (!get_enum(c, k, p, "dtype", dtypes, 0, &dtype) && dtype == 1)
        join(q, sizeof q, p, "dtype"), perr(c, q, "fp8_e4m3 KV caches are not implemented yet; use bf16");
    return c->errors == e0 ? 0 : -1;
}

/* batch, tree, kv_cache and seed: the parts of a scenario a replay may change. */
static int parse_variant(parse_ctx *c, const cJSON *obj, const char *path, uint64_t seed, vb_variant *v)
{
    static const char *const batch_keys[] = {"size", "prefix_len", NULL};
    char p[256];
    int e0 = c->errors;
    memset(v, 0, sizeof *v);
    v->seed = seed;
    join(p, sizeof p, path, "tree");
    if (parse_tree(c, cJSON_GetObjectItemCaseSensitive(obj, "tree"), p, seed, v))
        return -1;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(obj, "batch");
    join(p, sizeof p, path, "batch");
    if (want_object(c, b, p))
        check_keys(c, b, p, batch_keys);
    else
        b = NULL;
    if (get_int32(c, b, p, "size", 1, VB_MAX_BATCH, 1, &v->batch) == 0)
        parse_prefix(c, b, p, seed, v);
    parse_kv_cache(c, cJSON_GetObjectItemCaseSensitive(obj, "kv_cache"), path, v);
    return c->errors == e0 ? 0 : -1;
}

static int parse_index_dtypes(parse_ctx *c, const cJSON *d, vb_index_dtypes *out)
{
    static const char *const keys[] = {"kv_indptr", "kv_indices", "qo_indptr", "out_cache_loc",
                                       "mask_indptr", "custom_mask", NULL};
    static const char *const widths[] = {"int32", "int64", NULL};
    static const char *const masks[] = {"bool", "uint8", NULL};
    /* Defaults: SGLang's CUDA-graph buffers (spec, "Buffers"). */
    vb_index_width *fields[] = {&out->kv_indptr, &out->kv_indices, &out->qo_indptr,
                                &out->out_cache_loc, &out->mask_indptr};
    const int defaults[] = {0, 1, 1, 1, 1};
    int e0 = c->errors, w;
    if (want_object(c, d, "index_dtypes"))
        check_keys(c, d, "index_dtypes", keys);
    else
        d = NULL;
    for (int i = 0; i < 5; i++) {
        get_enum(c, d, "index_dtypes", keys[i], widths, defaults[i], &w);
        *fields[i] = w ? VB_I64 : VB_I32;
    }
    get_enum(c, d, "index_dtypes", "custom_mask", masks, 1, &w);
    out->mask_is_bool = w == 0;
    return c->errors == e0 ? 0 : -1;
}

static int parse_timing(parse_ctx *c, const cJSON *t, vb_timing_spec *out)
{
    static const char *const keys[] = {"warmup", "iterations", "min_samples", "noise", "max_time_ms", "cold_l2", NULL};
    int e0 = c->errors;
    if (want_object(c, t, "timing"))
        check_keys(c, t, "timing", keys);
    else
        t = NULL;
    get_int32(c, t, "timing", "warmup", 0, 10000, 3, &out->warmup);
    get_int32(c, t, "timing", "iterations", 1, 100000, 30, &out->iterations);
    get_int32(c, t, "timing", "min_samples", 1, 100000, 10, &out->min_samples);
    get_num(c, t, "timing", "noise", 0.0, 1.0, 0.02, &out->noise);
    get_num(c, t, "timing", "max_time_ms", 1.0, 600000.0, 2000.0, &out->max_time_ms);
    get_bool(c, t, "timing", "cold_l2", 1, &out->cold_l2);
    return c->errors == e0 ? 0 : -1;
}

/* A replay's JSON: the base's batch and kv_cache with the replay's keys laid over them;
 * a replay's tree replaces the base tree whole (trees of different presets don't mix). */
static cJSON *merge_replay(const cJSON *base, const cJSON *r)
{
    cJSON *m = cJSON_CreateObject();
    static const char *const merged[] = {"batch", "kv_cache"};
    for (int i = 0; i < 2; i++) {
        const cJSON *bs = cJSON_GetObjectItemCaseSensitive(base, merged[i]);
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, merged[i]);
        if (rs && !cJSON_IsObject(rs)) {
            cJSON_AddItemToObject(m, merged[i], cJSON_Duplicate(rs, 1));
            continue;
        }
        cJSON *sec = cJSON_IsObject(bs) ? cJSON_Duplicate(bs, 1) : cJSON_CreateObject();
        for (const cJSON *it = rs ? rs->child : NULL; it; it = it->next) {
            cJSON_DeleteItemFromObjectCaseSensitive(sec, it->string);
            cJSON_AddItemToObject(sec, it->string, cJSON_Duplicate(it, 1));
        }
        /* A new batch size cannot reuse the base's per-request list. */
        if (i == 0 && rs && cJSON_GetObjectItemCaseSensitive(rs, "size") &&
            !cJSON_GetObjectItemCaseSensitive(rs, "prefix_len") &&
            cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(sec, "prefix_len")))
            cJSON_DeleteItemFromObjectCaseSensitive(sec, "prefix_len");
        cJSON_AddItemToObject(m, merged[i], sec);
    }
    const cJSON *tree = cJSON_GetObjectItemCaseSensitive(r, "tree");
    if (!tree)
        tree = cJSON_GetObjectItemCaseSensitive(base, "tree");
    if (tree)
        cJSON_AddItemToObject(m, "tree", cJSON_Duplicate(tree, 1));
    return m;
}

/* 1 to 99 letters, digits and the punctuation in `also`. */
static int valid_name(const char *n, const char *also)
{
    if (!*n || strlen(n) >= 100)
        return 0;
    for (; *n; n++)
        if (!isalnum((unsigned char)*n) && !strchr(also, *n))
            return 0;
    return 1;
}

static int parse_graph(parse_ctx *c, const cJSON *root, vb_scenario *s)
{
    static const char *const keys[] = {"enabled", "bucket", "replays", NULL};
    static const char *const replay_keys[] = {"name", "batch", "tree", "kv_cache", "seed", NULL};
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "graph");
    int e0 = c->errors, most = s->base.batch;
    if (want_object(c, g, "graph"))
        check_keys(c, g, "graph", keys);
    else
        g = NULL;
    get_bool(c, g, "graph", "enabled", 1, &s->graph_enabled);
    const cJSON *reps = g ? cJSON_GetObjectItemCaseSensitive(g, "replays") : NULL;
    if (reps && (!cJSON_IsArray(reps) || cJSON_GetArraySize(reps) > VB_MAX_REPLAYS)) {
        perr(c, "graph.replays", "expected a list of at most %d replay variants", VB_MAX_REPLAYS);
        return -1;
    }
    s->n_replays = reps ? cJSON_GetArraySize(reps) : 0;
    s->replays = calloc((size_t)s->n_replays + 1, sizeof *s->replays);
    int i = 0;
    for (const cJSON *r = reps ? reps->child : NULL; r; r = r->next, i++) {
        char p[64];
        snprintf(p, sizeof p, "graph.replays[%d]", i);
        if (!want_object(c, r, p))
            continue;
        check_keys(c, r, p, replay_keys);
        int64_t seed;
        get_int(c, r, p, "seed", 0, INT64_MAX, (int64_t)s->base.seed + 1 + i, &seed);
        cJSON *m = merge_replay(root, r);
        vb_variant *v = &s->replays[i];
        if (parse_variant(c, m, p, (uint64_t)seed, v) == 0) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "name");
            char np[80];
            snprintf(np, sizeof np, "%s.name", p);
            if (name && !cJSON_IsString(name))
                perr(c, np, "expected a string, got %s", json_type_name(name));
            snprintf(v->name, sizeof v->name, "%s", cJSON_IsString(name) ? name->valuestring : "");
            if (!cJSON_IsString(name))
                snprintf(v->name, sizeof v->name, "replay%d", i + 1);
            else if (!valid_name(v->name, "._+=,-"))
                perr(c, np, "'%s' must be 1 to 99 letters, digits or ._+=,-", v->name);
            else if (!strcmp(v->name, "base"))
                perr(c, np, "'base' names the scenario's own variant");
            for (int j = 0; j < i; j++)
                if (!strcmp(s->replays[j].name, v->name))
                    perr(c, np, "'%s' is the name of graph.replays[%d] too", v->name, j);
            if (v->batch > most)
                most = v->batch;
        }
        cJSON_Delete(m);
    }
    if (c->errors != e0)
        return -1;
    get_int32(c, g, "graph", "bucket", 1, VB_MAX_BATCH, most, &s->bucket);
    if (c->errors == e0 && s->bucket < most)
        perr(c, "graph.bucket", "%d is smaller than a batch it must replay (%d requests)", s->bucket, most);
    return c->errors == e0 ? 0 : -1;
}


/* mask.prefix_hidden: SGLang writes 1 into every prefix column of the tree mask; a scenario
 * may hide a share of them to prove that kernels apply the mask as written. */
static void parse_mask(parse_ctx *c, const cJSON *m, vb_scenario *s)
{
    static const char *const keys[] = {"prefix_hidden", NULL};
    if (m && want_object(c, m, "mask"))
        check_keys(c, m, "mask", keys);
    else
        m = NULL;
    get_num(c, m, "mask", "prefix_hidden", 0.0, 1.0, 0.0, &s->prefix_hidden);
}

static const char *const scenario_keys[] = {"name", "model", "batch", "tree", "kv_cache", "index_dtypes",
                                            "mask", "graph", "timing", "seed", "sweep", NULL};

static int parse_scenario(parse_ctx *c, const cJSON *obj, const char *default_name, vb_scenario *s)
{
    const char *const *keys = scenario_keys;
    int e0 = c->errors;
    int64_t seed;
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "%s", c->file);
    check_keys(c, obj, "", keys);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (name && !cJSON_IsString(name))
        perr(c, "name", "expected a string, got %s", json_type_name(name));
    snprintf(s->name, sizeof s->name, "%s", cJSON_IsString(name) ? name->valuestring : default_name);
    if (!valid_name(s->name, "._+=,-/"))
        perr(c, "name", "'%s' must be 1 to 99 letters, digits or ._+=,-/", s->name);
    get_int(c, obj, "", "seed", 0, INT64_MAX, 1, &seed);
    parse_model(c, obj, s);
    parse_mask(c, cJSON_GetObjectItemCaseSensitive(obj, "mask"), s);
    parse_index_dtypes(c, cJSON_GetObjectItemCaseSensitive(obj, "index_dtypes"), &s->dtypes);
    parse_timing(c, cJSON_GetObjectItemCaseSensitive(obj, "timing"), &s->timing);
    if (parse_variant(c, obj, "", (uint64_t)seed, &s->base) == 0) {
        snprintf(s->base.name, sizeof s->base.name, "base");
        parse_graph(c, obj, s);
    }
    return c->errors == e0 ? 0 : -1;
}

/* ---- files, lists and sweeps --------------------------------------------------------- */

static int list_push(vb_scenario_list *l, const vb_scenario *s)
{
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        vb_scenario *items = realloc(l->items, sizeof *items * (size_t)cap);
        if (!items)
            return -1;
        l->items = items, l->cap = cap;
    }
    l->items[l->count++] = *s;
    return 0;
}

void vb_scenario_free(vb_scenario *s)
{
    vb_variant_free(&s->base);
    for (int i = 0; i < s->n_replays; i++)
        vb_variant_free(&s->replays[i]);
    free(s->replays);
    s->replays = NULL;
}

/* Sets obj[a][b][c] = value for the dotted path "a.b.c", creating objects on the way. */
static void set_path(cJSON *obj, const char *path, const cJSON *value)
{
    char key[128];
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    snprintf(key, sizeof key, "%.*s", (int)n, path);
    if (!dot) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        cJSON_AddItemToObject(obj, key, cJSON_Duplicate(value, 1));
        return;
    }
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!cJSON_IsObject(sub)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        sub = cJSON_AddObjectToObject(obj, key);
    }
    set_path(sub, dot + 1, value);
}

/* A short label for an axis value: numbers and strings as they are, objects as their
 * scalar values joined by '-' ({"preset": "chain", "nodes": 16} -> chain-16). */
static void value_label(const cJSON *v, char *out, size_t n)
{
    out[0] = 0;
    if (cJSON_IsString(v)) {
        snprintf(out, n, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        snprintf(out, n, "%.10g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        for (const cJSON *it = v->child; it; it = it->next) {
            char sub[64];
            value_label(it, sub, sizeof sub);
            if (*sub)
                snprintf(out + strlen(out), n - strlen(out), "%s%s", *out ? "-" : "", sub);
        }
    }
}

enum { MAX_AXES = 8, MAX_COMBINATIONS = 4096 };

/* A sweep's axes: each a scenario key (dotted for a nested field) with a non-empty list of
 * values. Fills axes and sizes; returns the number of axes, or -1 after saying why. */
static int read_axes(parse_ctx *c, const cJSON *sweep, const cJSON **axes, int *sizes, int *combinations)
{
    int naxes = 0;
    *combinations = 1;
    for (const cJSON *a = sweep->child; a; a = a->next) {
        char p[256];
        join(p, sizeof p, "sweep", a->string);
        if (naxes == MAX_AXES || !cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0) {
            perr(c, p, "expected a non-empty list of values (at most %d axes)", MAX_AXES);
            return -1;
        }
        if (!strcmp(a->string, "name") || !strcmp(a->string, "sweep")) {
            perr(c, p, "this key cannot be an axis");
            return -1;
        }
        char top[64];
        snprintf(top, sizeof top, "%.*s", (int)strcspn(a->string, "."), a->string);
        int known = 0;
        for (const char *const *k = scenario_keys; *k && !known; k++)
            known = !strcmp(top, *k);
        if (!known) {
            perr(c, p, "'%s' is not a scenario key, so this axis would change nothing", top);
            return -1;
        }
        axes[naxes] = a;
        sizes[naxes] = cJSON_GetArraySize(a);
        *combinations *= sizes[naxes++];
        if (*combinations > MAX_COMBINATIONS) {
            perr(c, "sweep", "more than %d combinations", MAX_COMBINATIONS);
            return -1;
        }
    }
    return naxes;
}

/* Combination COMBO of the axes (the last axis varies fastest) written into ONE, and its
 * name, "stem/axis=value,axis=value", into name. The axes are set last to first, so where two
 * overlap ("batch" and "batch.size") the one written first in the file wins. */
static void apply_combination(cJSON *one, const char *stem, const cJSON *const *axes, const int *sizes, int naxes,
                              int combo, char *name, size_t name_len)
{
    int idx[MAX_AXES];
    for (int a = naxes - 1, rest = combo; a >= 0; a--) {
        idx[a] = rest % sizes[a];
        rest /= sizes[a];
        set_path(one, axes[a]->string, cJSON_GetArrayItem(axes[a], idx[a]));
    }
    snprintf(name, name_len, "%s/", stem);
    for (int a = 0; a < naxes; a++) {
        char label[64];
        size_t len = strlen(name);
        value_label(cJSON_GetArrayItem(axes[a], idx[a]), label, sizeof label);
        snprintf(name + len, name_len - len, "%s%s=%s", a ? "," : "", axes[a]->string, label);
    }
}

static int expand_sweep(parse_ctx *c, const cJSON *obj, const char *default_name, vb_scenario_list *out)
{
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(obj, "sweep");
    if (!cJSON_IsObject(sweep) || !sweep->child) {
        perr(c, "sweep", "expected an object of axes, each a non-empty list of values");
        return -1;
    }
    const cJSON *axes[MAX_AXES];
    int sizes[MAX_AXES], total;
    const int naxes = read_axes(c, sweep, axes, sizes, &total);
    if (naxes < 0)
        return -1;
    cJSON *base = cJSON_Duplicate(obj, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(base, "sweep");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    const char *stem = cJSON_IsString(name) ? name->valuestring : default_name;
    cJSON_DeleteItemFromObjectCaseSensitive(base, "name");
    int e0 = c->errors;
    for (int combo = 0; combo < total; combo++) {
        cJSON *one = cJSON_Duplicate(base, 1);
        char sname[VB_NAME_MAX];
        apply_combination(one, stem, axes, sizes, naxes, combo, sname, sizeof sname);
        cJSON_AddStringToObject(one, "name", sname);
        vb_scenario s;
        char file_tag[300];
        snprintf(file_tag, sizeof file_tag, "%s: sweep %s", c->file, sname);
        parse_ctx sub = {file_tag, 0};
        if (parse_scenario(&sub, one, sname, &s) == 0)
            list_push(out, &s);
        else
            vb_scenario_free(&s);
        c->errors += sub.errors;
        cJSON_Delete(one);
        if (c->errors - e0 >= 20) /* one broken base repeats its error per combination */
            break;
    }
    cJSON_Delete(base);
    return c->errors == e0 ? 0 : -1;
}

static void file_stem(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, n, "%s", base);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = 0;
    for (char *p = out; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._+=,-", *p))
            *p = '_';
}

static int load_one(parse_ctx *c, const cJSON *obj, const char *default_name, vb_scenario_list *out)
{
    if (!cJSON_IsObject(obj)) {
        perr(c, "", "expected a scenario object, got %s", json_type_name(obj));
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(obj, "sweep"))
        return expand_sweep(c, obj, default_name, out);
    vb_scenario s;
    if (parse_scenario(c, obj, default_name, &s)) {
        vb_scenario_free(&s);
        return -1;
    }
    return list_push(out, &s);
}

typedef struct member_key {
    const char *key;
    int pos;
} member_key;

static int by_key_then_pos(const void *a, const void *b)
{
    const member_key *x = a, *y = b;
    const int c = strcmp(x->key, y->key);
    return c ? c : x->pos - y->pos;
}

/* repeated[i] = 1 for each of the n members of obj whose key an earlier member has: sorted,
 * so that an object with a million keys costs n log n, not n^2. */
static int mark_repeated_keys(const cJSON *obj, int n, char *repeated)
{
    member_key *m = malloc(sizeof *m * (size_t)n);
    if (!m)
        return -1;
    int i = 0;
    for (const cJSON *it = obj->child; it; it = it->next, i++)
        m[i] = (member_key){it->string, i};
    qsort(m, (size_t)n, sizeof *m, by_key_then_pos);
    for (i = 1; i < n; i++)
        repeated[m[i].pos] = !strcmp(m[i].key, m[i - 1].key);
    free(m);
    return 0;
}

/* cJSON keeps every member of an object and lookups find the first: a key written twice
 * would silently lose its second value. */
static void check_duplicates(parse_ctx *c, const cJSON *node, const char *path)
{
    const int n = cJSON_GetArraySize(node), object = cJSON_IsObject(node) && n > 1;
    char *repeated = object ? calloc((size_t)n, 1) : NULL;
    if (object && (!repeated || mark_repeated_keys(node, n, repeated))) {
        perr(c, path, "out of host memory checking for repeated keys");
        free(repeated);
        return;
    }
    int i = 0;
    for (const cJSON *it = node ? node->child : NULL; it; it = it->next, i++) {
        char p[512];
        if (cJSON_IsObject(node))
            join(p, sizeof p, path, it->string);
        else
            snprintf(p, sizeof p, "%s[%d]", path, i);
        if (repeated && repeated[i])
            perr(c, p, "appears twice in one object");
        check_duplicates(c, it, p);
    }
    free(repeated);
}

int vb_scenario_load_text(const char *file, const char *text, vb_scenario_list *out)
{
    parse_ctx c = {file, 0};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1, col = 1;
        const char *at = end ? end : text;
        for (const char *p = text; p < at && *p; p++)
            *p == '\n' ? (line++, col = 1) : col++;
        fprintf(stderr, "%s:%d:%d: malformed JSON near '%.20s'\n", file, line, col, at);
        return 1;
    }
    vb_scenario_list local = {0};
    char stem[96];
    file_stem(file, stem, sizeof stem);
    /* Each scenario of a list, and each combination of a sweep, stands alone: a bad one is
     * reported and left out, the good ones are added. */
    if (cJSON_IsArray(root)) {
        int i = 0;
        for (const cJSON *it = root->child; it; it = it->next, i++) {
            char name[VB_NAME_MAX], tag[300];
            snprintf(name, sizeof name, "%s.%d", stem, i);
            snprintf(tag, sizeof tag, "%s: [%d]", file, i);
            parse_ctx sub = {tag, 0};
            check_duplicates(&sub, it, "");
            if (!sub.errors)
                load_one(&sub, it, name, &local);
            c.errors += sub.errors;
        }
        if (i == 0)
            perr(&c, "", "the list holds no scenarios");
    } else {
        check_duplicates(&c, root, "");
        if (!c.errors)
            load_one(&c, root, stem, &local);
    }
    cJSON_Delete(root);
    for (int i = 0; i < local.count; i++)
        list_push(out, &local.items[i]);
    free(local.items);
    return c.errors;
}

int vb_scenario_load_file(const char *path, vb_scenario_list *out)
{
    char why[200];
    char *text = vb_read_text(path, (size_t)64 << 20, why, sizeof why);
    if (!text) {
        char shown[600];
        vb_printable(path, shown, sizeof shown);
        fprintf(stderr, "%s: %s\n", shown, why);
        return 1;
    }
    int rc = vb_scenario_load_text(path, text, out);
    free(text);
    return rc;
}

void vb_scenario_list_free(vb_scenario_list *list)
{
    for (int i = 0; i < list->count; i++)
        vb_scenario_free(&list->items[i]);
    free(list->items);
    memset(list, 0, sizeof *list);
}

void vb_variant_free(vb_variant *v)
{
    if (!v)
        return;
    free(v->prefix_len);
    v->prefix_len = NULL;
    vb_tree_free(&v->tree);
}

int vb_variant_copy(vb_variant *dst, const vb_variant *src)
{
    *dst = *src;
    dst->prefix_len = malloc(sizeof *dst->prefix_len * (size_t)src->batch);
    if (!dst->prefix_len || vb_tree_copy(&dst->tree, &src->tree))
        return -1;
    memcpy(dst->prefix_len, src->prefix_len, sizeof *dst->prefix_len * (size_t)src->batch);
    return 0;
}

int vb_scenario_max_draft(const vb_scenario *s)
{
    int t = s->base.tree.nodes;
    for (int i = 0; i < s->n_replays; i++)
        if (s->replays[i].tree.nodes > t)
            t = s->replays[i].tree.nodes;
    return t;
}
