/*
 * cli: the tokbench command line.  Each command lives in its own file as
 * `int xp_cmd_NAME(int argc, char **argv)` (argv[0] is the command name),
 * returns the process exit status, and is listed once in main.c's table.
 * Commands print; the modules they call never do.
 */
#ifndef XP_CLI_H
#define XP_CLI_H

#include <stdio.h>

#include <stdint.h>

#include "../../base/err.h"
#include "../../grammar/load.h"

int xp_cmd_vocab(int argc, char **argv);
int xp_cmd_encode(int argc, char **argv);
int xp_cmd_decode(int argc, char **argv);
int xp_cmd_conform(int argc, char **argv);
int xp_cmd_fuzz(int argc, char **argv);
int xp_cmd_run(int argc, char **argv);
int xp_cmd_runs(int argc, char **argv);
int xp_cmd_show(int argc, char **argv);
int xp_cmd_diff(int argc, char **argv);
int xp_cmd_counters(int argc, char **argv);
int xp_cmd_case(int argc, char **argv);
int xp_cmd_load(int argc, char **argv);
int xp_cmd_report(int argc, char **argv);
int xp_cmd_export(int argc, char **argv);
int xp_cmd_merge(int argc, char **argv);
int xp_cmd_import(int argc, char **argv);
int xp_cmd_mask(int argc, char **argv);
int xp_cmd_accept(int argc, char **argv);

/* True if argv holds -h or --help (then the command prints its usage). */
int xp_wants_help(int argc, char **argv);

/* Prints bytes (a token, forced bytes) to stdout between single quotes,
 * escaped as tb_utf8_escape says. */
void xp_print_quoted(const uint8_t *s, size_t n);

/* The options of the JSON Schema compiler that mask and accept take with
 * --schema FILE: xp_schema_arg reads argv[i] and returns how many words it
 * took (0: not one of them); xp_schema_args_set says whether any was given
 * (they belong to --schema alone); XP_SCHEMA_ARGS_HELP is their --help. */
int xp_schema_arg(int argc, char **argv, int i, gr_schema_opts_t *o);
int xp_schema_args_set(const gr_schema_opts_t *o);
#define XP_SCHEMA_ARGS_HELP                                                     \
    "--format-annotation (with --schema) reads the schema's `format` as an\n"   \
    "annotation that constrains nothing, JSON Schema 2019-09 and 2020-12's\n"   \
    "default; without it each format is asserted (docs/json-schema.md).\n"      \
    "--remote-dir DIR (with --schema) reads a $ref to\n"                        \
    "http://localhost:1234/PATH from DIR/PATH (the JSON Schema Test Suite's\n"  \
    "remotes/); nothing is fetched from the network.\n"

/* --semantics NAME (default or llguidance; grammar/cfg.h) at argv[i]:
 * returns the words taken (2) with *sem set as gr_load_opts_t's semantics,
 * 0 if argv[i] is another option, -1 (said on stderr) for another name. */
int xp_semantics_arg(int argc, char **argv, int i, int *sem);
/* (a printf format: its percent signs doubled) */
#define XP_SEMANTICS_HELP                                                        \
    "--semantics llguidance reads the grammar as llguidance does: its lexer\n"   \
    "is greedy (a lexeme ends only where it cannot go on; a rule marked lazy,\n" \
    "stop or suffix ends at its first match), and a JSON Schema's integers\n"   \
    "take no fraction and its properties come in the schema's order; default,\n" \
    "the default unless a Lark grammar says %%llguidance, keeps every split\n"   \
    "into lexemes and reads JSON Schema as specified (docs/grammars.md).\n"

/* gr_cfg_load, with the schema options o when format is "schema". */
int xp_load_grammar(gr_cfg_t *cfg, const char *path, const char *format,
                    const gr_schema_opts_t *o, tb_err_t *err);
/* The same with a Lark grammar's start rule named (--start; NULL: start),
 * the semantics (xp_semantics_arg's; 0: as the grammar says) and the
 * vocabulary its special tokens name ids of (NULL: none). */
int xp_load_grammar_start(gr_cfg_t *cfg, const char *path, const char *format,
                          const char *start, int semantics, const gr_schema_opts_t *o,
                          const tok_vocab_t *vocab, tb_err_t *err);

/* Prints "tokbench: <msg>" to stderr and returns exit status 1. */
int xp_die(const tb_err_t *err);

/* Resolves SPEC, a manifest name (e.g. "llama3") or a path, to a file
 * path.  Manifest entries live in data/cache/NAME/ under the data root:
 * $TOKBENCH_ROOT if set, else the current directory if it has
 * data/manifest, else the checkout the binary was built in. */
int xp_resolve_spec(const char *spec, char *path, size_t size, tb_err_t *err);

/* The data root described above, or NULL with err set. */
const char *xp_data_root(tb_err_t *err);

#endif
