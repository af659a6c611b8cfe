/*
 * jsts: the official JSON Schema Test Suite (its tests/ folder: one folder
 * per draft, a JSON file per keyword, each an array of groups
 * {description, schema, tests}) run through grammar/schema.h, group by
 * group, with a verdict per group as Bowtie gives validators:
 *   passing  compiled, and every instance accepted iff it is valid;
 *   refused  a compile error (what the compiler cannot write exactly);
 *            GR_SCHEMA_EMPTY, the empty language, is no refusal: it is
 *            right when no instance is valid;
 *   wrong    a valid instance refused or an invalid one accepted;
 *   crash    a signal, a timeout or a grammar limit while feeding.
 * Draft 7's files carry no $schema: they are compiled with
 * gr_schema_opts_t.draft = 7.  `format` is an annotation in the required
 * groups (the default of 2019-09 and later, what the suite's required
 * format.json expects) and an assertion in optional/format/; oneOf is
 * strict.  Each instance is written as Python's json.dumps writes it
 * (experiments/drivers/pyjson.h) and fed byte by byte through the grammar
 * (grammar/gram.h: no tokenizer needed).  Each group runs in a child
 * process, so that a crash is a verdict, not the end of the caller.
 * tests/test_jsts.c and the jsts driver share this one copy.
 */
#ifndef XP_JSTS_H
#define XP_JSTS_H

#include <signal.h>
#include <stddef.h>

#include "../../base/err.h"

enum { XP_JSTS_PASSING, XP_JSTS_REFUSED, XP_JSTS_WRONG, XP_JSTS_CRASH, XP_JSTS_N };

/* "passing", "refused", "wrong", "crash": the outcomes table's names. */
extern const char *const xp_jsts_verdicts[XP_JSTS_N];

/* The draft's folder under tests/ ("draft2020-12", "draft7") from
 * "2020-12" or "7" (or the folder's own name); NULL for another draft. */
const char *xp_jsts_draft_dir(const char *draft);

/* One group's verdict, as the callback of xp_jsts_run gets it. */
typedef struct {
    const char *draft;  /* the folder: draft2020-12, draft7 */
    const char *file;   /* the keyword file without .json: "minimum",
                         * "optional/format/date" */
    size_t index;       /* the group's place in its file, from 0 */
    const char *description;
    int optional;       /* under optional/ */
    int verdict;        /* XP_JSTS_* */
    const char *detail; /* the compiler's message, the instance at fault */
} xp_jsts_group_t;

/* Returns non-zero (with err set) to stop the run. */
typedef int (*xp_jsts_cb_t)(void *ctx, const xp_jsts_group_t *g, tb_err_t *err);

/* Whether tests/DRAFT is there: 0, else -1 with a message naming the
 * folder (or the draft that is not run). */
int xp_jsts_check(const char *tests, const char *draft, tb_err_t *err);

/* Runs every group of tests/DRAFT (the required files, then optional/ and
 * optional/format/ when `optional`), in sorted file order, each in a child
 * killed after `timeout` seconds, and calls cb for each.  `tests` is the
 * suite's tests folder.  Fails, naming the folder, when the draft's folder
 * is missing or holds no keyword file, or a file is not an array of
 * groups; stops between groups when *stop (may be NULL) is set. */
int xp_jsts_run(const char *tests, const char *draft, int optional, unsigned timeout,
                volatile sig_atomic_t *stop, xp_jsts_cb_t cb, void *ctx, tb_err_t *err);

#endif
