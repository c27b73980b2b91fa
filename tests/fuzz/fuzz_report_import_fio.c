/* Fuzz target: ccreport's fio importer (report/import_fio.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "fio"
#include "import_target.h"
