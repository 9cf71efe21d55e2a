# SPDX-License-Identifier: ISC
# mcpd: one non-recursive GNU Makefile. See README.md.

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
MANDIR	?= $(PREFIX)/share/man
# The user units go where systemd's pkg-config file says for PREFIX
# (/usr/local/lib/systemd/user, /usr/lib/systemd/user); under $HOME, or
# without systemd's .pc, to PREFIX/share/systemd/user (~/.local/share is
# $XDG_DATA_HOME, which the user manager also searches).
UNITDIR	?= $(or $(if $(filter $(HOME)/%,$(PREFIX)),,$(shell $(PKG_CONFIG) \
	--define-variable=prefix=$(PREFIX) --variable=systemduserunitdir \
	systemd 2>/dev/null)),$(PREFIX)/share/systemd/user)
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Discovery's data: the registry contract and the local catalog.
PKGDATADIR ?= $(PREFIX)/share/mcpd
BUILD	?= build
CC	?= cc
PKG_CONFIG ?= pkg-config
PYTEST	?= pytest-3
VERSION	:= 0.2.0

PKGS	:= libevent libevent_openssl jansson libsystemd openssl libsodium \
	   libpcre2-8
# mcpctl links only what it uses (the daemon's journal, TLS and secrets
# are not its business). By default it is built like mcpd: $(CC), the
# system's libraries through pkg-config, dynamically. MUSL=1 builds it
# statically with musl-gcc instead, against jansson, libevent's core and
# PCRE2 compiled for musl into MUSL_DEPS by scripts/musl-deps (run by hand: it
# fetches Debian's source packages; make never fetches anything): a warm
# `mcpctl call` is mostly process start-up, and glibc's runs some 40 CPUID
# instructions, which trap in a virtual machine (12-15 us each on the VM
# this was measured on: a static program that does nothing starts in
# 1.2 ms with glibc, 0.16 ms with musl). MUSL=auto (the default) is MUSL=1
# when musl-gcc and $(MUSL_DEPS)/lib/libpcre2-8.a are both there, else
# MUSL=0.
# An ASan build is glibc's, linked dynamically (ASan needs it).
MUSL	  ?= auto
CTL_PKGS  := libevent_core jansson libpcre2-8
MUSL_DEPS ?= build-musl
ifeq ($(SANITIZE),1)
USE_MUSL  := 0
else ifeq ($(MUSL),auto)
USE_MUSL  := $(if $(and $(shell command -v musl-gcc),$(wildcard $(MUSL_DEPS)/lib/libpcre2-8.a)),1,0)
else
USE_MUSL  := $(MUSL)
endif
ifeq ($(USE_MUSL),1)
CTL_CC	   = musl-gcc
CTL_CFLAGS = $(BASE_CFLAGS) -I$(MUSL_DEPS)/include
CTL_LINK   = -static -L$(MUSL_DEPS)/lib -levent_core -ljansson -lpcre2-8
CTL_DEPS  := musl-check
CTL_OBJDIR := obj-ctl-musl
else
CTL_CC	   = $(CC)
CTL_CFLAGS = $(BASE_CFLAGS) $(shell $(PKG_CONFIG) --cflags $(CTL_PKGS))
CTL_LINK   = $(shell $(PKG_CONFIG) --libs $(CTL_PKGS))
CTL_DEPS  :=
CTL_OBJDIR := obj-ctl
endif
# mcpd loads libevent_openssl (and OpenSSL) on its first TLS connection.
MCPD_PKGS := libevent jansson libsystemd libsodium libpcre2-8
WARN	:= -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	   -Wpointer-arith -Wcast-qual
CFLAGS	?= -O2 -g
ifeq ($(SANITIZE),1)
CFLAGS	+= -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=undefined -DMCPD_STRICT_STATES
LDFLAGS	+= -fsanitize=address,undefined
endif
ifeq ($(WERROR),1)
WARN	+= -Werror
endif
# Recursive (=) on purpose: pkg-config runs when a rule needs it, after
# scripts/install-deps had its chance to install the libraries.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs $(PKGS)) -lm
MCPD_LIBS  = $(shell $(PKG_CONFIG) --libs $(MCPD_PKGS)) -lm
# What every object is compiled with, but where its libraries' headers are.
BASE_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CPPFLAGS) $(CFLAGS) -MMD -MP \
	     -Icommon \
	     -DMCPD_VERSION='"$(VERSION)"' -DMCPD_DATADIR='"$(PKGDATADIR)"'
