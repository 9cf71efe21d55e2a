/* SPDX-License-Identifier: ISC */
/* The daemon's Ed25519 identity (did:key) and the ids derived from it. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "log.h"
#include "mcpd.h"

#define IDENTITY_FILE	  "identity.key"
#define IDENTITY_ID_BYTES 6 /* connection ids: 12 hex digits */

/* The key's seed, in sodium_malloc memory: read-only once loaded. */
static unsigned char *identity_seed;
static char identity_did_text[128];

static const char identity_b58[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* base58btc of in[0..len) into out (NUL-terminated); out must be big. */
static void
identity_base58(const unsigned char *in, size_t len, char *out, size_t outsz)
{
	unsigned char digits[128] = { 0 };
	size_t ndigits = 0, zeros = 0, o = 0;

	while (zeros < len && in[zeros] == 0)
		zeros++;
	for (size_t i = zeros; i < len; i++) {
		unsigned carry = in[i];

		for (size_t j = 0; j < ndigits; j++) {
			carry += (unsigned)digits[j] << 8;
			digits[j] = carry % 58;
			carry /= 58;
		}
		while (carry > 0 && ndigits < sizeof digits) {
			digits[ndigits++] = carry % 58;
			carry /= 58;
		}
	}
	for (size_t i = 0; i < zeros && o + 1 < outsz; i++)
		out[o++] = '1';
	while (ndigits > 0 && o + 1 < outsz)
		out[o++] = identity_b58[digits[--ndigits]];
	out[o] = '\0';
}

/* did:key of an Ed25519 public key: multicodec 0xed01, base58btc "z". */
static void
identity_did_of(const unsigned char pk[crypto_sign_PUBLICKEYBYTES], char *out,
    size_t outsz)
{
	unsigned char mc[2 + crypto_sign_PUBLICKEYBYTES] = { 0xed, 0x01 };
	char b58[96];

	memcpy(mc + 2, pk, crypto_sign_PUBLICKEYBYTES);
	identity_base58(mc, sizeof mc, b58, sizeof b58);
	snprintf(out, outsz, "did:key:z%s", b58);
}

static void
identity_did_of_seed(const unsigned char *seed, char *out, size_t outsz)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	unsigned char *sk = xsodium_malloc(crypto_sign_SECRETKEYBYTES);

	crypto_sign_seed_keypair(pk, sk, seed);
	sodium_free(sk);
	identity_did_of(pk, out, outsz);
}

static int
identity_fail(char **cause, int err, const char *fmt, const char *path)
{
	xasprintf(cause, fmt, path, strerror(err));
	return -err;
}

static int
identity_create(const char *path, char **cause)
{
	int fd;

	randombytes_buf(identity_seed, crypto_sign_SEEDBYTES);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return identity_fail(cause, errno, "cannot create %s: %s",
		    path);
	if (write(fd, identity_seed, crypto_sign_SEEDBYTES) !=
		(ssize_t)crypto_sign_SEEDBYTES ||
	    fsync(fd) < 0) {
		int err = errno != 0 ? errno : EIO;

		close(fd);
		unlink(path);
		return identity_fail(cause, err, "cannot write %s: %s", path);
	}
	close(fd);
	return 0;
}

static int
identity_read(const char *path, int fd, char **cause)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return identity_fail(cause, errno, "cannot stat %s: %s", path);
	if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
		xasprintf(cause,
		    "%s must be owned by uid %u with mode 0600 (it is %04o); fix it with: chmod 600 %s",
		    path, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777),
		    path);
		return -EPERM;
	}
	n = read(fd, identity_seed, crypto_sign_SEEDBYTES);
	if (n != (ssize_t)crypto_sign_SEEDBYTES) {
		xasprintf(cause, "%s is not a key file (%zd bytes, want %zu)",
		    path, n, (size_t)crypto_sign_SEEDBYTES);
		return -EINVAL;
	}
	return 0;
}

int
identity_load(const char *state_dir, char **cause)
{
	char *path;
	int fd, r;

	if (sodium_init() < 0) {
		*cause = xstrdup("libsodium failed to initialise");
		return -EIO;
	}
	if (identity_seed == NULL)
		identity_seed = xsodium_malloc(crypto_sign_SEEDBYTES);
	else
		sodium_mprotect_readwrite(identity_seed);
	xasprintf(&path, "%s/%s", state_dir, IDENTITY_FILE);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		r = identity_read(path, fd, cause);
		close(fd);
	} else if (errno == ENOENT)
		r = identity_create(path, cause);
	else
		r = identity_fail(cause, errno, "cannot open %s: %s", path);
	free(path);
	if (r == 0)
		identity_did_of_seed(identity_seed, identity_did_text,
		    sizeof identity_did_text);
	sodium_mprotect_readonly(identity_seed);
	return r;
}

const char *
identity_did(void)
{
	return identity_did_text;
}

char *
identity_agent_did(const char *agent)
{
	unsigned char seed[crypto_sign_SEEDBYTES];
	char did[128];

	crypto_generichash(seed, sizeof seed, (const unsigned char *)agent,
	    strlen(agent), identity_seed, crypto_sign_SEEDBYTES);
	identity_did_of_seed(seed, did, sizeof did);
	sodium_memzero(seed, sizeof seed);
	return xstrdup(did);
}

char *
identity_connection_id(const char *agent, const char *mode, const char *target,
    size_t target_len)
{
	unsigned char h[IDENTITY_ID_BYTES];
	crypto_generichash_state st;
	char *did = identity_agent_did(agent), *hex;

	crypto_generichash_init(&st, NULL, 0, sizeof h);
	crypto_generichash_update(&st, (const unsigned char *)did,
	    strlen(did) + 1);
	crypto_generichash_update(&st, (const unsigned char *)mode,
	    strlen(mode) + 1);
	crypto_generichash_update(&st, (const unsigned char *)target,
	    target_len);
	crypto_generichash_final(&st, h, sizeof h);
	free(did);
	hex = xmalloc(2 * sizeof h + 1);
	sodium_bin2hex(hex, 2 * sizeof h + 1, h, sizeof h);
	return hex;
}
