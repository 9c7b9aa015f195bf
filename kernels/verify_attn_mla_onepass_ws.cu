// mla_onepass_ws: mla_onepass (mla_onepass.cuh, which explains the kernel) with its 72- and 64-row
// launches as onepass_rr_kernel, whose units at long spans take the overlapped walk: eight Oᵀ warps
// beside a warpgroup of four Sᵀ warps (for 72-row units three and a KV copier warp where a block
// may have 204 KB of shared memory), registers handed out by role with setmaxnreg. meson.build
// builds this file for the arch-specific targets sm_90a, sm_100a and sm_120a, which have
// setmaxnreg; other row counts run onepass_kernel, as mla_onepass does.
#include "mla_onepass.cuh"
#include "ptx_sm90a.cuh"

// setmaxnreg exists on the arch-specific targets of sm_90, sm_100 and sm_120.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM120_ALL)
#define VB_SETMAXNREG 1
#endif

namespace {

// mla_onepass_ws's 72- and 64-row launches (VB_SETMAXNREG): 12 warps at 168 registers each, handed
// out by role. At spans longer than kOverlapSpan, the overlapped walk: eight Oᵀ warps at 200 registers
// (144 accumulators) accumulate tile t while the Sᵀ warpgroup at 104 scores tile t + 1
// (OverlapLayout; kLargeSWarps for the large build's split). On sm_90a, scripts/sass_diff.py --loops
// finds local-memory accesses in each role's tile loop of the 72-row large build: 4 in the Sᵀ
// warps' (since their loads go half a step ahead, row_scores_ahead), 8 in the Oᵀ warps' (4
// before QR, a9f632f, which did not touch that loop: ptxas allocated the rest differently).
// Without setmaxnreg the same 12 warps get 168 each and ptxas spilled the Oᵀ accumulators inside
// the loop, which cost the overlap all it gained (results/h200/NOTES.md, forty-ninth and
// fiftieth). Every other launch runs the 8-warp walks at 240 registers while the last four warps
// give theirs back and leave. The overlap pays
// only at long spans: against onepass_kernel on an H100, 0.88-0.98 at spans of 22 to 170 positions
// but 1.10-1.14 at spans of 6 and 9 (bs 1 × 23000, bs 8 × 4096), where the 8-warp walk at 240
// registers took 1.03-1.04 (results/h200/NOTES.md, fifty-first). With the copier warp, overlapping
// above 8 positions took 0.922 of the time at bs 8 × 4096 (span 9) hot, but 1.03 cold and
// 1.08-1.12 at three cold graph-bucket16 replays (H100, NOTES.md, sixtieth). Since q's rows stay
// in shared memory and c0 is 8, 8 against 16 (H100, three A/B runs, NOTES.md, sixty-seventh): hot,
// bs 8 × 4096 0.891-0.905, its 8-node chain 0.848-0.849, graph-bucket16's base, chain-tree and
// fragmented replays 0.825-0.873, tree-ddtree9 0.895-0.908, tree-eagle8 0.855; none above 1.009
// in the 3-round runs; cold, bs 8 × 4096 0.965 and graph-bucket16 0.974-0.999. 4 lost 6-11% at
// bs 8 × 23k and longer, whose spans overlap either way (one round): it leaves the 72-row one-CTA
// walk dead code, and ptxas then spilled more in the overlapped tile loops (sass_diff --loops,
// large build: the Sᵀ warps' 4 → 7 local accesses, the Oᵀ warps' 8 → 12).
constexpr int kOverlapSpan = 8; // spans (positions) above which 72- and 64-row units overlap
// The schedule's piece cost c0, in tiles (mla_onepass.cuh's kC0 is 6): the overlapped walk's piece
// pays its pipeline's fill and drain beside the q copy and the partial, so CTAs holding two pieces
// ended last (phase stamps, NOTES.md, sixty-fifth). 8 against 6 on an H100 (two A/B runs of two
// rounds each): bs 32 ragged eagle64 0.944-0.949, bs 8 ragged short-long 0.952-0.959, bs 8 × 23k
// 0.990, bs 8 × 4096 0.981-0.992, no record above 1.005. mla_onepass keeps 6 (bs 32 × 4k 1.018).
// That A/B had no launch as short as bs 8 × 1: there c0 = 8 cost 31-49% (H100 results runs at
// 4edb78c and 5a0fd6f) while walks' bound for the direct quads counted c0 a unit; it counts
// kC0 now (NOTES.md, sixty-sixth and sixty-seventh).
constexpr int kC0Ws = 8;
constexpr int kRrThreads = 3 * 128;
constexpr int kRrLaunchRegs = 65536 / kRrThreads / 8 * 8;          // 168: the CTA's pool
// 192 and 120 instead (the Sᵀ loop's 4 local accesses gone, the Oᵀ loop's 8 → 15) took 1.003 of
// the time over every config on an H100, 1.016-1.025 at the longest records (NOTES.md, seventieth).
constexpr int kOverlapORegs = 200, kOverlapSRegs = 104;            // 8 Oᵀ warps, the Sᵀ warpgroup
constexpr int kWalkRegs = 240, kIdleRegs = 24;                     // 8 walking warps, 4 idle

// The layouts of onepass_rr_kernel's two builds. kLarge (picked where a block may opt in to
// enough shared memory: sm_90 and sm_100, not sm_120): three KV stages and the piece's q
// in shared memory, for both walks. With two stages and q in the workspace, the
// overlapped walk's loop of hand-offs spans two tiles and its q reads need L1; three stages alone
// took L1 from q (1.30-1.40 on an H100, NOTES.md, fifty-second), and both together, in the
// overlapped walk only, 0.96-0.976 of the two-stage walk's time at the overlapped records but
// 1.12 at bs 8 × 4096, whose 8-warp walk reads q through L1 (fifty-sixth). Here the 8-warp walks
// take q from shared memory too: on an H100 0.95-0.99 of the 99 KB build's time hot at the
// target shapes; cold 0.975-0.988 at the longest, up to 1.03-1.11 at short launches. This build
// with the 8-warp walks' q left in the workspace took 1.12-1.14 at bs 8 × 4096, so L1 was the
// cost (NOTES.md, fifty-seventh). The large build's overlapped walk has three Sᵀ warps of three
// n8 row tiles each (S3; the Sᵀ warpgroup's fourth warp copies the KV, below): per-warp stamps at
// bs 8 × 91k (H100) found the four-warp split's three light warps (two row tiles) scoring a tile
// in 4.4k cycles and the heavy one (three) in 3.6k, its wait for the others filling the gap, so
// the light warps set the pace at a rate that does not follow their MMAs. With three warps of
// three, a tile's Sᵀ took 3.9k and the walk 0.956-0.990 of the four-warp time hot, 0.958-0.993
// cold, at the six overlapped A/B records (NOTES.md, fifty-eighth). The 99 KB build keeps four
// (three not measured there). The fourth warp of the Sᵀ warpgroup copies the KV in the large
// build (SmemOverlap's kCopyWarp), so the Oᵀ warps only read it: against the Oᵀ warps copying,
// 0.946-0.962 of the time hot and 0.945-0.971 cold at the four longest A/B records, 0.985-1.008
// at the shorter ones (H100, NOTES.md, fifty-ninth). 64-row units (eagle64's) split evenly, two
// n8 row tiles for each of four Sᵀ warps, and the Oᵀ warps copy: on an H100, hot, 0.805 of the
// 8-warp kernel's time at eagle64 (bs 8 × 4096) where three Sᵀ warps (3, 3 and 2 tiles) and the
// copier took 0.956 (NOTES.md, sixtieth).
template <int kN8> constexpr int kLargeSWarps = kN8 == kMaxN8 ? 3 : 4;
template <bool kLarge, int kN8 = kMaxN8>
using RrOverlap = std::conditional_t<kLarge, SmemOverlap<kN8, kLargeSWarps<kN8>, 3, true, kLargeSWarps<kN8> == 3>,
                                     OverlapLayout<kN8>>;
// The unit sizes that take onepass_rr_kernel: 72 rows (9 n8 tiles) and 64 (8: eagle64's units).
__host__ __device__ constexpr bool overlaps(int n8) { return n8 == kMaxN8 || n8 == kMaxN8 - 1; }
template <bool kLarge> using RrWalk = WalkLayout<kMaxN8, kLarge>; // walks<kN8, true, kLarge>'s largest
template <bool kLarge> constexpr int kRrSmemBytes = RrOverlap<kLarge>::bytes > RrWalk<kLarge>::bytes ? RrOverlap<kLarge>::bytes
                                                                                                       : RrWalk<kLarge>::bytes;
static_assert(RrOverlap<true>::kThreads == kRrThreads && RrOverlap<false>::kThreads == kRrThreads &&
                  RrOverlap<true, 8>::kThreads == kRrThreads && RrOverlap<false, 8>::kThreads == kRrThreads,
              "both builds' overlapped walks give every warp a role (Sᵀ or copier beside the Oᵀ warps)");
static_assert(RrOverlap<true, 8>::bytes <= kRrSmemBytes<true> && RrOverlap<false, 8>::bytes <= kRrSmemBytes<false>,
              "the 72-row layouts are the largest");
static_assert(8 * kOverlapORegs + 4 * kOverlapSRegs <= 12 * kRrLaunchRegs, "the overlap's registers come from the pool");
static_assert(8 * kWalkRegs + 4 * kIdleRegs <= 12 * kRrLaunchRegs, "the walks' registers come from the pool");

template <int kRegs> __device__ __forceinline__ void regs_inc()
{
#ifdef VB_SETMAXNREG
    setmaxnreg_inc<kRegs>();
#endif
}
template <int kRegs> __device__ __forceinline__ void regs_dec()
{
#ifdef VB_SETMAXNREG
    setmaxnreg_dec<kRegs>();
#endif
}

template <int kN8, bool kLarge>
__global__ void __maxnreg__(kRrLaunchRegs)
    onepass_rr_kernel(vb_verify_params p, void *ws, SchedConfig c)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900 // launched on compute capability 9.0, 10.0 and 12.0 only
    static_assert(overlaps(kN8), "launch_main sends only the unit sizes that overlap here");
    extern __shared__ __align__(128) unsigned char smem[];
    static_assert(4 * (kMaxBatch + 1) <= OverlapLayout<kMaxN8>::pt, "the prefix array fits in the KV stages");
    const int total = Schedule<kKeys, kRrThreads>::start_positions(p, c, reinterpret_cast<int *>(smem));
    const int wg = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0); // warp-uniform for ptxas
    if ((total + c.grid - 1) / c.grid > kOverlapSpan) {
        using L = RrOverlap<kLarge, kN8>;
        if (threadIdx.x == 0)
            Onepass<kN8, kN8, 1, false, L>::init_barriers(smem);
        __syncthreads(); // the one block barrier both roles reach from one instruction
        if (wg < 2) {
            regs_inc<kOverlapORegs>();
            walk_overlap<kN8, 1, L>(p, ws, c, smem, total);
        } else {
            regs_dec<kOverlapSRegs>();
            walk_overlap<kN8, 2, L>(p, ws, c, smem, total);
        }
        return;
    }
    if (wg == 2) {
        regs_dec<kIdleRegs>();
        return;
    }
    regs_inc<kWalkRegs>();
    walks<kN8, true, kLarge>(p, ws, c, smem, total);
