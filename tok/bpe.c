/*
 * bpe: the BPE merge engine every BPE tokenizer in tok/ runs (Hugging Face
 * BPE, SentencePiece BPE and tiktoken all reduce to it).
 *
 * A word becomes initial symbols (bytes for byte-level models, characters
 * otherwise, with byte fallback and unknown-token handling as Hugging Face's
 * BPE model does it), then the adjacent pair with the lowest merge rank is
 * merged, leftmost first on ties, until no pair has a merge.
 *
 * Speed: a word cache (word bytes -> ids) skips repeated words; short words
 * merge by rescanning a small array; long words (runs of one letter, the
 * whole lines that SentencePiece-style models see) use a heap over a linked
 * list of symbols, so a word of n symbols costs O(n log n), and are first
 * cut before spaces that no merge can cross, which is exact and lets the
 * pieces hit the cache.  Merge lookups go through a small pair cache in
 * the state, then a filter of the pairs that merge, before the big table;
 * a model ranked by bytes (tok_rank_t: tiktoken, SentencePiece BPE GGUF)
 * looks the two parts' joined bytes up in the vocabulary's index instead,
 * after the same pair cache.  The loaders fill the merge table
 * (tok_merges_t) once; tok_bpe_prepare derives the other lookup tables
 * (t->bpe.tables), which encoding only reads.  The word cache and the
 * scratch are the caller's, in its tok_state, and are reused, so the steady state does not
 * allocate; a word of n bytes needs about 40n bytes of scratch (the heap
 * holds at most 3n entries).
 */
#include <stdlib.h>
#include <string.h>

#include "../base/quad.h"
#include "../base/utf8.h"
#include "tok_internal.h"
#include "wordcache.h"

/* Words up to this many symbols merge by rescanning; longer ones use the
 * heap.  Rescanning is O(n^2) but has a tiny constant for typical words. */
#define SCAN_MAX_SYMBOLS 48
_Static_assert(SCAN_MAX_SYMBOLS <= 64, "lowest_rank keeps a bit for each pair");
#define DEAD UINT32_MAX
/* A pair's merge as one word, rank << 32 | merged id (the merge table's
 * value), its rank in the high half; no merge is all ones, its rank
 * above every merge's. */
#define NO_MERGE UINT64_MAX
#define NO_RANK UINT32_MAX

/* One candidate merge in the heap; stale ones are dropped when popped. */
typedef struct {
    uint64_t key;       /* rank << 32 | position of the left symbol */
    uint32_t left, right, merged;
} heap_ent_t;

typedef tok_merge_slot_t merge_slot_t;

/* The pair cache (a state's): the merge table's answers for the pairs met
 * lately, direct-mapped: only pairs the filter below let through (those
 * that merge, and its few false positives, val UINT64_MAX), since the
 * filter answers the others from L2 itself; caching them too, two thirds
 * of a first pass's pairs, crowded out the pairs that merge.  The table of a
 * large vocabulary (8 MB for Llama 3) misses the CPU caches on most
 * lookups, while the words of a text share most of their pairs (the bytes
 * of the same characters, the same syllables), so a small cache answers
 * most of them.  Small: with the filter below it should stay in the L2
 * cache (512 KB a core on the EPYC guest) beside the word cache's lines.
 * At 256 KB, with a 512 KB filter, a first pass over Llama 3 missed a
 * 512 KB L2 on 406k reads (callgrind), at 32 KB with a 256 KB filter on
 * 334k. */
#define PAIR_CACHE_BITS 11
/* A model ranked by bytes has no filter: its pair cache holds every pair
 * met, and a pair it misses is looked up by its joined bytes in the
 * vocabulary's index, so it keeps the larger cache it had (256 KB). */
#define PAIR_CACHE_BITS_BY_BYTES 14

/* The char cache (a state's): the ids of the multi-byte characters met
 * lately, direct-mapped by code point, for models whose initial symbols
 * are characters.  The chars index hashes a character's bytes and
 * compares them with the vocabulary's (about 110 instructions), and
 * Russian or Chinese text gives a new word a dozen such characters, most
 * met before in other words.  A slot is cp << 32 | id (id -1: unknown);
 * 0 is empty, as no multi-byte character is U+0000. */
#define CHAR_CACHE_BITS 12

/* A tok_state's part (st->bpe): what merging one word writes. */
typedef struct {
    const bpe_tables_t *tab; /* the tables the cached ids were merged with */
    tok_wordcache_t words;      /* word bytes -> ids */
    merge_slot_t *pairs;        /* pair cache, 1 << pair_bits slots */
    unsigned pair_bits;         /* PAIR_CACHE_BITS, or _BY_BYTES */
    uint8_t *join;              /* ranked by bytes: a pair's joined bytes,
                                   room for tab->join_max */
    uint64_t *chars;            /* char cache, 1 << CHAR_CACHE_BITS slots */
    /* scratch reused across words */
    TB_VEC(uint32_t) sym;       /* symbol ids (DEAD: merged into the left) */
    /* the merge of the pair of sym[i] and the next live symbol: its rank
     * (NO_RANK: none, or sym[i] dead) and the id it makes; apart, so that
     * merge_scan reads ranks four at a time */
    TB_VEC(uint32_t) rank, made;
    TB_VEC(int32_t) prev, next; /* the live symbols, a list over sym */
    TB_VEC(heap_ent_t) heap;
} bpe_state_t;

static void free_tables(bpe_tables_t *tb)
{
    if (!tb)
        return;
    if (!tb->borrowed) {
        free(tb->byte_pairs);
        free(tb->premerge);
        free(tb->partners);
        free(tb->filter);
        tok_index_free(&tb->chars);
    }
    free(tb);
}

void tok_bpe_free(tok_bpe_t *m)
{
    if (!m->merges_borrowed)
        free(m->merges.slots);
    memset(&m->merges, 0, sizeof m->merges);
    free_tables(m->tables);
    m->tables = NULL;
}

void tok_bpe_state_free(void *bpe)
{
    bpe_state_t *st = bpe;
    if (!st)
        return;
    tok_wc_free(&st->words);
    free(st->pairs);
    free(st->join);
    free(st->chars);
    free(st->sym.data);
    free(st->rank.data);
    free(st->made.data);
    free(st->prev.data);
    free(st->next.data);
    free(st->heap.data);
    free(st);
}

/* The slot where key's probe starts in a table of `size` slots (a
 * multiple of 4): the first of a cache line's four, chosen by the hash
 * scaled to the number of lines (its high bits, which the mix spreads
 * well), so that a size needs not be a power of two.  Probes starting at
 * a line's start find a key, or the empty slot that ends a miss, in the
 * line they start in more often than probes starting anywhere. */
static inline size_t first_slot(uint64_t key, size_t size)
{
    return (size_t)(((unsigned __int128)tb_hash_u64(key) * (size / 4)) >> 64) * 4;
}

/* Room for `expected` merges at most 2/3 full, sized to them rather than
 * to a power of two, which would leave Llama 3's 280k merges in 8 MB, not
 * 6.7.  Not fuller: a pair with no merge (half the lookups of an encode)
 * reads about 5 slots at 2/3 full, 8.5 at 3/4.  An empty table gets the
 * new slots; a full one moves its merges over. */
