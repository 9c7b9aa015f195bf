// mla_mma: every head and draft token of a request share one pass over its KV.
//
// MLA is MQA-like: all H heads of all T draft tokens read the same latent KV rows. One block
// handles one request, one tile of 64 q rows (row r = token i * H + head h) and one of 64
// fixed KV splits. Each tile of 32 keys is gathered once into shared memory with cp.async
// (double-buffered; page-table lookups through kv_indices / out_cache_loc in-kernel) and
// consumed by every row through bf16 tensor-core mma.sync (m16n8k16, fp32 accumulation):
// S = Q·Kᵀ over 576 columns, an online softmax under the mask read through mask_indptr,
// then O += P·V with V the first 512 columns of the same rows. Split partials go to the
// workspace and the shared combine step merges them, as flash_paged does.
//
// Eight warps: warp w owns rows 16·(w/2) .. +15 and value columns 256·(w%2) .. +255, so the
// 16×512 fp32 accumulator of a row group is spread over two warps (128 registers each); both
// compute the same scores. The grid depends only on the capture limits; everything per batch
// is read from the buffers. Portable to sm_80 and up; it needs 150 KB of shared memory per
// block, which sm_80 and sm_90 have and sm_86/89/120 do not (reported unsupported there).
#include <cstdio>

#include "ptx_sm80.cuh"
#include "split_combine.cuh"