#endif
}

// ---- host side ------------------------------------------------------------------------------

// Why this device cannot run onepass_rr_kernel (0 when it can): setmaxnreg needs compute
// capability 9.0, 10.0 or 12.0, and the build must hold the arch-specific code for it (meson
// builds this file for those of gpu_archs' 90, 100 and 120). Device attributes and a kernel's
// attributes are host-side queries, not stream work: allowed while a capture is open.
int cannot_run(char *why, size_t n)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, n, "could not read the GPU's compute capability");
        return 1;
    }
    if (minor != 0 || (major != 9 && major != 10 && major != 12)) {
        snprintf(why, n, "needs setmaxnreg (sm_90a, sm_100a or sm_120a): this GPU is sm_%d%d", major, minor);
        return 1;
    }
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, onepass_rr_kernel<kMaxN8, false>) != cudaSuccess) {
        (void)cudaGetLastError(); // not sticky: no image for this GPU
        snprintf(why, n, "this build has no sm_%d0a code (meson -Dgpu_archs=...,%d0)", major, major);
        return 1;
    }
    return 0;
}

// cannot_run's answer, asked once (the device does not change), for the launches.
bool runs_here()
{
    static const bool ok = [] {
        char why[160];
        return !cannot_run(why, sizeof why);
    }();
    return ok;
}

