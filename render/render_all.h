#ifndef CCDIAG_RENDER_ALL_H
#define CCDIAG_RENDER_ALL_H

#include <jansson.h>
#include <stddef.h>

struct render_opts;

/*
 * Writes report.md, index.html and junit.xml into o->outdir (charts drawn by
 * gnuplot inline in index.html, as separate chart-*.svg files beside
 * report.md). A chart gnuplot cannot draw, or no gnuplot at all, is said in
 * the outputs and is not an error. Returns 0, or -1 with a one-line message
 * in err when an output file cannot be written. docs/rendering.md.
 */
int render_all(const json_t *summary, const struct render_opts *o, char *err, size_t len);

#endif
