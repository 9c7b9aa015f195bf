// Phase stamps: where a launch of mla_onepass or mla_onepass_ws spends the time that is not its
// tile loop (results/h200/NOTES.md, sixty-fifth entry). A diagnostic build only, `meson configure
// -Dphase_stamps=true`: thread 0 of every eleventh CTA takes %globaltimer at its start and, for
// each of its first kPieces pieces, at the piece's start, after its q copy, at the end of its tile
// loop and after its output or partial is written, and prints one "PH" line as it exits; thread 0
// of every 37th combine block prints one "CB" line (entry, after griddepcontrol.wait, exit).
// scripts/phase_stamps.py turns the lines into each phase's time. The stamps and printf change the
// code around them, so such a build's timings are not the kernels'. Off (the default) every
// member below compiles to nothing: the SASS is the same as without them.
#pragma once

#include <cstdio>

namespace vb {

#ifdef VB_PHASE_STAMPS
constexpr bool kPhaseStamps = true;
#else
constexpr bool kPhaseStamps = false;
#endif
constexpr int kStampCtaStride = 11, kStampCombineStride = 37;

__device__ __forceinline__ unsigned long long phase_ns()
{
    unsigned long long t = 0;
    if constexpr (kPhaseStamps)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One CTA's stamps, held by the thread that records them (the others' `on` is false).
struct PhaseStamps {
    enum Phase { kStart, kQCopied, kLoopEnd, kWritten, kPhases };
    static constexpr int kPieces = 3;
    unsigned long long t0 = 0, t[kPieces][kPhases] = {};
    int pieces = 0;
    bool on = false;

    __device__ void begin(bool recorder)
    {
        if constexpr (kPhaseStamps) {
            on = recorder && blockIdx.x % kStampCtaStride == 0;
            t0 = phase_ns();
        }
    }
    // kStart opens the next piece (all are counted, the first kPieces stamped); the other phases
    // stamp the piece opened last.
    __device__ void mark(Phase ph)
    {
        if constexpr (kPhaseStamps) {
            if (!on)
                return;
            if (ph == kStart)
                pieces++;
            if (pieces >= 1 && pieces <= kPieces)
                t[pieces - 1][ph] = phase_ns();
        }
    }
    // Absolute ns of every phase of the first kPieces pieces (0: not reached), and the pieces.
    __device__ void print() const
    {
        if constexpr (kPhaseStamps) {
            if (!on)
                return;
            printf("PH cta %d pieces %d t0 %llu p0 %llu %llu %llu %llu p1 %llu %llu %llu %llu p2 %llu %llu %llu %llu "
                   "end %llu\n",
                   (int)blockIdx.x, pieces, t0, t[0][0], t[0][1], t[0][2], t[0][3], t[1][0], t[1][1], t[1][2], t[1][3],
                   t[2][0], t[2][1], t[2][2], t[2][3], phase_ns());
        }
    }
};
static_assert(PhaseStamps::kPieces == 3, "print writes three pieces");

// The combine block's three stamps.
struct CombineStamps {
    unsigned long long entry = 0, waited = 0;
    __device__ void enter()
    {
        if constexpr (kPhaseStamps)
            entry = phase_ns();
    }
    __device__ void wait_done()
    {
        if constexpr (kPhaseStamps)
            waited = phase_ns();
    }
    __device__ void print() const
    {
        if constexpr (kPhaseStamps)
            if (threadIdx.x == 0 && blockIdx.x % kStampCombineStride == 0)
                printf("CB block %d entry %llu waited %llu end %llu\n", (int)blockIdx.x, entry, waited, phase_ns());
    }
};

} // namespace vb
