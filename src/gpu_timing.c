/* Samples by CUDA events around launches on the run's stream; when to stop is sampling.h's. */
#include "gpu_internal.h"

#include <stdlib.h>
#include <string.h>

#include "sampling.h"

enum { BATCH = 10 }; /* samples enqueued between two host synchronisations */

int vb_gpu_measure(vb_gpu *g, vb_launch_fn fn, void *ctx, const vb_timing_spec *ts, int cold, double bytes,
                   double flops, const vb_ceilings *ceil, vb_timing *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < ts->warmup; i++)
        if (!CU(g, fn(ctx, g->stream)))
            return -1;
    cudaEvent_t ev[2 * BATCH];
    float *ms = calloc((size_t)ts->iterations + 1, sizeof *ms);
    int made = 0, ok = ms != NULL, n = 0;
    for (; ok && made < 2 * BATCH; made++)
        ok = CU(g, cudaEventCreate(&ev[made]));
    double total = 0;
    for (int want; ok && (want = vb_sampling_next_batch(ts, n, total, BATCH)) > 0;) {
        for (int i = 0; ok && i < want; i++) {
            if (cold)
                ok = CU(g, cudaMemsetAsync(g->flush, (n + i) & 0xFF, g->flush_bytes, g->stream));
            ok = ok && CU(g, cudaEventRecord(ev[2 * i], g->stream)) && CU(g, fn(ctx, g->stream)) &&
                 CU(g, cudaEventRecord(ev[2 * i + 1], g->stream));
        }
        ok = ok && CU(g, vb_gpu_sync(g));
        for (int i = 0; ok && i < want; i++) {
            ok = CU(g, cudaEventElapsedTime(&ms[n + i], ev[2 * i], ev[2 * i + 1]));
            total += ms[n + i];
        }
        n += want;
        if (ok && vb_sampling_enough(ts, ms, n, total))
            break;
    }
    if (ok && n > 0) {
        vb_sampling_summarise(ms, n, out);
        out->gbps = bytes / (out->median_us * 1e3);
        out->tflops = flops / (out->median_us * 1e6);
        out->bw_share = ceil->read_gbps > 0 ? out->gbps / ceil->read_gbps : 0;
        out->mma_share = ceil->mma_tflops > 0 ? out->tflops / ceil->mma_tflops : 0;
        out->wgmma_share = ceil->wgmma_tflops > 0 ? out->tflops / ceil->wgmma_tflops : 0;
        vb_timing_set_floor(out);
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    free(ms);
    return ok ? 0 : -1;
}
