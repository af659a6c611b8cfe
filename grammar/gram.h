/*
 * gram: a grammar ready for masks: its lexer, its Earley parser, and the
 * automaton that a trie walk runs over both.
 *
 * A state of the grammar is a set of pairs (parser row, lexer state): the
 * Earley row (earley.h) of the lexemes read so far and the lexer DFA state
 * (lexer/deriv.h) of the lexeme being read.  On byte b each pair
 *   - goes on in its lexeme: (row, lexer step on b), if that is live;
 *   - and, where a lexeme may end here, also ends it: the row scans the
 *     ending lexemes (an ignored lexeme leaves the row as it is), the lexer
 *     starts over at the lexemes the new row expects (and the ignored
 *     ones), and steps on b.
 * Keeping both is the non-greedy lexing of cfg.h.
 *
 * Under llguidance's semantics (cfg.h, GR_SEM_LLGUIDANCE) the lexer is
 * llguidance's: greedy, so a pair ends its lexeme on b only where the
 * lexer state is dead on b (the longest match among the lexemes it reads
 * wins, and no shorter one is kept), and then every lexeme that may end
 * there ends; but a lexer state where a lazy lexeme may end ends it at
 * once, and only the lazy ones, whatever b is (the first match wins).
 * Where an ignored lexeme ends with others, only it ends (llguidance scans
 * a skip and nothing else); an ignored lexeme may begin only where the
 * parser expects a lexeme of the grammar (so none after the grammar is
 * done) and, at the start of the text, only with the grammar's
 * initial_skip.  Since each of these depends on
 * the lexer state and b alone, pairs still merge as below.  Pairs with the same
 * lexer state merge their rows (gr_parser_union), so that a state has at
 * most one pair per lexer state and, in grammars whose lexemes do not
 * overlap (JSON), one pair in all.
 *
 * States are hash-consed and their transitions kept in a dense table of
 * row offsets over the lexer's byte classes, with 0 for the dead state and
 * TRIE_REC_UNKNOWN until computed: exactly the trie_rec_table_t a trie walk
 * runs inline (trie/trie.h).  The parser is touched only when an entry is
 * first computed, and only where a lexeme ends: a walk inside a JSON string
 * costs what the lexer's walk costs, and the rows pushed as a walk goes
 * down one branch of the trie are ids in states that the walk drops when it
 * climbs back, so there is nothing to pop.  Since rows and states never
 * change once made, the table also serves every later mask.
 *
 * The start state is kept out of the hash: it is the only state where
 * nothing of the current lexeme has been read, which matters for accepting.
 *
 * Token-id lexemes (cfg.h: llguidance's special tokens) are read by id,
 * never by bytes (their regex matches none).  Where a state's text may
 * end a lexeme (or has just begun, or just read a token-id lexeme), the
 * rows after it expect some of them: gr_token_lexemes says which, and
 * gr_step_token reads one token id there.  The state after it is, like
 * GR_START, one where nothing of the next lexeme is read: one per parser
 * row, kept out of the hash too (a state reached by bytes may have the
 * same pair and yet not accept, nor allow the same token ids).
 * Limits (states, the parser's items, the lexer's states) end in a sticky
 * error; steps then answer the dead state.
 *
 * Threads.  One grammar may serve matchers (match.h) in several threads
 * at once, with the masks a single thread gets.  What fills the grammar
 * (gr_step_slow: the parser's rows, the lexer's lazily built states, new
 * states and entries; gr_accepting) runs under the grammar's mutex.  The
 * fast path takes no lock: an entry is written once, from
 * TRIE_REC_UNKNOWN to its final value, with a release store after the
 * state it leads to is complete, and read with an acquire load
 * (gr_entry, trie_rec_entry).  The table grows by copying into a larger
 * array published with a release store; the old arrays stay alive until
 * the grammar is freed or reset (at most the size of the last one in all,
 * since each doubles), so a walk that loaded the table before a copy
 * reads a valid, only older, table: an entry it finds unknown there is
 * taken from the newest under the lock.  Safe from any thread at once:
 * gr_step, gr_step_slow, gr_feed, gr_accepting, gr_gram_error,
 * gr_token_lexemes and gr_step_token (which read the parser under the
 * lock), and the matchers' calls that use only these (match.h says which).  Not safe
 * while another thread steps: gr_gram_reset, gr_gram_free, gr_pairs,
 * gr_nstates, gr_gram_bytes and the stats (read them after the threads
 * are done), and anything that uses g->dfa or g->parser directly (the
 * slicer: lex_slicer_bind and lex_slicer_mask_by extend the lexer).
 */
