/* SPDX-License-Identifier: ISC */
/* Loading OpenSSL when the first TLS connection needs it, not at start. */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "mcpd.h"
#include "net-tls.h"

/*
 * libevent's OpenSSL bufferevents, and with them libssl and libcrypto.
 * Merely mapping them costs a process about 1.7 MB of RSS (libcrypto's
 * symbols and relocations), which a daemon of local servers never uses.
 * The Makefile reads the soname from the library it builds against.
 */
#ifndef MCPD_TLS_LIBRARY
#error "MCPD_TLS_LIBRARY (libevent_openssl's soname) comes from the Makefile"
#endif

static struct tls_api tls_api;
static bool tls_is_loaded;

const struct tls_api *
tls_get(char **cause)
{
	void *lib, *fn;

	if (tls_is_loaded)
		return &tls_api;
	/* Never closed: its connections live until mcpd exits. */
	if ((lib = dlopen(MCPD_TLS_LIBRARY, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		xasprintf(cause, "cannot load %s: %s", MCPD_TLS_LIBRARY,
		    dlerror());
		return NULL;
	}
#define TLS_API_LOAD(name)                                      \
	if ((fn = dlsym(lib, #name)) == NULL) {                 \
		xasprintf(cause, "cannot find %s in %s", #name, \
		    MCPD_TLS_LIBRARY);                          \
		dlclose(lib);                                   \
		return NULL;                                    \
	}                                                       \
	memcpy(&tls_api.name, &fn, sizeof fn);
	TLS_FUNCTIONS(TLS_API_LOAD)
#undef TLS_API_LOAD
	tls_is_loaded = true;
	return &tls_api;
}
