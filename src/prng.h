/* A small deterministic PRNG for structure (trees, page layouts, random prefix lengths).
 * Numeric data (q, KV) comes from cuRAND; structure only needs to be reproducible. */
#ifndef VB_PRNG_H
#define VB_PRNG_H

#include <stdint.h>

typedef struct vb_prng { uint64_t s; } vb_prng;

static inline uint64_t vb_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Independent streams from one seed: mix a stream tag into the seed. */
static inline uint64_t vb_seed_mix(uint64_t seed, uint64_t tag)
{
    uint64_t s = seed ^ (tag * 0xD1B54A32D192ED03ull);
    return vb_splitmix64(&s);
}

static inline vb_prng vb_prng_make(uint64_t seed, uint64_t tag)
{
    vb_prng p = {vb_seed_mix(seed, tag)};
    return p;
}

static inline uint64_t vb_prng_u64(vb_prng *p) { return vb_splitmix64(&p->s); }

/* Uniform in [0, 1). */
static inline double vb_prng_unit(vb_prng *p) { return (double)(vb_prng_u64(p) >> 11) * 0x1p-53; }

/* Uniform integer in [lo, hi]. */
static inline int64_t vb_prng_range(vb_prng *p, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(vb_prng_u64(p) % span);
}

#endif
