/* Fuzz target: ccreport's nccl-tests importer (report/import_nccltests.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "nccl-tests"
#include "import_target.h"
