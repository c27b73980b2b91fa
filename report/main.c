/* report/main.c: ccreport's entry point (placeholder; see the report issue). */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "ccreport: not written yet\n");
	return 2;
}
