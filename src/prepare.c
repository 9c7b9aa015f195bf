#define _POSIX_C_SOURCE 200809L
#include "prepare.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int vb_prepare(const vb_scenario *s, const vb_variant *v, int bucket, vb_gpu *gpu, int verify_generator,
               int threads, vb_prepared *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof *p);
    if (vb_instance_build(s, v, bucket, &p->in, why, why_len))
        return -1;
    int filled = gpu && !vb_gpu_dead(gpu) ? vb_gpu_fill_instance(gpu, &p->in, verify_generator, why, why_len)
                                          : vb_instance_fill_host(&p->in, why, why_len);
    if (filled) {
        vb_instance_free(&p->in);
        return -1;
    }
    double t0 = now_s();
    /* Padding requests of a graph bucket are checked for being written and finite, never
     * against the oracle: it runs on the live requests only. */
    vb_verify_params hp = vb_instance_launch_params(&p->in, p->in.live_batch);
    if (vb_oracle_run(&hp, threads, &p->ref) ||
        vb_verdict_prepare(&p->in, &p->ref, v->accept_prob, v->seed, threads, &p->vref)) {
        snprintf(why, why_len, "batch: too little host memory for the oracle's buffers");
        vb_prepared_free(p);
        return -1;
    }
    p->oracle_s = now_s() - t0;
    return 0;
}

void vb_prepared_free(vb_prepared *p)
{
    vb_verdict_free(&p->vref);
    vb_oracle_free(&p->ref);
    vb_instance_free(&p->in);
}

/* FNV-1a over 64-bit values. */
static uint64_t fnv(uint64_t h, int64_t x)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint64_t)((x >> (8 * i)) & 0xFF)) * 0x100000001B3ull;
    return h;
}

void vb_shape_key(const vb_instance *in, const vb_scenario *s, char *out, size_t n)
{
    uint64_t hp = 0xCBF29CE484222325ull, ht = hp;
    int64_t sum = 0;
    for (int b = 0; b < in->live_batch; b++)
        hp = fnv(hp, in->prefix_len[b]), sum += in->prefix_len[b];
    for (int i = 0; i < in->tree.nodes; i++)
        ht = fnv(ht, in->tree.parent[i]);
    const vb_index_dtypes *d = &s->dtypes;
    snprintf(out, n, "bs%d.T%d.H%d.dqk%d.dv%d.page%d.%s.P%lld:%016llx.tree%d:%016llx.idx%d%d%d%d%d.mask-%s",
             in->live_batch, in->draft, in->heads, in->d_qk, in->d_v, in->page_size, vb_layout_name(s->base.layout),
             (long long)sum, (unsigned long long)hp, in->tree.nodes, (unsigned long long)ht, d->kv_indptr * 8,
             d->kv_indices * 8, d->qo_indptr * 8, d->out_cache_loc * 8, d->mask_indptr * 8,
             d->mask_is_bool ? "bool" : "uint8");
    if (s->prefix_hidden > 0) { /* a mask SGLang never writes: never matches a dump of its layout */
        size_t len = strlen(out);
        snprintf(out + len, n > len ? n - len : 0, ".hidden%g", s->prefix_hidden);
    }
}