ALL_CFLAGS = $(BASE_CFLAGS) $(PKG_CFLAGS)

COMMON_SRC := $(sort $(wildcard common/*.c))
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
CTL_SRC	   := $(sort $(wildcard ctl/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/test-*.c))
BENCH_SRC  := $(sort $(wildcard bench/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
DAEMON_OBJ := $(call obj,$(DAEMON_SRC))
ctlobj = $(patsubst %.c,$(BUILD)/$(CTL_OBJDIR)/%.o,$(1))
CTL_OBJ	   := $(call ctlobj,$(CTL_SRC))
CTL_COMMON := $(call ctlobj,$(COMMON_SRC))
DAEMON_LIB := $(filter-out $(BUILD)/obj/daemon/mcpd.o,$(DAEMON_OBJ))

MCPD	   := $(BUILD)/mcpd
MCPCTL	   := $(BUILD)/mcpctl
TESTSERVER := $(BUILD)/mcp-testserver
UNITS	   := $(patsubst tests/unit/%.c,$(BUILD)/%,$(UNIT_SRC))
BENCHES	   := $(patsubst bench/%.c,$(BUILD)/%,$(BENCH_SRC))

.PHONY: all deps run check check-unit check-integration check-conformance \
	check-asan check-stress check-distro states-doc bench lint install uninstall deb \
	clean fuzz fuzz-build musl-check tls-soname FORCE

all: $(MCPD) $(MCPCTL) $(TESTSERVER) $(UNITS) $(BENCHES)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# mcpd dlopens libevent_openssl on its first TLS connection (daemon/net-tls.c,
# doc/design-notes.md); its soname is read here from the library that
# pkg-config names, so that mcpd loads the one it was built against.
OBJDUMP ?= objdump
TLS_SONAME = $(shell $(OBJDUMP) -p \
	"$$($(PKG_CONFIG) --variable=libdir libevent_openssl)/libevent_openssl.so" \
	2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
$(BUILD)/obj/daemon/net-tls.o: daemon/net-tls.c
	@mkdir -p $(dir $@)
	@test -n "$(TLS_SONAME)" || { echo "$@: no SONAME in libevent_openssl.so in $$($(PKG_CONFIG) --variable=libdir libevent_openssl) ($(OBJDUMP) -p)" >&2; exit 1; }
	$(CC) $(ALL_CFLAGS) -DMCPD_TLS_LIBRARY='"$(TLS_SONAME)"' -c -o $@ $<

tls-soname:
	@echo $(TLS_SONAME)

$(MCPD): $(DAEMON_OBJ) $(COMMON_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(MCPD_LIBS)

$(BUILD)/$(CTL_OBJDIR)/%.o: %.c | $(CTL_DEPS)
	@mkdir -p $(dir $@)
	$(CTL_CC) $(CTL_CFLAGS) -c -o $@ $<

musl-check:
	@command -v musl-gcc >/dev/null || { echo "MUSL=1: musl-gcc not found: install musl-tools, then run scripts/musl-deps $(MUSL_DEPS)" >&2; exit 1; }
	@test -f $(MUSL_DEPS)/lib/libpcre2-8.a || { echo "MUSL=1: $(MUSL_DEPS)/lib/libpcre2-8.a not found: run scripts/musl-deps $(MUSL_DEPS) first (it fetches Debian's jansson, libevent and pcre2 sources and builds them with musl)" >&2; exit 1; }

# From an archive, mcpctl takes only the common modules it uses.
$(BUILD)/$(CTL_OBJDIR)/libcommon-ctl.a: $(CTL_COMMON)
	rm -f $@
	ar rcs $@ $^

# Changes when MUSL does, so that mcpctl is linked again from the other
# objects even when they are older than it.
$(BUILD)/mcpctl.kind: FORCE
	@mkdir -p $(dir $@)
	@echo $(CTL_OBJDIR) | cmp -s - $@ || echo $(CTL_OBJDIR) >$@

$(MCPCTL): $(CTL_OBJ) $(BUILD)/$(CTL_OBJDIR)/libcommon-ctl.a $(BUILD)/mcpctl.kind
	$(CTL_CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(CTL_LINK)

# Unit tests of daemon modules see the daemon's header; nothing else does.
$(BUILD)/obj/tests/unit/%.o: ALL_CFLAGS += -Idaemon

# Unit tests link the daemon's objects from an archive, so that a test
# pulls in only the modules it uses (and their stubs).
$(BUILD)/libmcpd.a: $(DAEMON_LIB) $(COMMON_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/test-%: $(BUILD)/obj/tests/unit/test-%.o $(BUILD)/libmcpd.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/%: $(BUILD)/obj/bench/%.o $(COMMON_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The test server is static so that it runs inside a bare container image
# (tests/images/build). That needs libjansson.a and libc.a, which not every
# distribution ships (Fedora and Arch have no libjansson.a): without them
# it is linked dynamically, and the container tests refuse it and say so.
TESTSERVER_SRC := tests/servers/mcp-testserver.c \
	tests/servers/testserver-conformance.c
TESTSERVER_STATIC = $(and \
	$(wildcard $(shell $(PKG_CONFIG) --variable=libdir jansson)/libjansson.a), \
	$(filter /%,$(shell $(CC) -print-file-name=libc.a)))
$(TESTSERVER): $(TESTSERVER_SRC) tests/servers/testserver.h
	@mkdir -p $(dir $@)
	$(if $(TESTSERVER_STATIC),,@echo "$@: no static libjansson.a or libc.a here: linked dynamically, so the container tests cannot use it" >&2)
	$(CC) -std=gnu11 $(WARN) -O2 -g -o $@ $(TESTSERVER_SRC) \
	    $(shell $(PKG_CONFIG) --cflags jansson) \
	    $(if $(TESTSERVER_STATIC),-static -l:libjansson.a,$(shell $(PKG_CONFIG) --libs jansson))

deps:
	@scripts/install-deps

run: deps
	@$(MAKE) --no-print-directory $(MCPD) $(MCPCTL)
	$(MCPD) -d

check: deps
	@scripts/install-deps --test-peers
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-unit check-integration \
	    check-conformance

check-unit: $(UNITS)
	prove -f $(UNITS)

# doc/states.md's blocks, printed anew from the state tables.
states-doc: $(BUILD)/test-states
	MCPD_WRITE_STATES=1 $(BUILD)/test-states

check-integration: $(MCPD) $(MCPCTL) $(TESTSERVER)
	MCPD_BUILD=$(abspath $(BUILD)) $(PYTEST) -q -ra tests/integration

# The official MCP conformance harness: mcpd and mcpctl as the client, then
# mcpd's HTTP front as the server (both run; either failing fails).
check-conformance: $(MCPD) $(MCPCTL) $(TESTSERVER)
	@rc=0; tests/conformance/run $(abspath $(BUILD)) || rc=1; \
	    tests/conformance/server $(abspath $(BUILD)) || rc=1; exit $$rc

# The integration suite beside a CPU hog on every core, STRESS_RUNS times
# in a row (default 3): a test that depends on timing fails here.
check-stress: $(MCPD) $(MCPCTL) $(TESTSERVER)
	PYTEST=$(PYTEST) scripts/check-stress $(abspath $(BUILD))

check-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1 check

# Debian 13 in a chroot under $(BUILD)/distro (kept for the next run):
# build, unit tests, make deb, and the package installed, run and purged.
check-distro:
	scripts/check-distro $(BUILD)/distro

bench: deps
	@scripts/install-deps --test-peers --bench
	@$(MAKE) --no-print-directory all
	bench/run $(abspath $(BUILD))

# libFuzzer targets (tests/fuzz/README.md): clang, its own build dir, each
# target run for FUZZ_SECONDS; a crash input is kept under
# $(FUZZ_BUILD)/crashes/<target>/ and fails the make.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_CC	     ?= clang
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-fno-omit-frame-pointer
FUZZ_CFLAGS  = -std=gnu11 -D_GNU_SOURCE -O1 -g $(FUZZ_SAN) $(WARN) \
	       -Icommon -Idaemon -Ictl $(PKG_CFLAGS)
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz-%.c,%,$(FUZZ_SRC))
FUZZ_BINS    := $(patsubst %,$(FUZZ_BUILD)/fuzz-%,$(FUZZ_TARGETS))
# The parsers the targets reach: every common/ module, the daemon's HTTP
# response parser and mcpctl's JSON-with-comments reader.
FUZZ_LIB_SRC := $(COMMON_SRC) daemon/net-http-parse.c ctl/jsonc.c
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SRC))

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/libfuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/fuzz-%.o $(FUZZ_BUILD)/libfuzz.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz:
	@scripts/install-deps --fuzz
	@$(MAKE) --no-print-directory fuzz-build
	tests/fuzz/run $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

lint:
	mandoc -Tlint -W warning man/*.[1-9]
	clang-format --dry-run --Werror common/*.[ch] daemon/*.[ch] ctl/*.[ch] \
	    tests/unit/*.[ch] tests/servers/*.c tests/fuzz/*.c bench/*.c
	@# The server layer answers its callers through server-reply.h only.
	@! grep -n 'control_[a-z_]*\|control-int\.h' daemon/server*.[ch] || \
	    { echo "daemon/server*: the server layer calls the control layer; answer through struct server_reply (doc/architecture.md)" >&2; exit 1; }
	@# ... and tells the gateway and the HTTP front through server-watch.h only.
	@! grep -n '\<\(gateway\|httpd\)_[a-z_]*\|struct gateway\>\|"\(gateway\|httpd\|httpd-int\)\.h"' daemon/server*.[ch] || \
	    { echo "daemon/server*: the server layer calls the gateway or the HTTP front; tell them through struct server_watch (daemon/server-watch.h, doc/architecture.md)" >&2; exit 1; }
	@# ... and hands the policy and the audit log values, never a request.
	@! grep -n 'struct request\>\|->req\>' daemon/server*.[ch] || \
	    { echo "daemon/server*: the server layer handles a control request; give the policy and the audit log a struct call_who (doc/architecture.md)" >&2; exit 1; }

install: $(MCPD) $(MCPCTL)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(MCPD) $(MCPCTL) $(DESTDIR)$(BINDIR)
	install -m 0644 ctl/mcpctl.bash-completion \
	    $(DESTDIR)$(BASHCOMPDIR)/mcpctl
	install -m 0644 man/mcpctl.1 $(DESTDIR)$(MANDIR)/man1
	install -m 0644 man/mcpd-protocol.7 $(DESTDIR)$(MANDIR)/man7
	install -m 0644 man/mcpd.8 $(DESTDIR)$(MANDIR)/man8
	install -d $(DESTDIR)$(PKGDATADIR)/registry
	install -m 0644 data/catalog.json $(DESTDIR)$(PKGDATADIR)
	install -m 0644 data/registry/openapi.json data/registry/LICENSE \
	    data/registry/README.md $(DESTDIR)$(PKGDATADIR)/registry
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/mcpd.service > \
	    $(DESTDIR)$(UNITDIR)/mcpd.service
	install -m 0644 systemd/mcpd.socket $(DESTDIR)$(UNITDIR)

# What install put there; of the directories, only share/mcpd's.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mcpd $(DESTDIR)$(BINDIR)/mcpctl \
	    $(DESTDIR)$(BASHCOMPDIR)/mcpctl $(DESTDIR)$(MANDIR)/man1/mcpctl.1 \
	    $(DESTDIR)$(MANDIR)/man7/mcpd-protocol.7 \
	    $(DESTDIR)$(MANDIR)/man8/mcpd.8 $(DESTDIR)$(PKGDATADIR)/catalog.json \
	    $(addprefix $(DESTDIR)$(PKGDATADIR)/registry/,openapi.json LICENSE \
	    README.md) $(DESTDIR)$(UNITDIR)/mcpd.service \
	    $(DESTDIR)$(UNITDIR)/mcpd.socket
	rmdir $(DESTDIR)$(PKGDATADIR)/registry $(DESTDIR)$(PKGDATADIR)

# The Debian package (debian/), built from a copy of the tree; the .deb,
# .changes and .buildinfo land in $(BUILD)/deb, checked by lintian.
deb:
	@scripts/install-deps --deb
	scripts/build-deb $(BUILD)/deb

# build-musl stays: what scripts/musl-deps fetched and built (remove it by
# hand to build it again). --one-file-system: a chroot of check-distro
# left mounted (it never should be) is not emptied through its mounts.
clean:
	rm -rf --one-file-system build build-asan build-fuzz

-include $(shell find $(BUILD)/obj $(BUILD)/obj-ctl $(BUILD)/obj-ctl-musl \
    $(FUZZ_BUILD)/obj \
    -name '*.d' 2>/dev/null)
