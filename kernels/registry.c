/* The kernel registry. Adding a kernel: one file in kernels/ that defines a vb_kernel (listed in
 * meson.build's kernel sources), its extern line and its row in the table below. */
#include <stddef.h>

#include "verify_attn.h"

extern const vb_kernel vb_kernel_flash_paged;
extern const vb_kernel vb_kernel_naive_gpu;
extern const vb_kernel vb_kernel_mla_onepass;
extern const vb_kernel vb_kernel_mla_onepass_ws;
extern const vb_kernel vb_kernel_mla_wgmma;
extern const vb_kernel vb_kernel_sync_in_launch;
extern const vb_kernel vb_kernel_fault_address;
extern const vb_kernel vb_kernel_fail_launch;
extern const vb_kernel vb_kernel_out_of_registers;
extern const vb_kernel vb_kernel_hang;

const vb_kernel *const vb_kernels[] = {
    &vb_kernel_flash_paged,
    &vb_kernel_naive_gpu,
    &vb_kernel_mla_onepass,
    &vb_kernel_mla_onepass_ws,
    &vb_kernel_mla_wgmma,
};
const size_t vb_kernel_count = sizeof vb_kernels / sizeof *vb_kernels;

/* Not run by default: each exists to prove that a harness check can fail. */
const vb_kernel *const vb_test_kernels[] = {
    &vb_kernel_sync_in_launch,
    &vb_kernel_fault_address,
    &vb_kernel_fail_launch,
    &vb_kernel_out_of_registers,
    &vb_kernel_hang,
};
const size_t vb_test_kernel_count = sizeof vb_test_kernels / sizeof *vb_test_kernels;
