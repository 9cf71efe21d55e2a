/* SPDX-License-Identifier: ISC */
/* What net-tls.c gives net-http.c: OpenSSL's functions, loaded on first use. */
#ifndef MCPD_TLS_H
#define MCPD_TLS_H

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/*
 * Every OpenSSL function mcpd calls; a macro such as SSL_set_tlsext_host_name
 * is called as the *_ctrl it stands for.
 */
#define TLS_FUNCTIONS(X)                    \
	X(ERR_error_string_n)               \
	X(ERR_get_error)                    \
	X(SSL_CTX_ctrl)                     \
	X(SSL_CTX_free)                     \
	X(SSL_CTX_load_verify_locations)    \
	X(SSL_CTX_new)                      \
	X(SSL_CTX_set_default_verify_paths) \
	X(SSL_CTX_set_verify)               \
	X(SSL_ctrl)                         \
	X(SSL_get0_param)                   \
	X(SSL_get_verify_result)            \
	X(SSL_new)                          \
	X(SSL_set1_host)                    \
	X(TLS_client_method)                \
	X(X509_VERIFY_PARAM_set1_ip_asc)    \
	X(X509_verify_cert_error_string)    \
	X(bufferevent_get_openssl_error)    \
	X(bufferevent_openssl_get_ssl)      \
	X(bufferevent_openssl_socket_new)

struct tls_api {
#define TLS_API_FIELD(name) __typeof__(name) *name;
	TLS_FUNCTIONS(TLS_API_FIELD)
#undef TLS_API_FIELD
};

/* OpenSSL's functions, loaded the first time; NULL with cause if it fails. */
const struct tls_api *tls_get(char **cause);

#endif
