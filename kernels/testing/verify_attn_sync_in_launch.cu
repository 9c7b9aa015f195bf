// sync_in_launch: flash_paged followed by a stream synchronisation inside the launch.
// Correct when run eagerly, and exactly what a capture-safe kernel must never do: under
// cudaStreamCaptureModeGlobal the synchronisation is refused and the capture invalidated.
// It exists so the tests can prove that the harness's capture check fails when it should.
#include "verify_attn.h"

extern "C" const vb_kernel vb_kernel_flash_paged;

namespace {

size_t workspace_bytes(const vb_verify_params *lim) { return vb_kernel_flash_paged.workspace_bytes(lim); }

int unsupported(const vb_verify_params *p, char *why, size_t n)
{
    return vb_kernel_flash_paged.unsupported(p, why, n);
}

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    cudaError_t e = vb_kernel_flash_paged.launch(p, ws, stream);
    if (e != cudaSuccess)
        return e;
    return cudaStreamSynchronize(stream);
}

} // namespace

extern "C" const vb_kernel vb_kernel_sync_in_launch = {
    "sync_in_launch", "TEST ONLY: flash_paged plus a cudaStreamSynchronize inside the launch", 80, 1,
    workspace_bytes, unsupported, launch};