static int merges_reserve(tok_merges_t *m, size_t expected)
{
    size_t size = (expected + expected / 2 + 16) & ~(size_t)3; /* whole lines */
    if (m->slots && size <= m->size)
        return 0;
    merge_slot_t *slots = tb_alloc_big(size * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, size * sizeof *slots);
    for (size_t i = 0; m->slots && i < m->size; i++) {
        if (m->slots[i].key == UINT64_MAX)
            continue;
        size_t j = first_slot(m->slots[i].key, size);
        while (slots[j].key != UINT64_MAX)
            j = j + 1 < size ? j + 1 : 0;
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->size = size;
    return 0;
}

int tok_bpe_add_merge(tok_bpe_t *m, uint32_t left, uint32_t right,
                      uint32_t rank, uint32_t merged)
{
    tok_merges_t *mt = &m->merges;
    uint64_t key = (uint64_t)left << 32 | right;
    if (key == UINT64_MAX)
        return -1; /* the empty marker: no vocabulary has such ids */
    if ((mt->count + 1) * 3 > (mt->slots ? mt->size : 0) * 2 &&
        merges_reserve(mt, mt->count < 512 ? 1024 : 2 * mt->count))
        return -1;
    size_t i = first_slot(key, mt->size);
    while (mt->slots[i].key != UINT64_MAX) {
        /* a pair listed twice keeps its lowest (first) rank, as the
         * reference loaders do */
        if (mt->slots[i].key == key)
            return 0;
        i = i + 1 < mt->size ? i + 1 : 0;
    }
    mt->slots[i] = (merge_slot_t){key, (uint64_t)rank << 32 | merged};
    mt->count++;
    return 0;
}

int tok_bpe_reserve_merges(tok_bpe_t *m, size_t n)
{
    return merges_reserve(&m->merges, m->merges.count + n);
}

int tok_bpe_add_merges(tok_bpe_t *m, const tok_merge_t *merges, size_t n)
{
    enum { AHEAD = 16 };
    if (tok_bpe_reserve_merges(m, n))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n) {
            uint64_t key = (uint64_t)merges[i + AHEAD].left << 32 | merges[i + AHEAD].right;
            __builtin_prefetch(&m->merges.slots[first_slot(key, m->merges.size)]);
        }
        if (tok_bpe_add_merge(m, merges[i].left, merges[i].right, merges[i].rank,
                              merges[i].merged))
            return -1;
    }
    return 0;
}

/* The merge of pair (l, r): rank << 32 | merged id, or NO_MERGE. */
static inline uint64_t slots_get(const merge_slot_t *mt, size_t size, uint32_t l,
                                 uint32_t r)
{
    uint64_t key = (uint64_t)l << 32 | r;
    size_t i = first_slot(key, size);
    for (;;) {
        const merge_slot_t *s = &mt[i];
        if (s->key == key)
            return s->val;
        if (s->key == UINT64_MAX)
            return NO_MERGE;
        i = i + 1 < size ? i + 1 : 0;
    }
}

/* ---- the pair filter -------------------------------------------------- */

/* A Bloom filter over the merge table's pairs (bpe_tables_t.filter): each
 * pair sets two bits of one 64-bit word, both chosen by the pair's hash,
 * in a power of two of words giving at least 4 bits a merge.  Most pairs
 * a new word looks up that the state's pair cache has not seen have no
 * merge (Llama 3, the first megabyte of multi: 106k of 128k), and the
 * table answers those slowest: their probe runs on to an empty slot, often
 * into the next cache line, of a table (6.7 MB) that misses the CPU
 * caches.  The filter (256 KB) turns away all but a few per cent of them
 * and lets the pairs that merge through. */
#define FILTER_MIN_SHIFT 6

static inline uint64_t filter_mask(uint64_t h)
{
    return 1ull << (h & 63) | 1ull << (h >> 6 & 63);
}

static inline int filter_may_have(const bpe_tables_t *tb, uint64_t key)
{
    uint64_t h = tb_hash_u64(key), m = filter_mask(h);
    return (tb->filter[h >> (64 - tb->filter_shift)] & m) == m;
}

/* Needs tb->mt. */
static int build_filter(bpe_tables_t *tb, size_t merges)
{
    unsigned shift = FILTER_MIN_SHIFT;
    while (((size_t)64 << shift) < 4 * merges)
        shift++;
    if (!(tb->filter = calloc((size_t)1 << shift, sizeof *tb->filter)))
        return -1;
    tb->filter_shift = shift;
    for (size_t i = 0; i < tb->mt_size; i++) {
        if (tb->mt[i].key == UINT64_MAX)
            continue;
        uint64_t h = tb_hash_u64(tb->mt[i].key);
        tb->filter[h >> (64 - shift)] |= filter_mask(h);
    }
    return 0;
}

/* A score as a rank: higher scores give lower ranks, equal scores equal
 * ranks (-0 is 0), and no score gives the rank of NO_MERGE (all ones is
 * a NaN's order). */
static inline uint32_t score_rank(float score)
{
    uint32_t b;
    if (score == 0)
        score = 0;
    memcpy(&b, &score, sizeof b);
    uint32_t up = b >> 31 ? ~b : b | 0x80000000u; /* ascending with score */
    return ~up == UINT32_MAX ? UINT32_MAX - 1 : ~up;
}

/* The merge of (l, r) ranked by bytes: the token spelled by l's bytes then
 * r's, when all three are ordinary tokens, at its id (tiktoken) or its
 * score.  The lowest id of those bytes is the one the index keeps, as
 * tiktoken's file has one token for given bytes (its loader checks) and
 * a SentencePiece model one piece.  join has room for tb->join_max.  Not
 * inlined into pair_merge, which the merge loops inline at every call. */
static __attribute__((noinline)) uint64_t merge_by_bytes(const bpe_tables_t *tb, uint8_t *join, uint32_t l,
                               uint32_t r)
{
    const tok_vocab_t *v = tb->vocab;
    size_t ln, rn;
    const uint8_t *ls = tok_vocab_token(v, l, &ln), *rs = tok_vocab_token(v, r, &rn);
    if (ln + rn > tb->join_max || v->kind[l] != TOK_NORMAL || v->kind[r] != TOK_NORMAL)
        return NO_MERGE;
    memcpy(join, ls, ln);
    memcpy(join + ln, rs, rn);
    int32_t id = tok_index_get(&v->by_bytes, v, join, ln + rn);
    if (id < 0 || v->kind[id] != TOK_NORMAL)
        return NO_MERGE;
    uint32_t rank = tb->rank_by == TOK_RANK_ID ? (uint32_t)id : score_rank(v->score[id]);
    return (uint64_t)rank << 32 | (uint32_t)id;
}

/* Whether the filter tells that pair key has no merge (never for a
 * model ranked by bytes, which has no filter). */
static inline int filtered_out(const bpe_tables_t *tb, uint64_t key)
{
    return tb->rank_by == TOK_RANK_MERGES && !filter_may_have(tb, key);
}

/* The merge of a pair the filter let through: by its joined bytes, or
 * from the merge table. */
static inline uint64_t merge_past_filter(const bpe_tables_t *tb, uint8_t *join, uint32_t l,
                                         uint32_t r)
{
    return tb->rank_by != TOK_RANK_MERGES ? merge_by_bytes(tb, join, l, r)
                                          : slots_get(tb->mt, tb->mt_size, l, r);
}

static inline uint64_t merge_of(const bpe_tables_t *tb, uint8_t *join, uint32_t l,
                                uint32_t r)
{
    return filtered_out(tb, (uint64_t)l << 32 | r) ? NO_MERGE
                                                   : merge_past_filter(tb, join, l, r);
}

int tok_bpe_merge_get(const tok_merges_t *m, uint32_t left, uint32_t right,
                      uint32_t *rank, uint32_t *merged)
{
    uint64_t v = m->slots ? slots_get(m->slots, m->size, left, right) : NO_MERGE;
    *rank = (uint32_t)(v >> 32);
    *merged = (uint32_t)v;
    return v != NO_MERGE;
}

static inline size_t pair_slot(const bpe_state_t *st, uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull) >> (64 - st->pair_bits);
}

/* Starts loading what a lookup of pair (l, r) reads first, its slot in the
 * pair cache and its word of the filter (the table is read for few), so
 * that lookups can wait on memory together. */
static inline void pair_prefetch(const bpe_state_t *st, uint32_t l, uint32_t r)
{
    uint64_t key = (uint64_t)l << 32 | r;
    __builtin_prefetch(&st->pairs[pair_slot(st, key)]);
    if (st->tab->filter)
        __builtin_prefetch(&st->tab->filter[tb_hash_u64(key) >> (64 - st->tab->filter_shift)]);
}

/* merge_of through the state's pair cache, which holds the answers the
 * filter could not give (all of a model ranked by bytes, which has none).
 * Inlined by force: since merge_by_bytes came in, gcc made it a call, 8M
 * instructions more on Llama 3's first pass. */
static inline __attribute__((always_inline)) uint64_t
pair_merge(bpe_state_t *st, uint32_t l, uint32_t r)
{
    uint64_t key = (uint64_t)l << 32 | r;
    merge_slot_t *c = &st->pairs[pair_slot(st, key)];
    if (c->key == key)
        return c->val;
    if (filtered_out(st->tab, key))
        return NO_MERGE; /* the filter's own answer: not cached */
    c->key = key;
    c->val = merge_past_filter(st->tab, st->join, l, r);
    return c->val;
}

