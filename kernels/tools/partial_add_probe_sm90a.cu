// partial_add_probe: what would it cost the CTAs that hold pieces of a cut unit to add their
// partial results into one accumulator per unit (fp32 reductions in L2) instead of writing one
// partial slot each for the combine to read back? And what does the shape of the stores cost
// when every CTA writes its slot at once (the accumulators' fragment layout against coalesced
// rows)? A tool, not a verify kernel: results/h200/NOTES.md (twenty-third, twenty-fourth) weighs
// that for mla_wgmma, whose combine's reading of the slots costs 5.3 µs at bs 8 × 23k and 7.3 at
// bs 1 × 200k (nineteenth). Every graph below is replayed and timed as the harness times a
// verify kernel (Tool::time_replays, hopper_tool.cuh). The "main" kernel is one CTA an SM whose
// 256 threads each hold 144 fp32 (36 float4: mla_wgmma's two value warpgroups' Oᵀ of 72 rows ×
// 512 dims, 147,456 B a CTA) and end by one of:
// - none: nothing written (the floor of the graph);
// - store: each CTA writes its own slot, float4 stores, a warp's 512 contiguous bytes each;
// - store as fragments: the same slot in mla_wgmma's own pattern (Valuer::write_partial): each
//   value warpgroup thread's Oᵀ accumulators stored as they lie in the wgmma fragment, 4-byte
//   stores (a warp instruction covers 4 rows × 32 contiguous bytes); or as 16-byte stores of 4
//   consecutive dims of one row (a warp instruction: 8 rows × 64 bytes), what the fragment gives
//   after a transpose within the warp;
// - red.v4 / red.f32: each CTA adds its values into the accumulator of its unit with
//   red.global.add.v4.f32 (or the scalar form), units being G equal runs of CTAs: G = 132 (every
//   CTA its own: no two CTAs add to one address), 8 (bs 8 × 23k: 16-17 CTAs a unit), 1 (bs 1 ×
//   200k: every CTA into one);
// then, where named, a second kernel that reads the slots back per unit and writes bf16 o (the
// combine's reads, without its max and scale steps: what today's design reads; a thread a float4,
// summing its unit's slots in turn, which is not the combine's layout for 132 pieces a row) or
// normalises the G accumulators (what the added design reads); and a memset node that zeroes the
// accumulators before the main kernel (an added design needs them zero at every launch).
// Built for sm_90a; runs on an H100/H200.
//
// usage: partial_add_probe [replays]   (default 200)
#include <cstdint>
#include <cstdio>
#include <vector>

#include "hopper_tool.cuh"

using namespace vbtool;

namespace {

const Tool tool{"partial_add_probe"};
constexpr int kThreads = 256, kVec = 36;
constexpr int kFloats = kThreads * kVec * 4; // one CTA's partial: 36,864 fp32
constexpr int kRows = 72, kDims = 512;       // the same partial as mla_wgmma's slot: rows × dims, row-major
static_assert(kRows * kDims == kFloats, "a slot is one CTA's partial");
constexpr int kSmem = 200 * 1024;            // one CTA an SM, as mla_wgmma
constexpr int kReadThreads = 128, kReadPerSm = 6;

enum End { kNone, kStore, kRedV4, kRedF32, kFrag4, kFrag16 };

__device__ __forceinline__ void red_v4(float *a, float4 v)
{
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(a), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}
// One 16-byte store (float4 assignments here came out partly as 8-byte stores).
__device__ __forceinline__ void st_v4(float *a, float4 v)
{
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(a), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}
__device__ __forceinline__ void red_f32(float *a, float v)
{
    asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(a), "f"(v) : "memory");
}

// The unit of CTA g when sms CTAs are cut into units equal runs.
__host__ __device__ __forceinline__ int unit_of(int g, int sms, int units) { return (int)((int64_t)g * units / sms); }

