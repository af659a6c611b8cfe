/* maskcache: masks kept per grammar state (see maskcache.h). */
#include "maskcache.h"

#include <stdlib.h>
#include <string.h>

/* An entry's header word: its form in the top two bits, the payload's
 * length in uint32 words below. */
enum { FORM_SET, FORM_CLEAR, FORM_WORDS, FORM_SPARSE };
#define FORM_SHIFT 30
#define LEN_MASK ((1u << FORM_SHIFT) - 1)

/* at[s]: a state's visits until its mask is kept, then its entry. */
enum { AT_NEW, AT_ONCE, AT_AGAIN, AT_ENTRY };

/* The bits of a mask's last word that are ids (bits past nbits stay zero,
 * bitset.h); all of them when nbits is a multiple of 64. */
static uint64_t last_word_ids(size_t nbits)
{
    return nbits & 63 ? ((uint64_t)1 << (nbits & 63)) - 1 : ~(uint64_t)0;
}

void gr_maskcache_init(gr_maskcache_t *c, const gr_gram_t *g, size_t nbits, size_t max_bytes)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    c->epoch = g->epoch;
    c->nbits = nbits;
    c->max_bytes = max_bytes ? max_bytes : GR_MASKCACHE_DEFAULT_BYTES;
}

/*
 * The entries' array: address space for the whole bound, mapped at a
 * cache's first entry, so that it never moves (grown by realloc, a cache
 * of tens of megabytes was copied within one mask: 17 ms on
 * Github_ultra---o56134).  A page costs when first written, and a driver
 * frees one schema's cache to make the next one's: tb_unreserve keeps the
 * array, with its pages, for the next cache of the same bound (mapped
 * afresh each time, a mask kept as its words faulted its pages in again:
 * TBM p75 and p90 about a third higher on MaskBench).
 */
static size_t words_bytes(const gr_maskcache_t *c)
{
    return c->max_bytes / sizeof(uint32_t) * sizeof(uint32_t);
}

void gr_maskcache_free(gr_maskcache_t *c)
{
    free(c->at.data);
    tb_unreserve(c->words, words_bytes(c));
    memset(c, 0, sizeof *c);
}

size_t gr_maskcache_bytes(const gr_maskcache_t *c)
{
    return (c->at.cap + c->words_peak) * sizeof(uint32_t);
}

static void flush(gr_maskcache_t *c)
{
    if (c->nwords)
        c->stats.flushes++;
    if (c->at.len) /* none yet: no array to clear */
        memset(c->at.data, 0, c->at.len * sizeof *c->at.data);
    c->nwords = 0;
}

/* A reset grammar has new states under the old ids. */
static void check_epoch(gr_maskcache_t *c)
{
    if (c->epoch != c->g->epoch) {
        flush(c);
        c->epoch = c->g->epoch;
    }
}

/* The base for masks of the cache's size (another size: none); entries
 * kept against another base than it mean nothing. */
static const tb_bitset_t *check_base(gr_maskcache_t *c, const tb_bitset_t *base)
{
    if (!base || base->nbits != c->nbits)
        return NULL;
    if (base != c->base) {
        flush(c);
        c->base = base;
    }
    return base;
}

/* The bitmap words of a sparse entry: one bit a mask word. */
static size_t sparse_map_words(size_t nw)
{
    return (nw + 63) / 64;
}

/* A sparse entry's mask: its reference (zeros, or the base), then the
 * words its bitmap names. */
static void sparse_get(const gr_maskcache_t *c, const uint32_t *p, tb_bitset_t *mask)
{
    size_t nw = tb_bitset_words(mask->nbits), nmap = sparse_map_words(nw);
    const uint64_t *map = (const uint64_t *)(p + 1), *word = map + nmap;
    if (p[0])
        memcpy(mask->words, c->base->words, nw * sizeof *mask->words);
    else
        tb_bitset_clear_all(mask);
    for (size_t i = 0; i < nmap; i++)
        for (uint64_t bits = map[i]; bits; bits &= bits - 1)
            mask->words[i * 64 + (size_t)__builtin_ctzll(bits)] = *word++;
}