/* ---- character tables ------------------------------------------------ */

/* A token is a "character" if it is one byte or one valid UTF-8 char. */
static int is_one_char(const uint8_t *s, size_t len)
{
    uint32_t cp;
    return len == 1 || (len > 1 && len <= 4 && tb_utf8_decode(s, len, &cp) == len);
}

/* The characters the chars index holds: every one but ASCII's. */
static int wide_char(const tok_vocab_t *v, uint32_t id)
{
    size_t len;
    const uint8_t *s = tok_vocab_token(v, id, &len);
    return v->kind[id] != TOK_BYTE && v->kind[id] != TOK_UNUSED &&
           is_one_char(s, len) && !(len == 1 && s[0] < 128);
}

static int build_char_tables(bpe_tables_t *tb, const tok_vocab_t *v)
{
    size_t wide = 0;
    for (int c = 0; c < 128; c++)
        tb->ascii[c] = -1;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *s = tok_vocab_token(v, id, &len);
        if (wide_char(v, id))
            wide++;
        else if (len == 1 && s[0] < 128 && v->kind[id] != TOK_BYTE &&
                 v->kind[id] != TOK_UNUSED && tb->ascii[s[0]] < 0)
            tb->ascii[s[0]] = (int32_t)id;
    }
    return tok_index_build(&tb->chars, v, wide, wide_char);
}

/* Needs the merge table; only when every byte has a token, so that a
 * word's symbols are exactly byte_id[] of its bytes.  Not for a model
 * ranked by bytes: the table (512 KB) was a fifth of cl100k's compiled
 * file, and its first pairs answered from the pair cache cost a first
 * pass 3-4% (7 alternating runs, within the noise). */
static int build_byte_pairs(bpe_tables_t *tb, const tok_tokenizer_t *t)
{
    if (!t->bpe.byte_level || tb->rank_by != TOK_RANK_MERGES)
        return 0;
    for (int b = 0; b < 256; b++)
        if (t->vocab.byte_id[b] < 0)
            return 0;
    tb->byte_pairs = malloc(65536 * sizeof *tb->byte_pairs);
    if (!tb->byte_pairs)
        return -1;
    for (uint32_t p = 0; p < 65536; p++)
        tb->byte_pairs[p] = merge_of(tb, NULL, (uint32_t)t->vocab.byte_id[p >> 8],
                                     (uint32_t)t->vocab.byte_id[p & 255]);
    return 0;
}

/* ---- premerged characters ------------------------------------------- */

/*
 * A byte-level word starts as one symbol a byte, and the 2-4 bytes of a
 * Chinese, Cyrillic or box-drawing character mostly merge into its token
 * before anything else joins them: in a first pass of Llama 3 over the
 * multi corpus's first megabyte, 164k of the 228k merges were such.
 * premerged_symbols starts such a character as its token, which is exact
 * when no merge outside it could come first:
 *
 * Merged alone, the character's bytes become its token through internal
 * merges whose highest rank is R, and until then some internal merge (of
 * rank R at most) is always pending.  A merge of a neighbour with the
 * character's first part (or its last part with a neighbour) could only
 * be chosen before it is whole by ranking below R; so could a merge of
 * the whole token with a neighbour, which premerging offers early.  When
 * none of those ranks below R for the neighbours the word has, every merge
 * chosen before the character is whole is chosen the same with it
 * premerged (ranks by merges are distinct: no tie decides), and once it
 * is whole both runs are in the same state.  A neighbour of the character
 * is a token ending where it starts (or starting where it ends), so its
 * bytes lie next to the character in the word.  Each character keeps the
 * bytes of the neighbours that have such a merge (its partners), and a
 * word premerges it unless one of them lies next to it.  In Llama 3 most
 * characters have one partner, a space before them (" " joins a lead byte
 * early), and runs of Chinese have no spaces.
 */
#define PARTNERS_MAX 8 /* on a side; a character with more stays bytes */
#define PARTNER_MAX_LEN 7 /* a partner's bytes, packed in a word with its length */

/* A character merged alone: its token, the highest rank of its merges,
 * and the parts that were first (last) before it was whole, then the
 * token itself. */
typedef struct {
    int32_t id;
    uint32_t cp, rank;
    uint32_t first[4], last[4];
    uint8_t n_first, n_last;
} alone_t;

static void add_part(uint32_t *parts, uint8_t *n, uint32_t id)
{
    for (uint8_t i = 0; i < *n; i++)
        if (parts[i] == id)
            return;
    parts[(*n)++] = id;
}

/* Whether token id, one character of 2-4 bytes, becomes itself when its
 * bytes are merged alone (join: merge_by_bytes's room for 4 bytes); fills
 * a. */
static int merge_alone(const bpe_tables_t *tb, const tok_vocab_t *v, uint32_t id,
                       uint8_t *join, alone_t *a)
{
    size_t k;
    const uint8_t *s = tok_vocab_token(v, id, &k);
    uint32_t sym[4], cp;
    if (k < 2 || k > 4 || s[0] < 0xC2 || v->kind[id] != TOK_NORMAL || v->special[id] ||
        tb_utf8_decode(s, k, &cp) != k)
        return 0;
    *a = (alone_t){.id = (int32_t)id, .cp = cp};
    for (size_t i = 0; i < k; i++)
        sym[i] = (uint32_t)v->byte_id[s[i]];
    while (k > 1) {
        add_part(a->first, &a->n_first, sym[0]);
        add_part(a->last, &a->n_last, sym[k - 1]);
        size_t best = 0;
        uint64_t low = NO_MERGE;
        for (size_t i = 0; i + 1 < k; i++) {
            uint64_t m = merge_of(tb, join, sym[i], sym[i + 1]);
            if (m >> 32 < low >> 32)
                best = i, low = m;
        }
        if (low == NO_MERGE)
            return 0;
        a->rank = (uint32_t)(low >> 32) > a->rank ? (uint32_t)(low >> 32) : a->rank;
        sym[best] = (uint32_t)low;
        memmove(sym + best + 1, sym + best + 2, (k - best - 2) * sizeof *sym);
        k--;
    }
    add_part(a->first, &a->n_first, id);
    add_part(a->last, &a->n_last, id);
    return sym[0] == id;
}

/* A merge that joins a wanted token: the token's number, the side it is
 * on (0: the right one), and rank << 32 | the other token. */
typedef struct {
    uint32_t d, side;
    uint64_t entry;
} join_hit_t;

/* The merges that join a wanted token, by the token: those where it is
 * the right one (side 0: partners before a character) and the left one
 * (side 1: after), each list (rank << 32 | the other token), at
 * [start[side][d], start[side][d + 1]) for the token numbered d.  Only
 * merges ranked below the highest rank of a character with the token
 * among its parts (below[d]) are kept: no other can come first. */
typedef struct {
    /* the wanted tokens, numbered in the order of their ids: a bit each,
     * and the count of those before each word of bits (part_number); a
     * token -> number array was most of what a tiktoken file's load
     * added, a byte of its every page written */
    uint64_t *wanted;
    uint32_t *before;
    uint32_t *below;          /* n, by number */
    uint32_t *start[2];       /* n + 1 each */
    TB_VEC(uint64_t) list[2];
    TB_VEC(join_hit_t) hits;  /* while they are gathered */
    uint32_t n;
} joins_t;

static void joins_free(joins_t *j)
{
    free(j->wanted);
    free(j->before);
    free(j->below);
    free(j->hits.data);
    for (int side = 0; side < 2; side++) {
        free(j->start[side]);
        free(j->list[side].data);
    }
}

/* 1 + the number of wanted token id, or 0 when it is not wanted. */
static uint32_t part_number(const joins_t *j, uint32_t id)
{
    uint64_t w = j->wanted[id >> 6], bit = 1ull << (id & 63);
    return w & bit ? j->before[id >> 6] + (uint32_t)__builtin_popcountll(w & (bit - 1)) + 1
                   : 0;
}

