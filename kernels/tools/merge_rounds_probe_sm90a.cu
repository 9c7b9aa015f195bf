// merge_rounds_probe: what does each round of a combine's loads cost when the partials it reads
// were written by other SMs a moment before, and does touching their lines before the wait for
// the writing grid shorten the first round? A tool, not a verify kernel: in mla_wgmma's combine
// the loads and merging of the partials took 2.0 µs of a bs 1 × 512 replay, where a row's 9
// pieces are two rounds of loads, and 4.5-5.6 µs at bs 8 × 23k and bs 1 × 200k (results/h200/
// NOTES.md, thirty-ninth), far more than one L2 round trip a round.
//
// Each graph is two launches shaped as mla_wgmma's: a writer of one CTA an SM (256 threads, held
// there by shared memory) that stores a 147,456-byte partial slot (72 rows × 512 fp32, rows
// contiguous, as the combine reads them) and the slot's 72 (max, sum) pairs, then a reader of six
// 128-thread blocks an SM launched as the writer's programmatic dependent, whose blocks wait for
// the writer's grid (griddepcontrol.wait) and then merge rows of pieces as the combine does, 8
// pieces a round, a float4 of each piece a lane plus the piece's (max, sum). The reading
// patterns are the combine's three paths:
// - few: one unit of 4 slots, a block per unit row (72 blocks), warp w reading dims
//   128w..128w+127 of all 4 pieces in one round (the combine's rows of at most 4 pieces: bs 8 ×
//   512's have 3, bs 32 × 4096's 4, by the host schedule check's walk; the combine gives each of
//   two warps half such a row, two float4 a lane);
// - block: units of 18 slots (7 on an H200), a block per unit row, each warp its 128 dims of all
//   18 pieces in 3 rounds (bs 8 × 23k's rows of 17-18 pieces);
// - spread: one unit of every slot (132 on an H200), a block per (row, 128-dim slice), warp w
//   taking pieces w, w + 4, ... 8 at a time (bs 1 × 200k's rows: 5 rounds a warp).
// Variants: "touch" has every lane issue prefetch.global.L2 for the line it reads first before
// the wait (the writer may still be writing it: the prefetch moves no data to the SM, it only
// asks for the line's address and L2 residency); "unwritten" has the writer store nothing, so
// that the reader's lines were last written by an earlier graph; "listed" has every block, with
// merge work or not, first list items as the combine does (list_items), its time printed apart
// and the first round counted from its end. In mla_wgmma's combine the merges took 1.0-1.2 µs
// (rows of 18 pieces) and 2.1-2.2 µs (rows of 132) longer than this probe's plain cases
// (results/h200/NOTES.md, fortieth): the listing and the blocks without work are what the
// combine has and the plain cases lack; so is the L2 state a main launch leaves behind, which
// the last cases set up (Before: a KV stream before the writer's stores, with and without the
// evict-first policy mla_wgmma's copies carry, smaller pools, an idle wait of the same length,
// touches of the slots after the stores, evict-last stores, the slot's lines put in L2 before
// the stores; and "merged lines dropped", where the reader drops what it merged as the combine
// does, so that every replay's writer stores to lines that are not in L2).
//
// Each warp's lane 0 stamps %globaltimer at its block's entry, after the wait, after each round
// (once that round's values are used) and at its end, and notes its SM (%smid); each writer CTA
// stamps when its stores have been issued.
// Printed per case: the replay's median, 10th and 90th percentile (timed as the harness times a
// verify kernel's replay), then over the warps with work of 20 more replays, medians of: the
// wait's end after the last writer CTA's end, the first round, a later round, and the wait's end
// to the warp's end; and on a second line, the last of these by how many blocks with work share
// the warp's SM (the spread pattern's 288 blocks sit 2 or 3 to an SM, as the combine's do at bs 1
// × 200k), for the listed cases the listing's median, and the SM clock over the merge (%clock64
// against %globaltimer: whether a case ran at another clock). Built for sm_90a; runs on an
// H100/H200.
//
// usage: merge_rounds_probe [replays]   (default 200)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"
#include "ptx_sm80.cuh"

