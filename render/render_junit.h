#ifndef CCDIAG_RENDER_JUNIT_H
#define CCDIAG_RENDER_JUNIT_H

#include <jansson.h>
#include <stdio.h>

/* junit.xml: one test case per criterion; 0 or -1 on a write error */
int render_junit(FILE *f, const json_t *s);

#endif
