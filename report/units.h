#ifndef CCDIAG_UNITS_H
#define CCDIAG_UNITS_H

/* report/units.c: the sizes given in profiles and --workload flags */

/* size_parse() (core/size.h) as a long long: "8", "64K", "4M", "1G"; -1 on error */
int rpt_parse_size(const char *s, long long *out);

#endif