namespace {

using namespace vb;

constexpr int kSplits = 64;
constexpr int kRows = 64;                    // q rows per block
constexpr int kKeys = 32;                    // keys per tile
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * kWarp;
constexpr int kDqk = 576, kDv = 512;
constexpr int kStride = kDqk + 8;            // shared row stride (1168 B): ldmatrix rows hit distinct banks
constexpr int kChunks = kDqk / 8;            // 16-byte chunks per row
constexpr int kKSteps = kDqk / 16;           // k16 steps of Q·Kᵀ
constexpr int kVTiles = kDv / 2 / 8;         // n8 tiles of a warp's 256 value columns

constexpr size_t kSmemQ = sizeof(uint16_t) * kRows * kStride;
constexpr size_t kSmemKv = sizeof(uint16_t) * 2 * kKeys * kStride;
constexpr size_t kSmemMask = 2 * kRows * kKeys;
constexpr size_t kSmemBytes = kSmemQ + kSmemKv + kSmemMask;

using Partials = SplitPartials<kSplits>;

// ---- the block's view of its request --------------------------------------------------------

struct Block {
    int64_t q0, T, kv0, P, mask0;  // from qo_indptr, kv_indptr and mask_indptr
    int64_t row0, start, end;      // first q row of the tile; the split's key range
    int n_rows, n_tok;             // rows in this tile; draft tokens they cover
    int64_t tok_first;             // first of those tokens (request-local)
};

__device__ __forceinline__ bool view_block(const vb_verify_params &p, Block &k)
{
    const int b = blockIdx.z, H = p.heads;
    k.q0 = load_index(p.qo_indptr, p.qo_indptr_width, b);
    k.T = load_index(p.qo_indptr, p.qo_indptr_width, b + 1) - k.q0;
    k.kv0 = load_index(p.kv_indptr, p.kv_indptr_width, b);
    k.P = load_index(p.kv_indptr, p.kv_indptr_width, b + 1) - k.kv0;
    k.mask0 = load_index(p.mask_indptr, p.mask_indptr_width, b);
    k.row0 = (int64_t)blockIdx.y * kRows;
    const int64_t rows = k.T * H, keys = k.P + k.T;
    if (k.row0 >= rows || keys == 0)
        return false;
    const int64_t chunk = split_chunk<kSplits, kKeys>(keys);
    k.start = (int64_t)blockIdx.x * chunk;
    k.end = min(k.start + chunk, keys);
    if (k.start >= k.end)
        return false; // an empty split: the combine derives the same and skips it
    k.n_rows = (int)(rows - k.row0 < kRows ? rows - k.row0 : kRows);
    k.tok_first = k.row0 / H;
    k.n_tok = (int)((k.row0 + k.n_rows - 1) / H - k.tok_first + 1);
    return true;
}

__device__ __forceinline__ void load_q(const vb_verify_params &p, const Block &k, uint16_t *sq)
{
    for (int c = threadIdx.x; c < kRows * kChunks; c += kThreads) {
        const int r = c / kChunks, part = c % kChunks;
        const bool valid = r < k.n_rows;
        const int64_t rr = k.row0 + (valid ? r : 0);
        const uint16_t *src = p.q + (k.q0 + rr / p.heads) * p.stride_q_token + (rr % p.heads) * p.stride_q_head;
        cp_async16(smem_u32(sq + r * kStride + part * 8), src + part * 8, valid);
    }
}

// One tile of keys [t0, t0 + kKeys): KV rows by cp.async, the tile's mask bytes by plain
// loads (keys past the split's end are zero rows and hidden).
__device__ __forceinline__ void load_tile(const vb_verify_params &p, const Block &k, int64_t t0, uint16_t *skv,
                                          uint8_t *smask)
{
    for (int c = threadIdx.x; c < kKeys * kChunks; c += kThreads) {
        const int key = c / kChunks, part = c % kChunks;
        const int64_t j = t0 + key;
        const bool valid = j < k.end;
        const uint16_t *src = p.kv_buffer;
        if (valid) {
            const int64_t slot = j < k.P ? load_index(p.kv_indices, p.kv_indices_width, k.kv0 + j)
                                         : load_index(p.out_cache_loc, p.out_cache_loc_width, k.q0 + j - k.P);
            src = p.kv_buffer + slot * p.stride_kv_slot + part * 8;
        }
        cp_async16(smem_u32(skv + key * kStride + part * 8), src, valid);
    }
    const int64_t keys = k.P + k.T;
    for (int e = threadIdx.x; e < k.n_tok * kKeys; e += kThreads) {
        const int ti = e / kKeys, key = e % kKeys;
        const int64_t j = t0 + key;
        smask[ti * kKeys + key] = j < k.end ? p.custom_mask[k.mask0 + (k.tok_first + ti) * keys + j] : 0;
    }
}

__global__ void __launch_bounds__(kThreads, 1) split_kernel(vb_verify_params p, void *ws)
{
    extern __shared__ __align__(16) unsigned char smem[];
    uint16_t *sq = reinterpret_cast<uint16_t *>(smem);
    uint16_t *skv = reinterpret_cast<uint16_t *>(smem + kSmemQ);
    uint8_t *smask = smem + kSmemQ + kSmemKv;
    Block k;
    if (!view_block(p, k))
        return;

    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const int g = warp / 2, half = warp % 2;
    const int ra = g * 16 + lane / 4, rb = ra + 8; // the two rows this lane's accumulators hold
    // Token (within the tile) of each row, for the mask; rows past the tile's end borrow the
    // last token's (their results are never stored).
    const int ta = min((int)((k.row0 + ra) / p.heads - k.tok_first), k.n_tok - 1);
    const int tb = min((int)((k.row0 + rb) / p.heads - k.tok_first), k.n_tok - 1);
    const float scale = p.sm_scale * kLog2e;

    float o[kVTiles][4];
#pragma unroll
    for (int n = 0; n < kVTiles; n++)
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m[2] = {-CUDART_INF_F, -CUDART_INF_F}, l[2] = {0.f, 0.f};

    const int ntiles = (int)((k.end - k.start + kKeys - 1) / kKeys);
    load_q(p, k, sq);
    load_tile(p, k, k.start, skv, smask);
    cp_async_commit();
    for (int it = 0; it < ntiles; it++) {
        const int buf = it & 1;
        if (it + 1 < ntiles)
            load_tile(p, k, k.start + (int64_t)(it + 1) * kKeys, skv + (buf ^ 1) * kKeys * kStride,
                      smask + (buf ^ 1) * kRows * kKeys);
        cp_async_commit();
        cp_async_wait<1>(); // everything but the tile just issued has landed
        __syncthreads();
        const uint16_t *kt = skv + buf * kKeys * kStride;
        const uint8_t *mt = smask + buf * kRows * kKeys;

        // S = Q·Kᵀ for this warp's 16 rows and the tile's 32 keys.
        float s[4][4] = {};
#pragma unroll 4
        for (int kk = 0; kk < kKSteps; kk++) {
            unsigned a[4];
            ldsm_x4(a, smem_u32(sq + (g * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * kStride + kk * 16 + (lane / 16) * 8));
#pragma unroll
            for (int np = 0; np < 2; np++) {
                unsigned b[4];
                ldsm_x4(b, smem_u32(kt + (np * 16 + (lane % 8) + (lane / 16) * 8) * kStride + kk * 16 + ((lane / 8) % 2) * 8));
                mma(s[2 * np], a, b[0], b[1]);
                mma(s[2 * np + 1], a, b[2], b[3]);
            }
        }

        // Online softmax (log2 domain) under the mask; lane holds rows ra (e < 2) and rb.
        float mx[2] = {m[0], m[1]};
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int key = n * 8 + (lane % 4) * 2 + (e & 1);
                const bool vis = mt[(e < 2 ? ta : tb) * kKeys + key] != 0;
                s[n][e] = vis ? s[n][e] * scale : -CUDART_INF_F;
                mx[e / 2] = fmaxf(mx[e / 2], s[n][e]);
            }
        float mu[2], corr[2], rs[2] = {0.f, 0.f};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
            mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
            mu[i] = mx[i] == -CUDART_INF_F ? 0.f : mx[i]; // nothing visible yet: keep zeros
            corr[i] = exp2f(m[i] - mu[i]);
            m[i] = mx[i];
        }
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[n][e] = exp2f(s[n][e] - mu[e / 2]);
                rs[e / 2] += s[n][e];
            }
#pragma unroll
        for (int i = 0; i < 2; i++) {
            rs[i] += __shfl_xor_sync(0xffffffffu, rs[i], 1);
            rs[i] += __shfl_xor_sync(0xffffffffu, rs[i], 2);
            l[i] = l[i] * corr[i] + rs[i];
        }
#pragma unroll
        for (int n = 0; n < kVTiles; n++) {
            o[n][0] *= corr[0], o[n][1] *= corr[0];
            o[n][2] *= corr[1], o[n][3] *= corr[1];
        }

