#ifndef CCDIAG_IDENTITY_H
#define CCDIAG_IDENTITY_H

/*
 * report/identity.c: what ties the inputs to one run of one cluster
 * (docs/provenance.md): device ids unique to a host, one host set and time
 * window, and the MANIFEST beside the inputs.
 */
#include <jansson.h>
#include <stddef.h>

struct eval;

/*
 * Notes the GPU UUIDs and NIC GUIDs of an inventory record (at line of the
 * input being read). 0, or -1 with a message when one is another host's
 * already (a node's records relabelled as another's): an input error.
 */
int identity_inventory(struct eval *e, const json_t *rec, long line, char *err, size_t len);
/*
 * After every input is read: each input against the MANIFEST beside it, if
 * any (e->manifest: what was checked, or null), refused with a message when
 * its bytes or nonce differ or it is not listed, or a results file listed is
 * gone (-1); then names the inputs whose host sets or time windows disagree
 * (e->identity, one line each). 0, or -1 with a message.
 */
int identity_inputs(struct eval *e, char *err, size_t len);

#endif
