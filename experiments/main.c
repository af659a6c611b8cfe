/* tokbench: the command-line entry point; dispatches to the commands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "drivers/driver.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t commands[] = {
    {"vocab", xp_cmd_vocab, "describe a vocabulary: kind, size, specials, checksum"},
    {"encode", xp_cmd_encode, "text to token ids"},
    {"decode", xp_cmd_decode, "token ids to text"},
    {"conform", xp_cmd_conform, "compare ids with the reference tokenizer, line by line"},
    {"fuzz", xp_cmd_fuzz, "compare ids with the references on generated text, shrink mismatches"},
    {"run", xp_cmd_run, "run an experiment suite into the results database"},
    {"runs", xp_cmd_runs, "list the runs in the results database"},
    {"show", xp_cmd_show, "print one run: provenance, inputs, every case"},
    {"diff", xp_cmd_diff, "compare two runs case by case, flagging changes beyond noise"},
    {"counters", xp_cmd_counters, "which counter sources work on this machine, and why not"},
    {"report", xp_cmd_report, "plots (gnuplot, PNG and SVG) and a page of one run"},
    {"export", xp_cmd_export, "one table or view of the results database as CSV"},
    {"merge", xp_cmd_merge, "gather the runs of several results databases into one"},
    {"import", xp_cmd_import, "published figures of other machines, with their sources, into the database"},
    {"mask", xp_cmd_mask, "token mask of a regex, lexer or grammar over a vocabulary's trie, with its cost"},
    {"accept", xp_cmd_accept, "a text's tokens driven through a grammar's matcher, token by token"},
    {"_case", xp_cmd_case, "(internal) one repetition of one case, for callgrind"},
    {"_load", xp_cmd_load, "(internal) one load of the load experiment, in a fresh process"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tokbench COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nSPEC is a name from data/manifest (e.g. llama3) or a file path.\n"
                 "'tokbench COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    xp_load_exe = "/proc/self/exe"; /* the load experiment's fresh processes */
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tokbench: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