using namespace vbtool;
using vb::prefetch_l2;

namespace {

const Tool tool{"merge_rounds_probe"};
constexpr int kWriterThreads = 256, kWriterSmem = 200 * 1024; // one writer CTA an SM
constexpr int kRows = 72, kDims = 512, kSlotFloats = kRows * kDims;
constexpr int kReaderThreads = 128, kReaderPerSm = 6, kWarps = kReaderThreads / 32;
constexpr int kBatch = 8, kMaxRounds = 5;
// entry, after the wait, each round, end, SM, the listing's end
constexpr int kEnd = 2 + kMaxRounds, kSm = kEnd + 1, kListEnd = kSm + 1, kClock0 = kListEnd + 1,
              kClock1 = kClock0 + 1, kStamps = kClock1 + 1; // SM clocks at the wait's end and the end
constexpr int kIndexEntries = 1024; // the launch input the listing reads, as the combine reads qo_indptr

enum Pattern { kFew, kBlock, kSpread };
// kTouch: each lane prefetches its first line before the wait; kListed: every block, with work or
// not, first lists items as the combine does (below); kDrop: each warp drops the lines it merged
// (discard.global.L2), as the combine does at the long shapes, so that the next replay's writer
// stores to lines that are not in L2.
enum Mode { kPlain, kTouch, kListed, kDrop, kModes };
constexpr int kFewPieces = 4, kBlockPieces = 18;

// What the writer does before its stores, and how it stores. The stream stands in for a main
// launch's KV stream: kStreamRowsPerCta rows of 1152 bytes a CTA (bs 1 × 200k's 1515) at slots
// scattered over a pool of pool_rows rows, every row of a CTA read once (the same bytes, at a
// lower rate: 8 rows in flight a CTA, about 190 µs for the 258 MB pool); with evict_first its
// loads carry the L2 evict-first policy, as mla_wgmma's KV copies do (its prefetches of a row's
// last two lines do not). wait_us: an idle wait instead, a stand-in for the stream's time alone.
// touch_kb: after its stores, the CTA asks for one line every touch_kb KB of all the slots (the
// address translations the readers on its SM will need). evict_last: the slots' stores carry
// the L2 evict-last policy. prefetch_slot: before the wait and its stores, the CTA asks for its
// own slot's lines (prefetch.global.L2), so that the stores find them in L2.
struct Before {
    unsigned pool_rows = 0;
    bool evict_first = false;
    int wait_us = 0, touch_kb = 0;
    bool evict_last = false, prefetch_slot = false;
};
constexpr int kStreamRowsPerCta = 1536, kPoolRows = 224 * 1024, kRowFloat4 = 1152 / 16; // 258 MB pool

__device__ __forceinline__ float4 load_evict_first(const float4 *p, uint64_t pol)
{
    float4 v;
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p), "l"(pol));
    return v;
}

__device__ __forceinline__ float stream_rows(const float4 *pool, const Before &b)
{
    const uint64_t pol = vb::l2_evict_first_policy();
    float sum = 0.f;
    for (int r0 = 0; r0 < kStreamRowsPerCta; r0 += 8) {
        float4 v[8]; // 8 rows in flight
#pragma unroll
        for (int j = 0; j < 8; j++) { // a multiplicative hash of (CTA, row): slots scattered over the pool
            const unsigned row = ((unsigned)(blockIdx.x * kStreamRowsPerCta + r0 + j) * 2654435761u) % b.pool_rows;
            const float4 *src = pool + (size_t)row * kRowFloat4 + threadIdx.x;
            v[j] = threadIdx.x >= kRowFloat4 ? make_float4(0.f, 0.f, 0.f, 0.f)
                   : b.evict_first          ? load_evict_first(src, pol)
                                            : *src;
        }
#pragma unroll
        for (int j = 0; j < 8; j++)
            sum += v[j].x + v[j].w;
    }
    return sum;
}