int gr_maskcache_get(gr_maskcache_t *c, uint32_t s, tb_bitset_t *mask, const tb_bitset_t *base)
{
    check_epoch(c);
    check_base(c, base);
    while (c->at.len <= s)
        if (tb_vec_push(&c->at, AT_NEW))
            break; /* no memory: a miss, as if never seen */
    if (s >= c->at.len || c->at.data[s] < AT_ENTRY || mask->nbits != c->nbits) {
        if (s < c->at.len && c->at.data[s] < AT_AGAIN)
            c->at.data[s]++; /* AT_NEW -> AT_ONCE -> AT_AGAIN */
        c->stats.misses++;
        return 0;
    }
    const uint32_t *e = c->words + c->at.data[s] - AT_ENTRY;
    uint32_t form = e[0] >> FORM_SHIFT, n = e[0] & LEN_MASK;
    const uint32_t *p = e + 1;
    size_t nw = tb_bitset_words(mask->nbits);
    if (form == FORM_WORDS) {
        memcpy(mask->words, p, nw * sizeof *mask->words);
    } else if (form == FORM_SPARSE) {
        sparse_get(c, p, mask);
    } else if (form == FORM_SET) {
        tb_bitset_clear_all(mask);
        for (uint32_t i = 0; i < n; i++)
            tb_bitset_set(mask, p[i]);
    } else {
        memset(mask->words, 0xff, nw * sizeof *mask->words);
        if (nw)
            mask->words[nw - 1] = last_word_ids(mask->nbits);
        for (uint32_t i = 0; i < n; i++)
            tb_bitset_clear(mask, p[i]);
    }
    c->stats.hits++;
    return 1;
}

/* Writes to out the ids whose bit in mask equals `bit`, stopping past
 * max of them: how many (max + 1: too many for this form, *words_read
 * then the words read).  One pass, empty words skipped, so a sparse mask
 * costs about a read of its words. */
static size_t collect(uint32_t *out, const tb_bitset_t *mask, int bit, size_t max,
                      size_t *words_read)
{
    size_t nw = tb_bitset_words(mask->nbits), k = 0;
    uint64_t flip = bit ? 0 : ~(uint64_t)0;
    for (size_t w = 0; w < nw; w++) {
        uint64_t x = mask->words[w] ^ flip;
        if (!bit && w == nw - 1)
            x &= last_word_ids(mask->nbits);
        for (; x; x &= x - 1) {
            if (k == max) {
                *words_read = w + 1;
                return max + 1;
            }
            out[k++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(x));
        }
    }
    return k;
}

/* Whether mask is nearer base than zeros, by 16 of its words. */
static int nearer_base(const tb_bitset_t *mask, const tb_bitset_t *base)
{
    size_t nw = tb_bitset_words(mask->nbits);
    int to_zero = 0, to_base = 0;
    for (size_t i = 0; i < 16; i++) {
        size_t w = i * nw / 16;
        to_zero += mask->words[w] != 0;
        to_base += mask->words[w] != base->words[w];
    }
    return to_base < to_zero;
}

/* Bit w - from of the words [from, end) of m that differ from ref's (NULL:
 * from zero), without a branch on the words: which ones differ is data,
 * and mispredicted (about 350 times a mask) it cost more than a copy of
 * every word. */
static uint64_t differing(const uint64_t *m, const uint64_t *ref, size_t from, size_t end)
{
    uint64_t bits = 0;
    if (ref)
        for (size_t w = from; w < end; w++)
            bits |= (uint64_t)(m[w] != ref[w]) << (w - from);
    else
        for (size_t w = from; w < end; w++)
            bits |= (uint64_t)(m[w] != 0) << (w - from);
    return bits;
}

/*
 * Writes at p (p + 1 8-byte aligned) mask's sparse entry: the reference
 * (0: zeros, 1: base), a bitmap of the words that differ from it, and
 * those words.  Its length in uint32, or 0 where more than max words
 * differ.
 */
