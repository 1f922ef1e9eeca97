/*
 * sched_mem.c - the store buffers of the adversarial schedules: global stores become visible to other SMs late and
 * out of order, as the PTX memory model allows for stores with no fence or release between them.
 *
 * Each of the SIM_SMS simulated SMs has a buffer of SB_CAP pending stores, each the bytes one store wrote inside
 * one 8-byte chunk (a 16-byte store makes two). A store that overlaps a pending one merges into it (the same bytes
 * keep their order); a store to other bytes, even of the same chunk, is an entry of its own, free to become visible
 * before or after the others (a flag and its value in one 8-byte word are two locations to the memory model; one
 * 8-byte store of both is one). A full buffer first drains an entry. A load of the same SM sees the pending bytes
 * (a thread reads its own writes, and the blocks of one SM share its L1); other SMs see memory alone. What drains an
 * entry (writes it to memory):
 *   - a spin (sim_sb_tick, after a warp's turn that ended in one: someone waits for a store to become visible):
 *     one entry of every SM, the newest or a random one, half the time each (the newest first is what turns a
 *     missing fence between "write the value" and "write the flag" into a stale read); a full buffer (SB_CAP) also
 *     drains one entry so to take another. Stores nobody waits for may stay pending until the end of the launch;
 *   - a fence of device or system scope (membar.gl/sys, fence.*.gpu/sys: __threadfence) and a release (st.release,
 *     atom/red .release or .acq_rel) drain the whole buffer of the SM first: this is stronger than the model asks
 *     (every store the SM has pending, not only those the thread has observed), so it never shows a bug that is not
 *     there, and it is cumulative as the model requires (stores another thread of the block made visible to this
 *     one through a barrier drain too);
 *   - an atomic drains its own chunk first (the same address keeps program order), then reads and writes memory;
 *   - the end of the launch drains everything (the host sees every store after a synchronous launch).
 * Loads are never reordered here (an acquire is a plain load), so a missing acquire on the reader's side does not
 * show; the README says so.
 */
#include <stdlib.h>

#include "interp_internal.h"

#define SB_CAP 64   /* pending chunks per SM */
#define SB_SLOTS 256 /* open-addressing slots (a power of two, over twice SB_CAP) */

typedef struct sb_entry {
    uint64_t chunk; /* address / 8; several entries may share one, with disjoint masks */
    uint64_t seq;   /* when it was last written: the newest drains first when the schedule picks "newest" */
    uint8_t data[8];
    uint8_t mask;   /* the bytes written */
} sb_entry;

struct sim_storebuf {
    sb_entry e[SB_CAP];
    uint32_t n;
    int16_t slot[SB_SLOTS]; /* index into e, -1: empty */
    uint64_t seq;
};

static inline uint32_t home(uint64_t chunk) { return (uint32_t)((chunk * 0x9E3779B97F4A7C15ull) >> 56); }

struct sim_storebuf *sim_sb_new(void)
{
    struct sim_storebuf *b = calloc(1, sizeof *b);
    if (b)
        memset(b->slot, 0xff, sizeof b->slot);
    return b;
}

void sim_sb_free(struct sim_storebuf *b) { free(b); }

/* The slot of the entry e[k] (present). */
static uint32_t slot_of(const struct sim_storebuf *b, uint32_t k)
{
    uint32_t i = home(b->e[k].chunk);
    while (b->slot[i] != (int16_t)k)
        i = (i + 1) & (SB_SLOTS - 1);
    return i;
}

/* The entries of chunk: up to 8 (their masks are disjoint), in slots[]; returns how many. */
static unsigned find_all(const struct sim_storebuf *b, uint64_t chunk, uint32_t slots[8])
{
    unsigned n = 0;
    for (uint32_t i = home(chunk); b->slot[i] >= 0; i = (i + 1) & (SB_SLOTS - 1))
        if (b->e[b->slot[i]].chunk == chunk && n < 8)
            slots[n++] = i;
    return n;
}

/* Writes the entry in slot i to memory and removes it (backward-shift deletion keeps the probe chains whole).
   Returns nonzero when memory changed. */
static int drain_slot(struct sim_storebuf *b, uint32_t i)
{
    const uint32_t k = (uint32_t)b->slot[i];
    sb_entry *e = &b->e[k];
    uint8_t *p = (uint8_t *)(uintptr_t)(e->chunk << 3);
    int changed = 0;
    for (unsigned j = 0; j < 8; j++)
        if (e->mask >> j & 1) {
            changed |= p[j] != e->data[j];
            p[j] = e->data[j];
        }
    for (uint32_t j = (i + 1) & (SB_SLOTS - 1);; j = (j + 1) & (SB_SLOTS - 1)) {
        if (b->slot[j] < 0)
            break;
        uint32_t h = home(b->e[b->slot[j]].chunk);
        /* slot j's entry may move to i when its home is not in (i, j] (cyclically) */
        int between = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!between) {
            b->slot[i] = b->slot[j];
            i = j;
        }
    }
    b->slot[i] = -1;
    /* the last entry takes the freed place in e[] */
    const uint32_t last = b->n - 1;
    if (k != last) {
        b->slot[slot_of(b, last)] = (int16_t)k;
        b->e[k] = b->e[last];
    }
    b->n--;
    return changed;
}

