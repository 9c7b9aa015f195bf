// Test-only kernels that fail on purpose, so that the tests can prove the harness's fault
// paths: what a run reports and writes, and its exit code (4), when a kernel faults on the
// device or cannot be launched. Never registered to run by default; run them by name.
//   fault_address  writes through an address no allocation holds: an illegal-address fault,
//                  sticky (it ends the CUDA context, and with it the run's GPU stages)
//   fail_launch    asks for more threads per block than any GPU has: the launch itself fails
//                  (the H200 with CUDA 13.0 answers cudaErrorInvalidValue), and the GPU stays usable
#include "verify_attn.h"

namespace {

__global__ void write_far(unsigned *far) { *far = 0xDEADu; }

size_t no_workspace(const vb_verify_params *) { return 0; }

cudaError_t launch_fault(const vb_verify_params *, void *, cudaStream_t stream)
{
    write_far<<<1, 1, 0, stream>>>(reinterpret_cast<unsigned *>(uintptr_t{16}));
    return cudaGetLastError();
}

cudaError_t launch_fail(const vb_verify_params *, void *, cudaStream_t stream)
{
    write_far<<<1, 4096, 0, stream>>>(nullptr); /* 4096 threads per block: never valid */
    return cudaGetLastError();
}

} // namespace

extern "C" const vb_kernel vb_kernel_fault_address = {
    "fault_address", "TEST ONLY: writes through address 16, an illegal-address fault on the device", 80, 0,
    no_workspace, nullptr, launch_fault};

extern "C" const vb_kernel vb_kernel_fail_launch = {
    "fail_launch", "TEST ONLY: a launch with 4096 threads per block, refused by the runtime", 80, 0,
    no_workspace, nullptr, launch_fail};