__device__ __forceinline__ void store_evict_last(float4 *p, float4 v, uint64_t pol)
{
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;\n" ::"l"(p), "f"(v.x), "f"(v.y),
                 "f"(v.z), "f"(v.w), "l"(pol)
                 : "memory");
}

template <bool kWrite>
__global__ void __launch_bounds__(kWriterThreads, 1) write_slots(float *acc, float2 *ml, uint64_t *writer_end,
                                                                 const float4 *pool, Before b)
{
    if (b.pool_rows && stream_rows(pool, b) == 1.2345f) // never (the pool is zeroed): keeps the stream's loads
        acc[0] = 0.f;
    if (b.prefetch_slot) // its own slot's lines into L2 before the wait and its stores
        for (int x = threadIdx.x; x < kSlotFloats / 32; x += kWriterThreads)
            vb::prefetch_l2(acc + (size_t)blockIdx.x * kSlotFloats + 32 * x);
    for (const uint64_t t0 = global_ns(); global_ns() - t0 < 1000ull * b.wait_us;)
        __nanosleep(1000);
    if constexpr (kWrite) {
        float4 *slot = reinterpret_cast<float4 *>(acc + (size_t)blockIdx.x * kSlotFloats);
        const uint64_t last = vb::l2_evict_last_policy();
        for (int i = threadIdx.x; i < kSlotFloats / 4; i += kWriterThreads) { // values the compiler cannot fold
            const float4 v = make_float4(blockIdx.x, i, 1.f, threadIdx.x);
            if (b.evict_last)
                store_evict_last(slot + i, v, last);
            else
                slot[i] = v;
        }
        if (threadIdx.x < kRows)
            ml[blockIdx.x * kRows + threadIdx.x] = make_float2(0.25f * (blockIdx.x % 7), 1.f + threadIdx.x);
    }
    if (b.touch_kb)
        for (size_t off = (size_t)threadIdx.x * b.touch_kb * 1024; off < (size_t)gridDim.x * kSlotFloats * 4;
             off += (size_t)kWriterThreads * b.touch_kb * 1024)
            vb::prefetch_l2(reinterpret_cast<const char *>(acc) + off);
    __syncthreads();
    if (threadIdx.x == 0)
        writer_end[blockIdx.x] = global_ns();
}

// The reader's work: which unit row and dims a block merges, and over which pieces a warp goes.
struct Work {
    int first_slot, pieces, row, dims, k0, step;
};

template <Pattern kP> __device__ __forceinline__ bool work_of(int block, int warp, int lane, int slots, Work &w)
{
    if constexpr (kP == kSpread) {
        if (block >= kRows * 4)
            return false;
        w = {0, slots, block % kRows, (block / kRows) * 128 + lane * 4, warp, kWarps};
    } else {
        const int per = kP == kFew ? kFewPieces : kBlockPieces, units = kP == kFew ? 1 : slots / per;
        if (block >= units * kRows)
            return false;
        w = {(block / kRows) * per, per, block % kRows, warp * 128 + lane * 4, 0, 1};
    }
    return true;
}

// The combine's listing, in shape: each thread looks at one item, reading a launch input (as
// qo_indptr) and an entry the writer grid wrote (as the unit's plan entry), and counts it in
// shared memory when it has work; two block barriers around it. Every block does this, those
// without merge work too (504 of the 792 in the spread pattern: the combine's grid is a whole
// wave, most of it without items at bs 1 × 200k). Returns the count so that nothing is
// optimised away.
__device__ __forceinline__ int list_items(const int *index, const float2 *ml, int entries)
{
    __shared__ int listed;
    if (threadIdx.x == 0)
        listed = 0;
    __syncthreads();
    const int i = blockIdx.x + threadIdx.x * gridDim.x;
    const int in = index[i % kIndexEntries];
    const float2 entry = ml[i % entries]; // both loads out before either is used, as the combine's
    if ((in >= 0) & (entry.y > 0.f))
        atomicAdd(&listed, 1);
    __syncthreads();
    return listed;
}