/* Part i of character a: its first parts, then its last ones. */
static uint32_t part_of(const alone_t *a, uint8_t i)
{
    return i < a->n_first ? a->first[i] : a->last[i - a->n_first];
}

/* Numbers the parts of every character and sets below[]; -1 if out of
 * memory. */
static int number_parts(joins_t *j, const tok_vocab_t *v, const alone_t *chars,
                        size_t n_chars)
{
    size_t words = ((size_t)v->size + 63) / 64;
    if (!(j->wanted = calloc(words, sizeof *j->wanted)) ||
        !(j->before = malloc(words * sizeof *j->before)))
        return -1;
    for (size_t c = 0; c < n_chars; c++)
        for (uint8_t i = 0; i < chars[c].n_first + chars[c].n_last; i++) {
            uint32_t id = part_of(&chars[c], i);
            j->wanted[id >> 6] |= 1ull << (id & 63);
        }
    for (size_t w = 0; w < words; w++) {
        j->before[w] = j->n;
        j->n += (uint32_t)__builtin_popcountll(j->wanted[w]);
    }
    if (!(j->below = calloc((size_t)j->n + 1, sizeof *j->below)))
        return -1;
    for (size_t c = 0; c < n_chars; c++) {
        const alone_t *a = &chars[c];
        for (uint8_t i = 0; i < a->n_first + a->n_last; i++) {
            uint32_t *b = &j->below[part_number(j, part_of(a, i)) - 1];
            *b = a->rank > *b ? a->rank : *b;
        }
    }
    return 0;
}

/* Keeps the merge of (left, right) at rank if it joins a wanted token
 * early enough; -1 if out of memory. */
static int keep_join(joins_t *j, uint32_t left, uint32_t right, uint64_t rank)
{
    uint32_t dl = part_number(j, left), dr = part_number(j, right);
    return (dr && rank < j->below[dr - 1] &&
            tb_vec_push(&j->hits, ((join_hit_t){dr - 1, 0, rank << 32 | left}))) ||
                   (dl && rank < j->below[dl - 1] &&
                    tb_vec_push(&j->hits, ((join_hit_t){dl - 1, 1, rank << 32 | right})))
               ? -1
               : 0;
}

/* The lowest ordinary id of the bytes s[0..n), or -1. */
static int32_t normal_id(const tok_vocab_t *v, const uint8_t *s, size_t n)
{
    int32_t id = tok_index_get(&v->by_bytes, v, s, n);
    return id >= 0 && v->kind[id] == TOK_NORMAL ? id : -1;
}

/* The merges of a model ranked by bytes, which has no merge table: every
 * way of spelling an ordinary token (the lowest id of its bytes) as two
 * ordinary tokens is a merge at its rank, as merge_by_bytes finds them.
 * Only a split with a side of at most 4 bytes can join a part of a
 * character, and only a token with a byte past ASCII has one; that side
 * is looked up first, the other when it is wanted. */
static int joins_by_bytes(joins_t *j, const bpe_tables_t *tb, const tok_vocab_t *v)
{
    uint32_t top = 0; /* no merge at or past this rank is kept */
    for (uint32_t d = 0; d < j->n; d++)
        top = j->below[d] > top ? j->below[d] : top;
    for (uint32_t id = 0; id < v->size; id++) {
        size_t len;
        const uint8_t *b = tok_vocab_token(v, id, &len);
        if (len < 2 || v->kind[id] != TOK_NORMAL)
            continue;
        uint64_t rank = tb->rank_by == TOK_RANK_ID ? id : score_rank(v->score[id]);
        size_t wide = 0;
        while (wide < len && b[wide] < 0x80)
            wide++;
        if (rank >= top || wide == len || normal_id(v, b, len) != (int32_t)id)
            continue;
        for (size_t k = 1; k < len; k++) {
            int32_t x = k <= 4 ? normal_id(v, b, k) : -1,
                    y = len - k <= 4 ? normal_id(v, b + k, len - k) : -1;
            if (!(x >= 0 && part_number(j, (uint32_t)x)) && !(y >= 0 && part_number(j, (uint32_t)y)))
                continue;
            if (x < 0)
                x = normal_id(v, b, k);
            if (y < 0)
                y = normal_id(v, b + k, len - k);
            if (x >= 0 && y >= 0 && keep_join(j, (uint32_t)x, (uint32_t)y, rank))
                return -1;
        }
    }
    return 0;
}

/* Gathers the merges that join the parts of chars[0..n_chars): one pass
 * over the merge table (or the splits of the tokens, ranked by bytes),
 * then a counting sort puts them in their lists. */
static int joins_build(joins_t *j, const bpe_tables_t *tb, const tok_vocab_t *v,
                       const alone_t *chars, size_t n_chars)
{
    memset(j, 0, sizeof *j);
    if (number_parts(j, v, chars, n_chars))
        return -1;
    if (tb->mt) {
        for (size_t i = 0; i < tb->mt_size; i++) {
            uint64_t key = tb->mt[i].key;
            if (key != UINT64_MAX &&
                keep_join(j, (uint32_t)(key >> 32), (uint32_t)key, tb->mt[i].val >> 32))
                return -1;
        }
    } else if (joins_by_bytes(j, tb, v)) {
        return -1;
    }
    for (int side = 0; side < 2; side++)
        if (!(j->start[side] = calloc((size_t)j->n + 2, sizeof *j->start[side])) ||
            tb_vec_reserve(&j->list[side], j->hits.len))
            return -1;
    for (size_t h = 0; h < j->hits.len; h++)
        j->start[j->hits.data[h].side][j->hits.data[h].d + 2]++;
    for (int side = 0; side < 2; side++)
        for (uint32_t d = 2; d <= j->n + 1; d++)
            j->start[side][d] += j->start[side][d - 1];
    /* start[side][d + 1] is where d's list goes on: placing moves it to
     * the list's end, which is start[side][d + 1] once all are placed */
    for (size_t h = 0; h < j->hits.len; h++) {
        const join_hit_t *e = &j->hits.data[h];
        j->list[e->side].data[j->start[e->side][e->d + 1]++] = e->entry;
    }
    free(j->hits.data);
    memset(&j->hits, 0, sizeof j->hits);
    return 0;
}

/* Adds to out (n of them, PARTNERS_MAX at most) the tokens that join one
 * of parts[0..np) on `side` by a merge ranked below `rank`; 0, or -1 when
 * they are too many. */
static int partners_of(const joins_t *j, int side, const uint32_t *parts, uint8_t np,
                       uint32_t rank, uint32_t *out, size_t *n)
{
    for (uint8_t p = 0; p < np; p++) {
        uint32_t d = part_number(j, parts[p]) - 1;
        for (uint32_t i = j->start[side][d]; i < j->start[side][d + 1]; i++) {
            uint64_t e = j->list[side].data[i];
            if (e >> 32 >= rank)
                continue;
            size_t k = 0;
            while (k < *n && out[k] != (uint32_t)e)
                k++;
            if (k == *n && (*n)++ == PARTNERS_MAX)
                return -1;
            out[k] = (uint32_t)e;
        }
    }
    return 0;
}

/* A partner's bytes packed, or 0 when they are too long to pack. */
static uint64_t packed_partner(const tok_vocab_t *v, uint32_t id)
{
    size_t len;
    const uint8_t *s = tok_vocab_token(v, id, &len);
    if (len > PARTNER_MAX_LEN)
        return 0;
    uint64_t x = (uint64_t)len << 56;
    for (size_t i = 0; i < len; i++)
        x |= (uint64_t)s[i] << (8 * i);
    return x;
}

static size_t premerge_slot(unsigned bits, uint32_t cp)
{
    return (uint32_t)(cp * 0x9E3779B1u) >> (32 - bits);
}

uint16_t tok_premerge_neighbours(const uint64_t *p, size_t n_left, size_t n_right)
{
    unsigned bits = 0;
    for (size_t i = 0; i < n_left + n_right; i++) {
        size_t len = p[i] >> 56;
        bits |= i < n_left ? 1u << ((uint8_t)(p[i] >> (8 * (len - 1))) >> 5)
                           : 256u << ((uint8_t)p[i] >> 5);
    }
    return (uint16_t)bits;
}

/* Puts character a, whose partners are left[0..nl) and right[0..nr), in
 * the table, unless a partner is too long to pack. */