#ifndef GR_GRAM_H
#define GR_GRAM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/bitset.h"
#include "../base/err.h"
#include "../base/hash.h"
#include "../lexer/deriv.h"
#include "../trie/trie.h"
#include "cfg.h"
#include "earley.h"

#define GR_DEAD 0u
#define GR_START 1u

typedef struct {
    uint32_t row, lex; /* parser row, lexer DFA state */
} gr_pair_t;

typedef struct {
    size_t max_states; /* 0: GR_DEFAULT_MAX_STATES */
    size_t max_items;  /* the parser's; 0: GR_DEFAULT_MAX_ITEMS */
    lex_dfa_opts_t lexer;
} gr_opts_t;

#define GR_DEFAULT_MAX_STATES (1u << 19)

/* What the parser did (cumulative, for figures). */
typedef struct {
    uint64_t steps;      /* table entries computed */
    uint64_t boundaries; /* of them, steps where some lexeme ended */
    uint64_t scans;      /* parser scans (rows found or made) */
    uint64_t parser_ns;  /* time inside the parser (scans and unions) */
} gr_stats_t;

/*
 * The grammar.  Data layout: trans is nstates rows of ncls uint32 entries
 * (state s's row at trans[s * ncls]); an entry is the next state's row
 * offset (next * ncls), 0 (dead) or TRIE_REC_UNKNOWN.  State s's pairs are
 * pair.data[pair_off[s] .. + pair_n[s]), sorted by lexer state.  lexstart
 * caches, per parser row, two lexer states: at 2 * row where the row's
 * expected lexemes and the ignored ones begin, at 2 * row + 1 where the
 * expected ones alone do (UINT32_MAX: not yet); scan_memo maps
 * (row << 32 | lexer state) to the row after the lexemes that end in that
 * lexer state.  trans.data is the newest table; retired holds the arrays
 * it replaced, which walks in other threads may still read (see Threads).
 */
typedef struct {
    gr_cfg_t cfg;
    lex_dfa_t *dfa;
    gr_parser_t parser;
    uint32_t ncls;
    uint64_t *ignore; /* ignored lexemes (parser.words words) */
    uint64_t *lazy;   /* lazy lexemes (the same), all clear unless llg */
    int llg;          /* llguidance's semantics (cfg.semantics) */
    int lark;         /* Lark's semantics: ignored lexemes at their longest */
    int has_lazy;     /* llg with a lazy lexeme: a lexer state's going on is
                       * not always the grammar's (no slicing, match.c) */
    uint64_t *ending; /* scratch: lexemes ending in a lexer state */
    tb_bitset_t ending_set;
    tb_bitset_t going_on; /* scratch: lexemes that go on (g->lark) */
    TB_VEC(uint32_t) trans;
    int trans_mapped; /* trans.data is mapped (gram.c's trans_reserve), its
                       * cap every state's entries: tb_unreserve it */
    TB_VEC(uint32_t *) retired;
    size_t retired_cap;   /* their entries, all told */
    pthread_mutex_t lock; /* held by whatever fills the tables */
    int has_lock;         /* lock made (build got that far) */
    TB_VEC(gr_pair_t) pair;
    TB_VEC(uint32_t) pair_off;
    TB_VEC(uint32_t) pair_n;
    TB_VEC(uint32_t) lexstart;
    TB_VEC(gr_pair_t) scratch;
    TB_VEC(uint32_t) consulted; /* scratch: lexer states a step stepped */
    uint32_t *by_hash;
    size_t by_cap, max_states;
    tb_u64map_t scan_memo;
    uint16_t class_size[256]; /* bytes per lexer class */
    gr_opts_t opts;           /* as made, for gr_gram_reset */
    gr_stats_t stats;
    /* Token-id lexemes: which lexemes (parser.words words; NULL when the
     * grammar has none, then nothing below is used), and the states after
     * one: row -> state and state -> row. */
    uint64_t *tokenlex;
    tb_u64map_t token_state, token_row;
    uint32_t epoch; /* how many resets: state ids mean other states after one */
    int counts; /* some lexeme counts (x{lo,hi}, hi - lo >= 2): gr_lifted
                 * may lift a state of a grammar without a length bound
                 * (dfa->string_char) */
    int failed;
    tb_err_t err;
} gr_gram_t;

