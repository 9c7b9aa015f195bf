/* q and KV generated on the device with cuRAND: the same Philox words as the host generator,
 * turned into bf16 by the same mapping, so both give the same bits. */
#include "gpu_internal.h"

#include <curand.h>
#include <stdio.h>
#include <stdlib.h>

#include "device_util.h"

static int gen_device(vb_gpu *g, const vb_gen_stream *s, uint16_t *host_out, char *why, size_t n)
{
    int64_t chunk = vb_gen_chunk_words(s->count), rows = (s->count + s->row_len - 1) / s->row_len;
    uint16_t *d_out = NULL;
    uint32_t *d_bits = NULL;
    float *d_amp = NULL;
    curandGenerator_t gen = NULL;
    int ok = CU(g, cudaMalloc((void **)&d_out, sizeof *d_out * (size_t)s->count)) &&
             CU(g, cudaMalloc((void **)&d_bits, sizeof *d_bits * (size_t)chunk)) &&
             CU(g, cudaMalloc((void **)&d_amp, sizeof *d_amp * (size_t)rows)) &&
             CU(g, cudaMemcpy(d_amp, s->amplitude, sizeof *d_amp * (size_t)rows, cudaMemcpyHostToDevice));
    curandStatus_t st = CURAND_STATUS_SUCCESS;
    if (ok) {
        st = curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
        if (st == CURAND_STATUS_SUCCESS)
            st = curandSetStream(gen, g->stream);
        if (st == CURAND_STATUS_SUCCESS)
            st = curandSetPseudoRandomGeneratorSeed(gen, s->seed);
    }
    for (int64_t done = 0; ok && st == CURAND_STATUS_SUCCESS && done < s->count; done += chunk) {
        int64_t m = s->count - done < chunk ? s->count - done : chunk;
        st = curandGenerate(gen, d_bits, (size_t)vb_gen_round4(m));
        ok = st == CURAND_STATUS_SUCCESS &&
             CU(g, vb_dev_synth_bf16(d_out, d_bits, done, m, d_amp, s->row_len, g->stream));
    }
    ok = ok && st == CURAND_STATUS_SUCCESS && CU(g, vb_gpu_sync(g)) &&
         CU(g, cudaMemcpy(host_out, d_out, sizeof *d_out * (size_t)s->count, cudaMemcpyDeviceToHost));
    if (gen)
        curandDestroyGenerator(gen);
    cudaFree(d_out), cudaFree(d_bits), cudaFree(d_amp);
    if (st != CURAND_STATUS_SUCCESS)
        snprintf(why, n, "cuRAND device generator: status %d", (int)st);
    else if (!ok)
        snprintf(why, n, "%s", g->err);
    return ok && st == CURAND_STATUS_SUCCESS ? 0 : -1;
}

/* The host generator must give the very same bits: compare every value. */
static int verify_against_host(const vb_gen_stream *s, const uint16_t *dev_values, const char *what, char *why,
                               size_t n)
{
    uint16_t *host = malloc(sizeof *host * (size_t)s->count);
    if (!host || vb_gen_host(s, host, why, n)) {
        free(host);
        return -1;
    }
    int64_t bad = -1;
    for (int64_t i = 0; i < s->count && bad < 0; i++)
        if (host[i] != dev_values[i])
            bad = i;
    if (bad >= 0)
        snprintf(why, n, "generator: %s value %lld differs between host (0x%04x) and GPU (0x%04x)", what,
                 (long long)bad, host[bad], dev_values[bad]);
    free(host);
    return bad >= 0 ? -1 : 0;
}

int vb_gpu_fill_instance(vb_gpu *g, vb_instance *in, int verify, char *why, size_t why_len)
{
    if (gen_device(g, &in->q_gen, in->q, why, why_len) || gen_device(g, &in->kv_gen, in->kv, why, why_len))
        return -1;
    if (verify && (verify_against_host(&in->q_gen, in->q, "q", why, why_len) ||
                   verify_against_host(&in->kv_gen, in->kv, "kv", why, why_len)))
        return -1;
    vb_instance_poison_unused(in);
    return 0;
}
