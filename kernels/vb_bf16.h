/* bf16 <-> float and the synthetic-value mapping, shared by host C and device CUDA.
 *
 * Both the host generator (cuRAND's host API) and the device generator produce the same
 * uint32 words; everything after that must be bit-exact on both sides, so the mapping
 * below uses only operations that round once and identically everywhere. */
#ifndef VB_BF16_H
#define VB_BF16_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define VB_HD static inline __host__ __device__
#else
#define VB_HD static inline
#endif

/* A quiet NaN used for KV slots that no request owns: a stray read shows up as NaN. */
#define VB_BF16_NAN 0x7FC0u
/* The poison written into outputs before each run: all-ones bytes (so a plain byte memset
 * writes it), a NaN whose payload no arithmetic produces, so "still poison" means "never
 * written" rather than "computed NaN". */
#define VB_POISON_BYTE 0xFF
#define VB_BF16_POISON 0xFFFFu

VB_HD uint32_t vb_float_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

VB_HD float vb_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

VB_HD float vb_bf16_to_float(uint16_t h) { return vb_bits_float((uint32_t)h << 16); }

/* Round to nearest even, as __float2bfloat16_rn does; NaN stays a quiet NaN. */
VB_HD uint16_t vb_bf16_from_float(float f)
{
    uint32_t u = vb_float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u);
    uint32_t lsb = (u >> 16) & 1u;
    return (uint16_t)((u + 0x7FFFu + lsb) >> 16);
}

/* One uniform value in (-amplitude, amplitude) from 32 random bits, as bf16.
 * u = k * 2^-24 is exact, 2u - 1 is exact, and the product rounds once. */
VB_HD uint16_t vb_synth_bf16(uint32_t bits, float amplitude)
{
    float u = (float)(bits >> 8) * (1.0f / 16777216.0f);
    float x = 2.0f * u - 1.0f;
    return vb_bf16_from_float(x * amplitude);
}

VB_HD int vb_bf16_is_finite(uint16_t h) { return (h & 0x7F80u) != 0x7F80u; }

#endif
