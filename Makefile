# SPDX-License-Identifier: ISC
# cbexec — see README.md.  `make demo` and `make check` install missing
# build dependencies first (build-aux/deps.sh), then build and run.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# site-functions is in the $fpath of every zsh, for its own prefix and for
# /usr/local; a distribution package sets its vendor directory instead
# (Debian: ZSHCOMPDIR=/usr/share/zsh/vendor-completions).
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
# contrib/circuit_breaker.sh, a library to source: . $(PKGDATADIR)/...
PKGDATADIR ?= $(PREFIX)/share/cbexec
PKG_CONFIG ?= pkg-config

# A packager's CPPFLAGS, CFLAGS and LDFLAGS (dpkg-buildflags: the fortify
# and hardening flags, -z relro, -z now) reach every compile and link;
# what cbexec needs is added after them.
CFLAGS ?= -g -O2
override CPPFLAGS += -D_GNU_SOURCE -Iinclude \
	$(shell $(PKG_CONFIG) --cflags libcjson libcrypto libssl hiredis libcurl \
	2>/dev/null)
override CFLAGS += -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter -pthread
# libev is linked statically where its archive is installed (Debian's
# libev-dev has it): resolving its symbols at start-up was a tenth of the
# instructions of a whole invocation.  LIBEV=-lev links it dynamically.
# libcrypto is not linked: src/core/digest.c loads it by its soname on
# the first SHA-256 and names it in an ELF .note.dlopen for packagers
# (README.md, "Packaging"); src/store/tls.c loads libssl the same way for
# a rediss:// store only, src/store/http.c libcurl for an etcd store only.
# Their headers come from pkg-config above.
LIBEV ?= $(or $(wildcard $(shell $(CC) -print-file-name=libev.a \
	2>/dev/null)),-lev)
# hiredis too (libhiredis-dev has libhiredis.a): only --store uses it,
# and loading it cost every invocation a shared object's mapping and
# relocation.  LIBHIREDIS=-lhiredis links it dynamically.
LIBHIREDIS ?= $(or $(wildcard $(shell $(CC) -print-file-name=libhiredis.a \
	2>/dev/null)),$(shell $(PKG_CONFIG) --libs hiredis 2>/dev/null))
# dlopen is in the C library since glibc 2.34 (and in musl); -ldl before.
LIBDL ?= $(shell printf '\043include <dlfcn.h>\nint main(void) { return \
	dlopen("x", 0) != 0; }\n' | $(CC) -x c -o /dev/null - 2>/dev/null || \
	echo -ldl)
LDLIBS ?= $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null) \
	$(LIBHIREDIS) $(LIBEV) $(LIBDL)