// Whether this device takes onepass_rr_kernel's kLarge build: a block may opt in to its shared
// memory, static included. Asked once (the device does not change), for the launches.
bool large_here()
{
    static const bool ok = [] {
        int dev = 0, optin = 0;
        cudaFuncAttributes fa;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
            cudaFuncGetAttributes(&fa, onepass_rr_kernel<kMaxN8, true>) != cudaSuccess) {
            (void)cudaGetLastError();
            return false;
        }
        return (size_t)kRrSmemBytes<true> + fa.sharedSizeBytes <= (size_t)optin;
    }();
    return ok;
}

int unsupported_ws(const vb_verify_params *p, char *why, size_t n)
{
    if (cannot_run(why, n) || smem_exceeds_optin(kRrSmemBytes<false>, why, n))
        return 1;
    return unsupported(p, why, n);
}

template <int kN8, bool kLarge>
cudaError_t launch_rr(const vb_verify_params &p, void *ws, const SchedConfig &c, cudaStream_t stream)
{
    static bool set = false;
    if (cudaError_t e = set_attributes(onepass_rr_kernel<kN8, kLarge>, kRrSmemBytes<kLarge>, set))
        return e;
    onepass_rr_kernel<kN8, kLarge><<<c.grid, kRrThreads, kRrSmemBytes<kLarge>, stream>>>(p, ws, c);
    return cudaGetLastError();
}

