#ifndef CCDIAG_HISTORY_MAIN_H
#define CCDIAG_HISTORY_MAIN_H

/* the command: ccreport history DB ... (argv[0] is "history"); returns the exit code */
int history_main(int argc, char **argv);

#endif
