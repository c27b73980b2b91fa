#ifndef CCDIAG_GPUHEALTH_H
#define CCDIAG_GPUHEALTH_H

/*
 * The plain-C half of the gpuhealth probe (probes/gpuhealth.c): the XID
 * lines of the kernel log and the look-back window. Built everywhere, so
 * unit tests cover it. docs/compute.md lists the records.
 */
#include <stddef.h>

/* Whether XID code is one of the critical ones (azurehpc-health-checks' azure_gpu_xid.nhc list). */
int xid_critical(int code);

/*
 * Parses --xid-since: a number with s, m, h or d ("2h", "90m", "0s").
 * Returns 0 with *sec set, or -1 with a one-line message in err.
 */
int xid_parse_since(const char *s, double *sec, char *err, size_t len);

/*
 * One kernel-log line in /dev/kmsg form ("6,1234,5678901234,-;NVRM: Xid
 * (PCI:0000:17:00): 79, ...", the third field microseconds since boot) or
 * dmesg form ("[ 5678.901234] NVRM: Xid ..."). Returns 0 for an XID line
 * with the code, the PCI address as written ("0000:17:00") and the time
 * since boot in seconds (-1 when the line has none); -1 for any other line.
 */
int xid_parse_line(const char *line, int *code, char *pci, size_t pci_len, double *t_boot);

/*
 * Whether the PCI address of an XID line ("0000:17:00", bus and device,
 * no function) names the GPU at bus ("0000:17:00.0"). 1 or 0.
 */
int xid_pci_match(const char *pci, const char *bus);

#endif
