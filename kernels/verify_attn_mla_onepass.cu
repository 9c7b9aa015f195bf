// mla_onepass: the portable entry of mla_onepass.cuh (which explains the kernel): onepass_kernel,
// the 8-warp walks, on every architecture from sm_80.
#include "mla_onepass.cuh"

namespace {

cudaError_t launch(const vb_verify_params *p, void *ws, cudaStream_t stream)
{
    return launch_rows<kC0>(p, ws, stream, "mla_onepass", [&](auto n8, const SchedConfig &c) {
        return launch_onepass_kernel<decltype(n8)::value>(*p, ws, c, stream);
    });
}

} // namespace

extern "C" const vb_kernel vb_kernel_mla_onepass = {
    "mla_onepass",
    "every row of a request per CTA: one pass over the KV, device-scheduled splits, mma.sync, <= 99 KB smem",
    80, 1, workspace_bytes<kC0>, unsupported, launch};
