/* SPDX-License-Identifier: ISC */
/* The encrypted secret store: its key, its file and its values in memory. */
/*
 * The caller chooses the paths; the intended defaults are the store in
 * <state dir>/secrets.enc and the key file in $XDG_CONFIG_HOME/mcpd/secrets.key
 * (else ~/.config/mcpd/secrets.key): outside the state dir, so that a copy of
 * the state dir (a backup, a bug report) does not carry the key with the
 * store. Under systemd the key comes from the credential mcpd-secrets-key
 * (LoadCredential= or LoadCredentialEncrypted=) instead.
 *
 * The file is "MCPDSEC1", a fresh 24-byte nonce, then crypto_secretbox_easy()
 * of the plaintext: records of (u16 name length, name, u32 value length,
 * value), lengths little-endian, names sorted by strcmp() and unique. The
 * plaintext is never JSON: it and every value stay in sodium_malloc memory,
 * which is wiped when freed.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "fileio.h"
#include "log.h"
#include "mcpd.h"
#include "names.h"
#include "paths.h"

#define SECRETS_MAGIC	   "MCPDSEC1"
#define SECRETS_MAGIC_LEN  8
#define SECRETS_HEADER_LEN (SECRETS_MAGIC_LEN + crypto_secretbox_NONCEBYTES)
#define SECRETS_VALUE_MAX  65536
#define SECRETS_STORE_MAX  (16 * 1024 * 1024) /* plaintext bytes */
#define SECRETS_KEY_LEN	   crypto_secretbox_KEYBYTES
#define SECRETS_KEY_TEXT   (2 * SECRETS_KEY_LEN + 1) /* hex and a newline */
#define SECRETS_CREDENTIAL "mcpd-secrets-key"

void *
xsodium_malloc(size_t size)
{
	void *p = sodium_malloc(size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

struct secrets_entry {
	char *name;  /* plain memory: names are not secret */
	char *value; /* sodium_malloc, NUL-terminated, read-only */
	size_t len;
};

struct secrets {
	char *store_path;
	char *key_path;	    /* NULL when the key is a credential */
	unsigned char *key; /* sodium_malloc, read-only once loaded */
	struct secrets_entry *entries; /* sorted by name */
	size_t n, size;
};

static int
secrets_write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A read-only copy of value in sodium_malloc memory, NUL-terminated. */
static char *
secrets_value_new(const char *value, size_t len)
{
	char *v = xsodium_malloc(len + 1);

	if (len > 0)
		memcpy(v, value, len);
	v[len] = '\0';
	sodium_mprotect_readonly(v);
	return v;
}

static void
secrets_entry_clear(struct secrets_entry *e)
{
	free(e->name);
	sodium_free(e->value);
	e->name = e->value = NULL;
	e->len = 0;
}

/* Room for one more entry. */
static int
secrets_grow(struct secrets *s)
{
	struct secrets_entry *e;
	size_t size;

	if (s->n < s->size)
		return 0;
	size = s->size == 0 ? 8 : 2 * s->size;
	e = xreallocarray(s->entries, size, sizeof *e);
	s->entries = e;
	s->size = size;
	return 0;
}

/* The index of name, or where it would go; *found says which. */
static size_t
secrets_find(const struct secrets *s, const char *name, bool *found)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->entries[mid].name, name);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* The key from a key file's bytes: 32 raw bytes, or 64 hex digits. */
static int
secrets_key_parse(const unsigned char *buf, size_t len, unsigned char *key)
{
	size_t bin_len = 0;

	if (len == SECRETS_KEY_LEN) {
		memcpy(key, buf, len);
		return 0;
	}
	if (len == SECRETS_KEY_TEXT && buf[len - 1] == '\n')
		len--;
	if (len != 2 * SECRETS_KEY_LEN ||
	    sodium_hex2bin(key, SECRETS_KEY_LEN, (const char *)buf, len, NULL,
		&bin_len, NULL) != 0 ||
	    bin_len != SECRETS_KEY_LEN)
		return -EINVAL;
	return 0;
}

static int
secrets_key_read(struct secrets *s, int fd, const char *path, char **cause)
{
	unsigned char *buf = xsodium_malloc(SECRETS_KEY_TEXT + 1);
	ssize_t n;
	int r = 0;

	n = fileio_read_upto(fd, buf, SECRETS_KEY_TEXT + 1);
	if (n < 0)
		r = errors_cause(cause, (int)n, "cannot read %s: %s", path,
		    strerror((int)-n));
	else if (secrets_key_parse(buf, (size_t)n, s->key) < 0)
		r = errors_cause(cause, -EINVAL,
		    "%s is not a secrets key: it must hold %d random bytes or %d hex digits",
		    path, SECRETS_KEY_LEN, 2 * SECRETS_KEY_LEN);
	sodium_free(buf);
	return r;
}

/* 1 when the systemd credential gave the key, 0 when there is none. */
static int
secrets_key_credential(struct secrets *s, char **cause)
{
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	char *path;
	int fd, r;

	if (dir == NULL || dir[0] == '\0')
		return 0;
	xasprintf(&path, "%s/%s", dir, SECRETS_CREDENTIAL);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		r = 0;
		if (errno != ENOENT)
			r = errors_cause(cause, -errno, "cannot open %s: %s",
			    path, strerror(errno));
		free(path);
		return r;
	}
	r = secrets_key_read(s, fd, path, cause);
	close(fd);
	free(path);
	return r < 0 ? r : 1;
}

