// Test-only kernels that fail on purpose, so that the tests can prove the harness's fault
// paths: what a run reports and writes, and its exit code (4), when a kernel faults on the
// device or cannot be launched. Never registered to run by default; run them by name.
//   fault_address  writes through an address no allocation holds: an illegal-address fault,
//                  sticky (it ends the CUDA context, and with it the run's GPU stages)
//   fail_launch    asks for more threads per block than any GPU has: the launch itself fails
//                  (the H200 with CUDA 13.0 answers cudaErrorInvalidValue), and the GPU stays usable
//   out_of_registers  a block of 1024 threads of a kernel that needs more than 64 registers a
//                  thread: the runtime refuses the launch (cudaErrorLaunchOutOfResources), and in a
//                  graph the capture or the instantiation refuses it; a failure the harness must
//                  not leave pending for the next kernel's launch to report
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

// 96 values live at once: each is loaded once (volatile: never re-read) and used again after
// their sum, so all are held: well over the 64 registers a thread that 1024-thread blocks allow
// (ptxas, CUDA 13.0: 112-113 on sm_80/90/120). No __launch_bounds__: with a bound of 32 the first H200
// run of the faults stage had the 1024-thread launch refused as cudaErrorInvalidValue, a launch
// beyond the kernel's bound, so the out-of-resources path was never reached.
constexpr int kLive = 96;
__global__ void hold_registers(const volatile float *in, float *out)
{
    float v[kLive], sum = 0.f;
#pragma unroll
    for (int i = 0; i < kLive; i++)
        sum += v[i] = in[i * 33 + threadIdx.x];
#pragma unroll
    for (int i = 0; i < kLive; i++)
        out[i * 33 + threadIdx.x] = v[i] / sum;
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

cudaError_t launch_out_of_registers(const vb_verify_params *, void *, cudaStream_t stream)
{
    hold_registers<<<1, 1024, 0, stream>>>(nullptr, nullptr); /* never runs: refused */
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

extern "C" const vb_kernel vb_kernel_out_of_registers = {
    "out_of_registers",
    "TEST ONLY: 1024 threads of a kernel that needs more than 64 registers; refused at launch, or when a graph is instantiated",
    80, 0, no_workspace, nullptr, launch_out_of_registers};

extern "C" const vb_kernel vb_kernel_hang = {
    "hang", "TEST ONLY: never finishes, like a deadlocked kernel; --gpu-timeout turns it into an ERROR", 80, 0,
    no_workspace, nullptr, launch_hang};
