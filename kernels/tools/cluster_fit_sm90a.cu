// cluster_fit: how many CTAs of mla_wgmma's shape (512 threads, one CTA an SM by shared memory:
// mla_wgmma asks for 227,456 B, this tool for the 232,448 B opt-in maximum) can be resident at
// once when they are launched in clusters of 1, 2, 4, 8 or 16.
// A tool, not a verify kernel: results/h200/NOTES.md (seventeenth) weighs a cluster of CTAs with
// adjacent spans merging their pieces of a unit through distributed shared memory, which pays only
// if clusters of that size still cover every SM (a cluster's CTAs go to SMs of one GPC, and GPCs
// need not hold a multiple of the cluster size). Prints the occupancy API's answer for each size,
// and for each launches one full grid of such clusters, whose CTAs record their SM: the SMs that
// ran a CTA. Built for sm_90a; runs on an H100/H200.
//
// usage: cluster_fit
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cluster_sm90a.cuh"
#include "hopper_tool.cuh"

using namespace vbtool;

namespace {

const Tool tool{"cluster_fit"};
constexpr int kThreads = 512, kSmem = 227 * 1024; // as mla_wgmma's launch: one CTA an SM

// The dynamic shared memory is asked for at launch (cfg.dynamicSmemBytes), which is what decides
// residency; the kernel itself only says where it ran.
__global__ void __launch_bounds__(kThreads, 1) record_sm(int *sm_of_cta)
{
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
    if (threadIdx.x == 0)
        sm_of_cta[blockIdx.x] = (int)smid;
}

} // namespace

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: cluster_fit\n");
        return 2;
    }
    const int sms = tool.hopper_sms();
    tool.check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem), "cudaFuncSetAttribute");
    tool.check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "cudaFuncSetAttribute");
    int *d_sm = nullptr;
    tool.check(cudaMalloc(&d_sm, sizeof(int) * sms), "cudaMalloc");
    printf("%d SMs; CTAs of %d threads and %d B of dynamic shared memory\n", sms, kThreads, kSmem);
    printf("cluster  resident clusters  resident CTAs  SMs that ran a CTA of one full grid\n");
    for (int n : {1, 2, 4, 8, 16}) {
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = cluster_config(n, sms / n * n, kThreads, kSmem, attr);
        int clusters = 0;
        const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, record_sm, &cfg);
        if (e != cudaSuccess) { // e.g. a size past what this GPU allows: say so, go on
            printf("%7d  %s\n", n, cudaGetErrorString(e));
            (void)cudaGetLastError();
            continue;
        }
        if (clusters == 0) {
            printf("%7d  %17d  %13d  -\n", n, 0, 0);
            continue;
        }
        // One grid of as many clusters as fit at once: which SMs they land on.
        cfg.gridDim = dim3(clusters * n);
        tool.check(cudaMemset(d_sm, 0xff, sizeof(int) * sms), "cudaMemset");
        tool.check(cudaLaunchKernelEx(&cfg, record_sm, d_sm), "cudaLaunchKernelEx");
        tool.check(cudaDeviceSynchronize(), "record_sm");
        std::vector<int> sm_of(clusters * n);
        tool.check(cudaMemcpy(sm_of.data(), d_sm, sizeof(int) * sm_of.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
        std::sort(sm_of.begin(), sm_of.end());
        const long distinct = std::unique(sm_of.begin(), sm_of.end()) - sm_of.begin();
        printf("%7d  %17d  %13d  %ld\n", n, clusters, clusters * n, distinct);
    }
    tool.check(cudaFree(d_sm), "cudaFree");
    return 0;
}