SRC = $(wildcard src/*.c src/*/*.c)
OBJ = $(SRC:.c=.o)
LIBOBJ = $(filter-out src/cbexec.o,$(OBJ))
HDR = $(wildcard include/*.h src/*/*.h)
UNIT = $(patsubst %.c,%.t,$(wildcard t/unit/*.c))
PROVE ?= prove
PROVEFLAGS ?=

all: cbexec

cbexec: $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

# Before the first object is compiled: say which libraries are missing
# instead of failing on the first #include.
$(OBJ): | depcheck
depcheck:
	@CC="$(CC)" PKG_CONFIG="$(PKG_CONFIG)" sh build-aux/deps.sh --check

src/%.o: src/%.c $(HDR)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

t/unit/%.t: t/unit/%.c t/tap.h $(LIBOBJ) $(HDR)
	$(CC) $(CPPFLAGS) $(CFLAGS) -It $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

deps:
	@CC="$(CC)" PKG_CONFIG="$(PKG_CONFIG)" sh build-aux/deps.sh

# Each public target installs what is missing, then re-enters make so the
# pkg-config flags are read with the dependencies present.
check: deps
	@$(MAKE) --no-print-directory test

# Each test's stderr (cbexec's own messages, mostly) is shown only when
# that test fails, after its failed checks with their got/want
# (build-aux/quiet-test).
QUIET_TEST = sh $(CURDIR)/build-aux/quiet-test
# The fault, clock and host shims are built first: a shim that does not build
# with the project's flags fails the check instead of letting the tests
# that need it skip.  --directives lists every skipped check with its
# reason, so a check that did not run is seen.
test: cbexec $(UNIT) t/faultshim.so t/clockshim.so t/hostshim.so
	$(PROVE) --directives $(PROVEFLAGS) --exec '$(QUIET_TEST)' t/unit/*.t t/*.t
	@$(MAKE) --no-print-directory corpus

# The judgement corpus (t/corpus/README.md): every labelled case judged
# by ./cbexec as a run judges it; any false stop fails.
# The tests that start python3 helpers, with python3 a shim that takes
# 3 s to start (as a version manager's does): none may depend on how fast
# its interpreter starts.  `make check` passes the same way with the shim
# first in PATH; this runs only the tests that use it.
SLOWPY_TESTS ?= $(shell grep -l python3 t/*.t)
check-slowpy: cbexec t/faultshim.so t/clockshim.so
	@py=$$(command -v python3) || { echo "check-slowpy: no python3"; exit 1; }; \
	d=$$(mktemp -d) || exit 1; \
	printf '#!/bin/sh\nsleep 3\nexec %s "$$@"\n' "$$py" >"$$d/python3"; \
	chmod +x "$$d/python3"; \
	PATH="$$d:$$PATH" $(PROVE) $(PROVEFLAGS) --directives \
	    --exec '$(QUIET_TEST)' $(SLOWPY_TESTS); rc=$$?; \
	rm -rf "$$d"; exit $$rc

corpus: cbexec t/corpus/loops
	@perl t/corpus/score.pl
	@t/corpus/loops t/corpus

# Record every client again into t/corpus/recorded/ (npm and time: the
# clients run through every scenario), then label the new recordings;
# grok and cline are the clients a config describes (t/agents/docs/).
CORPUS_CLIENTS ?= claude codex gemini qwen opencode pi copilot cn kilo \
	grok cline
corpus-record:
	@for c in $(CORPUS_CLIENTS); do sh t/agents/record.sh $$c || exit 1; done
	@perl t/corpus/label.pl

t/corpus/loops: t/corpus/loops.c $(LIBOBJ) $(HDR)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJ) $(LDLIBS)

dev: deps
	@$(MAKE) --no-print-directory CFLAGS="-g -O2 -Werror" all

asan: deps
	@$(MAKE) --no-print-directory clean
	@$(MAKE) --no-print-directory test \
	  CFLAGS="-g -O1 -Werror -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined"
	@$(MAKE) --no-print-directory clean

demo: deps
	@$(MAKE) --no-print-directory all
	@sh demo/run.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@sh bench/run.sh

# The real agent clients under cbexec against local mocks of their vendors'
# APIs (t/agents/); the pinned clients are installed from npm into a cache
# outside the tree, and the run is skipped when npm cannot be reached.
check-agents: deps
	@$(MAKE) --no-print-directory all
	$(PROVE) $(PROVEFLAGS) --exec sh t/agents/run.sh

VERSION = $(shell sed -n 's/^\#define CBEXEC_VERSION "\(.*\)"/\1/p' src/cbexec.c)

install: cbexec
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
	  $(DESTDIR)$(PKGDATADIR)
	install -m 755 cbexec $(DESTDIR)$(BINDIR)/cbexec
	# The page's footer names cbexec and its version (the source says
	# .Os alone, as mandoc -Tlint wants of a page of no system).
	sed 's/^\.Os$$/.Os cbexec $(VERSION)/' man/cbexec.1 \
	    >$(DESTDIR)$(MANDIR)/man1/cbexec.1
	chmod 644 $(DESTDIR)$(MANDIR)/man1/cbexec.1
	install -m 644 contrib/cbexec.bash $(DESTDIR)$(BASHCOMPDIR)/cbexec
	install -m 644 contrib/_cbexec $(DESTDIR)$(ZSHCOMPDIR)/_cbexec
	install -m 644 contrib/circuit_breaker.sh \
	  $(DESTDIR)$(PKGDATADIR)/circuit_breaker.sh

# Then each directory installed into and its parents, while they are
# empty, up to $(PREFIX) (with DESTDIR: up to DESTDIR), never further.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cbexec $(DESTDIR)$(MANDIR)/man1/cbexec.1 \
	  $(DESTDIR)$(BASHCOMPDIR)/cbexec $(DESTDIR)$(ZSHCOMPDIR)/_cbexec \
	  $(DESTDIR)$(PKGDATADIR)/circuit_breaker.sh
	@floor="$(if $(DESTDIR),$(DESTDIR),$(PREFIX))"; floor=$${floor%/}; \
	for d in $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
	    $(DESTDIR)$(PKGDATADIR); do \
	  while [ "$${d%/}" != "$$floor" ] && \
	      [ "$${d#"$$floor"/}" != "$$d" ] && rmdir "$$d" 2>/dev/null; do \
	    echo "rmdir $$d"; d=$${d%/*}; \
	  done; \
	done

clean:
	rm -f cbexec src/*.o src/*/*.o t/unit/*.t t/faultshim.so t/clockshim.so \
	  t/hostshim.so \
	  t/corpus/loops
	rm -rf t/fuzz/build

# Hardening: fault-injection shim for t/0510-diskfault.t, libFuzzer targets
# (clang; t/fuzz/), and a valgrind pass over part of the shell suite.  None
# of these touch ./cbexec or src/*.o: the fuzz build lives in t/fuzz/build.
# Built with the project's CPPFLAGS (-D_FILE_OFFSET_BITS=64 from
# pkg-config included) and warnings as errors: t/0510-diskfault.t fails,
# never skips, when it does not build.
SHIM_CFLAGS = -shared -fPIC -O2 -Wall -Wextra -Werror
t/faultshim.so: t/faultshim.c
	$(CC) $(CPPFLAGS) $(SHIM_CFLAGS) -o $@ $< -ldl

# A wrong wall clock, for t/0970-store-time.t; a set one, t/0906-readme.t.
t/clockshim.so: t/clockshim.c
	$(CC) $(CPPFLAGS) $(SHIM_CFLAGS) -o $@ $< -ldl

# Another host's name, for the tests of a store shared by several hosts.
t/hostshim.so: t/hostshim.c
	$(CC) -shared -fPIC -O2 -Wall -o $@ $< -ldl

FUZZCC ?= clang
FUZZTIME ?= 60
FUZZ_TARGETS = state status classify duration config apply agent runinput
FUZZ_CFLAGS = -g -O1 -std=c11 -pthread -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJ = $(patsubst src/%.c,t/fuzz/build/%.o,$(filter-out src/cbexec.c,$(SRC)))
FUZZ_BIN = $(patsubst %,t/fuzz/build/fuzz_%,$(FUZZ_TARGETS))
.SECONDARY: $(FUZZ_OBJ)

t/fuzz/build/%.o: src/%.c $(HDR)
	@mkdir -p $(@D)
	$(FUZZCC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

t/fuzz/build/fuzz_%: t/fuzz/fuzz_%.c $(FUZZ_OBJ) $(HDR)
	$(FUZZCC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

# Each target runs FUZZTIME seconds from its seed corpus (t/fuzz/corpus/T,
# never written) into a scratch corpus; a crash leaves its input as
# t/fuzz/build/crash-* and fails the target.
fuzz: $(FUZZ_BIN)
	@fail=; for t in $(FUZZ_TARGETS); do \
	  mkdir -p t/fuzz/build/corpus-$$t || exit 1; \
	  echo "fuzz_$$t: $(FUZZTIME)s"; \
	  if t/fuzz/build/fuzz_$$t -max_total_time=$(FUZZTIME) -timeout=10 \
	    -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix=t/fuzz/build/ t/fuzz/build/corpus-$$t \
	    t/fuzz/corpus/$$t 2>t/fuzz/build/fuzz_$$t.log; then \
	    grep -E '^Done' t/fuzz/build/fuzz_$$t.log; \
	  else \
	    tail -n 40 t/fuzz/build/fuzz_$$t.log; fail="$$fail $$t"; \
	  fi; \
	done; \
	if [ -n "$$fail" ]; then echo "fuzz: FAILED:$$fail" >&2; exit 1; fi

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=20

# The wrapper runs cbexec under valgrind; t/lib.sh takes it from $CBEXEC.
# Every shell test by default (4 minutes here); CI names a subset.
VALGRIND_TESTS ?= $(wildcard t/*.t)
valgrind: cbexec
	CBEXEC=$(CURDIR)/t/valgrind-cbexec $(PROVE) $(PROVEFLAGS) \
	  --exec '$(QUIET_TEST)' $(VALGRIND_TESTS)

.PHONY: fuzz fuzz-smoke valgrind

.PHONY: all deps depcheck check check-slowpy test corpus corpus-record dev asan demo bench check-agents \
	install uninstall clean