/* Builds the lexer over cfg's lexemes and the parser; takes cfg (finished,
 * gr_cfg_finish) over, on failure too.  NULL with err naming the grammar's
 * file and the lexeme at fault. */
gr_gram_t *gr_gram_new(gr_cfg_t *cfg, const gr_opts_t *opts, tb_err_t *err);
void gr_gram_free(gr_gram_t *g);

/* Drops every state, row and lexer state made so far and starts again
 * from the grammar, as gr_gram_new left it: memory back to its start, the
 * next masks cold.  No matcher or recognizer over g may be live (their
 * states are gone); -1 with err as gr_gram_new's. */
int gr_gram_reset(gr_gram_t *g, tb_err_t *err);

/* Whether the lexer holds more than half the states its limit allows: a
 * caller between two texts may reset the grammar rather than run into the
 * limit in the middle of the next one. */
int gr_gram_lexer_half_full(const gr_gram_t *g);

/* The newest table (see Threads), for walks to run. */
static inline const uint32_t *gr_table(const gr_gram_t *g)
{
    return __atomic_load_n(&g->trans.data, __ATOMIC_ACQUIRE);
}

/* Entry i of the newest table: a row offset, 0 or TRIE_REC_UNKNOWN. */
static inline uint32_t gr_entry(const gr_gram_t *g, size_t i)
{
    return trie_rec_entry(gr_table(g), i);
}

/* The state reached from state s on byte b (GR_DEAD: refused). */
uint32_t gr_step_slow(gr_gram_t *g, uint32_t s, uint8_t b);
static inline uint32_t gr_step(gr_gram_t *g, uint32_t s, uint8_t b)
{
    uint32_t e = gr_entry(g, (size_t)s * g->ncls + g->dfa->cls[b]);
    return e != TRIE_REC_UNKNOWN ? e / g->ncls : gr_step_slow(g, s, b);
}

/* The state after bytes s[0..n) from `from`; GR_DEAD if refused, with
 * *refused_at (may be NULL) the offset of the refused byte. */
uint32_t gr_feed(gr_gram_t *g, uint32_t from, const uint8_t *s, size_t n,
                 size_t *refused_at);

/* Whether the text that led to state s is a sentence. */
int gr_accepting(gr_gram_t *g, uint32_t s);

/* The token-id lexemes that may be read at state s, into out (parser.words
 * words; all clear when the grammar has none); -1 on a limit (the sticky
 * error). */
int gr_token_lexemes(gr_gram_t *g, uint32_t s, uint64_t *out);

/* The state after token id `id` is read at state s as a token-id lexeme
 * (each one that holds id and may come there), or GR_DEAD. */
uint32_t gr_step_token(gr_gram_t *g, uint32_t s, uint32_t id);

/* For masks only: the state that answers every text of at most *exact
 * bytes as state s does (a caller counts a token's bytes and one more,
 * for a character begun before it), with each pair's lexer state lifted
 * (lex_dfa_lifted: a count, or a JSON string's length bound beside a
 * pattern, that no such text can reach is dropped), made if new; s
 * itself where nothing is lifted.  *exact is `longest` where the lift
 * holds for every text asked about, else less but at least `floor`: the
 * caller answers the longer ones from s itself.  The length
 * bound beside a pattern only in a grammar whose look-aheads are all the
 * JSON Schema compiler's (cfg.h's user_lookahead clear), whose
 * intersections hold JSON string characters then the quote on both
 * sides.  Every position in a long string under a maxLength (or a count
 * such as a name's {1,500}) is a new state (characters left), while its
 * lifted state is the same at every position more than a token from the
 * bound: their masks come from the cache. */
uint32_t gr_lifted(gr_gram_t *g, uint32_t s, uint32_t longest, uint32_t floor,
                   uint32_t *exact);

/* The lexer states of state s's pairs (for the slicer), and how many. */
static inline const gr_pair_t *gr_pairs(const gr_gram_t *g, uint32_t s, size_t *n)
{
    *n = g->pair_n.data[s];
    return g->pair.data + g->pair_off.data[s];
}

static inline size_t gr_nstates(const gr_gram_t *g)
{
    return g->pair_n.len;
}

/* Bytes held by the table, states, rows and lexer. */
size_t gr_gram_bytes(const gr_gram_t *g);

/* -1 with the sticky error in err if a limit was passed. */
int gr_gram_error(const gr_gram_t *g, tb_err_t *err);

#endif
