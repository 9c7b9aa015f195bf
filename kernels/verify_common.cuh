// Device helpers every verify kernel shares: index loads at either width, the request that
// owns a q row, the slot of key j, and warp-level q·k and p·v over bf16 pairs.
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda_bf16.h>
#include <math_constants.h>

#include "verify_attn.h"

namespace vb {

constexpr int kWarp = 32;
constexpr int kMaxQkPairsPerLane = 9;  // d_qk <= 576: 288 bf16 pairs over 32 lanes
constexpr int kMaxVPairsPerLane = 8;   // d_v <= 512: 256 pairs over 32 lanes
constexpr int kMaxDqk = 576, kMaxDv = 512;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// On the host too, for the schedule's self-check (kernels/testing/schedule_check.cu).
__host__ __device__ __forceinline__ int64_t load_index(const void *buf, vb_index_width w, int64_t i)
{
#ifdef __CUDA_ARCH__
    return w == VB_I64 ? (int64_t)__ldg(static_cast<const long long *>(buf) + i)
                       : (int64_t)__ldg(static_cast<const int *>(buf) + i);
#else
    return w == VB_I64 ? (int64_t)static_cast<const long long *>(buf)[i] : (int64_t)static_cast<const int *>(buf)[i];
#endif
}

// The request that owns draft token t: the last b with qo_indptr[b] <= t (t < qo_indptr[batch]).
__device__ __forceinline__ int request_of_token(const vb_verify_params &p, int64_t t)
{
    int lo = 0, hi = p.batch; // qo_indptr[lo] <= t < qo_indptr[hi]
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (load_index(p.qo_indptr, p.qo_indptr_width, mid) <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// Where one q row sits: request b, its prefix length P and draft count T, and where its
// prefix indices, draft rows and mask block start. Derived from the buffers in-kernel.
struct RowView {
    int b;
    int64_t i;      // draft token index within the request
    int64_t kv0, P; // prefix: kv_indices[kv0 .. kv0 + P)
    int64_t q0, T;  // drafts: q rows q0 .. q0 + T
    const uint8_t *mask_row; // custom_mask + mask_indptr[b] + i * (P + T)
};

// False when row t lies past qo_indptr[batch]: the launch covers more rows than this batch
// uses (a graph captured for larger trees), and such rows are left untouched.
__device__ __forceinline__ bool view_row(const vb_verify_params &p, int64_t t, RowView &r)
{
    if (t >= load_index(p.qo_indptr, p.qo_indptr_width, p.batch))
        return false;
    const int lo = request_of_token(p, t);
    r.b = lo;
    r.kv0 = load_index(p.kv_indptr, p.kv_indptr_width, lo);
    r.P = load_index(p.kv_indptr, p.kv_indptr_width, lo + 1) - r.kv0;
    r.q0 = load_index(p.qo_indptr, p.qo_indptr_width, lo);
    r.T = load_index(p.qo_indptr, p.qo_indptr_width, lo + 1) - r.q0;
    r.i = t - r.q0;
    r.mask_row = p.custom_mask + load_index(p.mask_indptr, p.mask_indptr_width, lo) + r.i * (r.P + r.T);
    return true;
}

__device__ __forceinline__ int64_t key_slot(const vb_verify_params &p, const RowView &r, int64_t j)
{
    return j < r.P ? load_index(p.kv_indices, p.kv_indices_width, r.kv0 + j)
                   : load_index(p.out_cache_loc, p.out_cache_loc_width, r.q0 + j - r.P);
}

// One q row (token t, head h) held across a warp: lane l keeps pairs l, l+32, ...
struct QRow {
    float2 v[kMaxQkPairsPerLane];
};

__device__ __forceinline__ void load_q(const vb_verify_params &p, int64_t t, int h, QRow &q)
{
    const __nv_bfloat162 *row =
        reinterpret_cast<const __nv_bfloat162 *>(p.q + t * p.stride_q_token + h * p.stride_q_head);
    const int lane = threadIdx.x % kWarp, pairs = p.d_qk / 2;
#pragma unroll
    for (int k = 0; k < kMaxQkPairsPerLane; k++) {
        int idx = lane + k * kWarp;
        q.v[k] = idx < pairs ? __bfloat1622float2(row[idx]) : make_float2(0.f, 0.f);
    }
}

__device__ __forceinline__ float warp_sum(float x)
{
#pragma unroll
    for (int o = kWarp / 2; o > 0; o /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// q · kv_row over d_qk, every lane gets the sum.
__device__ __forceinline__ float warp_dot_qk(const QRow &q, const uint16_t *kv_row, int d_qk)
{
    const __nv_bfloat162 *k2 = reinterpret_cast<const __nv_bfloat162 *>(kv_row);
    const int lane = threadIdx.x % kWarp, pairs = d_qk / 2;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < kMaxQkPairsPerLane; k++) {
        int idx = lane + k * kWarp;
        if (idx < pairs) {
            float2 kk = __bfloat1622float2(k2[idx]);
            s = fmaf(q.v[k].x, kk.x, s);
            s = fmaf(q.v[k].y, kk.y, s);
        }
    }
    return warp_sum(s);
}

// acc = acc * scale + w * v[0:d_v], lane l holding pairs l, l+32, ...
__device__ __forceinline__ void warp_axpy_v(float (&acc)[2 * kMaxVPairsPerLane], float scale, float w,
                                            const uint16_t *kv_row, int d_v)
{
    const __nv_bfloat162 *v2 = reinterpret_cast<const __nv_bfloat162 *>(kv_row);
    const int lane = threadIdx.x % kWarp, pairs = d_v / 2;
#pragma unroll
    for (int k = 0; k < kMaxVPairsPerLane; k++) {
        int idx = lane + k * kWarp;
        float2 vv = idx < pairs ? __bfloat1622float2(v2[idx]) : make_float2(0.f, 0.f);
        acc[2 * k] = fmaf(w, vv.x, acc[2 * k] * scale);
        acc[2 * k + 1] = fmaf(w, vv.y, acc[2 * k + 1] * scale);
    }
}

// Dimension held by acc[e] of this lane.
__device__ __forceinline__ int acc_dim(int e) { return 2 * ((threadIdx.x % kWarp) + (e / 2) * kWarp) + (e % 2); }

// The alignment a kernel's loads assume, checked on a launch's base pointers before anything
// is enqueued: vec is the widest access to q and kv_buffer (16 for 16-byte loads, 4 for bf16
// pairs); o and lse take 4-byte stores, index buffers their element width. A misaligned
// buffer is refused with cudaErrorInvalidValue and one line on stderr naming it, rather than
// left to fault on the device (a misaligned-address fault ends the CUDA context).
inline cudaError_t check_alignment(const vb_verify_params &p, const char *kernel, size_t vec)
{
    struct {
        const char *name;
        const void *ptr;
        size_t align;
    } bufs[] = {{"q", p.q, vec},
                {"kv_buffer", p.kv_buffer, vec},
                {"o", p.o, 4},
                {"lse", p.lse, 4},
                {"kv_indptr", p.kv_indptr, (size_t)p.kv_indptr_width},
                {"kv_indices", p.kv_indices, (size_t)p.kv_indices_width},
                {"qo_indptr", p.qo_indptr, (size_t)p.qo_indptr_width},
                {"out_cache_loc", p.out_cache_loc, (size_t)p.out_cache_loc_width},
                {"mask_indptr", p.mask_indptr, (size_t)p.mask_indptr_width}};
    for (const auto &b : bufs)
        if ((uintptr_t)b.ptr % b.align) {
            fprintf(stderr, "%s: %s at %p is not %zu-byte aligned: launch refused\n", kernel, b.name, b.ptr, b.align);
            return cudaErrorInvalidValue;
        }
    return cudaSuccess;
}

// Shapes every kernel here handles.
inline int unsupported_shape(const vb_verify_params *p, char *why, size_t n)
{
    if (p->d_qk > kMaxDqk || p->d_v > kMaxDv || p->d_v > p->d_qk || p->d_qk % 2 || p->d_v % 2) {
        snprintf(why, n, "needs even d_qk <= %d and even d_v <= min(d_qk, %d), got %d and %d", kMaxDqk, kMaxDv,
                 p->d_qk, p->d_v);
        return 1;
    }
    return 0;
}

// A block needing `bytes` of dynamic shared memory cannot run where the device's opt-in limit
// is smaller. Only a device that answers and reports less is refused: without a device there
// is nothing to launch on, and the harness says so elsewhere.
inline int smem_exceeds_optin(int bytes, char *why, size_t n)
{
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess || optin >= bytes)
        return 0;
    snprintf(why, n, "needs %d KB of shared memory per block, this GPU allows %d KB", bytes / 1024, optin / 1024);
    return 1;
}

} // namespace vb