static int premerge_put(bpe_tables_t *tb, size_t *cap, const tok_vocab_t *v,
                        const alone_t *a, const uint32_t *left, size_t nl,
                        const uint32_t *right, size_t nr)
{
    uint64_t packed[2 * PARTNERS_MAX];
    for (size_t i = 0; i < nl + nr; i++)
        if (!(packed[i] = packed_partner(v, i < nl ? left[i] : right[i - nl])))
            return 0;
    /* grown as needed, not for the most a character may have: the spare
     * room was most of the memory a tiktoken file's load added */
    if (tb->n_partners + nl + nr > *cap &&
        tb_grow((void **)&tb->partners, cap, tb->n_partners, nl + nr, sizeof *tb->partners))
        return -1;
    size_t at = premerge_slot(tb->premerge_bits, a->cp),
           mask = ((size_t)1 << tb->premerge_bits) - 1;
    while (tb->premerge[at].cp)
        at = (at + 1) & mask;
    tb->premerge[at] = (tok_premerge_slot_t){a->cp, a->id, (uint32_t)tb->n_partners,
                                             (uint8_t)nl, (uint8_t)nr,
                                             tok_premerge_neighbours(packed, nl, nr)};
    if (nl + nr)
        memcpy(tb->partners + tb->n_partners, packed, (nl + nr) * sizeof *packed);
    tb->n_partners += nl + nr;
    return 0;
}

/* For a byte-level model whose every byte has a token, ranked by its
 * merge table or by bytes (tiktoken: a table of characters took a first
 * pass of o200k over the multi corpus from 213M instructions to 153M). */
static int build_premerge(bpe_tables_t *tb, const tok_tokenizer_t *t)
{
    const tok_vocab_t *v = &t->vocab;
    if (!t->bpe.byte_level)
        return 0;
    for (int b = 0; b < 256; b++)
        if (v->byte_id[b] < 0)
            return 0;
    TB_VEC(alone_t) chars = {0};
    joins_t j;
    int rc = -1;
    uint8_t join[8];
    for (uint32_t id = 0; id < v->size; id++) {
        alone_t a;
        if (merge_alone(tb, v, id, join, &a) && tb_vec_push(&chars, a))
            goto out;
    }
    if (!chars.len) { /* no character token: no table, words stay bytes */
        free(chars.data);
        return 0;
    }
    if (joins_build(&j, tb, v, chars.data, chars.len))
        goto out_joins;
    tb->premerge_bits = 4;
    while (((size_t)1 << tb->premerge_bits) < 2 * chars.len)
        tb->premerge_bits++;
    tb->premerge = calloc((size_t)1 << tb->premerge_bits, sizeof *tb->premerge);
    size_t cap = 0;
    if (!tb->premerge || tb_grow((void **)&tb->partners, &cap, 0, 1, sizeof *tb->partners))
        goto out_joins;
    for (size_t c = 0; c < chars.len; c++) {
        const alone_t *a = &chars.data[c];
        uint32_t left[PARTNERS_MAX + 1], right[PARTNERS_MAX + 1];
        size_t nl = 0, nr = 0;
        if (!partners_of(&j, 0, a->first, a->n_first, a->rank, left, &nl) &&
            !partners_of(&j, 1, a->last, a->n_last, a->rank, right, &nr) &&
            premerge_put(tb, &cap, v, a, left, nl, right, nr))
            goto out_joins;
    }
    rc = 0;
out_joins:
    joins_free(&j);
out:
    free(chars.data);
    return rc;
}

/* A word may be cut before a space that follows byte x unless some token a
 * merge produces holds x followed by a space: no symbol can then ever span
 * the cut, and BPE on the pieces gives exactly the ids of BPE on the word
 * (merges on either side never meet, and within a piece they happen in the
 * same order).  The space must be a known symbol so that the unknown-token
 * rules also see the same boundary, and ignore_merges (which looks at the
 * whole word only) must be off.  SentencePiece-style models, whose words
 * are whole lines or texts, then get short pieces the word cache can hit. */
static void mark_crossable(bpe_tables_t *tb, const tok_vocab_t *v, uint32_t id)
{
    size_t len;
    const uint8_t *b = tok_vocab_token(v, id, &len);
    for (size_t j = 1; j < len; j++)
        if (b[j] == ' ' && b[j - 1] != ' ')
            tb->crossable[b[j - 1]] = 1;
}

/* Ranked by bytes, a merge may make any ordinary token of two bytes or
 * more: all of them are counted, which can only cut less. */
static void build_cut_table(bpe_tables_t *tb, const tok_tokenizer_t *t,
                            int32_t space_id)
{
    const tok_vocab_t *v = &t->vocab;
    memset(tb->crossable, 0, sizeof tb->crossable);
    tb->cut_ok = space_id >= 0 && !t->bpe.ignore_merges;
    for (uint32_t id = 0; tb->cut_ok && !tb->mt && id < v->size; id++)
        if (v->kind[id] == TOK_NORMAL && v->offset[id + 1] - v->offset[id] > 1)
            mark_crossable(tb, v, id);
    for (size_t i = 0; tb->cut_ok && tb->mt && i < tb->mt_size; i++) {
        if (tb->mt[i].key == UINT64_MAX)
            continue;
        uint32_t id = (uint32_t)tb->mt[i].val;
        if (id >= v->size) {
            tb->cut_ok = 0; /* a merge into bytes we cannot see */
            break;
        }
        mark_crossable(tb, v, id);
    }
}

static int32_t char_id(const tok_vocab_t *v, const bpe_tables_t *tb,
                       const uint8_t *s, size_t len)
{
    if (len == 1 && s[0] < 128)
        return tb->ascii[s[0]];
    return tok_index_get(&tb->chars, v, s, len);
}

/* The longest ordinary token: no two parts make a longer one. */
static uint32_t longest_normal(const tok_vocab_t *v)
{
    uint32_t max = 0;
    for (uint32_t id = 0; id < v->size; id++)
        if (v->kind[id] == TOK_NORMAL && v->offset[id + 1] - v->offset[id] > max)
            max = v->offset[id + 1] - v->offset[id];
    return max;
}

int tok_bpe_prepare(tok_tokenizer_t *t, tb_err_t *err)
{
    bpe_tables_t *tb = calloc(1, sizeof *tb);
    int by_bytes = t->bpe.rank_by != TOK_RANK_MERGES;
    if (tb && by_bytes) {
        tb->rank_by = t->bpe.rank_by;
        tb->vocab = &t->vocab;
        tb->join_max = longest_normal(&t->vocab);
    } else if (tb && !merges_reserve(&t->bpe.merges, 0)) {
        /* a table even without merges, so that lookups need no test */
        tb->mt = t->bpe.merges.slots;
        tb->mt_size = t->bpe.merges.size;
    }
    if (!tb || (!by_bytes && (!tb->mt || build_filter(tb, t->bpe.merges.count))) ||
        build_char_tables(tb, &t->vocab) || build_byte_pairs(tb, t) ||
        build_premerge(tb, t)) {
        free_tables(tb);
        return tb_fail(err, "bpe: out of memory setting up the merge engine");
    }
    build_cut_table(tb, t,
                    t->bpe.byte_level ? t->vocab.byte_id[' '] : tb->ascii[' ']);
    free_tables(t->bpe.tables);
    t->bpe.tables = tb;
    return 0;
}

/* The state's BPE part, made at its first word; its cache holds ids of
 * the tables it was made with (tok_prepare drops the tokenizer's spare
 * state, and a state serves one tokenizer). */
static bpe_state_t *state_of(const tok_tokenizer_t *t, tok_state_t *ts)
{
    bpe_state_t *st = ts->bpe;
    if (st)
        return st;
    st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    int no_words = tok_wc_init(&st->words);
    st->pair_bits = t->bpe.tables->rank_by == TOK_RANK_MERGES ? PAIR_CACHE_BITS
                                                             : PAIR_CACHE_BITS_BY_BYTES;
    st->pairs = malloc(sizeof *st->pairs << st->pair_bits);
    st->join = malloc((size_t)t->bpe.tables->join_max + 1);
    if (!t->bpe.byte_level) /* calloc: pages of slots never met stay unfaulted */
        st->chars = calloc((size_t)1 << CHAR_CACHE_BITS, sizeof *st->chars);
    if (no_words || !st->pairs || !st->join || (!t->bpe.byte_level && !st->chars)) {
        tok_bpe_state_free(st);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)1 << st->pair_bits; i++)
        st->pairs[i].key = UINT64_MAX;
    st->tab = t->bpe.tables;
    ts->bpe = st;
    return st;
}

