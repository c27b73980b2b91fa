/* Fuzz target: ccreport's perftest importer (report/import_perftest.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "perftest"
#include "import_target.h"
