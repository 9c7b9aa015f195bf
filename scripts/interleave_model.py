#!/usr/bin/env python3
"""A model of mla_onepass's interleaved walk's hand-offs (run_tiles_interleaved, e8144ba): eight
warps stepping through random pieces of 1-7 16-key tiles in random interleavings, the KV copies
landing at random times between their issue and the issuing thread's cp.async wait. Every
read must see the tile it is meant for: the stage Sᵀ reads at step t and Oᵀ at t + 1, Pᵀ, the
rescale factors and the moved flags by parity, the mask by parity and the pair's exchange;
with six Sᵀ warps (72-row units) and eight (64-row units), and the Sᵀ warps' Oᵀ reads before
their pair's barrier (kOInScores, kONone) and after it (kOAfterScores).
Also runs two planted index errors (three stages; one Pᵀ buffer) and requires both caught.
usage: scripts/interleave_model.py   (exit 0: no hazard found and both plants caught)"""
import random
import sys

W, STAGES = 8, 4


def warp_program(w, pieces, variant, place, SW):
    """Yields ops: ('bar', name, members) | ('read', buf, expect, parts) | ('write', buf, val)
    | ('issue', stage, tile) | ('wait', tile)."""
    ALL = tuple(range(W))
    for pc, n in enumerate(pieces):
        base = 1000 * pc
        yield ('bar', ('begin', pc), ALL)
        # prologue: issue tiles 0 and 1
        yield ('issue', 0, base + 0)
        if n > 1:
            yield ('issue', 1, base + 1)
        for i in range(n + 1):
            par = i & 1
            if i < n:
                yield ('wait', base + i)
                yield ('write', ('mask', par), (base + i, w))
            yield ('bar', ('step', pc, i), ALL)
            if i + 2 < n:
                yield ('issue', (i + 2) % STAGES if variant != 'bad-stage' else (i + 2) % 3, base + i + 2)
            st_o = (i - 1) % STAGES
            def oread():
                yield ('read', ('kv', st_o), base + i - 1, ALL)
                yield ('read', ('pt', (i - 1) & 1 if variant != 'bad-pt' else 0), base + i - 1, tuple(range(SW)))
                yield ('read', ('corr', (i - 1) & 1), base + i - 1, tuple(range(SW)))
                yield ('read', ('flag', (i - 1) & 1), base + i - 1, tuple(range(SW)))
            if i == n:
                yield from oread()
            elif w < SW:
                if i > 0 and place != 'after':
                    yield from oread()
                yield ('read', ('kv', i % STAGES), base + i, ALL)
                yield ('write', ('xch', w), (base + i, w))
                yield ('bar', ('pair', pc, i, w // 2), (w & ~1, w | 1))
                if i > 0 and place == 'after':
                    yield from oread()
                yield ('read', ('xch', w ^ 1), base + i, (w ^ 1,))
                yield ('read', ('mask', par), base + i, ALL)
                yield ('write', ('pt', par), (base + i, w))
                yield ('write', ('corr', par), (base + i, w))
                yield ('write', ('flag', par), (base + i, w))
            else:
                if i > 0:
                    yield from oread()
                yield ('bar', ('own', pc, i), (6, 7))
        yield ('bar', ('end', pc), ALL)


def run(seed, variant=None, place='in', SW=6):
    rng = random.Random(seed)
    pieces = [rng.randint(1, 7) for _ in range(rng.randint(1, 4))]
    progs = [warp_program(w, pieces, variant, place, SW) for w in range(W)]
    mem = {}       # (buf) -> {part: value}; kv parts are warps' shares of a tile's copy
    pending = []   # (warp, stage, tile)
    waiting = {}   # barrier name -> set of arrived warps
    blocked = [None] * W
    cur = [None] * W
    done = [False] * W

    def land(p):
        w, st, tile = p
        mem.setdefault(('kv', st), {})[w] = (tile, w)
        pending.remove(p)

    def step(w):
        op = cur[w] if cur[w] is not None else next(progs[w], None)
        cur[w] = None
        if op is None:
            done[w] = True
            return
        kind = op[0]
        if kind == 'bar':
            name, members = op[1], op[2]
            assert w in members
            s = waiting.setdefault(name, set())
            s.add(w)
            blocked[w] = name
            if s == set(members):
                for m in members:
                    blocked[m] = None
                del waiting[name]
        elif kind == 'issue':
            pending.append((w, op[1], op[2]))
        elif kind == 'wait':
            for p in [p for p in pending if p[0] == w and p[2] <= op[1]]:
                land(p)
        elif kind == 'write':
            mem.setdefault(op[1], {})[op[2][1]] = op[2]
        elif kind == 'read':
            buf, expect, parts = op[1], op[2], op[3]
            got = mem.get(buf, {})
            for part in parts:
                v = got.get(part)
                if v is None or v[0] != expect:
                    raise AssertionError(f"seed {seed}: warp {w} read {buf} part {part}: {v}, expected tile {expect}")

    while not all(done):
        runnable = [w for w in range(W) if not done[w] and blocked[w] is None]
        if not runnable:
            raise AssertionError(f"seed {seed}: deadlock, waiting {waiting}")
        if pending and rng.random() < 0.3:
            land(rng.choice(pending))
        step(rng.choice(runnable))
    return len(pieces)


if __name__ == "__main__":
    for sw in (6, 8):  # 72-row units: six Sᵀ warps (3 pairs); 64-row units: eight (4 pairs)
        for place in ('in', 'after'):  # kOInScores and kONone read before the pair barrier; kOAfterScores after it
            for s in range(3000):
                run(s, None, place, sw)
            print(f"ok: {sw} Sᵀ warps, 3000 random runs, Oᵀ's reads {place == 'in' and 'before' or 'after'} the pair barrier")
    for variant in ('bad-stage', 'bad-pt'):
        try:
            for s in range(3000):
                run(s, variant)
            print(f"{variant}: NOT caught")
            sys.exit(1)
        except AssertionError as e:
            print(f"{variant}: caught ({e})")
