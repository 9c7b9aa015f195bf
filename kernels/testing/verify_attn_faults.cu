// Test-only kernels that fail on purpose, so that the tests can prove the harness's fault
// paths: what a run reports and writes, and its exit code (4), when a kernel faults on the
// device or cannot be launched. Never registered to run by default; run them by name.
//   fault_address  writes through an address no allocation holds: an illegal-address fault,
//                  sticky (it ends the CUDA context, and with it the run's GPU stages)
//   fail_launch    asks for more threads per block than any GPU has: the launch itself fails
//                  (the H200 with CUDA 13.0 answers cudaErrorInvalidValue), and the GPU stays usable
//   hang           never finishes, as a deadlocked kernel does: the run's watchdog (--gpu-timeout)
//                  must report it as a timed-out ERROR, write every report and exit 4
#include "verify_attn.h"

namespace {

__global__ void write_far(unsigned *far) { *far = 0xDEADu; }

// The asm keeps the loop a side effect, so the compiler may not assume it ends.
__global__ void spin_forever()
{
    for (;;)
        asm volatile("nanosleep.u32 1000;");
}

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

cudaError_t launch_hang(const vb_verify_params *, void *, cudaStream_t stream)
{
    spin_forever<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

} // namespace

extern "C" const vb_kernel vb_kernel_fault_address = {
    "fault_address", "TEST ONLY: writes through address 16, an illegal-address fault on the device", 80, 0,
    no_workspace, nullptr, launch_fault};

extern "C" const vb_kernel vb_kernel_fail_launch = {
    "fail_launch", "TEST ONLY: a launch with 4096 threads per block, refused by the runtime", 80, 0,
    no_workspace, nullptr, launch_fail};

extern "C" const vb_kernel vb_kernel_hang = {
    "hang", "TEST ONLY: never finishes, like a deadlocked kernel; --gpu-timeout turns it into an ERROR", 80, 0,
    no_workspace, nullptr, launch_hang};