/* ---- initial symbols ------------------------------------------------- */

/* Pushes the byte pieces of s[0..len) if every byte has one. */
static int push_byte_pieces(const tok_vocab_t *v, bpe_state_t *st,
                            const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        int32_t b = v->byte_id[s[i]];
        if (b < 0 || v->kind[b] != TOK_BYTE)
            return 0;
    }
    for (size_t i = 0; i < len; i++)
        st->sym.data[st->sym.len++] = (uint32_t)v->byte_id[s[i]];
    return 1;
}

/* The id of the non-ASCII character at s[0..n) (-1 if unknown) and its
 * length in *len, an invalid byte counting as a one-byte character. */
static int32_t wide_char_id(const tok_vocab_t *v, bpe_state_t *st,
                            const uint8_t *s, size_t n, size_t *len)
{
    uint32_t cp;
    *len = tb_utf8_decode_fast(s, n, &cp);
    if (!*len) {
        *len = 1;
        return char_id(v, st->tab, s, 1);
    }
    uint64_t *slot = &st->chars[cp & ((1u << CHAR_CACHE_BITS) - 1)];
    if (*slot >> 32 == cp)
        return (int32_t)(uint32_t)*slot;
    int32_t id = char_id(v, st->tab, s, *len);
    *slot = (uint64_t)cp << 32 | (uint32_t)id;
    return id;
}

/* A byte-level word's initial symbols, if every byte of it has a token
 * (as in every byte-level vocabulary of the manifest): one table read a
 * byte, where initial_symbols' general loop took 20 instructions. */
static int byte_symbols(const tok_vocab_t *v, bpe_state_t *st, const uint8_t *w,
                        size_t n)
{
    int32_t unknown = 0; /* negative once some byte has no token */
    for (size_t i = 0; i < n; i++) {
        int32_t id = v->byte_id[w[i]];
        st->sym.data[i] = (uint32_t)id;
        unknown |= id;
    }
    st->sym.len = n;
    return unknown >= 0;
}

/* Fills st->sym with the word's initial symbols.  The unknown-token rules
 * follow Hugging Face's BPE::merge_word: a pending unknown is flushed only
 * by a known character, so with fuse_unk a run of unknowns becomes one unk;
 * byte pieces do not flush it (that is the reference's order, kept for
 * exactness); with no unk token an unknown character is dropped. */
static void initial_symbols(const tok_tokenizer_t *t, bpe_state_t *st,
                            const uint8_t *w, size_t n)
{
    const tok_bpe_t *m = &t->bpe;
    const tok_vocab_t *v = &t->vocab;
    int pending_unk = 0;
    if (m->byte_level && byte_symbols(v, st, w, n))
        return;
    st->sym.len = 0;
    for (size_t i = 0; i < n;) {
        size_t len = 1;
        int32_t id;
        if (m->byte_level) {
            id = v->byte_id[w[i]];
        } else if (w[i] < 0x80) {
            id = st->tab->ascii[w[i]];
        } else {
            id = wide_char_id(v, st, w + i, n - i, &len);
        }
        if (id >= 0) {
            if (pending_unk)
                st->sym.data[st->sym.len++] = (uint32_t)m->unk;
            pending_unk = 0;
            st->sym.data[st->sym.len++] = (uint32_t)id;
        } else if (m->byte_fallback && push_byte_pieces(v, st, w + i, len)) {
            /* pending unk stays pending */
        } else if (m->unk >= 0) {
            if (pending_unk && !m->fuse_unk)
                st->sym.data[st->sym.len++] = (uint32_t)m->unk;
            pending_unk = 1;
        }
        i += len;
    }
    if (pending_unk)
        st->sym.data[st->sym.len++] = (uint32_t)m->unk;
}

/* ---- merging --------------------------------------------------------- */

static inline void set_pair(bpe_state_t *st, size_t i, uint64_t merge)
{
    st->rank.data[i] = (uint32_t)(merge >> 32);
    st->made.data[i] = (uint32_t)merge;
}

/* The rank and result of every initial pair, from the byte-pair table
 * when the word is plain bytes. */
static void initial_pairs(const tok_bpe_t *m, bpe_state_t *st, const uint8_t *w)
{
    size_t k = st->sym.len;
    uint32_t *sym = st->sym.data;
    if (m->byte_level && st->tab->byte_pairs) {
        for (size_t i = 0; i + 1 < k; i++)
            set_pair(st, i, st->tab->byte_pairs[(uint32_t)w[i] << 8 | w[i + 1]]);
        return;
    }
    for (size_t i = 0; i + 1 < k; i++) {
        if (i + 9 < k) /* a few pairs ahead: overlap the cache misses */
            pair_prefetch(st, sym[i + 8], sym[i + 9]);
        set_pair(st, i, pair_merge(st, sym[i], sym[i + 1]));
    }
}

/* Whether packed partner x spells the first bytes of s[0..avail). */
static int spells(uint64_t x, const uint8_t *s, size_t avail)
{
    size_t len = x >> 56;
    if (len > avail)
        return 0;
    for (size_t j = 0; j < len; j++)
        if (s[j] != (uint8_t)(x >> (8 * j)))
            return 0;
    return 1;
}

/* Whether one of the packed partners p[0..n) spells the bytes that start
 * at w[at] (w[at..n) is all there is after). */
static int partner_at(const uint64_t *p, size_t np, const uint8_t *w, size_t at, size_t n)
{
    for (size_t i = 0; i < np; i++)
        if (spells(p[i], w + at, n - at))
            return 1;
    return 0;
}

/* Whether one of the packed partners p[0..np) spells the bytes that end
 * at w[at] (w[0..at) is all there is before). */
static int partner_before(const uint64_t *p, size_t np, const uint8_t *w, size_t at)
{
    for (size_t i = 0; i < np; i++) {
        size_t len = p[i] >> 56;
        if (len <= at && spells(p[i], w + at - len, len))
            return 1;
    }
    return 0;
}

/* The token of the character of `len` bytes at w[i], code point cp, if
 * it may start as one symbol there (see build_premerge), else -1. */
static int32_t premerged_id(const bpe_tables_t *tb, const uint8_t *w, size_t n,
                            size_t i, size_t len, uint32_t cp)
{
    size_t mask = ((size_t)1 << tb->premerge_bits) - 1;
    for (size_t at = premerge_slot(tb->premerge_bits, cp);; at = (at + 1) & mask) {
        const tok_premerge_slot_t *s = &tb->premerge[at];
        if (s->cp != cp) {
            if (!s->cp)
                return -1;
            continue;
        }
        unsigned before = i ? 1u << (w[i - 1] >> 5) : 0,
                 after = i + len < n ? 256u << (w[i + len] >> 5) : 0;
        if (!(s->neighbours & (before | after)))
            return s->id;
        const uint64_t *p = tb->partners + s->first;
        return partner_before(p, s->n_left, w, i) ||
                       partner_at(p + s->n_left, s->n_right, w, i + len, n)
                   ? -1
                   : s->id;
    }
}

/* A byte-level word's initial symbols and pairs, with every character
 * that may start whole as its token: one symbol of a Chinese character,
 * not three, and none of the two merges inside it.  A pair of two bytes
 * comes from the byte-pair table, any other through the pair cache. */
