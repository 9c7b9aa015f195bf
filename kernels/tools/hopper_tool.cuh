// What the standalone Hopper tools (kernels/tools/) share: a CUDA error ends the tool with one
// line naming it and the call, and the GPU must be compute capability 9.x, since the tools are
// built for sm_90a.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

namespace vbtool {

// The first 1024-byte-aligned address of a dynamic shared-memory block (the 128-byte swizzle's
// atom; the block is allocated 1024 bytes larger for it).
__device__ __forceinline__ unsigned char *align_1024(unsigned char *raw)
{
    return raw + (1024 - (unsigned)__cvta_generic_to_shared(raw) % 1024) % 1024;
}

struct Tool {
    const char *name;

    // One line and exit 1 when e is an error.
    void check(cudaError_t e, const char *what) const
    {
        if (e != cudaSuccess) {
            fprintf(stderr, "%s: %s: %s\n", name, what, cudaGetErrorString(e));
            exit(1);
        }
    }

    // The tool's one optional count argument (argv[1]), def without it; a usage line and exit 2
    // when there are more arguments or the count is not in 1..1000000.
    int count_arg(int argc, char **argv, int def, const char *usage) const
    {
        int n = def;
        if (argc > 2 || (argc == 2 && ((n = atoi(argv[1])) < 1 || n > 1000000))) {
            fprintf(stderr, "%s\n", usage);
            exit(2);
        }
        return n;
    }

    // Runs a timing probe twice (the first launch warms up) with its clock counters zeroed
    // before each, then copies the second run's counters (bytes of them) to host.
    template <class Launch> void warm_then_read(Launch launch, void *counters, size_t bytes, void *host) const
    {
        for (int rep = 0; rep < 2; rep++) {
            check(cudaMemset(counters, 0, bytes), "cudaMemset");
            launch();
            check(cudaGetLastError(), "a probe launch");
            check(cudaDeviceSynchronize(), "a probe kernel");
        }
        check(cudaMemcpy(host, counters, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    }

    // The graph of what enqueue(s) launches on stream s, captured and instantiated.
    template <class Enqueue> cudaGraphExec_t capture(cudaStream_t s, Enqueue enqueue) const
    {
        cudaGraph_t g;
        cudaGraphExec_t x;
        check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        enqueue(s);
        check(cudaGetLastError(), "a launch under capture");
        check(cudaStreamEndCapture(s, &g), "cudaStreamEndCapture");
        check(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate");
        check(cudaGraphDestroy(g), "cudaGraphDestroy");
        return x;
    }

    // Microseconds of each of n replays of a graph, sorted, timed as the harness times a verify
    // kernel's replay: 20 replays to warm up, then an event before and after each, ten replays
    // between two host synchronisations. before(s, i), when given, enqueues what goes ahead of
    // sample i outside its events (the harness's cold samples: a memset that evicts the L2).
    std::vector<float> time_replays(cudaGraphExec_t x, cudaStream_t s, int n) const
    {
        return time_replays(x, s, n, [](cudaStream_t, int) {});
    }
    template <class Before> std::vector<float> time_replays(cudaGraphExec_t x, cudaStream_t s, int n, Before before) const
    {
        constexpr int kBatch = 10;
        cudaEvent_t ev[2 * kBatch];
        for (auto &e : ev)
            check(cudaEventCreate(&e), "cudaEventCreate");
        for (int i = 0; i < 20; i++)
            check(cudaGraphLaunch(x, s), "cudaGraphLaunch");
        std::vector<float> us;
        while ((int)us.size() < n) {
            const int want = std::min(kBatch, n - (int)us.size());
            for (int i = 0; i < want; i++) {
                before(s, (int)us.size() + i);
                check(cudaEventRecord(ev[2 * i], s), "cudaEventRecord");
                check(cudaGraphLaunch(x, s), "cudaGraphLaunch");
                check(cudaEventRecord(ev[2 * i + 1], s), "cudaEventRecord");
            }
            check(cudaStreamSynchronize(s), "a replay");
            for (int i = 0; i < want; i++) {
                float ms = 0.f;
                check(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
                us.push_back(1000.f * ms);
            }
        }
        for (auto &e : ev)
            check(cudaEventDestroy(e), "cudaEventDestroy");
        std::sort(us.begin(), us.end());
        return us;
    }

    // The current GPU's SM count; one line and exit 1 when it is not a Hopper GPU.
    int hopper_sms() const
    {
        int dev = 0, sms = 0, major = 0;
        check(cudaGetDevice(&dev), "cudaGetDevice");
        check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
        check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cudaDeviceGetAttribute");
        if (major != 9) {
            fprintf(stderr, "%s: built for sm_90a (Hopper); this GPU is compute capability %d.x\n", name, major);
            exit(1);
        }
        return sms;
    }
};

} // namespace vbtool
