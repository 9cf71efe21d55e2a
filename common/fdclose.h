/* SPDX-License-Identifier: ISC */
/* Closing every descriptor from one up, between fork and exec. */
#ifndef MCPD_FDCLOSE_H
#define MCPD_FDCLOSE_H

/*
 * Closes every descriptor >= lowfd: close_range(2), and when that fails
 * (a kernel before 5.9, a seccomp filter that refuses it) each open
 * descriptor that /proc/self/fd lists, or failing that each number below
 * the RLIMIT_NOFILE hard limit. Async-signal-safe (no malloc): for a child
 * between fork and exec. Returns 0, or -errno when it could not tell what
 * is open and the limit is infinite.
 */
int fdclose_from(int lowfd);

/* The fallback alone, without trying close_range (for its tests). */
int fdclose_walk(int lowfd);

#endif
