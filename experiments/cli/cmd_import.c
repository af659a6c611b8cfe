/*
 * cmd_import: `tokbench import FILE.csv`, published figures of other
 * machines (each with its document, location, date and machine) into the
 * results store's anchors table, where the report finds them (anchors.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/file.h"
#include "../store/anchors.h"
#include "cli.h"
#include "cmd_results.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tokbench import [--db FILE] ANCHORS.csv\n"
                 "Stores published figures of other machines, with their sources, in the\n"
                 "results database as rows marked \"published, other machine\": the report\n"
                 "draws them as reference marks beside this machine's measurements.\n"
                 "The CSV's header names its columns: figure, subject, vocabulary, work,\n"
                 "value, unit, document, location, date, machine, note (see\n"
                 "experiments/anchors/published.csv).  A row already stored (same figure,\n"
                 "subject, vocabulary, work and document) is replaced.\n"
                 "--db FILE  the results database (default %s)\n",
            XP_DEFAULT_DB);
}

int xp_cmd_import(int argc, char **argv)
{
    const char *path = xp_take_db_arg(&argc, argv);
    if (xp_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    if (argc != 2) {
        usage(stderr);
        return 2;
    }
    tb_err_t err;
    uint8_t *text;
    size_t len;
    if (tb_read_file(argv[1], &text, &len, &err))
        return xp_die(&err);
    xp_db_t *db = xp_db_open(path, 1, &err);
    int n = 0;
    int rc = db ? xp_anchors_import(db, argv[1], (const char *)text, len, &n, &err) : -1;
    free(text);
    xp_db_close(db);
    if (rc)
        return xp_die(&err);
    printf("%d published figure%s from %s in %s\n", n, n == 1 ? "" : "s", argv[1], path);
    return 0;
}
