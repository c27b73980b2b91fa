#ifndef CCDIAG_REPORT_H
#define CCDIAG_REPORT_H

/*
 * What all of ccreport shares: its version, exit codes, verdicts and
 * scopes. Each module has its own header beside its file: profiles
 * (profile.h), the streaming results reader (load.h, record.h),
 * per-criterion aggregation and verdicts (eval.h, eval_state.h), the model
 * (model*.h), cross-node consistency (consistency.h), baseline comparison
 * (baseline.h) and the summary document (summary.h); the renderers are in
 * render/. It links no MPI, CUDA, NCCL or verbs. docs/report.md is the
 * contract of the summary document; docs/profiles.md the profile format.
 */

#include "../core/version.h"

/* ccprobe's, ccdiag's and ccreport's version is one (core/version.h) */
#define RPT_VERSION CCDIAG_VERSION

/* exit codes of ccreport (README.md, --help) */
enum rpt_exit {
	RPT_EXIT_PASS = 0,        /* pass, warnings allowed */
	RPT_EXIT_FAIL = 1,        /* a criterion failed, or a regression against the baseline */
	RPT_EXIT_USAGE = 2,       /* bad command line, unreadable or malformed input or profile */
	RPT_EXIT_OUTPUT = 3,      /* the outputs could not be written */
	RPT_EXIT_INCOMPLETE = 4,  /* a required criterion could not be judged */
};

/* worst last: the overall verdict is the maximum */
enum rpt_verdict { V_PASS, V_WARN, V_INCOMPLETE, V_FAIL };

enum rpt_scope { SC_GPU, SC_GPU_PAIR, SC_NIC, SC_RAIL_PAIR, SC_LINK, SC_NODE, SC_CLUSTER, SC_N };

#endif
