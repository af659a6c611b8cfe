/*
 * tokids: the token ids a special token of llguidance's Lark dialect
 * stands for in a vocabulary (llguidance docs/syntax.md, "Special
 * tokens"):
 *
 *     <|eot_id|>  <think>      a special token of the vocabulary, by its text
 *     <[128010]>               one id
 *     <[100-200,300]>          ranges (both ends in), and single ids
 *     <[^100-200]>             every id of the vocabulary but those
 *     <[*]>                    every id of the vocabulary
 *
 * What grammars then do with them is cfg.h's token-id lexeme.
 */
#ifndef GR_TOKIDS_H
#define GR_TOKIDS_H

#include <stddef.h>

#include "../base/buf.h"
#include "../base/err.h"
#include "../tok/vocab.h"

/* The ids of special token s[0..n) (with its < and >) in v, appended to
 * out as gr_idrange_t (cfg.h), sorted and disjoint.  -1 with err saying
 * what is wrong (the caller adds where): a range that is not one, an id
 * past the vocabulary, a name that is not one of its special tokens. */
int gr_token_ids(const tok_vocab_t *v, const char *s, size_t n, tb_buf_t *out, tb_err_t *err);

#endif
