/*
 * numrange: exact regexes (lexer/regex.h syntax) for the JSON numbers in an
 * interval, for JSON Schema's minimum, maximum and exclusive bounds.
 *
 * Bounds are decimal strings ("-12", "0.25"; no exponent), compared as
 * exact decimals.  The regex reads JSON number text: an optional '-', an
 * integer part without leading zeros, and (numbers only) a fraction; it
 * holds exactly the texts whose value lies in the interval ("-0" and
 * trailing fraction zeros included).  Bounded numbers are written without
 * an exponent (the regex is tighter than the schema there: "1e2" is
 * refused under "maximum": 1000) except where the only bound is 0, whose
 * sign the mantissa decides.
 */
#ifndef GR_NUMRANGE_H
#define GR_NUMRANGE_H

#include "../base/buf.h"
#include "../base/err.h"

/* The longest bound written out (digits before and after the point). */
#define GR_NUM_MAX_DIGITS 400

/*
 * Appends to out the regex of the JSON integers (integer 1, or 2 to also
 * accept integral texts with a zero fraction, "3.0") or numbers
 * in the interval from lo to hi (NULL: unbounded on that side), each end
 * excluded when its strict flag is set.  -1 with err set for a malformed
 * bound, one longer than GR_NUM_MAX_DIGITS, or an empty interval.
 */
int gr_num_range(tb_buf_t *out, const char *lo, int lo_strict, const char *hi,
                 int hi_strict, int integer, tb_err_t *err);

/* Writes the exact decimal (no exponent) of the double v into buf (size
 * bytes): its shortest round-trip digits, as Python's repr picks them.  -1
 * if it does not fit or v is not finite. */
int gr_num_decimal(double v, char *buf, size_t size);

#endif
