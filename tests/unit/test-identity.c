/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/state-identity.c: the key file, did:key and derived ids. */
#include <sys/stat.h>

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd.h"
#include "tap.h"

/*
 * A published vector (decentralized-identity's DWN interoperability mock
 * client): this Ed25519 seed has the public key
 * HrBXe7XnjMbscM1roSDTSMCcLNraetDQM9wSVjnzDxn3 and this did:key.
 */
static const unsigned char vector_seed[32] = { 0x70, 0x52, 0xad, 0xea, 0x8f,
	0x98, 0x23, 0x81, 0x70, 0x65, 0x45, 0x6e, 0xca, 0xd5, 0xbf, 0x24, 0xdc,
	0xd3, 0x1a, 0x69, 0x8f, 0x7b, 0xc9, 0xa0, 0xb5, 0xfc, 0x17, 0x08, 0x49,
	0xaf, 0x42, 0x26 };
static const char vector_did[] =
    "did:key:z6MkwJSaEMnE4u6LiqrZV1BJHSkc9x8S4mTm3ArNL1m19BZR";

static char *
test_dir(void)
{
	char *dir = strdup("/tmp/mcpd-test-identity.XXXXXX");

	if (dir == NULL || mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	return dir;
}

static void
test_dir_remove(char *dir)
{
	char path[256];

	snprintf(path, sizeof path, "%s/identity.key", dir);
	unlink(path);
	rmdir(dir);
	free(dir);
}

static void
write_key(const char *dir, const unsigned char *seed, mode_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/identity.key", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, seed, 32) != 32 || fchmod(fd, mode) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static void
test_known_vector(void)
{
	char *dir = test_dir(), *cause = NULL;

	write_key(dir, vector_seed, 0600);
	TAP_CHECK_INT(identity_load(dir, &cause), 0);
	TAP_CHECK_STR(identity_did(), vector_did);
	free(cause);
	test_dir_remove(dir);
}

static void
test_created_once_and_kept(void)
{
	char *dir = test_dir(), *cause = NULL, path[256], first[128];
	struct stat st;

	TAP_CHECK_INT(identity_load(dir, &cause), 0);
	snprintf(path, sizeof path, "%s/identity.key", dir);
	TAP_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "the key file is created with mode 0600");
	TAP_CHECK(strncmp(identity_did(), "did:key:z6Mk", 12) == 0,
	    "an Ed25519 did:key starts with z6Mk: %s", identity_did());
	snprintf(first, sizeof first, "%s", identity_did());
	TAP_CHECK_INT(identity_load(dir, &cause), 0);
	TAP_CHECK_STR(identity_did(), first);
	free(cause);
	test_dir_remove(dir);
}

static void
test_loose_mode_refused(void)
{
	char *dir = test_dir(), *cause = NULL;

	write_key(dir, vector_seed, 0644);
	TAP_CHECK(identity_load(dir, &cause) < 0, "mode 0644 is refused");
	TAP_CHECK(cause != NULL && strstr(cause, "0600") != NULL &&
		strstr(cause, "chmod") != NULL,
	    "the refusal says what to do: %s", cause ? cause : "(none)");
	free(cause);
	test_dir_remove(dir);
}

static bool
is_hex12(const char *s)
{
	if (s == NULL || strlen(s) != 12)
		return false;
	for (; *s != '\0'; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return false;
	return true;
}

static void
test_derived_ids(void)
{
	char *dir = test_dir(), *cause = NULL;
	char *a = NULL, *b = NULL, *a2 = NULL, *i1, *i2, *i3, *i4;

	write_key(dir, vector_seed, 0600);
	TAP_CHECK_INT(identity_load(dir, &cause), 0);
	a = identity_agent_did("alpha");
	a2 = identity_agent_did("alpha");
	b = identity_agent_did("beta");
	TAP_CHECK_STR(a, a2);
	TAP_CHECK(strcmp(a, b) != 0 && strcmp(a, vector_did) != 0,
	    "agents get their own identities");
	i1 = identity_connection_id("alpha", "process", "x", 1);
	i2 = identity_connection_id("alpha", "process", "x", 1);
	i3 = identity_connection_id("beta", "process", "x", 1);
	i4 = identity_connection_id("alpha", "remote", "x", 1);
	TAP_CHECK(is_hex12(i1), "an id is 12 lower-case hex digits: %s",
	    i1 != NULL ? i1 : "(null)");
	TAP_CHECK_STR(i1, i2);
	TAP_CHECK(strcmp(i1, i3) != 0 && strcmp(i1, i4) != 0,
	    "agent and mode change the id");
	free(a), free(a2), free(b);
	free(i1), free(i2), free(i3), free(i4);
	free(cause);
	test_dir_remove(dir);
}

static const struct tap_test tests[] = {
	{ "a published seed gives its published did:key", test_known_vector },
	{ "the key is made once, 0600, and read back",
	    test_created_once_and_kept },
	{ "a key file readable by others is refused", test_loose_mode_refused },
	{ "agent identities and connection ids are stable and distinct",
	    test_derived_ids },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