/* Drains one entry the schedule picks: the newest (half the time) or any. */
static int drain_one(ctx *c, struct sim_storebuf *b)
{
    uint32_t k = 0;
    if (sim_rand(c) & 1) {
        for (uint32_t j = 1; j < b->n; j++)
            if (b->e[j].seq > b->e[k].seq)
                k = j;
    } else {
        k = (uint32_t)(sim_rand(c) % b->n);
    }
    return drain_slot(b, slot_of(b, k));
}

int sim_sb_store(ctx *c, uint64_t addr, const uint8_t *bytes, unsigned n)
{
    struct sim_storebuf *b = c->sb[c->sm];
    int changed = 0;
    while (n > 0) {
        const uint64_t chunk = addr >> 3;
        const unsigned at = (unsigned)(addr & 7), take = 8 - at < n ? 8 - at : n;
        const uint8_t mask = (uint8_t)(((1u << take) - 1) << at);
        /* the pending stores it overlaps: it merges into one, the others (older, to bytes it overwrites in part)
           become visible first */
        sb_entry *e = NULL;
        for (;;) {
            uint32_t slots[8];
            const unsigned found = find_all(b, chunk, slots);
            unsigned overlaps = 0, last = 0;
            for (unsigned j = 0; j < found; j++)
                if (b->e[b->slot[slots[j]]].mask & mask) {
                    if (!overlaps)
                        e = &b->e[b->slot[slots[j]]];
                    overlaps++;
                    last = slots[j];
                }
            if (overlaps < 2)
                break;
            changed |= drain_slot(b, last); /* moves entries: look again */
            e = NULL;
        }
        if (!e) {
            if (b->n == SB_CAP)
                changed |= drain_one(c, b);
            uint32_t i = home(chunk);
            while (b->slot[i] >= 0)
                i = (i + 1) & (SB_SLOTS - 1);
            e = &b->e[b->n];
            e->chunk = chunk;
            e->mask = 0;
            b->slot[i] = (int16_t)b->n++;
        }
        memcpy(e->data + at, bytes, take);
        e->mask |= mask;
        e->seq = ++b->seq;
        addr += take, bytes += take, n -= take;
    }
    return changed;
}

void sim_sb_forward(const ctx *c, uint64_t addr, uint8_t *bytes, unsigned n)
{
    const struct sim_storebuf *b = c->sb[c->sm];
    if (!b->n)
        return;
    while (n > 0) {
        const unsigned at = (unsigned)(addr & 7), take = 8 - at < n ? 8 - at : n;
        uint32_t slots[8];
        const unsigned found = find_all(b, addr >> 3, slots);
        for (unsigned k = 0; k < found; k++) {
            const sb_entry *e = &b->e[b->slot[slots[k]]];
            for (unsigned j = 0; j < take; j++)
                if (e->mask >> (at + j) & 1)
                    bytes[j] = e->data[at + j];
        }
        addr += take, bytes += take, n -= take;
    }
}

int sim_sb_flush_range(ctx *c, uint64_t addr, unsigned n)
{
    struct sim_storebuf *b = c->sb[c->sm];
    int changed = 0;
    for (uint64_t chunk = addr >> 3; b->n && chunk <= (addr + n - 1) >> 3; chunk++) {
        uint32_t slots[8];
        while (find_all(b, chunk, slots)) /* a drain shifts slots: look again after each */
            changed |= drain_slot(b, slots[0]);
    }
    return changed;
}

int sim_sb_drain_sm(ctx *c, uint32_t sm)
{
    struct sim_storebuf *b = c->sb[sm];
    int changed = 0;
    while (b && b->n)
        changed |= drain_one(c, b);
    return changed;
}

int sim_sb_drain_all(ctx *c)
{
    int changed = 0;
    for (uint32_t sm = 0; sm < SIM_SMS; sm++)
        changed |= sim_sb_drain_sm(c, sm);
    return changed;
}

int sim_sb_tick(ctx *c, int spun)
{
    int changed = 0;
    for (uint32_t sm = 0; spun && sm < SIM_SMS; sm++)
        if (c->sb[sm]->n)
            changed |= drain_one(c, c->sb[sm]);
    return changed;
}

unsigned sim_sb_count(const ctx *c) { return c->sb[c->sm]->n; }

size_t sim_sb_pending(const ctx *c)
{
    size_t n = 0;
    for (uint32_t sm = 0; sm < SIM_SMS; sm++)
        n += c->sb[sm] ? c->sb[sm]->n : 0;
    return n;
}
