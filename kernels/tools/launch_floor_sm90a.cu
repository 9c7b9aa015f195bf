// launch_floor: what a CUDA graph replay of kernels that do nothing costs, timed as the harness
// times a verify kernel's graph replay (a CUDA event before and after each replay, ten replays
// enqueued between two host synchronisations; median, 10th and 90th percentile of 300).
// A tool, not a verify kernel: issue 8's short-launch targets (bs 1 x 512 at most 10 us) include
// this floor, so results/h200/NOTES.md (eighteenth) subtracts it to say what the kernels' own work
// may take. The shapes are mla_wgmma's: its main launch (one CTA of 512 threads an SM, held
// there by shared memory: mla_wgmma asks for 227,456 B, this tool for the 232,448 B opt-in
// maximum) and its combine (six blocks of 128 threads an SM), each launch passing a parameter
// block about the size of the harness's vb_verify_params. Built for sm_90a; runs on an
// H100/H200.
//
// usage: launch_floor [replays]   (default 300)
#include <cstdio>
#include <vector>

#include "hopper_tool.cuh"

using namespace vbtool;

namespace {

const Tool tool{"launch_floor"};
constexpr int kMainThreads = 512, kMainSmem = 227 * 1024, kCombineThreads = 128, kCombinePerSm = 6;

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
// kernel (none: 0).
struct Case {
    const char *name;
    int main_ctas, blocks, threads;
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
    cudaStream_t s;
    tool.check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    const Case cases[] = {
        {"one node <<<1, 32>>>", 0, 1, 32},
        {"main shape alone", sms, 0, 0},
        {"combine shape alone", 0, kCombinePerSm * sms, kCombineThreads},
        {"main shape, then combine shape", sms, kCombinePerSm * sms, kCombineThreads},
    };
    printf("graph replays of empty kernels, %d samples each, %d SMs; us: median (p10-p90)\n", n, sms);
    printf("main shape: <<<%d, %d, %d B>>>; combine shape: <<<%d, %d>>>; %zu B of parameters\n", sms,
           kMainThreads, kMainSmem, kCombinePerSm * sms, kCombineThreads, sizeof(Params) + sizeof(int *));
    printf("\n| graph | median | p10 | p90 |\n|---|---:|---:|---:|\n");
    for (const Case &c : cases) {
        cudaGraphExec_t x = capture(c, s);
        const std::vector<float> us = tool.time_replays(x, s, n);
        printf("| %s | %.2f | %.2f | %.2f |\n", c.name, us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
        tool.check(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    }
    tool.check(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