/* A new random key in a new key file (mode 0600, its directory 0700). */
static int
secrets_key_create(struct secrets *s, const char *path, char **cause)
{
	char *dir, *slash;
	int fd, r;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if ((r = paths_mkdir_p(dir, 0700)) < 0) {
			r = errors_cause(cause, r, "cannot create %s: %s", dir,
			    strerror(-r));
			free(dir);
			return r;
		}
	}
	free(dir);
	randombytes_buf(s->key, SECRETS_KEY_LEN);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0)
		return errors_cause(cause, -errno, "cannot create %s: %s", path,
		    strerror(errno));
	r = secrets_write_all(fd, s->key, SECRETS_KEY_LEN);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		unlink(path);
		return errors_cause(cause, r, "cannot write %s: %s", path,
		    strerror(-r));
	}
	if ((r = fileio_sync_dir(path, cause)) < 0)
		unlink(path);
	return r;
}

static int
secrets_key_file(struct secrets *s, const char *path, bool has_store,
    char **cause)
{
	struct stat st;
	int fd, r;

	if (path == NULL)
		return errors_cause(cause, -ENOENT,
		    "no secrets key: no credential %s and no key file",
		    SECRETS_CREDENTIAL);
	s->key_path = xstrdup(path);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno != ENOENT)
			return errors_cause(cause, -errno, "cannot open %s: %s",
			    path, strerror(errno));
		/* A new key could never open the store that exists. */
		if (has_store)
			return errors_cause(cause, -ENOENT,
			    "the key file %s is missing but %s exists; restore the key file, or remove %s to start an empty store",
			    path, s->store_path, s->store_path);
		return secrets_key_create(s, path, cause);
	}
	if (fstat(fd, &st) < 0)
		r = errors_cause(cause, -errno, "cannot stat %s: %s", path,
		    strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = errors_cause(cause, -EINVAL, "%s is not a regular file",
		    path);
	else if ((st.st_mode & 077) != 0 || st.st_uid != geteuid())
		r = errors_cause(cause, -EPERM,
		    "%s must be owned by uid %u with mode 0600 (it is %04o); fix it with: chmod 600 %s",
		    path, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777),
		    path);
	else
		r = secrets_key_read(s, fd, path, cause);
	close(fd);
	return r;
}

/* The store file's bytes in *ret (new), or NULL when there is no file. */
static int
secrets_store_read(const char *path, unsigned char **ret, size_t *ret_len,
    char **cause)
{
	char *buf = NULL;
	int r = fileio_read_all(path,
	    SECRETS_HEADER_LEN + crypto_secretbox_MACBYTES + SECRETS_STORE_MAX,
	    FILEIO_NOFOLLOW | FILEIO_REGULAR, &buf, ret_len);

	if (r == -ENOENT) {
		*ret = NULL;
		*ret_len = 0;
		return 0;
	}
	if (r == -EINVAL || r == -EFBIG)
		return errors_cause(cause, -EINVAL,
		    "%s is not a secret store (not a regular file, or too big)",
		    path);
	if (r < 0)
		return errors_cause(cause, r, "cannot read %s: %s", path,
		    strerror(-r));
	*ret = (unsigned char *)buf;
	return 0;
}

