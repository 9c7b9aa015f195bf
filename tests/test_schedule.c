/* The device schedule's cut, walked on the host (kernels/testing/schedule_check.h): on the
 * shipped shapes and on random batches, for mla_wgmma's and mla_onepass's configurations (and
 * mla_wgmma's row pairs), every tile of every unit lands in exactly one piece, no two pieces
 * share a partial slot, the combine merges every cut row once, drops (when the launch streams
 * more KV than L2 holds) exactly the partial lines it merged, and the two CTAs of a pair walk
 * the same pieces (and the sanitizer scenario for mla_wgmma's 64-row walk has both whole and
 * cut units); the cut's alignment of a uniform batch's units moves eagle64's cut and its
 * sanitizer scenario's, but not a 16-token chain's; and the check does fail when a piece is
 * dropped, two pieces share a slot, the combine skips a row or drops a line it did not merge,
 * or a pair's CTAs disagree. */
#include "vbtest.h"

#include "prng.h"
#include "testing/schedule_check.h"

static const vb_sched_config kWgmma = {64, 72, 3, 1, 132, 1, 0, 0};
static const vb_sched_config kWgmmaPairs = {64, 72, 3, 1, 132, 2, 0, 0}; /* short launches: row pairs */

static int check_uniform(int batch, int64_t prefix, int64_t draft, int heads, const vb_sched_config *cfg, int bug,
                         long *pieces, long *cut, long *dropped, char *why, size_t n)
{
    int64_t p[64], t[64];
    for (int b = 0; b < batch; b++)
        p[b] = prefix, t[b] = draft;
    return vb_schedule_check(batch, p, t, heads, cfg, bug, pieces, cut, dropped, why, n);
}