        // O += P·V: P's accumulator layout is the A-operand layout of two k16 steps.
        unsigned pa[2][4];
#pragma unroll
        for (int kb = 0; kb < 2; kb++) {
            pa[kb][0] = pack_bf16(s[2 * kb][0], s[2 * kb][1]);
            pa[kb][1] = pack_bf16(s[2 * kb][2], s[2 * kb][3]);
            pa[kb][2] = pack_bf16(s[2 * kb + 1][0], s[2 * kb + 1][1]);
            pa[kb][3] = pack_bf16(s[2 * kb + 1][2], s[2 * kb + 1][3]);
        }
#pragma unroll
        for (int nd = 0; nd < kVTiles / 2; nd++) {
            const int d0 = half * (kDv / 2) + nd * 16;
#pragma unroll
            for (int kb = 0; kb < 2; kb++) {
                unsigned b[4];
                ldsm_x4_t(b, smem_u32(kt + (kb * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * kStride + d0 + (lane / 16) * 8));
                mma(o[2 * nd], pa[kb], b[0], b[1]);
                mma(o[2 * nd + 1], pa[kb], b[2], b[3]);
            }
        }
        __syncthreads(); // the next iteration refills the buffer just read
    }

    // This split's partials: (max, sum) by one lane per row, the accumulators by both halves.
    Partials part(ws, p);
    const int rows[2] = {ra, rb};
#pragma unroll
    for (int i = 0; i < 2; i++) {
        if (rows[i] >= k.n_rows)
            continue;
        const size_t slot = (size_t)(k.q0 * p.heads + k.row0 + rows[i]) * kSplits + blockIdx.x;
        if (half == 0 && lane % 4 == 0)
            part.ml[2 * slot] = m[i], part.ml[2 * slot + 1] = l[i];
        float *acc = part.acc + slot * kDv + half * (kDv / 2) + (lane % 4) * 2;
#pragma unroll
        for (int n = 0; n < kVTiles; n++)
            *reinterpret_cast<float2 *>(acc + n * 8) = make_float2(o[n][2 * i], o[n][2 * i + 1]);
    }
}

size_t workspace_bytes(const vb_verify_params *lim) { return Partials::bytes(*lim); }

int unsupported(const vb_verify_params *p, char *why, size_t n)
{
    if (p->d_qk != kDqk || p->d_v != kDv) {
        snprintf(why, n, "built for MLA's d_qk %d and d_v %d, got %d and %d", kDqk, kDv, p->d_qk, p->d_v);
        return 1;
    }
    if (p->stride_q_head % 8 || p->stride_q_token % 8 || p->stride_kv_slot % 8) {
        snprintf(why, n, "needs q and KV rows aligned to 16 bytes");
        return 1;
    }
    if (smem_exceeds_optin((int)kSmemBytes, why, n))
        return 1;
    return 0;
}

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    if (cudaError_t e = check_alignment(*p, "mla_mma", 16))
        return e;
    // Raising the block's shared-memory limit is a host-side attribute, not stream work:
    // allowed while a capture is open, and set once per process.
    static bool raised = false;
    if (!raised) {
        cudaError_t e = cudaFuncSetAttribute(split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes);
        if (e != cudaSuccess)
            return e;
        raised = true;
    }
    const unsigned row_tiles = (unsigned)((p->max_draft * p->heads + kRows - 1) / kRows);
    if ((int64_t)p->max_tokens * p->heads == 0)
        return cudaSuccess;
    split_kernel<<<dim3(kSplits, row_tiles, p->batch), kThreads, kSmemBytes, stream>>>(*p, ws);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : launch_combine<kSplits, kKeys>(*p, ws, stream);
}

} // namespace

extern "C" const vb_kernel vb_kernel_mla_mma = {
    "mla_mma",
    "all heads and drafts of a request per block: cp.async KV tiles read once, bf16 mma.sync, 64 splits",
    80, 1, workspace_bytes, unsupported, launch};
