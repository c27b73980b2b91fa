#ifndef CCDIAG_COMPARE_MAIN_H
#define CCDIAG_COMPARE_MAIN_H

/* the command: ccreport compare ARGS (argv[0] is "compare"; argv0 the program); the exit code */
int compare_main(int argc, char **argv, const char *argv0);

#endif
