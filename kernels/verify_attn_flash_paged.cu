// flash_paged: the seed's capture-safe verify kernel.
//
// Split-K flash attention with a fixed NSPLIT = 64: one thread block per (draft token,
// head, split), each split a contiguous chunk of ceil(kv_len / 64) keys (splits past the
// end exit at once), then a combine launch. Everything per batch is read in-kernel: the
// prefix length from kv_indptr, draft-token KV through out_cache_loc, the mask through
// mask_indptr. The grid depends only on the capture limits; split partials live in the
// caller's workspace. Portable CUDA (sm_80 and up): no architecture-specific instructions.
#include <cstdio>

#include "split_combine.cuh"

namespace {

using namespace vb;

constexpr int kSplits = 64;
constexpr int kWarps = 4;

using Partials = SplitPartials<kSplits>;

__global__ void __launch_bounds__(kWarps * kWarp) split_kernel(vb_verify_params p, void *ws)
{
    const int64_t row = blockIdx.x, t = row / p.heads;
    const int h = (int)(row % p.heads), split = blockIdx.y;
    RowView r;
    if (!view_row(p, t, r))
        return;
    const int64_t keys = r.P + r.T, chunk = split_chunk<kSplits, 1>(keys);
    const int64_t start = split * chunk, end = min(start + chunk, keys);
    if (start >= end)
        return; // an empty split: combine derives the same and skips it

    QRow q;
    load_q(p, t, h, q);
    const float scale = p.sm_scale * kLog2e;
    const int warp = threadIdx.x / kWarp;
    float m = -CUDART_INF_F, l = 0.f, acc[2 * kMaxVPairsPerLane] = {};
    for (int64_t j = start + warp; j < end; j += kWarps) {
        if (!r.mask_row[j])
            continue;
        const uint16_t *kv = p.kv_buffer + key_slot(p, r, j) * p.stride_kv_slot;
        float s = warp_dot_qk(q, kv, p.d_qk) * scale;
        float m_new = fmaxf(m, s), corr = exp2f(m - m_new), w = exp2f(s - m_new);
        l = l * corr + w;
        warp_axpy_v(acc, corr, w, kv, p.d_v);
        m = m_new;
    }

    // Merge the warps' partial softmaxes, then store this split's partial.
    __shared__ float sm_m[kWarps], sm_l[kWarps], sm_acc[kWarps][kMaxDv];
    const int lane = threadIdx.x % kWarp;
    if (lane == 0)
        sm_m[warp] = m, sm_l[warp] = l;
#pragma unroll
    for (int e = 0; e < 2 * kMaxVPairsPerLane; e++)
        if (acc_dim(e) < p.d_v)
            sm_acc[warp][acc_dim(e)] = acc[e];
    __syncthreads();
    float mx = -CUDART_INF_F;
    for (int w = 0; w < kWarps; w++)
        mx = fmaxf(mx, sm_m[w]);
    float f[kWarps], lsum = 0.f;
    for (int w = 0; w < kWarps; w++) {
        f[w] = sm_l[w] > 0.f ? exp2f(sm_m[w] - mx) : 0.f;
        lsum += sm_l[w] * f[w];
    }
    Partials part(ws, p);
    const size_t slot = (size_t)row * kSplits + split;
    if (threadIdx.x == 0)
        part.ml[2 * slot] = mx, part.ml[2 * slot + 1] = lsum;
    for (int d = threadIdx.x; d < p.d_v; d += blockDim.x) {
        float x = 0.f;
        for (int w = 0; w < kWarps; w++)
            x += f[w] * sm_acc[w][d];
        part.acc[slot * p.d_v + d] = x;
    }
}

size_t workspace_bytes(const vb_verify_params *lim) { return Partials::bytes(*lim); }

int unsupported(const vb_verify_params *p, char *why, size_t n) { return unsupported_shape(p, why, n); }

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    if (cudaError_t e = check_alignment(*p, "flash_paged", 4))
        return e;
    const unsigned rows = (unsigned)((int64_t)p->max_tokens * p->heads);
    if (rows == 0)
        return cudaSuccess;
    split_kernel<<<dim3(rows, kSplits), kWarps * kWarp, 0, stream>>>(*p, ws);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : launch_combine<kSplits, 1>(*p, ws, stream);
}

} // namespace

extern "C" const vb_kernel vb_kernel_flash_paged = {
    "flash_paged",
    "the seed's kernel: split-K (NSPLIT 64) flash attention, block per (token, head, split), combine",
    80, 1, workspace_bytes, unsupported, launch};