// 72- and 64-row units take onepass_rr_kernel (its kLarge build where the device allows it); the
// other row counts keep the 8-warp kernel's 255 registers. At short spans a 64-row unit walks at
// 240 registers (sm_90a: 2 local-memory accesses in that tile loop in the large build, none in the
// 99 KB one): 1.02 of the 255-register kernel's time at eagle8 (bs 8 × 4096, span 8; H100 A/B,
// NOTES.md, sixtieth), and 1.05-1.08 at the shorter 8-node chains and trees between the H100
// results runs at 87247d6 and 4edb78c (results/h100/4edb78c), the price of eagle64's 0.77.
template <int kN8> cudaError_t launch_main(const vb_verify_params &p, void *ws, const SchedConfig &c, cudaStream_t stream)
{
    if constexpr (overlaps(kN8)) {
        return large_here() ? launch_rr<kN8, true>(p, ws, c, stream) : launch_rr<kN8, false>(p, ws, c, stream);
    } else {
        return launch_onepass_kernel<kN8>(p, ws, c, stream);
    }
}

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    // The arguments are checked first (launch_rows), whatever the device.
    return launch_rows<kC0Ws>(p, ws, stream, "mla_onepass_ws", [&](auto n8, const SchedConfig &c) {
        if (!runs_here())
            return cudaErrorNotSupported; // unsupported_ws says why
        return launch_main<decltype(n8)::value>(*p, ws, c, stream);
    });
}

} // namespace

extern "C" const vb_kernel vb_kernel_mla_onepass_ws = {
    "mla_onepass_ws",
    "mla_onepass with 72- and 64-row units at long spans warp-specialised: 8 O warps beside 4 S warps (or 3 and a KV copier), setmaxnreg",
    90, 1, workspace_bytes<kC0Ws>, unsupported_ws, launch};