static void test_shipped_shapes(void)
{
    const struct {
        int batch;
        int64_t prefix;
    } shapes[] = {{1, 1}, {1, 512}, {8, 4096}, {8, 23000}, {8, 91000}, {8, 200000}, {1, 200000}, {32, 4096}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char why[256] = "";
        long pieces = 0, cut = 0;
        int rc = check_uniform(shapes[i].batch, shapes[i].prefix, 9, 8, &kWgmma, VB_SCHED_NO_BUG, &pieces, &cut, NULL,
                               why, sizeof why);
        CHECK_MSG(rc == 0, "bs %d x %lld: %s", shapes[i].batch, (long long)shapes[i].prefix, why);
        CHECK(pieces >= shapes[i].batch);
        rc = check_uniform(shapes[i].batch, shapes[i].prefix, 9, 8, &kWgmmaPairs, VB_SCHED_NO_BUG, &pieces, &cut, NULL,
                           why, sizeof why);
        CHECK_MSG(rc == 0, "row pairs, bs %d x %lld: %s", shapes[i].batch, (long long)shapes[i].prefix, why);
    }
    /* One 200k-token request is spread over (nearly) every CTA; one 1-token request is one piece. */
    char why[256] = "";
    long pieces = 0, cut = 0;
    CHECK(check_uniform(1, 200000, 9, 8, &kWgmma, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK_MSG(pieces > 100 && cut == 1, "bs 1 x 200k: %ld pieces, %ld cut units", pieces, cut);
    CHECK(check_uniform(1, 1, 9, 8, &kWgmma, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK_MSG(pieces == 1 && cut == 0, "bs 1 x 1: %ld pieces, %ld cut units", pieces, cut);
}

/* tests/data/sanitize_paths.json's san-rows-on-m-direct (160 requests of 60 tokens, a 9-token
 * tree at 4 heads: one 36-row unit each in mla_wgmma's 64-row kernel) is there to run that
 * kernel's one-CTA walk both ways under the sanitizers: its 800 positions need spans longer
 * than one (the quads' limit), and some units must fall whole in a span (written to o
 * directly) while others are cut. */
static void test_sanitizer_direct_and_cut(void)
{
    enum { kBatch = 160 };
    const vb_sched_config rows64 = {64, 64, 3, 1, 132, 1, 0, 1};
    int64_t p[kBatch], t[kBatch];
    for (int b = 0; b < kBatch; b++)
        p[b] = 60, t[b] = 9;
    char why[256] = "";
    long pieces = 0, cut = 0;
    CHECK_MSG(vb_schedule_check(kBatch, p, t, 4, &rows64, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0,
              "%s", why);
    CHECK_MSG(kBatch * (2 + rows64.c0) > rows64.grid, "the cut's spans are longer than one position");
    CHECK_MSG(cut > 0 && cut < kBatch, "%ld of %d units cut: want some cut and some whole", cut, kBatch);
}

/* The cut's alignment of a uniform batch's units to its spans (cut_span; mla_wgmma's 64-row walk
 * on one CTA aligns): eagle64 (bs 8 x 4096, 64 draft tokens at 8 heads: 8 units of 64 rows a
 * request, 65 tiles and c0 = 3 each) takes spans of 34 positions instead of 33, so that each of
 * the 64 units is exactly two pieces cut at the same tile. Without alignment, or with one
 * request shorter, units straddle spans at drifting offsets and some are cut into three. A
 * 16-token chain (2 units a request, spans of 9) would need spans 1/9 longer, past the 1/16
 * allowed: the cut stays as it was. */
static void test_aligned_units(void)
{
    const vb_sched_config rows64 = {64, 64, 3, 1, 132, 1, 0, 1}, unaligned = {64, 64, 3, 1, 132, 1, 0, 0};
    int64_t p[8], t[8];
    for (int b = 0; b < 8; b++)
        p[b] = 4096, t[b] = 64;
    char why[256] = "";
    long pieces = 0, cut = 0, pieces_unaligned = 0;
    CHECK_MSG(vb_schedule_check(8, p, t, 8, &rows64, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0, "%s",
              why);
    CHECK_MSG(pieces == 128 && cut == 64, "eagle64, aligned: %ld pieces, %ld cut units (want 128, 64)", pieces, cut);
    CHECK(vb_schedule_check(8, p, t, 8, &unaligned, VB_SCHED_NO_BUG, &pieces_unaligned, &cut, NULL, why, sizeof why) ==
          0);
    CHECK_MSG(pieces_unaligned > 128, "eagle64, unaligned: %ld pieces", pieces_unaligned);
    p[7] = 4000; /* not uniform: no alignment */
    CHECK(vb_schedule_check(8, p, t, 8, &rows64, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK_MSG(pieces > 128, "eagle64 with one shorter request: %ld pieces", pieces);
    for (int b = 0; b < 8; b++)
        p[b] = 4096, t[b] = 16;
    CHECK(vb_schedule_check(8, p, t, 8, &rows64, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK(vb_schedule_check(8, p, t, 8, &unaligned, VB_SCHED_NO_BUG, &pieces_unaligned, &cut, NULL, why, sizeof why) ==
          0);
    CHECK_MSG(pieces == pieces_unaligned, "16-token chain: %ld pieces aligned, %ld not", pieces, pieces_unaligned);
    /* tests/data/sanitize_paths.json's san-aligned-units (3 requests of 5121 + 64 keys, the 64-node
     * EAGLE tree at 8 heads: 8 units of 85 positions a request) is there to run the aligned cut
     * under the sanitizers: spans of 16 become 17, every unit exactly 5 pieces. */
    for (int b = 0; b < 3; b++)
        p[b] = 5121, t[b] = 64;
    CHECK(vb_schedule_check(3, p, t, 8, &rows64, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK_MSG(pieces == 120 && cut == 24, "san-aligned-units, aligned: %ld pieces, %ld cut units (want 120, 24)", pieces,
              cut);
    CHECK(vb_schedule_check(3, p, t, 8, &unaligned, VB_SCHED_NO_BUG, &pieces_unaligned, &cut, NULL, why, sizeof why) ==
          0);
    CHECK_MSG(pieces_unaligned > 120, "san-aligned-units, unaligned: %ld pieces", pieces_unaligned);
}

static void test_random_batches(void)
{
    vb_prng rng = vb_prng_make(20261201, 7);
    const int heads_choice[] = {1, 8, 16, 64}, grid_choice[] = {1, 2, 7, 132, 148};
    long cases = 0, with_cut = 0, with_direct = 0, with_drop = 0, cut_kept = 0, paired = 0, quads = 0, octets = 0;
    for (int i = 0; i < 3000; i++) {
        int64_t p[64], t[64];
        const int batch = (int)vb_prng_range(&rng, 1, 64);
        for (int b = 0; b < batch; b++) {
            const int kind = (int)vb_prng_range(&rng, 0, 4);
            p[b] = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? vb_prng_range(&rng, 2, 5000) : vb_prng_range(&rng, 5001, 300000);
            const int tk = (int)vb_prng_range(&rng, 0, 5);
            t[b] = tk == 0 ? 0 : tk == 5 ? 64 : vb_prng_range(&rng, 1, 16);
        }
        if (vb_prng_range(&rng, 0, 3) == 0) /* a uniform batch: the case the cut's alignment changes */
            for (int b = 1; b < batch; b++)
                p[b] = p[0], t[b] = t[0];
        vb_sched_config cfg;
        if (vb_prng_range(&rng, 0, 1)) { /* mla_wgmma: 72 rows on 1, 2, 4 or 8 CTAs a span, 64 and 32 on 1, 4 or 8, 16 on 1;
                                            64 on one CTA aligned, as that walk cuts */
            const int groups72[] = {1, 2, 4, 8}, groups[] = {1, 4, 8}, kind = (int)vb_prng_range(&rng, 0, 3);
            const int groups64 = groups[vb_prng_range(&rng, 0, 2)];
            cfg = kind == 0   ? (vb_sched_config){64, 72, 3, 1, 132, groups72[vb_prng_range(&rng, 0, 3)], 0, 0}
                  : kind == 3 ? (vb_sched_config){64, 16, 3, 1, 132, 1, 0, 0}
                  : kind == 1 ? (vb_sched_config){64, 64, 3, 1, 132, groups64, 0, groups64 == 1} /* aligned: cut_span */
                              : (vb_sched_config){64, 32, 3, 1, 132, groups64, 0, 0};
        }
        else { /* mla_onepass: 32-key tiles, 8 to 72 rows a unit; 72-row units also on pairs and quads, 40-64 on quads */
            const int rows = 8 * (int)vb_prng_range(&rng, 1, 9), groups[] = {1, 2, 4}, some[] = {1, 4};
            cfg = (vb_sched_config){32, rows, 6, 1, 132,
                                    rows == 72 ? groups[vb_prng_range(&rng, 0, 2)] : rows >= 40 ? some[vb_prng_range(&rng, 0, 1)] : 1,
                                    0, 0};
        }
        cfg.grid = grid_choice[vb_prng_range(&rng, 0, 4)];
        if (cfg.grid < cfg.halves)
            cfg.grid = cfg.halves;
        if (vb_prng_range(&rng, 0, 7) == 0)
            cfg.min_span = (int)vb_prng_range(&rng, 2, 8);
        /* The drop threshold: an H200's, a small L2's, or none: longer than any span, with
         * drop_span · halves still an int as Schedule::next computes it (1 << 30 overflowed:
         * UBSan in CI's sanitizer build). */
        const int drop_kind = (int)vb_prng_range(&rng, 0, 3);
        cfg.drop_span = drop_kind == 1 ? (int)vb_prng_range(&rng, 1, 8) : drop_kind == 2 ? 1 << 27 : 0;
        const int heads = heads_choice[vb_prng_range(&rng, 0, 3)];
        char why[256] = "";
        long pieces = 0, cut = 0;
        long dropped = 0;
        const int rc =
            vb_schedule_check(batch, p, t, heads, &cfg, VB_SCHED_NO_BUG, &pieces, &cut, &dropped, why, sizeof why);
        CHECK_MSG(rc == 0, "case %d (batch %d, heads %d, %d keys, %d rows, grid %d, min_span %d, halves %d): %s", i,
                  batch, heads, cfg.keys_per_tile, cfg.rows, cfg.grid, cfg.min_span, cfg.halves, why);
        paired += cfg.halves == 2;
        quads += cfg.halves == 4;
        octets += cfg.halves == 8;
        cases++;
        with_cut += cut > 0;
        with_direct += pieces > cut;
        with_drop += dropped > 0;
        cut_kept += cut > 0 && dropped == 0;
    }
    /* Both kinds of unit and every group size were exercised, not only some. */
    CHECK_MSG(with_cut > cases / 4 && with_direct > cases / 4 && paired > cases / 32 && quads > cases / 64 &&
                  octets > cases / 64 && with_drop > cases / 16 && cut_kept > cases / 16,
              "%ld cases: %ld with cut units, %ld with direct ones, %ld on row pairs, %ld on quads, %ld on octets, %ld "
              "dropping partials, %ld with cut units keeping them",
              cases, with_cut, with_direct, paired, quads, octets, with_drop, cut_kept);
}

static void test_planted_bugs(void)
{
    char why[256] = "";
    long pieces = 0, cut = 0;
    /* bs 1 x 512: 9 tiles over 9 CTAs, one unit in 9 pieces. */
    CHECK(check_uniform(1, 512, 9, 8, &kWgmma, VB_SCHED_NO_BUG, &pieces, &cut, NULL, why, sizeof why) == 0);
    CHECK_MSG(cut == 1 && pieces > 1, "bs 1 x 512: %ld pieces, %ld cut", pieces, cut);
    int rc = check_uniform(1, 512, 9, 8, &kWgmma, VB_SCHED_BUG_DROP_PIECE, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && (strstr(why, "tile") || strstr(why, "pieces")), "a dropped piece: rc %d, %s", rc, why);
    rc = check_uniform(1, 512, 9, 8, &kWgmma, VB_SCHED_BUG_SHARED_SLOT, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "slot"), "a shared slot: rc %d, %s", rc, why);
    rc = check_uniform(8, 4096, 9, 8, &kWgmma, VB_SCHED_BUG_DROP_PIECE, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1, "a dropped piece at bs 8 x 4096: rc %d, %s", rc, why);
    /* The combine skipping one cut row: a row of few pieces (bs 1 x 512), of up to 32 (bs 8 x
     * 4096) and of more (bs 1 x 200k: the row spread over 4 slices' blocks). */
    const int64_t prefixes[] = {512, 4096, 200000};
    const int batches[] = {1, 8, 1};
    for (int i = 0; i < 3; i++) {
        rc = check_uniform(batches[i], prefixes[i], 9, 8, &kWgmma, VB_SCHED_BUG_COMBINE_ROW, NULL, NULL, NULL,
                           why, sizeof why);
        CHECK_MSG(rc == 1 && strstr(why, "merged"), "a dropped combine row at bs %d x %lld: rc %d, %s", batches[i],
                  (long long)prefixes[i], rc, why);
    }
    /* The combine dropping a line it did not merge: rows of up to 32 pieces (bs 8 x 23k), spread
     * rows (bs 1 x 200k) and rows of at most 4 (64 requests of 2000 tokens), each launch above
     * an H200's drop threshold; and no drop at all at bs 8 x 4096 (38 MB of KV). */
    const int64_t drop_prefixes[] = {23000, 200000, 2000};
    const int drop_batches[] = {8, 1, 64};
    for (int i = 0; i < 3; i++) {
        long dropped = 0;
        rc = check_uniform(drop_batches[i], drop_prefixes[i], 9, 8, &kWgmma, VB_SCHED_NO_BUG, NULL, NULL, &dropped, why,
                           sizeof why);
        CHECK_MSG(rc == 0 && dropped > 0, "bs %d x %lld: rc %d, %ld lines dropped, %s", drop_batches[i],
                  (long long)drop_prefixes[i], rc, dropped, why);
        rc = check_uniform(drop_batches[i], drop_prefixes[i], 9, 8, &kWgmma, VB_SCHED_BUG_DROP_LINE, NULL, NULL, NULL,
                           why, sizeof why);
        CHECK_MSG(rc == 1 && strstr(why, "drop"), "a wrong line dropped at bs %d x %lld: rc %d, %s", drop_batches[i],
                  (long long)drop_prefixes[i], rc, why);
    }
    long dropped = -1;
    rc = check_uniform(8, 4096, 9, 8, &kWgmma, VB_SCHED_BUG_DROP_LINE, NULL, NULL, &dropped, why, sizeof why);
    CHECK_MSG(rc == 0 && dropped == -1, "bs 8 x 4096 drops nothing: rc %d, %ld, %s", rc, dropped, why);
    /* The CTAs of a row pair disagreeing, and the other checks still seeing the pairs' cut. */
    rc = check_uniform(8, 4096, 9, 8, &kWgmmaPairs, VB_SCHED_BUG_TWIN, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "pair"), "a pair's CTAs disagreeing: rc %d, %s", rc, why);
    rc = check_uniform(1, 512, 9, 8, &kWgmmaPairs, VB_SCHED_BUG_SHARED_SLOT, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "slot"), "a shared slot on row pairs: rc %d, %s", rc, why);
    /* The same on mla_onepass's quads: a quad's last CTA disagreeing, a shared slot. */
    const vb_sched_config quads = {32, 72, 6, 1, 132, 4, 0, 0};
    CHECK(check_uniform(1, 512, 9, 8, &quads, VB_SCHED_NO_BUG, NULL, NULL, NULL, why, sizeof why) == 0);
    rc = check_uniform(1, 512, 9, 8, &quads, VB_SCHED_BUG_TWIN, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "quad"), "a quad's CTAs disagreeing: rc %d, %s", rc, why);
    rc = check_uniform(1, 512, 9, 8, &quads, VB_SCHED_BUG_SHARED_SLOT, NULL, NULL, NULL, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "slot"), "a shared slot on quads: rc %d, %s", rc, why);
}

static void test_refusals(void)
{
    char why[256] = "";
    vb_sched_config odd_rows = kWgmma, no_keys = kWgmma;
    odd_rows.rows = 12;
    no_keys.keys_per_tile = 48;
    CHECK(check_uniform(1, 512, 9, 8, &odd_rows, VB_SCHED_NO_BUG, NULL, NULL, NULL, why, sizeof why) == 2);
    CHECK(check_uniform(1, 512, 9, 8, &no_keys, VB_SCHED_NO_BUG, NULL, NULL, NULL, why, sizeof why) == 2);
    CHECK_MSG(strstr(why, "48") != NULL, "%s", why);
    /* More positions than the schedule's int holds. */
    int64_t p[64], t[64];
    for (int b = 0; b < 64; b++)
        p[b] = 2000000000, t[b] = 64;
    CHECK(vb_schedule_check(64, p, t, 64, &kWgmma, VB_SCHED_NO_BUG, NULL, NULL, NULL, why, sizeof why) == 2);
    CHECK_MSG(strstr(why, "positions") != NULL, "%s", why);
}

/* The combine's divisions by multiply-high: exact for every divisor up to 70000 and for the
 * powers of two up to 2^31 with their neighbours (where the rounding is tightest), and a
 * reciprocal rounded down is caught. */
static void test_fast_div(void)
{
    char why[256] = "";
    int rc = vb_fast_div_check(70000, VB_SCHED_NO_BUG, why, sizeof why);
    CHECK_MSG(rc == 0, "%s", why);
    rc = vb_fast_div_check(70000, VB_SCHED_BUG_FAST_DIV, why, sizeof why);
    CHECK_MSG(rc == 1 && strstr(why, "FastDiv"), "a reciprocal rounded down: rc %d, %s", rc, why);
}

int main(void)
{
    test_shipped_shapes();
    test_sanitizer_direct_and_cut();
    test_aligned_units();
    test_random_batches();
    test_planted_bugs();
    test_refusals();
    test_fast_div();
    TEST_MAIN_END();
}
