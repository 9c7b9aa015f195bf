#!/usr/bin/env python3
"""A model of mla_overlap's hand-offs (kernels/verify_attn_mla_onepass.cu, Onepass::
accumulate_piece and score_piece), run over random interleavings, to check the protocol
before it runs on a GPU and whenever it changes.

Agents: 8 Oᵀ warps (copy the KV, accumulate) and 2 Sᵀ warps (score, softmax), walking the
same random pieces. Named barriers count arrivals (bar.sync waits for its phase, bar.arrive
does not); a stage's mbarrier completes when every Oᵀ warp's copies for it have landed
(cp.async.mbarrier.arrive.noinc). The model asserts, for 2 and 3 KV stages:
- no deadlock, and every named barrier ends each run with no arrivals pending;
- a waiter's mbarrier is never two phases ahead (the kernel waits on parity);
- Sᵀ and Oᵀ read a stage only when it holds their tile, and a copy never lands in a stage
  that some warp has not finished reading;
- Oᵀ reads the Pᵀ of its own tile, and Sᵀ never overwrites a Pᵀ buffer that an Oᵀ warp has
  not read.
It then removes each barrier that the protocol needs and expects the model to find the
hazard (the Oᵀ warps' barrier before a copy; with 3 stages, the Pᵀ-free barrier), so that a
check that cannot fail would show. Exit 0 when all of that holds.

usage: scripts/overlap_protocol_model.py [--runs N]
"""
import argparse
import random
import sys

N_O, N_S = 8, 2


class Barrier:
    def __init__(self, need):
        self.need, self.count, self.gen = need, 0, 0


