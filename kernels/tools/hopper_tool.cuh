// What the standalone Hopper tools (kernels/tools/) share: a CUDA error ends the tool with one
// line naming it and the call, and the GPU must be compute capability 9.x, since the tools are
// built for sm_90a.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace vbtool {

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
