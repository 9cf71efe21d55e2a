/* SPDX-License-Identifier: ISC */
/* Wiping the string bytes of jansson values that may hold secrets. */
#ifndef MCPD_JSONWIPE_H
#define MCPD_JSONWIPE_H

#include <jansson.h>

/*
 * Overwrites with zero bytes, in place, every string value of v: v itself
 * when it is a string, else the values of an object and the items of an
 * array, recursively (object keys are not values and stay). Lengths stay
 * as they were, and every holder of a string shared with v sees the zeros:
 * call it on what nothing else is still reading. NULL is a no-op.
 */
void jsonwipe_strings(json_t *v);
/*
 * json_decref(v), after wiping what that frees: when this is v's last
 * reference, the strings that go with v (v itself, and its values and
 * items, recursively, that nothing else holds); a value held elsewhere too
 * is left intact for its other holder, and so is all of v when this is not
 * its last reference. NULL is a no-op.
 */
void jsonwipe_decref(json_t *v);

#endif