class Model:
    def __init__(self, pieces, stages, seed, without=None):
        self.pieces, self.stages, self.without = pieces, stages, without
        self.rnd = random.Random(seed)
        self.bars = {}
        self.phase = [0] * stages         # completed phases of each stage's mbarrier
        self.landed = [0] * stages        # Oᵀ warps whose copies for the open phase landed
        self.content = [None] * stages    # the tile a stage holds
        self.readers = [set() for _ in range(stages)]
        self.p_tile = {0: None, 1: None}  # the tile whose Pᵀ a parity buffer holds
        self.p_readers = {0: set(), 1: set()}
        self.inflight = []

    def copy(self, tile, st):
        if self.content[st] is not None:
            assert self.readers[st] >= set(range(N_O + N_S)), f"copy of tile {tile} over a stage still read"
        self.inflight.append((st, tile))

    def o_warp(self, a):
        waits = [0] * self.stages
        for lo, hi in self.pieces:
            yield ("sync", "walk", N_O + N_S)
            for i in range(self.stages):
                if lo + i < hi:
                    self.copy(lo + i, i)
            st = 0
            for t in range(lo, hi):
                par = (t - lo) & 1
                yield ("wait", st, waits[st])
                waits[st] += 1
                yield ("sync", f"ready{par}", N_O + N_S)
                assert self.p_tile[par] == t, f"Oᵀ of tile {t} reads the Pᵀ of tile {self.p_tile[par]}"
                assert self.content[st] == t, f"Oᵀ of tile {t} reads a stage holding tile {self.content[st]}"
                self.p_readers[par].add(a)
                self.readers[st].add(a)
                yield ("work",)
                if t + 2 < hi and self.without != "free":
                    yield ("arrive", f"free{par}", N_O + N_S)
                if t + self.stages < hi:
                    if self.without != "o_bar":
                        yield ("sync", "o_bar", N_O)
                    self.copy(t + self.stages, st)
                st = (st + 1) % self.stages
            yield ("sync", "sums", N_O + N_S)
            yield ("sync", "walk_end", N_O + N_S)

    def s_warp(self, a):
        waits = [0] * self.stages
        for lo, hi in self.pieces:
            yield ("sync", "walk", N_O + N_S)
            st = 0
            for t in range(lo, hi):
                par = (t - lo) & 1
                if t >= lo + 2 and self.without != "free":
                    yield ("sync", f"free{par}", N_O + N_S)
                yield ("wait", st, waits[st])
                waits[st] += 1
                assert self.content[st] == t, f"Sᵀ of tile {t} reads a stage holding tile {self.content[st]}"
                self.readers[st].add(N_O + a)
                yield ("work",)
                if self.p_tile[par] not in (None, t):
                    assert self.p_readers[par] >= set(range(N_O)), f"Sᵀ of tile {t} overwrites Pᵀ not yet read"
                if self.p_tile[par] != t:
                    self.p_tile[par], self.p_readers[par] = t, set()
                yield ("arrive", f"ready{par}", N_O + N_S)
                st = (st + 1) % self.stages
            yield ("arrive", "sums", N_O + N_S)
            yield ("sync", "walk_end", N_O + N_S)

    def barrier(self, name, need):
        b = self.bars.setdefault(name, Barrier(need))
        assert b.need == need, name
        return b

    def land(self):
        st, tile = self.inflight.pop(self.rnd.randrange(len(self.inflight)))
        self.landed[st] += 1
        if self.landed[st] == N_O:
            self.content[st], self.readers[st] = tile, set()
            self.landed[st] = 0
            self.phase[st] += 1

    def run(self):
        agents = [self.o_warp(i) for i in range(N_O)] + [self.s_warp(i) for i in range(N_S)]
        op = [next(g) for g in agents]
        done = [False] * len(agents)
        parked = {}

        def advance(i):
            try:
                op[i] = next(agents[i])
            except StopIteration:
                done[i] = True

        while not all(done):
            ready = []
            for i, o in enumerate(op):
                if done[i]:
                    continue
                if i in parked:
                    if self.bars[parked[i][0]].gen > parked[i][1]:
                        ready.append(i)
                elif o[0] == "wait":
                    assert self.phase[o[1]] <= o[2] + 1, "an mbarrier two phases ahead of its waiter"
                    if self.phase[o[1]] > o[2]:
                        ready.append(i)
                else:
                    ready.append(i)
            if self.inflight and (not ready or self.rnd.random() < 0.3):
                self.land()
                continue
            if not ready:
                raise AssertionError("deadlock")
            i = self.rnd.choice(ready)
            if i in parked:
                del parked[i]
                advance(i)
                continue
            if op[i][0] in ("sync", "arrive"):
                b = self.barrier(op[i][1], op[i][2])
                gen = b.gen
                b.count += 1
                if b.count == b.need:
                    b.count, b.gen = 0, b.gen + 1
                if op[i][0] == "sync" and b.gen == gen:
                    parked[i] = (op[i][1], gen)
                    continue
            advance(i)
        for name, b in self.bars.items():
            assert b.count == 0, f"barrier {name} ends with {b.count} arrivals pending"


def first_failure(stages, runs, without=None):
    for seed in range(runs):
        rnd = random.Random(seed)
        pieces = []
        for _ in range(rnd.randint(1, 4)):
            lo = rnd.randint(0, 50)
            pieces.append((lo, lo + rnd.randint(1, 7)))
        try:
            Model(pieces, stages, seed, without).run()
        except AssertionError as e:
            return f"seed {seed}, pieces {pieces}: {e}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000, help="random runs per case (default 1000)")
    args = ap.parse_args()
    ok = True
    for stages in (2, 3):
        failure = first_failure(stages, args.runs)
        print(f"{stages} stages: {'no hazard in %d runs' % args.runs if failure is None else 'FAILS: ' + failure}")
        ok &= failure is None
        needed = ["o_bar"] + (["free"] if stages > 2 else [])
        for without in needed:
            failure = first_failure(stages, args.runs, without)
            print(f"{stages} stages without {without}: {'found: ' + failure if failure else 'NOT FOUND'}")
            ok &= failure is not None
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