static void premerged_symbols(const tok_vocab_t *v, bpe_state_t *st, const uint8_t *w,
                              size_t n)
{
    const bpe_tables_t *tb = st->tab;
    uint32_t *sym = st->sym.data;
    size_t k = 0;
    /* the last symbol's byte, -1 if it is a character or there is no
     * byte-pair table (a model ranked by bytes) */
    int last_byte = -1, no_pairs = tb->byte_pairs ? 0 : -1;
    for (size_t i = 0, len; i < n; i += len) {
        uint32_t cp, id = (uint32_t)v->byte_id[w[i]];
        int32_t whole;
        len = 1;
        if (w[i] >= 0xC2 && (len = tb_utf8_decode_fast(w + i, n - i, &cp)) > 1 &&
            (whole = premerged_id(tb, w, n, i, len, cp)) >= 0)
            id = (uint32_t)whole;
        else
            len = 1;
        if (k)
            set_pair(st, k - 1,
                     len == 1 && last_byte >= 0
                         ? tb->byte_pairs[(uint32_t)last_byte << 8 | w[i]]
                         : pair_merge(st, sym[k - 1], id));
        sym[k++] = id;
        last_byte = len == 1 ? w[i] | no_pairs : -1;
    }
    st->sym.len = k;
}

/* The first of the lowest of rank[0..n), n a multiple of 4 and at most
 * 64: the lowest four at a time, then every place it occurs as a bit, as
 * a loop that stops at the first would stop at a place the branch
 * predictor cannot know. */
static size_t lowest_rank(const uint32_t *rank, size_t n)
{
    tb_quad_t low = tb_quad_at(rank);
    for (size_t i = 4; i < n; i += 4) {
        tb_quad_t q = tb_quad_at(rank + i), less = (tb_quad_t)(q < low);
        low = (q & less) | (low & ~less);
    }
    uint32_t a = low[0] < low[1] ? low[0] : low[1], b = low[2] < low[3] ? low[2] : low[3];
    uint32_t min = a < b ? a : b;
    uint64_t at = 0;
    for (size_t i = 0; i < n; i += 4)
        at |= (uint64_t)tb_quad_lanes((tb_quad_t)(tb_quad_at(rank + i) == min)) << i;
    return (size_t)__builtin_ctzll(at);
}

/* Short words: find the lowest rank by a scan, merge, repeat.  The ranks
 * are compared alone, so that the leftmost of equal ranks goes first
 * whatever ids they make.  A merged right symbol stays in place, out of
 * the list of live ones (prev, next) and with no rank, so nothing moves:
 * moving the tails down (by calls to memmove, which gcc made of the
 * loops) cost a first pass over Llama 3 as many instructions as scanning
 * a dead pair four at a time. */
static void merge_scan(bpe_state_t *st)
{
    int32_t k = (int32_t)st->sym.len;
    if (k < 2)
        return;
    uint32_t *sym = st->sym.data, *rank = st->rank.data;
    int32_t *prev = st->prev.data, *next = st->next.data;
    size_t scanned = ((size_t)k + 2) & ~(size_t)3; /* the k - 1 pairs, padded */
    for (size_t i = (size_t)k - 1; i < scanned; i++)
        rank[i] = NO_RANK;
    for (int32_t i = 0; i < k; i++) {
        prev[i] = i - 1;
        next[i] = i + 1;
    }
    for (;;) {
        int32_t best = (int32_t)lowest_rank(rank, scanned);
        if (rank[best] == NO_RANK)
            break;
        int32_t right = next[best], after = next[right];
        sym[best] = st->made.data[best];
        rank[best] = rank[right] = NO_RANK;
        next[best] = after;
        if (after < k) {
            prev[after] = best;
            set_pair(st, (size_t)best, pair_merge(st, sym[best], sym[after]));
        }
        if (best > 0)
            set_pair(st, (size_t)prev[best], pair_merge(st, sym[prev[best]], sym[best]));
    }
    size_t out = 0;
    for (int32_t i = 0; i < k; i = next[i])
        sym[out++] = sym[i];
    st->sym.len = out;
}

static int heap_less(const heap_ent_t *a, const heap_ent_t *b)
{
    return a->key < b->key;
}

/* A 4-ary min-heap: half the depth of a binary one, and the four
 * children of a node sit next to each other in memory, which is what
 * counts once the heap of a long word outgrows the caches.  Room for every
 * entry was reserved up front, so pushing cannot fail. */
