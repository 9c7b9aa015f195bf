/* Device helpers the harness needs besides the verify kernels: turning cuRAND words into
 * the synthetic bf16 values, and the two ceiling probes. */
#ifndef VB_DEVICE_UTIL_H
#define VB_DEVICE_UTIL_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[first + i] = vb_synth_bf16(bits[i], amplitude[(first + i) / row_len]) for i < n. */
cudaError_t vb_dev_synth_bf16(uint16_t *dst, const uint32_t *bits, int64_t first, int64_t n,
                              const float *amplitude, int64_t row_len, cudaStream_t stream);
/* Reads n 16-byte words once (a streaming read-bandwidth probe); sink keeps it honest. */
cudaError_t vb_dev_read_probe(const void *buf, size_t n16, unsigned *sink, int sms, cudaStream_t stream);
/* Register-only bf16 mma.sync m16n8k16 loop; returns the flops one launch performs. */
cudaError_t vb_dev_mma_probe(float *sink, int sms, int iters, double *flops, cudaStream_t stream);
/* bf16 wgmma m64n128k16 loop, operands in shared memory (wgmma_probe_sm90a.cu: sm_90a only,
 * call it on a compute-capability 9.0 device); returns the flops one launch performs. */
cudaError_t vb_dev_wgmma_probe(float *sink, int sms, int iters, double *flops, cudaStream_t stream);
/* 1 when the kernels were built with -Dphase_stamps=true (kernels/phase_stamps.cuh): mla_onepass
 * and mla_onepass_ws then print stamps, and their times are not the kernels' own. */
int vb_dev_phase_stamps(void);

#ifdef __cplusplus
}
#endif
#endif
