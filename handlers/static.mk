# handlers/static.mk -- make static: self-contained programs for hosts where you
# cannot install libfcgi, SQLite or OpenSSL (shared hosting, old systems).
#
#   make static                 $(BUILD)/static/<provider>.fcgi and idemhook
#   make static STATIC_DIR=dir  elsewhere
#
# Everything, glibc included, is linked statically (-static): the programs
# need no shared library at all (ldd: "not a dynamic executable"), so one
# x86-64 build runs on any x86-64 Linux. The objects are built without
# sanitizers at -O2 in $(STATIC_DIR)/build, apart from every other build.
# The linker warns that getaddrinfo/dlopen in a static program need the
# build machine's glibc at run time: the programs use neither (they listen
# on the socket the web server hands them, or run as CGI).
#
# STATIC=1 (IH_STATIC): run as plain CGI, the programs read no openssl.cnf
# unless OPENSSL_CONF names one, since the path built into them is the
# build machine's (shared/verify.h).
#
# The static programs are SQLite-only (NO_PG=1): Debian ships libpq.a but
# not the Kerberos and LDAP archives it needs, so libpq cannot be linked
# statically; a postgresql:// IDEMHOOK_DB gets a clear refusal.  For the
# same reason the static idemhook has no libcurl (NO_CURL=1): catch-up
# and health say they need the dynamic build.
#
# make check builds them into $(BUILD)/san/static, where
# tests/e2e/test_static.py looks for them next to the binaries it tests.

STATIC_DIR  ?= $(BUILD)/static
# Debian ships static yajl as libyajl_s.a, so it is named by file.
STATIC_LIBS  = -lfcgi -lsqlite3 -l:libyajl_s.a -lcrypto -lm -lpthread -ldl
# Stripped (about 6 MB each instead of 7); the objects keep -g.
STATIC_LDFLAGS ?= -s
STATIC_PROGRAMS = $(PROVIDERS:%=$(STATIC_DIR)/%.fcgi) $(STATIC_DIR)/console.fcgi \
	$(STATIC_DIR)/idemhook

.PHONY: static static-programs static-check

# A separate make, so that the static objects get their own flags.
static:
	$(MAKE) BUILD=$(STATIC_DIR)/build SANITIZE=0 FAULTS=0 STATIC=1 NO_PG=1 \
	    NO_CURL=1 CFLAGS='-O2 -g' \
	    STATIC_DIR=$(STATIC_DIR) static-programs

# Run inside static's make, where $(BUILD) is $(STATIC_DIR)/build.
static-programs: $(STATIC_PROGRAMS)

# The linker's warnings about getaddrinfo, gethostbyname and dlopen (see
# above) are expected and filtered out; any other output is shown.
STATIC_LINK = $(CC) -static $(STATIC_LDFLAGS) $(LDFLAGS) -o $@ $^ \
	$(STATIC_LIBS) 2>$@.ld || { cat $@.ld; rm -f $@.ld; exit 1; }; \
	grep -v -e 'in statically linked applications requires' \
	    -e ': in function' $@.ld >&2; rm -f $@.ld; test -s $@

$(PROVIDERS:%=$(STATIC_DIR)/%.fcgi): $(STATIC_DIR)/%.fcgi: $(RECEIVER_OBJS) $(LIB)
	@mkdir -p $(@D)
	@echo "  STATIC  $@"
	@$(STATIC_LINK)

$(STATIC_DIR)/console.fcgi: $(CONSOLE_OBJS) $(LIB)
	@mkdir -p $(@D)
	@echo "  STATIC  $@"
	@$(STATIC_LINK)

$(STATIC_DIR)/idemhook: $(CLI_OBJS) $(HANDLER_OBJS) $(LIB)
	@mkdir -p $(@D)
	@echo "  STATIC  $@"
	@$(STATIC_LINK)

# make check: the static programs too, for test_static.py, built beside
# the sanitized build (the Makefile's check-build).
static-check:
	$(MAKE) STATIC_DIR=$(BUILD)/san/static static