static void heap_push(bpe_state_t *st, heap_ent_t e)
{
    heap_ent_t *h = st->heap.data;
    size_t i = st->heap.len++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!heap_less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static heap_ent_t heap_pop(bpe_state_t *st)
{
    heap_ent_t *h = st->heap.data;
    heap_ent_t top = h[0], last = h[--st->heap.len];
    size_t n = st->heap.len, i = 0;
    for (;;) {
        size_t c = 4 * i + 1, end = c + 4 < n ? c + 4 : n;
        if (c >= n)
            break;
        size_t best = c;
        for (size_t j = c + 1; j < end; j++)
            if (heap_less(&h[j], &h[best]))
                best = j;
        if (!heap_less(&h[best], &last))
            break;
        h[i] = h[best];
        i = best;
    }
    if (n)
        h[i] = last;
    return top;
}

static void push_pair(bpe_state_t *st, int32_t pos)
{
    int32_t nx = st->next.data[pos];
    if (nx < 0)
        return;
    uint32_t l = st->sym.data[pos], r = st->sym.data[nx];
    uint64_t v = pair_merge(st, l, r);
    if (v != NO_MERGE)
        heap_push(st, (heap_ent_t){(v >> 32) << 32 | (uint32_t)pos, l, r, (uint32_t)v});
}

/* Long words: a min-heap of candidate merges keyed by (rank, position)
 * over a linked list of symbols.  An entry is stale once either of its
 * symbols changed; checking both ids and adjacency detects that, since a
 * merge always gives a symbol a new (longer) id. */
static void merge_heap(bpe_state_t *st)
{
    size_t k = st->sym.len;
    uint32_t *sym = st->sym.data;
    int32_t *prev = st->prev.data, *next = st->next.data;
    for (size_t i = 0; i < k; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < k ? (int32_t)i + 1 : -1;
    }
    st->heap.len = 0;
    for (size_t i = 0; i + 1 < k; i++)
        if (st->rank.data[i] != NO_RANK)
            heap_push(st, (heap_ent_t){(uint64_t)st->rank.data[i] << 32 | i, sym[i],
                                       sym[i + 1], st->made.data[i]});
    while (st->heap.len) {
        heap_ent_t e = heap_pop(st);
        int32_t pos = (int32_t)(uint32_t)e.key, nx = next[pos];
        if (sym[pos] != e.left || nx < 0 || sym[nx] != e.right)
            continue;
        sym[pos] = e.merged;
        sym[nx] = DEAD;
        next[pos] = next[nx];
        if (next[nx] >= 0)
            prev[next[nx]] = pos;
        if (next[pos] >= 0)
            pair_prefetch(st, sym[pos], sym[next[pos]]);
        if (prev[pos] >= 0)
            push_pair(st, prev[pos]);
        push_pair(st, pos);
    }
    /* compact the survivors, in order, to the front of sym */
    size_t out = 0;
    for (int32_t i = 0; i >= 0; i = next[i])
        sym[out++] = sym[i];
    st->sym.len = out;
}

static int reserve_scratch(bpe_state_t *st, size_t n)
{
    st->sym.len = st->rank.len = st->made.len = 0;
    st->prev.len = st->next.len = st->heap.len = 0;
    /* a word of n bytes has at most n initial symbols; merge_scan reads
     * ranks up to a multiple of 4; the heap holds the initial pairs plus at
     * most two per merge */
    return tb_vec_reserve(&st->sym, n) || tb_vec_reserve(&st->rank, n + 3) ||
                   tb_vec_reserve(&st->made, n) || tb_vec_reserve(&st->prev, n) ||
                   tb_vec_reserve(&st->next, n) ||
                   (n > SCAN_MAX_SYMBOLS && tb_vec_reserve(&st->heap, 3 * n))
               ? -1
               : 0;
}

/* With ignore_merges a word that is itself a token is emitted whole.  A
 * one-byte word must resolve to the ordinary token, not a byte piece. */
static int32_t whole_word_id(const tok_tokenizer_t *t, const bpe_state_t *st,
                             const tok_wc_key_t *k)
{
    if (k->n == 1) {
        int32_t c = char_id(&t->vocab, st->tab, k->w, 1);
        return c >= 0 || !t->bpe.byte_level ? c : t->vocab.byte_id[k->w[0]];
    }
    int32_t id = tok_index_get_hashed(&t->vocab.by_bytes, &t->vocab, k->w, k->n, k->h);
    return id >= 0 && !t->vocab.special[id] ? id : -1;
}

/* Appends the ids the word cache holds for k's word: 1, or 0 when it
 * holds none, or -1 out of memory. */
static inline __attribute__((always_inline)) int
cached_ids(bpe_state_t *st, const tok_wc_key_t *k, tok_ids_t *out, tb_err_t *err)
{
    int rc = tok_wc_get(&st->words, k, out);
    return rc < 0 ? tb_fail(err, "bpe: out of memory for the ids of a word") : rc;
}

/* Appends the ids of a word (or one piece of a cut word) that the cache
 * does not hold, k's, and caches them. */
static int merge_piece(const tok_tokenizer_t *t, bpe_state_t *st, const tok_wc_key_t *k,
                       tok_ids_t *out, tb_err_t *err)
{
    const uint8_t *w = k->w;
    size_t n = k->n;
    if (n > UINT32_MAX / 4 || reserve_scratch(st, n))
        return tb_fail(err, "bpe: out of memory for a word of %zu bytes", n);
    int32_t whole = t->bpe.ignore_merges ? whole_word_id(t, st, k) : -1;
    if (whole >= 0) {
        st->sym.data[0] = (uint32_t)whole;
        st->sym.len = 1;
    } else {
        if (st->tab->premerge_bits) {
            premerged_symbols(&t->vocab, st, w, n);
        } else {
            initial_symbols(t, st, w, n);
            initial_pairs(&t->bpe, st, w);
        }
        if (st->sym.len <= SCAN_MAX_SYMBOLS)
            merge_scan(st);
        else
            merge_heap(st);
    }
    /* A word of unknown characters with no unk token has no symbols. */
    if (tb_vec_append(out, st->sym.data, st->sym.len))
        return tb_fail(err, "bpe: out of memory for %zu ids", st->sym.len);
    tok_wc_put(&st->words, k, st->sym.data, st->sym.len);
    return 0;
}

/* Appends the ids of one word (or one piece of a cut word), k's.  Inlined by force into bpe_word, as when the merges were
 * part of it: a call more a piece cost Gemma 3, whose words are cut into
 * pieces, 1M instructions a megabyte. */
static inline __attribute__((always_inline)) int
bpe_piece(const tok_tokenizer_t *t, bpe_state_t *st, const tok_wc_key_t *k, tok_ids_t *out,
          tb_err_t *err)
{
    int hit = cached_ids(st, k, out, err);
    return hit ? (hit < 0 ? -1 : 0) : merge_piece(t, st, k, out, err);
}

/* Whether a word of n bytes is cut before its spaces (build_cut_table). */
static int cuts(const bpe_state_t *st, size_t n)
{
    return st->tab->cut_ok && n > SCAN_MAX_SYMBOLS;
}

/* Appends the ids of k's word, from which `room` bytes may be read. */
static int bpe_word(const tok_tokenizer_t *t, bpe_state_t *st, const tok_wc_key_t *k,
                    size_t room, tok_ids_t *out, tb_err_t *err)
{
    const uint8_t *w = k->w;
    size_t n = k->n;
    if (!cuts(st, n))
        return bpe_piece(t, st, k, out, err);
    size_t start = 0;
    for (const uint8_t *sp = memchr(w + 1, ' ', n - 1); sp;
         sp = memchr(sp + 1, ' ', (size_t)(w + n - sp - 1))) {
        size_t i = (size_t)(sp - w);
        if (w[i - 1] == ' ' || st->tab->crossable[w[i - 1]])
            continue;
        tok_wc_key_t piece = tok_wc_key(w + start, i - start, room - start);
        if (bpe_piece(t, st, &piece, out, err))
            return -1;
        start = i;
    }
    if (!start)
        return bpe_piece(t, st, k, out, err);
    tok_wc_key_t last = tok_wc_key(w + start, n - start, room - start);
    return bpe_piece(t, st, &last, out, err);
}

/* The BPE part of ts, or NULL with err set. */
static bpe_state_t *ready_state(const tok_tokenizer_t *t, tok_state_t *ts,
                                tb_err_t *err)
{
    bpe_state_t *st = NULL;
    if (!t->bpe.tables)
        tb_fail(err, "bpe: the merge engine was never set up (tok_prepare)");
    else if (!(st = state_of(t, ts)))
        tb_fail(err, "bpe: out of memory for the word cache");
    return st;
}

int tok_bpe_word(const tok_tokenizer_t *t, tok_state_t *ts, const uint8_t *w,
                 size_t n, tok_ids_t *out, tb_err_t *err)
{
    if (n == 0)
        return 0;
    bpe_state_t *st = ready_state(t, ts, err);
    tok_wc_key_t k = tok_wc_key(w, n, n);
    return st ? bpe_word(t, st, &k, n, out, err) : -1;
}

/* Words looked up ahead of the one being encoded: at WORDS_AHEAD a word's
 * hash is taken and its word-cache slot fetched; at WORDS_AHEAD / 2 the
 * slot is read, and what the word will read next is fetched: its key and
 * ids in the pool if the slot holds it, else (a new word) its slot of the
 * vocabulary's index, which a whole-word lookup reads first.  A first
 * pass over a megabyte of text misses the CPU caches on most of these
 * (the slots and the pool are megabytes, filled at random), and one word
 * at a time each miss was waited on in turn. */
#define WORDS_AHEAD 8

static void fetch_slot(const bpe_state_t *st, uint64_t h)
{
    __builtin_prefetch(&st->words.slots[tok_wc_home(&st->words, h)]);
}

/* One address or the other, chosen with no branch: whether a word is new
 * is what no predictor knows. */
static void fetch_next(const tok_tokenizer_t *t, const bpe_state_t *st, const tok_wc_key_t *k)
{
    const tok_wc_slot_t *s = &st->words.slots[tok_wc_home(&st->words, k->h)];
    const tok_index_t *x = &t->vocab.by_bytes;
    /* addresses as numbers: the pool is NULL while empty */
    uintptr_t entry = (uintptr_t)st->words.pool.data + (*s & TOK_WC_OFF),
              index = (uintptr_t)x->slots + tok_index_first(x, k->h) * sizeof *x->slots;
    uintptr_t held = -(uintptr_t)((*s & TOK_WC_TAG) == tok_wc_tag(k->h) || !t->bpe.ignore_merges);
    __builtin_prefetch((const void *)((entry & held) | (index & ~held)));
}

/* bpe_word for tok_bpe_words: a word not cut goes to bpe_piece, inlined
 * here, so that a word the cache holds (most of a text's) costs the lookup
 * alone, not the calls of bpe_word and bpe_piece, which saved and restored
 * a dozen registers for the merge code inlined into them. */
static int next_word(const tok_tokenizer_t *t, bpe_state_t *st, const tok_wc_key_t *k,
                     size_t room, tok_ids_t *out, tb_err_t *err)
{
    return cuts(st, k->n) ? bpe_word(t, st, k, room, out, err) : bpe_piece(t, st, k, out, err);
}

int tok_bpe_words(const tok_tokenizer_t *t, tok_state_t *ts, const uint8_t *text,
                  size_t text_len, const tok_span_t *words, size_t n, tok_ids_t *out,
                  tb_err_t *err)
{
    enum { HALF = WORDS_AHEAD / 2 };
    tok_wc_key_t key[WORDS_AHEAD]; /* word i's at i % WORDS_AHEAD */
    bpe_state_t *st = n ? ready_state(t, ts, err) : NULL;
    if (n && !st)
        return -1;
    for (size_t i = 0; i < n + WORDS_AHEAD; i++) {
        size_t k = i - WORDS_AHEAD; /* the word encoded now, before i takes its key's place */
        if (i >= WORDS_AHEAD && words[k].len &&
            next_word(t, st, &key[k % WORDS_AHEAD], text_len - words[k].off, out, err))
            return -1;
        if (i < n) {
            key[i % WORDS_AHEAD] =
                tok_wc_key(text + words[i].off, words[i].len, text_len - words[i].off);
            fetch_slot(st, key[i % WORDS_AHEAD].h);
        }
        if (i >= HALF && i - HALF < n && words[i - HALF].len <= TOK_WC_MAX_WORD)
            fetch_next(t, st, &key[(i - HALF) % WORDS_AHEAD]);
    }
    return 0;
}