template <End kEnd> __global__ void __launch_bounds__(kThreads, 1) main_kernel(float *dst, int units, int sms)
{
    float4 v[kVec];
#pragma unroll
    for (int c = 0; c < kVec; c++) // values the compiler cannot fold: they depend on the CTA and thread
        v[c] = make_float4(blockIdx.x + c, threadIdx.x, c, 1.f);
    constexpr bool kFrag = kEnd == kFrag4 || kEnd == kFrag16;
    const size_t slot = kEnd == kStore || kFrag ? blockIdx.x : unit_of(blockIdx.x, sms, units);
    if constexpr (kFrag) { // value warpgroup k, warp, lane (g, t) of the fragment
        float *acc = dst + slot * kFloats;
        const int k = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
        for (int j = 0; j < kRows / 8; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float4 c = v[4 * j + i];
                const int d = 256 * k + 64 * i + 16 * warp;
                if constexpr (kEnd == kFrag4) { // rows 8j + 2t and 2t + 1, dims d + g and d + g + 8
                    const size_t r = 8 * j + 2 * t;
                    acc[r * kDims + d + g] = c.x, acc[r * kDims + d + g + 8] = c.z;
                    acc[(r + 1) * kDims + d + g] = c.y, acc[(r + 1) * kDims + d + g + 8] = c.w;
                } else { // row 8j + g, dims d + 4·(0, 2, 1, 3)[t] .. + 3
                    const size_t r = 8 * j + g;
                    st_v4(acc + r * kDims + d + 4 * ((t & 1) * 2 + (t >> 1)), c);
                }
            }
        return;
    }
    float4 *d4 = reinterpret_cast<float4 *>(dst + slot * kFloats);
#pragma unroll
    for (int c = 0; c < kVec; c++) {
        const int i = c * kThreads + threadIdx.x;
        if constexpr (kEnd == kStore)
            d4[i] = v[c];
        else if constexpr (kEnd == kRedV4)
            red_v4(reinterpret_cast<float *>(d4 + i), v[c]);
        else if constexpr (kEnd == kRedF32) { // four scalar reductions, each warp's 128 contiguous bytes
            float *f = dst + slot * kFloats + (size_t)c * kThreads * 4;
            red_f32(f + threadIdx.x, v[c].x);
            red_f32(f + kThreads + threadIdx.x, v[c].y);
            red_f32(f + 2 * kThreads + threadIdx.x, v[c].z);
            red_f32(f + 3 * kThreads + threadIdx.x, v[c].w);
        }
    }
    if constexpr (kEnd == kNone)
        if (v[0].x == -1.f) // never: keeps the values
            dst[0] = v[1].y;
}

// Reads, for every float4 of a unit, the slots of the unit's CTAs (sum_slots) or the unit's
// accumulator (one slot), and writes the sum as bf16 (4 halves of an 8-byte store).
__global__ void __launch_bounds__(kReadThreads) read_kernel(const float *src, uint2 *o, int units, int sms,
                                                            bool sum_slots)
{
    const int per_unit = kFloats / 4;
    for (int i = blockIdx.x * kReadThreads + threadIdx.x; i < units * per_unit; i += gridDim.x * kReadThreads) {
        const int u = i / per_unit, e = i % per_unit;
        // The CTAs of unit u: g with unit_of(g) == u, i.e. ceil(u·sms / units) <= g < ceil((u + 1)·sms / units).
        const int g0 = sum_slots ? (u * sms + units - 1) / units : u;
        const int g1 = sum_slots ? min(sms, ((u + 1) * sms + units - 1) / units) : u + 1;
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int g = g0; g < g1; g++) {
            const float4 x = reinterpret_cast<const float4 *>(src + (size_t)g * kFloats)[e];
            s.x += x.x, s.y += x.y, s.z += x.z, s.w += x.w;
        }
        const unsigned lo = (__float_as_uint(s.x) >> 16) | (__float_as_uint(s.y) & 0xffff0000u);
        const unsigned hi = (__float_as_uint(s.z) >> 16) | (__float_as_uint(s.w) & 0xffff0000u);
        o[i] = make_uint2(lo, hi);
    }
}

