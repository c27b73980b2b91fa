#ifndef CCDIAG_PROM_H
#define CCDIAG_PROM_H

/*
 * render/prom.c: the summary document as a Prometheus text exposition for
 * node_exporter's textfile collector (--prom FILE, docs/history.md): metric
 * names ccdiag_*, labels criterion, element, host, unit; written to a
 * temporary file beside FILE and renamed over it, so the collector never
 * reads half a file.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* writes the exposition of summary s to f; 0, or -1 on a write error */
int prom_render(FILE *f, const json_t *s);
/* the same into path, atomically; 0, or -1 with one line in err */
int prom_write(const json_t *s, const char *path, char *err, size_t len);
/* a label value as the exposition format quotes it: \\, \" and \n escaped, other controls dropped */
void esc_prom(FILE *f, const char *s);

#endif