template <Pattern kP, Mode kM>
__global__ void __launch_bounds__(kReaderThreads) read_rounds(const float *acc, const float2 *ml, const int *index,
                                                              float4 *out, uint64_t *stamps, int slots, float gate)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    uint64_t *st = stamps + ((size_t)blockIdx.x * kWarps + warp) * kStamps;
    const uint64_t entry = global_ns();
    Work w;
    const bool has = work_of<kP>(blockIdx.x, warp, lane, slots, w);
    auto addr = [&](int k) { return acc + ((size_t)(w.first_slot + k) * kRows + w.row) * kDims + w.dims; };
    if (kM == kTouch && has) { // the warp's first-round lines, one a lane: piece lane / 4, line lane % 4 of its 512 B
        const int k = w.k0 + (lane / 4) * w.step;
        if (k < w.pieces)
            prefetch_l2(addr(k) - lane * 4 + 32 * (lane % 4));
    }
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    const uint64_t waited = global_ns(), clock_waited = clock64();
    if constexpr (kM == kListed)
        if (list_items(index, ml, slots * kRows) < 0)
            out[blockIdx.x] = make_float4(0.f, 0.f, 0.f, 0.f); // never: a count is not negative
    if (!has)
        return;
    if (lane == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        st[0] = entry, st[1] = waited, st[kSm] = sm, st[kClock0] = clock_waited;
        st[kListEnd] = kM == kListed ? global_ns() : 0;
    }
    float m = -INFINITY, lsum = 0.f;
    float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
    int round = 0;
    for (int k0 = w.k0; k0 < w.pieces; k0 += kBatch * w.step, round++) {
        float2 pm[kBatch];
        float4 v[kBatch];
#pragma unroll
        for (int i = 0; i < kBatch; i++) { // every load of the round before any is used
            const int k = k0 + i * w.step;
            const bool in = k < w.pieces;
            pm[i] = in ? ml[(w.first_slot + k) * kRows + w.row] : make_float2(-INFINITY, 0.f);
            v[i] = in ? *reinterpret_cast<const float4 *>(addr(k)) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        float mb = m;
#pragma unroll
        for (int i = 0; i < kBatch; i++)
            mb = fmaxf(mb, pm[i].x);
        // Every use below depends on mb, and through gate (0 at run time: no change to mb) on
        // every load of the round, so all eight go out before any is used, as in the combine's
        // code; without it ptxas put each float4 load after the previous piece's first use.
#pragma unroll
        for (int i = 0; i < kBatch; i++)
            mb = fmaxf(mb, fmaf(v[i].x, gate, -1e30f));
        const float scale = m == -INFINITY ? 0.f : exp2f(m - mb);
        m = mb, lsum *= scale, a.x *= scale, a.y *= scale, a.z *= scale, a.w *= scale;
#pragma unroll
        for (int i = 0; i < kBatch; i++) {
            const float f = pm[i].y > 0.f ? exp2f(pm[i].x - m) : 0.f;
            lsum += pm[i].y * f, a.x += v[i].x * f, a.y += v[i].y * f, a.z += v[i].z * f, a.w += v[i].w * f;
        }
        asm volatile("" ::"f"(a.x), "f"(lsum)); // the stamp below waits for this round's values
        if (lane == 0 && round < kMaxRounds)
            st[2 + round] = global_ns();
    }
    out[(size_t)blockIdx.x * kReaderThreads + threadIdx.x] = make_float4(a.x / lsum, a.y, a.z, a.w);
    if (lane == 0)
        st[kEnd] = global_ns(), st[kClock1] = clock64();
    if constexpr (kM == kDrop) // after the end stamp, as the combine drops after its merges
        if (lane % 8 == 0)     // the line of lanes 8q .. 8q + 7
            for (int k = w.k0; k < w.pieces; k += w.step)
                vb::discard_l2(addr(k));
}