/* The entries of a decrypted plaintext; on failure *ret_bad is an offset. */
static int
secrets_decode(struct secrets *s, const unsigned char *p, size_t len,
    size_t *ret_bad)
{
	size_t off = 0;

	while (off < len) {
		struct secrets_entry *e;
		size_t start = off, nlen, vlen;

		*ret_bad = start;
		if (len - off < 2)
			return -EBADMSG;
		nlen = (size_t)p[off] | (size_t)p[off + 1] << 8;
		off += 2;
		if (nlen == 0 || nlen > NAMES_SECRET_MAX || len - off < nlen)
			return -EBADMSG;
		secrets_grow(s);
		e = &s->entries[s->n];
		e->name = xstrndup((const char *)p + off, nlen);
		e->value = NULL;
		e->len = 0;
		s->n++;
		off += nlen;
		if (strlen(e->name) != nlen || !names_secret_valid(e->name) ||
		    (s->n > 1 && strcmp(e[-1].name, e->name) >= 0) ||
		    len - off < 4)
			return -EBADMSG;
		vlen = (size_t)p[off] | (size_t)p[off + 1] << 8 |
		    (size_t)p[off + 2] << 16 | (size_t)p[off + 3] << 24;
		off += 4;
		if (vlen > SECRETS_VALUE_MAX || len - off < vlen ||
		    memchr(p + off, '\0', vlen) != NULL)
			return -EBADMSG;
		e->value = secrets_value_new((const char *)p + off, vlen);
		e->len = vlen;
		off += vlen;
	}
	return 0;
}

static int
secrets_store_decrypt(struct secrets *s, const unsigned char *buf, size_t len,
    char **cause)
{
	unsigned char *plain;
	size_t plen, bad = 0;
	int r;

	if (len < SECRETS_MAGIC_LEN ||
	    memcmp(buf, SECRETS_MAGIC, SECRETS_MAGIC_LEN) != 0)
		return errors_cause(cause, -EBADMSG,
		    "%s is not a secret store (no %s header)", s->store_path,
		    SECRETS_MAGIC);
	if (len < SECRETS_HEADER_LEN + crypto_secretbox_MACBYTES)
		return errors_cause(cause, -EBADMSG,
		    "%s is truncated (%zu bytes)", s->store_path, len);
	plen = len - SECRETS_HEADER_LEN - crypto_secretbox_MACBYTES;
	plain = xsodium_malloc(plen + 1);
	if (crypto_secretbox_open_easy(plain, buf + SECRETS_HEADER_LEN,
		len - SECRETS_HEADER_LEN, buf + SECRETS_MAGIC_LEN, s->key) != 0)
		r = errors_cause(cause, -EBADMSG,
		    "cannot decrypt %s with the key from %s: the key is wrong, or the file is damaged or truncated",
		    s->store_path, secrets_key_source(s));
	else if ((r = secrets_decode(s, plain, plen, &bad)) < 0)
		r = errors_cause(cause, r,
		    "%s is damaged: bad record at byte %zu of its plaintext",
		    s->store_path, bad);
	sodium_free(plain);
	return r;
}

