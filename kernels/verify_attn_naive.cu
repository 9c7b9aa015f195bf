// naive_gpu: one block per (draft token, head), the whole row's softmax in fp32, no split.
// Two passes over the keys: the row's max and sum, then the normalised weighted sum of V.
// Simple enough to trust; a fast cross-check of the others on the largest scenarios.
#include <cstdio>

#include "verify_common.cuh"

namespace {

using namespace vb;

constexpr int kWarps = 8;

// Combines per-warp (max, sum) pairs held in shared memory into the row's.
__device__ void row_max_sum(float m, float l, float &mx, float &lsum)
{
    __shared__ float sm_m[kWarps], sm_l[kWarps];
    const int warp = threadIdx.x / kWarp;
    if (threadIdx.x % kWarp == 0)
        sm_m[warp] = m, sm_l[warp] = l;
    __syncthreads();
    mx = -CUDART_INF_F, lsum = 0.f;
    for (int w = 0; w < kWarps; w++)
        mx = fmaxf(mx, sm_m[w]);
    for (int w = 0; w < kWarps; w++)
        lsum += sm_l[w] > 0.f ? sm_l[w] * exp2f(sm_m[w] - mx) : 0.f;
}

__global__ void __launch_bounds__(kWarps * kWarp) naive_kernel(vb_verify_params p)
{
    const int64_t row = blockIdx.x, t = row / p.heads;
    const int h = (int)(row % p.heads), warp = threadIdx.x / kWarp;
    RowView r;
    if (!view_row(p, t, r))
        return;
    const int64_t keys = r.P + r.T;
    const float scale = p.sm_scale * kLog2e;
    QRow q;
    load_q(p, t, h, q);

    float m = -CUDART_INF_F, l = 0.f; // pass 1: max and sum, online per warp
    for (int64_t j = warp; j < keys; j += kWarps) {
        if (!r.mask_row[j])
            continue;
        float s = warp_dot_qk(q, p.kv_buffer + key_slot(p, r, j) * p.stride_kv_slot, p.d_qk) * scale;
        float m_new = fmaxf(m, s);
        l = l * exp2f(m - m_new) + exp2f(s - m_new);
        m = m_new;
    }
    float mx, lsum;
    row_max_sum(m, l, mx, lsum);

    float acc[2 * kMaxVPairsPerLane] = {}; // pass 2: sum of p_j v_j with the final max and sum
    for (int64_t j = warp; j < keys && lsum > 0.f; j += kWarps) {
        if (!r.mask_row[j])
            continue;
        const uint16_t *kv = p.kv_buffer + key_slot(p, r, j) * p.stride_kv_slot;
        float s = warp_dot_qk(q, kv, p.d_qk) * scale;
        warp_axpy_v(acc, 1.f, exp2f(s - mx) / lsum, kv, p.d_v);
    }
    __shared__ float sm_acc[kWarps][kMaxDv];
#pragma unroll
    for (int e = 0; e < 2 * kMaxVPairsPerLane; e++)
        if (acc_dim(e) < p.d_v)
            sm_acc[warp][acc_dim(e)] = acc[e];
    __syncthreads();
    __nv_bfloat16 *o = reinterpret_cast<__nv_bfloat16 *>(p.o + t * p.stride_o_token + h * p.stride_o_head);
    for (int d = threadIdx.x; d < p.d_v; d += blockDim.x) {
        float x = 0.f;
        for (int w = 0; w < kWarps; w++)
            x += sm_acc[w][d];
        o[d] = __float2bfloat16_rn(x);
    }
    if (p.lse && threadIdx.x == 0)
        p.lse[t * p.heads + h] = lsum > 0.f ? (mx + log2f(lsum)) * kLn2 : -CUDART_INF_F;
}

size_t workspace_bytes(const vb_verify_params *) { return 0; }

int unsupported(const vb_verify_params *p, char *why, size_t n) { return unsupported_shape(p, why, n); }

cudaError_t launch(const vb_verify_params *p, void *, cudaStream_t stream)
{
    if (cudaError_t e = check_alignment(*p, "naive_gpu", 4))
        return e;
    const unsigned rows = (unsigned)((int64_t)p->max_tokens * p->heads);
    if (rows == 0)
        return cudaSuccess;
    naive_kernel<<<rows, kWarps * kWarp, 0, stream>>>(*p);
    return cudaGetLastError();
}

} // namespace

extern "C" const vb_kernel vb_kernel_naive_gpu = {
    "naive_gpu", "one block per (token, head), whole-row fp32 softmax in two passes, no split", 80, 1,
    workspace_bytes, unsupported, launch};
