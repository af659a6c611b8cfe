/*
 * anchors: published figures of other machines, each with its source, in
 * the results store beside the runs' own measurements (table `anchors`,
 * schema 9), marked "published, other machine": the report draws them as
 * reference marks, never as a measurement.
 *
 * `tokbench import FILE` reads them from a CSV whose header names these
 * columns, in any order (experiments/anchors/published.csv):
 *   figure      what is measured: cycles_per_node, encode_mb_s, ...
 *   subject     whose figure: an engine, a library, a data structure
 *   vocabulary  the vocabulary (a data/manifest name), empty if none
 *   work        the input or pattern, empty if none
 *   value,unit  the figure as published
 *   document    where it is published; location: table, line or section
 *   date        when (as the document gives it); machine: where it ran
 *   note        anything a reader must know to compare it (optional)
 * A row with the same figure, subject, vocabulary, work and document as
 * one already stored replaces it, so importing twice changes nothing.
 */
#ifndef XP_ANCHORS_H
#define XP_ANCHORS_H

#include <stddef.h>

#include "../../base/err.h"
#include "results.h"

/* Reads the CSV text `text` (named `name` in errors: file, line, column)
 * and stores its rows in one transaction; *n is the number of rows.  Bad
 * input stores nothing. */
int xp_anchors_import(xp_db_t *db, const char *name, const char *text, size_t len, int *n,
                      tb_err_t *err);

#endif