struct Case {
    const char *name;
    End end;
    int units;     // G
    bool memset;   // zero the G accumulators first
    int read;      // 0: no second kernel; 1: read the slots back per unit; 2: normalise the accumulators
};

cudaGraphExec_t capture(const Case &c, cudaStream_t s, int sms, float *buf, uint2 *o)
{
    return tool.capture(s, [&](cudaStream_t st) {
        if (c.memset)
            tool.check(cudaMemsetAsync(buf, 0, (size_t)c.units * kFloats * sizeof(float), st), "cudaMemsetAsync");
        switch (c.end) {
        case kNone: main_kernel<kNone><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        case kStore: main_kernel<kStore><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        case kRedV4: main_kernel<kRedV4><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        case kRedF32: main_kernel<kRedF32><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        case kFrag4: main_kernel<kFrag4><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        case kFrag16: main_kernel<kFrag16><<<sms, kThreads, kSmem, st>>>(buf, c.units, sms); break;
        }
        if (c.read)
            read_kernel<<<kReadPerSm * sms, kReadThreads, 0, st>>>(buf, o, c.units, sms, c.read == 1);
    });
}

} // namespace

int main(int argc, char **argv)
{
    const int n = tool.count_arg(argc, argv, 200, "usage: partial_add_probe [replays]");
    const int sms = tool.hopper_sms();
    for (auto k : {main_kernel<kNone>, main_kernel<kStore>, main_kernel<kRedV4>, main_kernel<kRedF32>,
                   main_kernel<kFrag4>, main_kernel<kFrag16>})
        tool.check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "cudaFuncSetAttribute");
    float *buf = nullptr;
    uint2 *o = nullptr;
    tool.check(cudaMalloc(&buf, (size_t)sms * kFloats * sizeof(float)), "cudaMalloc");
    tool.check(cudaMemset(buf, 0, (size_t)sms * kFloats * sizeof(float)), "cudaMemset");
    tool.check(cudaMalloc(&o, (size_t)sms * kFloats / 4 * sizeof(uint2)), "cudaMalloc");
    cudaStream_t s;
    tool.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    const Case cases[] = {
        {"main: none", kNone, sms, false, 0},
        {"main: store (own slot)", kStore, sms, false, 0},
        {"main: store as fragments, 4-byte stores (own slot)", kFrag4, sms, false, 0},
        {"main: store as fragments, 16-byte stores (own slot)", kFrag16, sms, false, 0},
        {"main: red.v4, own accumulator", kRedV4, sms, false, 0},
        {"main: red.v4, 8 units", kRedV4, 8, false, 0},
        {"main: red.v4, 1 unit", kRedV4, 1, false, 0},
        {"main: red.f32, 8 units", kRedF32, 8, false, 0},
        {"main: red.f32, 1 unit", kRedF32, 1, false, 0},
        {"memset 8 units, main: none", kNone, 8, true, 0},
        {"main: store, read slots back, 8 units", kStore, 8, false, 1},
        {"main: store, read slots back, 1 unit", kStore, 1, false, 1},
        {"memset, main: red.v4, normalise, 8 units", kRedV4, 8, true, 2},
        {"memset, main: red.v4, normalise, 1 unit", kRedV4, 1, true, 2},
    };
    printf("partial_add_probe: graph replays, %d samples each, %d SMs; main <<<%d, %d>>>, %d B a CTA; "
           "reads <<<%d, %d>>>; us: median (p10-p90)\n",
           n, sms, sms, kThreads, kFloats * 4, kReadPerSm * sms, kReadThreads);
    printf("\n| graph | median | p10 | p90 |\n|---|---:|---:|---:|\n");
    for (const Case &c : cases) {
        cudaGraphExec_t x = capture(c, s, sms, buf, o);
        const std::vector<float> us = tool.time_replays(x, s, n);
        printf("| %s | %.2f | %.2f | %.2f |\n", c.name, us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
        tool.check(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    }
    tool.check(cudaStreamDestroy(s), "cudaStreamDestroy");
    tool.check(cudaFree(buf), "cudaFree");
    tool.check(cudaFree(o), "cudaFree");
    return 0;
}
