// launch_floor: what a CUDA graph replay of kernels that do nothing costs, timed as the harness
// times a verify kernel's graph replay (a CUDA event before and after each replay, ten replays
// enqueued between two host synchronisations; median, 10th and 90th percentile of 300).
// A tool, not a verify kernel: issue 8's short-launch targets (bs 1 x 512 at most 10 us) include
// this floor, so results/h200/NOTES.md (eighteenth) subtracts it to say what the kernels' own work
// may take. The shapes are mla_wgmma's: its main launch (one CTA of 512 threads an SM, held
// there by shared memory: mla_wgmma asks for 227,456 B, this tool for the 232,448 B opt-in
// maximum) and its combine (six blocks of 128 threads an SM), each launch passing a parameter
// block about the size of the harness's vb_verify_params. Then mla_onepass_ws's 72-row launch
// shape (one CTA of 384 threads an SM) with no dynamic shared memory, its 99 KB build's and its
// Hopper build's, each replayed hot and after the memset of twice the L2 that the harness's cold
// samples put ahead of a launch: whether a launch that needs a large shared-memory carveout pays
// for it when the kernel before it needed none (results/h200/NOTES.md, fifty-seventh). Built for
// sm_90a; runs on an H100/H200.
//
// usage: launch_floor [replays]   (default 300)
#include <cstdio>
#include <vector>

#include "hopper_tool.cuh"

using namespace vbtool;

namespace {

const Tool tool{"launch_floor"};
constexpr int kMainThreads = 512, kMainSmem = 227 * 1024, kCombineThreads = 128, kCombinePerSm = 6;
constexpr int kWsThreads = 384, kWsSmemSmall = 95424, kWsSmemLarge = 204160; // mla_onepass_ws's two builds

struct Params {
    unsigned char bytes[320]; // about the size of vb_verify_params
};

// An empty body: the launch, the CTAs' start and exit, nothing else. The store that never
// happens keeps the parameter block live. One instantiation per launch shape.
template <int kThreads> __global__ void __launch_bounds__(kThreads, 1) empty_kernel(Params p, int *never)
{
    if (never && threadIdx.x == 0 && p.bytes[blockIdx.x % sizeof p.bytes] == 0xA5 && blockIdx.x == 1u << 30)
        *never = 1;
}

// A graph: main_ctas CTAs of the main shape (none: 0), then blocks of threads of the combine's
// kernel (none: 0), or ws_ctas CTAs of mla_onepass_ws's shape with ws_smem bytes of dynamic
// shared memory; cold: the L2-evicting memset ahead of every sample.
struct Case {
    const char *name;
    int main_ctas, blocks, threads;
    int ws_ctas, ws_smem;
    bool cold;
};

// The graph of one case, captured from a stream.
cudaGraphExec_t capture(const Case &c, cudaStream_t s)
{
    return tool.capture(s, [&](cudaStream_t st) {
        Params p{};
        int *never = nullptr; // see empty_kernel
        if (c.main_ctas)
            empty_kernel<kMainThreads><<<c.main_ctas, kMainThreads, kMainSmem, st>>>(p, never);
        if (c.blocks)
            empty_kernel<kCombineThreads><<<c.blocks, c.threads, 0, st>>>(p, never);
        if (c.ws_ctas)
            empty_kernel<kWsThreads><<<c.ws_ctas, kWsThreads, c.ws_smem, st>>>(p, never);
    });
}

} // namespace

int main(int argc, char **argv)
{
    const int n = tool.count_arg(argc, argv, 300, "usage: launch_floor [replays]");
    const int sms = tool.hopper_sms();
    tool.check(cudaFuncSetAttribute(empty_kernel<kMainThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kMainSmem),
               "cudaFuncSetAttribute");
    tool.check(cudaFuncSetAttribute(empty_kernel<kWsThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    kWsSmemLarge),
               "cudaFuncSetAttribute");
    cudaStream_t s;
    tool.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    int dev = 0, l2 = 0;
    tool.check(cudaGetDevice(&dev), "cudaGetDevice");
    tool.check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "cudaDeviceGetAttribute");
    const size_t flush_bytes = 2 * (size_t)l2; // as the harness's cold samples
    void *flush = nullptr;
    tool.check(cudaMalloc(&flush, flush_bytes), "cudaMalloc");
    const Case cases[] = {
        {"one node <<<1, 32>>>", 0, 1, 32, 0, 0, false},
        {"main shape alone", sms, 0, 0, 0, 0, false},
        {"combine shape alone", 0, kCombinePerSm * sms, kCombineThreads, 0, 0, false},
        {"main shape, then combine shape", sms, kCombinePerSm * sms, kCombineThreads, 0, 0, false},
        {"ws shape, 0 B", 0, 0, 0, sms, 0, false},
        {"ws shape, 0 B, after the memset", 0, 0, 0, sms, 0, true},
        {"ws shape, 95,424 B", 0, 0, 0, sms, kWsSmemSmall, false},
        {"ws shape, 95,424 B, after the memset", 0, 0, 0, sms, kWsSmemSmall, true},
        {"ws shape, 204,160 B", 0, 0, 0, sms, kWsSmemLarge, false},
        {"ws shape, 204,160 B, after the memset", 0, 0, 0, sms, kWsSmemLarge, true},
    };
    printf("graph replays of empty kernels, %d samples each, %d SMs; us: median (p10-p90)\n", n, sms);
    printf("main shape: <<<%d, %d, %d B>>>; combine shape: <<<%d, %d>>>; ws shape: <<<%d, %d, 0 / 95,424 / 204,160 B>>>; %zu B of "
           "parameters; the memset: %zu B\n",
           sms, kMainThreads, kMainSmem, kCombinePerSm * sms, kCombineThreads, sms, kWsThreads,
           sizeof(Params) + sizeof(int *), flush_bytes);
    printf("\n| graph | median | p10 | p90 |\n|---|---:|---:|---:|\n");
    for (const Case &c : cases) {
        cudaGraphExec_t x = capture(c, s);
        const std::vector<float> us = tool.time_replays(x, s, n, [&](cudaStream_t st, int i) {
            if (c.cold)
                tool.check(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, st), "cudaMemsetAsync");
        });
        printf("| %s | %.2f | %.2f | %.2f |\n", c.name, us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
        tool.check(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    }
    tool.check(cudaFree(flush), "cudaFree");
    tool.check(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
