/* The kernel ABI's refusals need no GPU: every registered kernel checks the alignment its
 * loads assume before it enqueues anything, so a misaligned base pointer is refused with
 * cudaErrorInvalidValue and a line naming the buffer, never left to fault on the device. */
#include "vbtest.h"

#include "verify_attn.h"

static vb_verify_params aligned_params(void)
{
    vb_verify_params p;
    memset(&p, 0, sizeof p);
    p.batch = 1, p.heads = 8, p.d_qk = 576, p.d_v = 512, p.sm_scale = 0.14f, p.max_draft = 9, p.max_tokens = 9;
    /* Fake device addresses, never dereferenced: the check comes before any CUDA call. */
    p.q = (const uint16_t *)(uintptr_t)0x10000, p.kv_buffer = (const uint16_t *)(uintptr_t)0x20000;
    p.o = (uint16_t *)(uintptr_t)0x30000, p.lse = (float *)(uintptr_t)0x40000;
    p.kv_indptr = (const void *)(uintptr_t)0x50000, p.kv_indices = (const void *)(uintptr_t)0x60000;
    p.qo_indptr = (const void *)(uintptr_t)0x70000, p.out_cache_loc = (const void *)(uintptr_t)0x80000;
    p.mask_indptr = (const void *)(uintptr_t)0x90000, p.custom_mask = (const uint8_t *)(uintptr_t)0xA0001;
    p.kv_indptr_width = p.kv_indices_width = VB_I32;
    p.qo_indptr_width = p.out_cache_loc_width = p.mask_indptr_width = VB_I64;
    p.stride_q_head = 576, p.stride_q_token = 8 * 576, p.stride_kv_slot = 576;
    p.stride_o_head = 512, p.stride_o_token = 8 * 512;
    return p;
}

/* mla_wgmma's workspace at these limits: batch 1, heads x max_draft rows a request. */
static size_t wgmma_workspace(const vb_kernel *k, int heads, int max_draft)
{
    vb_verify_params p = aligned_params();
    p.heads = heads, p.max_draft = max_draft, p.max_tokens = max_draft;
    return k->workspace_bytes(&p);
}

/* mla_wgmma's unit size follows the launch's limits: 16 rows when no request has more, 32 when
 * none has more than 32, 64 when a request needs no more units of 64 than of 72, 72 otherwise.
 * Its workspace is one plan block (the same at these limits) plus partials proportional to the
 * unit's rows, so the differences between the sizes give the ratios of the unit sizes:
 * (32 - 16) : (64 - 16) : (72 - 16) = 16 : 48 : 56. */
static void wgmma_unit_rows_follow_limits(void)
{
    for (size_t k = 0; k < vb_kernel_count; k++) {
        const vb_kernel *kern = vb_kernels[k];
        if (strcmp(kern->name, "mla_wgmma") || !kern->workspace_bytes)
            continue;
        const size_t ws16 = wgmma_workspace(kern, 8, 2);   /* 16 rows: units of 16 */
        const size_t ws17 = wgmma_workspace(kern, 1, 17);  /* 17 rows: one unit of 32 */
        const size_t ws33 = wgmma_workspace(kern, 1, 33);  /* 33 rows: one unit of 64 */
        const size_t ws65 = wgmma_workspace(kern, 1, 65);  /* 65 rows: one unit of 72, not two of 64 */
        const size_t ws512 = wgmma_workspace(kern, 8, 64); /* 512 rows: eight units of 64 */
        const size_t ws576 = wgmma_workspace(kern, 64, 9); /* 576 rows: eight units of 72, not nine of 64 */
        CHECK_MSG(ws16 > 0 && ws16 < ws17 && (ws17 - ws16) * 48 == (ws33 - ws16) * 16 &&
                      (ws33 - ws16) * 56 == (ws65 - ws16) * 48,
                  "mla_wgmma workspace: %zu B at 16 rows, %zu at 17, %zu at 33, %zu at 65", ws16, ws17, ws33, ws65);
        CHECK_MSG(ws512 == ws33 && ws576 == ws65, "mla_wgmma workspace: %zu B at 512 rows (%zu at 33), %zu at 576 (%zu at 65)",
                  ws512, ws33, ws576, ws65);
    }
}

int main(void)
{
    wgmma_unit_rows_follow_limits();
    for (size_t k = 0; k < vb_kernel_count; k++) {
        const vb_kernel *kern = vb_kernels[k];
        const char *bufs[] = {"q", "kv_buffer", "o", "qo_indptr"};
        for (int b = 0; b < 4; b++) {
            vb_verify_params p = aligned_params();
            if (b == 0)
                p.q = (const uint16_t *)(uintptr_t)0x10002; /* 2 bytes off: wrong for pairs and for 16-byte loads */
            else if (b == 1)
                p.kv_buffer = (const uint16_t *)(uintptr_t)0x20002;
            else if (b == 2)
                p.o = (uint16_t *)(uintptr_t)0x30002;
            else
                p.qo_indptr = (const void *)(uintptr_t)0x70004; /* int64 elements */
            capture_begin();
            cudaError_t e = kern->launch(&p, (void *)(uintptr_t)0x100000, 0);
            char *msgs = capture_end();
            char want[96];
            snprintf(want, sizeof want, "%s: %s at ", kern->name, bufs[b]);
            CHECK_MSG(e == cudaErrorInvalidValue && strstr(msgs, want) && strstr(msgs, "launch refused"),
                      "%s with %s misaligned: error %d, said '%s'", kern->name, bufs[b], (int)e, msgs);
            free(msgs);
        }
    }
    TEST_MAIN_END();
}
