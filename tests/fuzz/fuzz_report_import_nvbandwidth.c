/* Fuzz target: ccreport's nvbandwidth importer (report/import_nvbandwidth.c); tests/fuzz/import_target.h says what it checks */
#define FUZZ_FROM "nvbandwidth"
#include "import_target.h"
