/* SPDX-License-Identifier: ISC */
/*
 * What mcpd.c defines, for unit tests that link daemon modules without
 * it. Included by one file of each test program.
 */
#ifndef MCPD_STUBS_H
#define MCPD_STUBS_H

#include "mcpd.h"

struct mcpd_options mcpd_opts;
struct event_base *mcpd_base;
struct store *mcpd_store;
uint64_t mcpd_started_ms;

bool
mcpd_is_stopping(void)
{
	return false;
}

void
mcpd_shutdown(struct request *req)
{
	(void)req;
}

uint64_t
mcpd_now_ms(void)
{
	return 0;
}

struct secrets *
mcpd_secrets(char **cause)
{
	(void)cause;
	return NULL;
}

struct secrets *
mcpd_secrets_if_any(void)
{
	return NULL;
}

#endif
