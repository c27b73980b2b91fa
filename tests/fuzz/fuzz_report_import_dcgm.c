/* Fuzz target: ccreport's dcgm importer (report/import_dcgm.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "dcgm"
#include "import_target.h"
