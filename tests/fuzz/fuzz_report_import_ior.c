/* Fuzz target: ccreport's ior importer (report/import_ior.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "ior"
#include "import_target.h"