struct Case {
    std::string name;
    Pattern pattern;
    Mode mode;
    bool write;
    Before before;
};

using Reader = void (*)(const float *, const float2 *, const int *, float4 *, uint64_t *, int, float);

void launch_reader(Reader reader, cudaStream_t s, int sms, const float *acc, const float2 *ml, const int *index,
                   float4 *out, uint64_t *stamps)
{
    cudaLaunchAttribute dependent[1];
    dependent[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(kReaderPerSm * sms);
    cfg.blockDim = dim3(kReaderThreads);
    cfg.stream = s;
    cfg.attrs = dependent;
    cfg.numAttrs = 1;
    tool.check(cudaLaunchKernelEx(&cfg, reader, acc, ml, index, out, stamps, sms, 0.f), "cudaLaunchKernelEx");
}

struct Buffers {
    float *acc;
    float2 *ml;
    int *index;
    float4 *out;
    uint64_t *stamps, *writer_end;
    float4 *pool; // the stream's rows (zeroed)
};

cudaGraphExec_t capture(const Case &c, cudaStream_t s, int sms, const Buffers &b)
{
    static const Reader readers[][kModes] = {
        {read_rounds<kFew, kPlain>, read_rounds<kFew, kTouch>, read_rounds<kFew, kListed>, read_rounds<kFew, kDrop>},
        {read_rounds<kBlock, kPlain>, read_rounds<kBlock, kTouch>, read_rounds<kBlock, kListed>,
         read_rounds<kBlock, kDrop>},
        {read_rounds<kSpread, kPlain>, read_rounds<kSpread, kTouch>, read_rounds<kSpread, kListed>,
         read_rounds<kSpread, kDrop>}};
    return tool.capture(s, [&](cudaStream_t st) {
        (c.write ? write_slots<true> : write_slots<false>)<<<sms, kWriterThreads, kWriterSmem, st>>>(
            b.acc, b.ml, b.writer_end, b.pool, c.before);
        launch_reader(readers[c.pattern][c.mode], st, sms, b.acc, b.ml, b.index, b.out, b.stamps);
    });
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0.;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double median_us(const std::vector<double> &ns) { return median(ns) / 1000.; }

} // namespace

int main(int argc, char **argv)
{
    const int n = tool.count_arg(argc, argv, 200, "usage: merge_rounds_probe [replays]");
    const int sms = tool.hopper_sms();
    for (auto k : {write_slots<true>, write_slots<false>})
        tool.check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kWriterSmem),
                   "cudaFuncSetAttribute");
    const int blocks = kReaderPerSm * sms;
    const size_t stamp_count = (size_t)blocks * kWarps * kStamps;
    Buffers b{};
    tool.check(cudaMalloc(&b.acc, (size_t)sms * kSlotFloats * sizeof(float)), "cudaMalloc");
    tool.check(cudaMalloc(&b.ml, (size_t)sms * kRows * sizeof(float2)), "cudaMalloc");
    tool.check(cudaMalloc(&b.index, kIndexEntries * sizeof(int)), "cudaMalloc");
    tool.check(cudaMemset(b.index, 0, kIndexEntries * sizeof(int)), "cudaMemset");
    tool.check(cudaMalloc(&b.out, (size_t)blocks * kReaderThreads * sizeof(float4)), "cudaMalloc");
    tool.check(cudaMalloc(&b.stamps, stamp_count * sizeof(uint64_t)), "cudaMalloc");
    tool.check(cudaMalloc(&b.writer_end, (size_t)sms * sizeof(uint64_t)), "cudaMalloc");
    tool.check(cudaMemset(b.acc, 0, (size_t)sms * kSlotFloats * sizeof(float)), "cudaMemset");
    tool.check(cudaMemset(b.ml, 0, (size_t)sms * kRows * sizeof(float2)), "cudaMemset");
    tool.check(cudaMalloc(&b.pool, (size_t)kPoolRows * kRowFloat4 * sizeof(float4)), "cudaMalloc");
    tool.check(cudaMemset(b.pool, 0, (size_t)kPoolRows * kRowFloat4 * sizeof(float4)), "cudaMemset");
    cudaStream_t s;
    tool.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    std::vector<Case> cases;
    const char *plain_names[] = {"few (4 pieces, 1 round)", "block (18 pieces, 3 rounds)",
                                 "spread (all slots, 5 rounds a warp)"};
    const char *short_names[] = {"few", "block", "spread"};
    for (Pattern pt : {kFew, kBlock, kSpread}) { // the writer stores at once
        const std::string name = short_names[pt];
        cases.push_back({plain_names[pt], pt, kPlain, true, {}});
        cases.push_back({name + ", touch", pt, kTouch, true, {}});
        cases.push_back({name + ", listed", pt, kListed, true, {}});
        cases.push_back({name + ", unwritten", pt, kPlain, false, {}});
    }
    // What the writer does first, for the block and spread patterns: which L2 state the merge meets.
    auto stream = [](unsigned rows, bool evict_first = false) {
        Before b;
        b.pool_rows = rows, b.evict_first = evict_first;
        return b;
    };
    Before waited, touched_2m = stream(kPoolRows), touched_64k = stream(kPoolRows), last_plain = stream(kPoolRows),
                   last_first = stream(kPoolRows, true);
    waited.wait_us = 200, touched_2m.touch_kb = 2048, touched_64k.touch_kb = 64;
    last_plain.evict_last = last_first.evict_last = true;
    Before prefetched, prefetched_stream = stream(kPoolRows, true);
    prefetched.prefetch_slot = prefetched_stream.prefetch_slot = true;
    prefetched.wait_us = prefetched_stream.wait_us = 5;
    const struct {
        const char *what;
        Mode mode;
        Before before;
    } befores[] = {
        {"after a stream of a 258 MB pool", kPlain, stream(kPoolRows)},
        {"after a stream of a 32 MB pool", kPlain, stream(kPoolRows / 8)},
        {"after a stream of a 4 MB pool", kPlain, stream(kPoolRows / 64)},
        {"after 200 µs of waiting", kPlain, waited},
        {"after a 258 MB stream, slots touched every 2 MB", kPlain, touched_2m},
        {"after a 258 MB stream, slots touched every 64 KB", kPlain, touched_64k},
        {"after a 258 MB stream, evict-last slots", kPlain, last_plain},
        {"after an evict-first 258 MB stream", kPlain, stream(kPoolRows, true)},
        {"after an evict-first 258 MB stream, evict-last slots", kPlain, last_first},
        {"merged lines dropped", kDrop, {}},
        {"merged lines dropped, after an evict-first 258 MB stream", kDrop, stream(kPoolRows, true)},
        {"merged lines dropped, slots prefetched 5 µs before the stores", kDrop, prefetched},
        {"merged lines dropped, after an evict-first 258 MB stream, slots prefetched 5 µs before the stores", kDrop,
         prefetched_stream},
    };
    for (const auto &w : befores)
        for (Pattern pt : {kBlock, kSpread})
            cases.push_back({std::string(pt == kBlock ? "block, " : "spread, ") + w.what, pt, w.mode, true, w.before});
    printf("merge_rounds_probe: graph replays, %d samples each, %d SMs; writer <<<%d, %d>>>, %d B a slot; "
           "reader <<<%d, %d>>>, a programmatic dependent; stamps: medians over the warps with work of 20 "
           "replays, µs\n",
           n, sms, sms, kWriterThreads, kSlotFloats * 4, blocks, kReaderThreads);
    printf("\n| graph | replay median (p10-p90) | wait's end after the last writer | first round | a later round "
           "| wait's end to the warp's end |\n|---|---:|---:|---:|---:|---:|\n");
    std::vector<uint64_t> st(stamp_count), wend(sms);
    for (const Case &c : cases) {
        cudaGraphExec_t x = capture(c, s, sms, b);
        const std::vector<float> us = tool.time_replays(x, s, n);
        std::vector<double> ghz, after_writer, listing, first, later, to_end, by_load[kReaderPerSm + 1];
        for (int r = 0; r < 20; r++) {
            tool.check(cudaMemsetAsync(b.stamps, 0, stamp_count * sizeof(uint64_t), s), "cudaMemsetAsync");
            tool.check(cudaGraphLaunch(x, s), "cudaGraphLaunch");
            tool.check(cudaStreamSynchronize(s), "a replay");
            tool.check(cudaMemcpy(st.data(), b.stamps, st.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
            tool.check(cudaMemcpy(wend.data(), b.writer_end, wend.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost),
                       "cudaMemcpy");
            const uint64_t last_writer = *std::max_element(wend.begin(), wend.end());
            for (int i = 0; i < blocks * kWarps; i++) {
                const uint64_t *t = &st[(size_t)i * kStamps];
                if (!t[1])
                    continue; // no work
                after_writer.push_back((double)(int64_t)(t[1] - last_writer));
                const uint64_t listed = t[kListEnd] ? t[kListEnd] : t[1]; // the first round starts there
                if (t[kListEnd])
                    listing.push_back((double)(t[kListEnd] - t[1]));
                first.push_back((double)(t[2] - listed));
                for (int k = 1; k < kMaxRounds && t[2 + k]; k++)
                    later.push_back((double)(t[2 + k] - t[1 + k]));
                to_end.push_back((double)(t[kEnd] - t[1]));
                ghz.push_back((double)(t[kClock1] - t[kClock0]) / (double)(t[kEnd] - t[1])); // clocks a ns
            }
            // the same, by how many blocks with work share the warp's SM (a block's warp 0 has
            // work when the block has; %smid is below 1024 on any GPU this runs on)
            std::vector<int> on_sm(1024);
            for (int i = 0; i < blocks; i++) {
                const uint64_t *t = &st[(size_t)i * kWarps * kStamps];
                if (t[1] && t[kSm] < on_sm.size())
                    on_sm[t[kSm]]++;
            }
            for (int i = 0; i < blocks * kWarps; i++) {
                const uint64_t *t = &st[(size_t)i * kStamps];
                if (t[1] && t[kSm] < on_sm.size() && on_sm[t[kSm]] <= kReaderPerSm)
                    by_load[on_sm[t[kSm]]].push_back((double)(t[kEnd] - t[1]));
            }
        }
        char later_us[16] = "–";
        if (!later.empty())
            snprintf(later_us, sizeof later_us, "%.2f", median_us(later));
        printf("| %s | %.2f (%.2f-%.2f) | %.2f | %.2f | %s | %.2f |\n", c.name.c_str(), us[us.size() / 2],
               us[us.size() / 10], us[us.size() * 9 / 10], median_us(after_writer), median_us(first), later_us,
               median_us(to_end));
        printf("|   by blocks with work on the warp's SM (blocks: warps a replay, median wait's end to the warp's end) |");
        for (int k = 1; k <= kReaderPerSm; k++)
            if (!by_load[k].empty())
                printf(" %d: %zu, %.2f;", k, by_load[k].size() / 20, median_us(by_load[k]));
        if (!listing.empty())
            printf(" listing (in the first round's place: before it, not in it) %.2f;", median_us(listing));
        printf(" SM clock over the merge %.2f GHz | | | | |\n", median(ghz));
        tool.check(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    }
    tool.check(cudaStreamDestroy(s), "cudaStreamDestroy");
    for (void *p : {(void *)b.pool, (void *)b.acc, (void *)b.ml, (void *)b.index, (void *)b.out, (void *)b.stamps,
                    (void *)b.writer_end})
        tool.check(cudaFree(p), "cudaFree");
    return 0;
}