int
secrets_open(const char *store_path, const char *key_path, struct secrets **ret,
    char **cause)
{
	unsigned char *file = NULL;
	size_t file_len = 0;
	struct secrets *s;
	int r;

	if (sodium_init() < 0)
		return errors_cause(cause, -EIO,
		    "libsodium failed to initialise");
	s = xcalloc(1, sizeof *s);
	s->store_path = xstrdup(store_path);
	s->key = xsodium_malloc(SECRETS_KEY_LEN);
	r = secrets_store_read(store_path, &file, &file_len, cause);
	if (r == 0)
		r = secrets_key_credential(s, cause);
	if (r == 0)
		r = secrets_key_file(s, key_path, file != NULL, cause);
	if (r >= 0) {
		sodium_mprotect_readonly(s->key);
		r = 0;
		if (file != NULL)
			r = secrets_store_decrypt(s, file, file_len, cause);
	}
	free(file);
	if (r < 0) {
		secrets_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void
secrets_free(struct secrets *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		secrets_entry_clear(&s->entries[i]);
	free(s->entries);
	sodium_free(s->key);
	free(s->key_path);
	free(s->store_path);
	free(s);
}

static size_t
secrets_encode_one(unsigned char *out, const struct secrets_entry *e)
{
	size_t nlen = strlen(e->name);

	if (out != NULL) {
		out[0] = nlen & 0xff;
		out[1] = nlen >> 8 & 0xff;
		memcpy(out + 2, e->name, nlen);
		out += 2 + nlen;
		out[0] = e->len & 0xff;
		out[1] = e->len >> 8 & 0xff;
		out[2] = e->len >> 16 & 0xff;
		out[3] = e->len >> 24 & 0xff;
		memcpy(out + 4, e->value, e->len);
	}
	return 2 + nlen + 4 + e->len;
}

/*
 * The plaintext of the store with one change at index at: put inserted
 * there (is_insert) or replacing the entry there, or with put NULL the entry
 * there left out. With out NULL, only its length.
 */
static size_t
secrets_encode(const struct secrets *s, size_t at, bool is_insert,
    const struct secrets_entry *put, unsigned char *out)
{
	size_t len = 0;

	for (size_t i = 0; i <= s->n; i++) {
		if (i == at && put != NULL)
			len += secrets_encode_one(out ? out + len : NULL, put);
		if (i == s->n)
			break;
		if (i == at && (put == NULL || !is_insert))
			continue;
		len += secrets_encode_one(out ? out + len : NULL,
		    &s->entries[i]);
	}
	return len;
}

/* Encrypts the store with one change (as secrets_encode) and writes it. */
static int
secrets_store_write(const struct secrets *s, size_t at, bool is_insert,
    const struct secrets_entry *put, char **cause)
{
	size_t plen = secrets_encode(s, at, is_insert, put, NULL), len;
	unsigned char *plain, *buf;
	int r;

	if (plen > SECRETS_STORE_MAX)
		return errors_cause(cause, -EFBIG,
		    "the secret store would grow past %d bytes",
		    SECRETS_STORE_MAX);
	len = SECRETS_HEADER_LEN + crypto_secretbox_MACBYTES + plen;
	plain = xsodium_malloc(plen + 1);
	buf = xmalloc(len);
	secrets_encode(s, at, is_insert, put, plain);
	memcpy(buf, SECRETS_MAGIC, SECRETS_MAGIC_LEN);
	randombytes_buf(buf + SECRETS_MAGIC_LEN, crypto_secretbox_NONCEBYTES);
	crypto_secretbox_easy(buf + SECRETS_HEADER_LEN, plain, plen,
	    buf + SECRETS_MAGIC_LEN, s->key);
	sodium_free(plain);
	r = fileio_write_atomic(s->store_path, buf, len, 0600, cause);
	free(buf);
	return r;
}

/* -EINVAL, saying what a name may be, when name is not one. */
static int
secrets_name_check(const char *name, char **cause)
{
	if (names_secret_valid(name))
		return 0;
	return errors_cause(cause, -EINVAL,
	    "a secret name is 1 to %d letters, digits, '_' or '.'",
	    NAMES_SECRET_MAX);
}

int
secrets_set(struct secrets *s, const char *name, const char *value, size_t len,
    char **cause)
{
	struct secrets_entry put = { NULL, NULL, len };
	bool found;
	size_t at;
	int r;

	if (secrets_name_check(name, cause) < 0)
		return -EINVAL;
	if (len > SECRETS_VALUE_MAX)
		return errors_cause(cause, -EINVAL,
		    "a secret value is at most %d bytes", SECRETS_VALUE_MAX);
	if (len > 0 && memchr(value, '\0', len) != NULL)
		return errors_cause(cause, -EINVAL,
		    "a secret value may not contain NUL bytes");
	at = secrets_find(s, name, &found);
	/* Everything the change needs is allocated before the file changes. */
	if (!found) {
		secrets_grow(s);
		put.name = xstrdup(name);
	}
	if (found)
		put.name = s->entries[at].name;
	put.value = secrets_value_new(value, len);
	if ((r = secrets_store_write(s, at, !found, &put, cause)) < 0) {
		if (!found)
			free(put.name);
		sodium_free(put.value);
		return r;
	}
	if (found) {
		sodium_free(s->entries[at].value);
	} else {
		memmove(&s->entries[at + 1], &s->entries[at],
		    (s->n - at) * sizeof *s->entries);
		s->n++;
	}
	s->entries[at] = put;
	return 0;
}

int
secrets_remove(struct secrets *s, const char *name, bool *ret_removed,
    char **cause)
{
	bool found;
	size_t at;
	int r;

	if (secrets_name_check(name, cause) < 0)
		return -EINVAL;
	at = secrets_find(s, name, &found);
	if (found) {
		if ((r = secrets_store_write(s, at, false, NULL, cause)) < 0)
			return r;
		secrets_entry_clear(&s->entries[at]);
		memmove(&s->entries[at], &s->entries[at + 1],
		    (s->n - at - 1) * sizeof *s->entries);
		s->n--;
	}
	if (ret_removed != NULL)
		*ret_removed = found;
	return 0;
}

const char *
secrets_get(const struct secrets *s, const char *name)
{
	bool found;
	size_t at;

	if (!names_secret_valid(name))
		return NULL;
	at = secrets_find(s, name, &found);
	return found ? s->entries[at].value : NULL;
}

json_t *
secrets_names(const struct secrets *s)
{
	json_t *names = json_array();

	if (names == NULL)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (json_array_append_new(names,
			json_string(s->entries[i].name)) < 0) {
			json_decref(names);
			return NULL;
		}
	return names;
}

const char *
secrets_key_source(const struct secrets *s)
{
	return s->key_path != NULL ? s->key_path : "credential";
}
