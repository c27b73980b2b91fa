/*
 * core/version.c: the git commit of this build. The Makefile writes
 * B/gen/ccdiag_commit.h from scripts/version.sh before compiling this file
 * (and rewrites it only when the commit changes, so only this file is
 * recompiled); a compile outside make has no such header and says "unknown".
 */
#include "version.h"

#if defined(__has_include)
#if __has_include("ccdiag_commit.h")
#include "ccdiag_commit.h"
#endif
#endif
#ifndef CCDIAG_COMMIT
#define CCDIAG_COMMIT "unknown"
#endif

const char ccdiag_commit[] = CCDIAG_COMMIT;