static size_t sparse_put(uint32_t *p, const tb_bitset_t *mask, const tb_bitset_t *base,
                         size_t max)
{
    size_t nw = tb_bitset_words(mask->nbits), nmap = sparse_map_words(nw), k = 0;
    const uint64_t *m = mask->words;
    uint64_t *map = (uint64_t *)(p + 1), *word = map + nmap;
    p[0] = base != NULL;
    for (size_t i = 0; i < nmap; i++)
        map[i] = differing(m, base ? base->words : NULL, i * 64,
                           i * 64 + 64 < nw ? i * 64 + 64 : nw);
    for (size_t i = 0; i < nmap; i++)
        for (uint64_t bits = map[i]; bits; bits &= bits - 1) {
            if (k == max)
                return 0;
            word[k++] = m[i * 64 + (size_t)__builtin_ctzll(bits)];
        }
    return 1 + 2 * (nmap + k);
}

int gr_maskcache_put(gr_maskcache_t *c, uint32_t s, const tb_bitset_t *mask,
                     const tb_bitset_t *base, int now)
{
    check_epoch(c);
    base = check_base(c, base);
    if (mask->nbits != c->nbits || s >= c->at.len || c->at.data[s] >= AT_ENTRY ||
        (c->at.data[s] != AT_AGAIN && !now))
        return 0; /* a state met once is not kept (yet) */
    /* Room for the largest form first, so that the ids go straight in. */
    size_t nw32 = 2 * tb_bitset_words(mask->nbits);
    if ((c->at.len + c->nwords + 2 + nw32) * sizeof(uint32_t) > c->max_bytes) {
        flush(c);
        if ((c->at.len + 1 + nw32) * sizeof(uint32_t) > c->max_bytes)
            return 0; /* larger than the whole cache: not kept */
    }
    /* the bound holds every entry with the index (above) */
    if (!c->words && !(c->words = tb_reserve(words_bytes(c))))
        return -1;
    uint32_t *e = c->words + c->nwords, form = FORM_WORDS;
    size_t n = nw32, nw = nw32 / 2;
    /* Past a quarter of the bound, the smallest form: ids where few. */
    if (c->nwords * sizeof(uint32_t) >= c->max_bytes / 4) {
        size_t read;
        form = FORM_SET, n = collect(e + 1, mask, 1, nw32 - 1, &read);
        /* Too many ids set: the clear ones are written only if, at the
         * rate the set ones came, they could be few enough (twice the
         * room, for a mask denser at its end).  A mask of a few thousand
         * ids of each kind was written twice, id by id, before its words
         * were taken. */
        if (n == nw32 && n * (nw32 / 2) / read + 2 * (nw32 - 1) >= mask->nbits)
            form = FORM_CLEAR, n = collect(e + 1, mask, 0, nw32 - 1, &read);
        if (n == nw32)
            form = FORM_WORDS;
    }
    /*
     * Else the words that differ from zeros or from the base, where at
     * most three in four do.  The array is tens of megabytes, so a mask
     * kept whole is 16 KB (Llama 3's) written to memory no cache holds
     * (3.5 us on a 2-core Xeon guest, and as long again to read back on a
     * hit), which also pushes the trie and the slices' masks out of the
     * caches; listing ids costs more still (about 10 instructions an id).
     * Most masks outside strings allow a few hundred tokens, and inside a
     * string they are the slices' union and a few tokens that close it.
     */
    size_t nmap = sparse_map_words(nw), room = 3 * nw / 4;
    if (form == FORM_WORDS && 2 + nmap + room < nw) {
        size_t pad = c->nwords & 1; /* the bitmap, 2 after the header, on 8 bytes */
        const tb_bitset_t *ref = base && nearer_base(mask, base) ? base : NULL;
        size_t k = sparse_put(e + 1 + pad, mask, ref, room);
        if (k) {
            e += pad;
            c->nwords += pad;
            form = FORM_SPARSE, n = k;
            c->stats.against_base += ref != NULL;
        }
    }
    if (form == FORM_WORDS)
        memcpy(e + 1, mask->words, n * sizeof *e);
    e[0] = form << FORM_SHIFT | (uint32_t)n;
    c->at.data[s] = (uint32_t)c->nwords + AT_ENTRY;
    c->nwords += 1 + n;
    if (c->nwords > c->words_peak)
        c->words_peak = c->nwords;
    return 0;
}
