// Split-K partials and the combine step shared by the split kernels.
//
// Workspace layout: for every q row (token t, head h; row = t * heads + h) and split s,
// ml[(row * kSplits + s) * 2 + {0, 1}] holds the split's running max (log2 domain) and sum,
// and acc[(row * kSplits + s) * d_v + d] its unnormalised output. A split of an empty or
// fully masked range has sum 0 (or was never written: the combine derives which splits a
// row used from the same chunking the split kernel used, and reads only those).
#pragma once

#include "verify_common.cuh"

namespace vb {

template <int kSplits> struct SplitPartials {
    float *ml;
    float *acc;

    __host__ __device__ SplitPartials(void *ws, const vb_verify_params &p)
    {
        size_t rows = (size_t)p.max_tokens * p.heads;
        ml = static_cast<float *>(ws);
        acc = ml + rows * kSplits * 2;
    }

    static size_t bytes(const vb_verify_params &p)
    {
        return sizeof(float) * (size_t)p.max_tokens * p.heads * kSplits * (2 + (size_t)p.d_v);
    }
};

// Keys per split: ceil(keys / kSplits), rounded up to a multiple of kGranule.
template <int kSplits, int kGranule> __host__ __device__ inline int64_t split_chunk(int64_t keys)
{
    int64_t c = (keys + kSplits - 1) / kSplits;
    return (c + kGranule - 1) / kGranule * kGranule;
}

// One block per q row: merge the row's split partials into o (bf16) and lse.
template <int kSplits, int kGranule> __global__ void combine_splits(vb_verify_params p, void *ws)
{
    const int64_t row = blockIdx.x, t = row / p.heads;
    const int h = (int)(row % p.heads);
    RowView r;
    if (!view_row(p, t, r))
        return;
    const int64_t keys = r.P + r.T, chunk = split_chunk<kSplits, kGranule>(keys);
    const int used = (int)((keys + chunk - 1) / chunk);
    SplitPartials<kSplits> part(ws, p);
    const float *ml = part.ml + (size_t)row * kSplits * 2;
    float mx = -CUDART_INF_F, lsum = 0.f;
    for (int s = 0; s < used; s++)
        if (ml[2 * s + 1] > 0.f)
            mx = fmaxf(mx, ml[2 * s]);
    for (int s = 0; s < used; s++)
        lsum += ml[2 * s + 1] > 0.f ? ml[2 * s + 1] * exp2f(ml[2 * s] - mx) : 0.f;
    __nv_bfloat16 *o = reinterpret_cast<__nv_bfloat16 *>(p.o + t * p.stride_o_token + h * p.stride_o_head);
    const float *acc = part.acc + (size_t)row * kSplits * p.d_v;
    for (int d = threadIdx.x; d < p.d_v; d += blockDim.x) {
        float x = 0.f;
        for (int s = 0; s < used; s++)
            x += ml[2 * s + 1] > 0.f ? acc[(size_t)s * p.d_v + d] * exp2f(ml[2 * s] - mx) : 0.f;
        o[d] = __float2bfloat16_rn(lsum > 0.f ? x / lsum : 0.f);
    }
    if (p.lse && threadIdx.x == 0)
        p.lse[t * p.heads + h] = lsum > 0.f ? (mx + log2f(lsum)) * kLn2 : -CUDART_INF_F;
}

// The combine launch: one block per q row the grid covers (max_tokens * heads).
template <int kSplits, int kGranule>
inline cudaError_t launch_combine(const vb_verify_params &p, void *ws, cudaStream_t stream)
{
    const unsigned rows = (unsigned)((int64_t)p.max_tokens * p.heads);
    if (rows)
        combine_splits<kSplits, kGranule><<<rows, 128, 0, stream>>>(p, ws);
    return cudaGetLastError();
}

} // namespace vb
