# idemhook -- per-provider FastCGI webhook receivers on one static library.
#
#   make            build $(BUILD)/libidemhook.a and every program
#   make check      every test (unit and end to end), under ASan and UBSan
#   make demo       a real lighttpd on 127.0.0.1 with every endpoint
#   make deps-build the packages building needs (make deps: what make
#                   check needs; make deps-demo: building and lighttpd)
#   make clean
#
# BUILD selects the output directory, so that several builds (or several
# people) can share one checkout: make BUILD=/tmp/mine check.

BUILD    ?= build
# V=1 shows every command.
V        ?= 0
ifeq ($(V),1)
Q =
else
Q = @
endif
PREFIX   ?= /usr/local
CC       ?= cc
SANITIZE ?= 0

# The providers: one handlers/<name>.c each, built as <name>.fcgi.
PROVIDERS = stripe github shopify asaas standard

PKGS      = sqlite3 libcrypto fcgi yajl $(if $(filter 1,$(NO_PG)),,libpq)
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || \
	echo -lsqlite3 -lcrypto -lfcgi -lyajl -lpq)
# The programs do not link libpq: the PostgreSQL backend loads it with
# dlopen() when a postgresql:// store is opened (shared/store/pg_dl.h), so
# a receiver on SQLite never pays the start-up of libpq and its ~20
# libraries (a plain CGI delivery's largest cost).  The unit tests call
# libpq themselves and link it.
PROG_PKGS  = sqlite3 libcrypto fcgi yajl
PROG_LIBS := $(shell pkg-config --libs $(PROG_PKGS) 2>/dev/null || \
	echo -lsqlite3 -lcrypto -lfcgi -lyajl)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# libcurl: the idemhook command links it (catch-up and health call the
# providers' APIs); the receivers load it with dlopen() at their first
# forwarded event (shared/forward_http.c), as they load libpq, so that a
# CGI delivery without forwarding pays nothing for it.  NO_CURL=1 (the
# static build) links handlers/cli/api_none.c and
# shared/forward_http_none.c instead, which refuse every call and every
# forwarding setting.
ifeq ($(NO_CURL),1)
API_HTTP_OBJ = $(BUILD)/obj/handlers/cli/api_none.o
CURL_OUT     = shared/forward_http.c
CURL_LIBS    =
# The programs say what this build cannot do (store_thin.h).
CPPFLAGS    += -DIH_NO_HTTP_CLIENT
else
API_HTTP_OBJ = $(BUILD)/obj/handlers/cli/api_http.o
CURL_OUT     = shared/forward_http_none.c
CURL_CFLAGS := $(shell pkg-config --cflags libcurl 2>/dev/null)
CURL_LIBS   := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
endif

WARN = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wmissing-declarations -Wpointer-arith \
	-Wsign-compare -Wformat=2 -Wno-format-nonliteral
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ishared -Ishared/store \
	-Ihandlers -Ihandlers/cli
ifdef IH_DEFAULT_DB
CPPFLAGS += -DIH_DEFAULT_DB='"$(IH_DEFAULT_DB)"'
endif
CFLAGS   ?= -O2 -g
ifeq ($(SANITIZE),1)
CFLAGS   = -O1 -g -fno-omit-frame-pointer
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all
FAULTS  ?= 1
endif
# Crash points for the fault-injection tests (shared/fault.h): test builds only.
ifeq ($(FAULTS),1)
CPPFLAGS += -DIH_FAULTS
endif
ALL_CFLAGS = -std=c99 $(WARN) $(CFLAGS) $(SANFLAGS) $(PKG_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -pthread

# STATIC=1: the objects of make static (handlers/static.mk).
ifeq ($(STATIC),1)
CPPFLAGS += -DIH_STATIC
endif

# NO_PG=1 builds without libpq: the PostgreSQL backend is a stub
# (shared/store/pg_none.c) that refuses postgresql:// locations.
ifeq ($(NO_PG),1)
# check says what this build lacks (cli_check_build.c).
CPPFLAGS += -DIH_NO_POSTGRES
# Every PostgreSQL file but the stub, so that a new one cannot break it.
PG_OUT = $(filter-out shared/store/pg_none.c,\
	$(wildcard shared/store/pg_*.c))
else
PG_OUT = shared/store/pg_none.c
endif
LIB_SRCS = $(filter-out $(PG_OUT) $(CURL_OUT),\
	$(wildcard shared/*.c shared/store/*.c))
LIB_OBJS = $(LIB_SRCS:shared/%.c=$(BUILD)/obj/shared/%.o) \
	$(BUILD)/obj/schema_sql.o
LIB      = $(BUILD)/libidemhook.a
HEADERS  = $(wildcard shared/*.h shared/store/*.h handlers/*.h handlers/cli/*.h \
	handlers/console/*.h)

# The operator's web console (handlers/console/), on the same library.
PROGRAMS = $(PROVIDERS:%=$(BUILD)/%.fcgi) $(BUILD)/console.fcgi \
	$(BUILD)/idemhook
# The provider objects (no main()), each compiled once and shared by its
# program, the command, the unit tests and the fuzzers.
HANDLER_OBJS = $(PROVIDERS:%=$(BUILD)/obj/handlers/%.o) \
	$(BUILD)/obj/handlers/providers.o
CLI_OBJS = $(BUILD)/obj/handlers/cli/cli_main.o \
	$(BUILD)/obj/handlers/cli/idemhook.o \
	$(BUILD)/obj/handlers/cli/cli_account.o \
	$(BUILD)/obj/handlers/cli/cli_check_accounts.o \
	$(BUILD)/obj/handlers/cli/cli_check_actions.o \
	$(BUILD)/obj/handlers/cli/cli_check_build.o \
	$(BUILD)/obj/handlers/cli/cli_check_sources.o \
	$(BUILD)/obj/handlers/cli/cli_args.o $(BUILD)/obj/handlers/cli/cli_events.o \
	$(BUILD)/obj/handlers/cli/cli_maint.o $(BUILD)/obj/handlers/cli/cli_check.o \
	$(BUILD)/obj/handlers/cli/cli_prom.o \
	$(BUILD)/obj/handlers/cli/cli_text.o $(BUILD)/obj/handlers/cli/cli_console.o \
	$(BUILD)/obj/handlers/cli/cli_copy.o $(BUILD)/obj/handlers/cli/cli_objects.o \
	$(BUILD)/obj/handlers/cli/cli_backup.o \
	$(BUILD)/obj/handlers/cli/cli_backups.o \
	$(BUILD)/obj/handlers/cli/cli_owner.o \
	$(BUILD)/obj/handlers/cli/cli_check_store.o \
	$(BUILD)/obj/handlers/cli/check_programs.o \
	$(BUILD)/obj/handlers/cli/cli_check_console.o \
	$(BUILD)/obj/handlers/cli/cli_check_held.o \
	$(BUILD)/obj/handlers/cli/cli_catchup.o \
	$(BUILD)/obj/handlers/cli/cli_health.o $(API_HTTP_OBJ) \
	$(BUILD)/obj/handlers/cli/cli_round.o \
	$(BUILD)/obj/handlers/cli/api_session.o \
	$(BUILD)/obj/handlers/cli/api_providers.o \
	$(BUILD)/obj/handlers/cli/api_stripe.o $(BUILD)/obj/handlers/cli/api_github.o \
	$(BUILD)/obj/handlers/cli/api_asaas.o $(BUILD)/obj/handlers/cli/api_shopify.o \
	$(BUILD)/obj/handlers/cli/cli_list.o $(BUILD)/obj/handlers/cli/cli_show.o \
	$(BUILD)/obj/handlers/cli/cli_verify.o \
	$(BUILD)/obj/handlers/cli/cli_replay.o \
	$(BUILD)/obj/handlers/cli/api_common.o \
	$(BUILD)/obj/handlers/cli/api_limits.o \
	$(BUILD)/obj/handlers/cli/api_github_app.o \
	$(BUILD)/obj/handlers/cli/api_github_held.o \
	$(BUILD)/obj/handlers/cli/api_accounts.o \
	$(BUILD)/obj/handlers/cli/thin_fetch.o \
	$(BUILD)/obj/handlers/cli/cli_smoke.o \
	$(BUILD)/obj/handlers/cli/smoke_sign.o \
	$(BUILD)/obj/handlers/cli/cli_sigfails.o \
	$(BUILD)/obj/handlers/cli/cli_check_files.o

# The console: a router and one module per page (handlers/console/).
CONSOLE_OBJS = $(patsubst handlers/console/%.c,\
	$(BUILD)/obj/handlers/console/%.o,$(wildcard handlers/console/*.c))

UNIT_SRCS  = $(wildcard tests/unit/test_*.c)
UNIT_TESTS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all tests check check-build check-san demo clean deps deps-build deps-demo \
	lint
.SUFFIXES:
.SECONDARY:

all: $(LIB) $(PROGRAMS)

$(BUILD)/obj/shared/%.o: shared/%.c $(HEADERS)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CURL_CFLAGS) -c -o $@ $<

# The schemas are compiled in, so a program never reads db/ at run time.
# For each backend B (sqlite, postgres): db/B/schema.sql becomes
# store_B_schema_sql, and db/B/migrations/<N>.sql store_B_migrations[N]:
# version N-1 to N.
SCHEMA_SRCS = $(wildcard db/*/schema.sql db/*/migrations/*.sql)
SQL_TO_C = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'
$(BUILD)/schema_sql.c: $(SCHEMA_SRCS)
	@mkdir -p $(@D)
	$(Q){ echo '/* Generated from db/; do not edit. */'; \
	  echo '#include <stddef.h>'; \
	  for b in sqlite postgres; do \
	  echo "extern const char store_$${b}_schema_sql[];"; \
	  echo "const char store_$${b}_schema_sql[] ="; \
	  $(SQL_TO_C) db/$$b/schema.sql; \
	  echo ';'; \
	  echo "extern const char *const store_$${b}_migrations[];"; \
	  echo "extern const size_t store_$${b}_nmigrations;"; \
	  echo "const char *const store_$${b}_migrations[] = {"; \
	  echo '[0] = NULL,'; \
	  for f in $$(ls db/$$b/migrations/*.sql 2>/dev/null); do \
	    n=$$(basename $$f .sql); echo "[$$n] ="; $(SQL_TO_C) $$f; echo ','; \
	  done; \
	  echo '};'; \
	  echo "const size_t store_$${b}_nmigrations ="; \
	  echo "    sizeof(store_$${b}_migrations) / sizeof(store_$${b}_migrations[0]);"; \
	  done; \
	  } > $@

$(BUILD)/obj/schema_sql.o: $(BUILD)/schema_sql.c
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@rm -f $@
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)ar rcs $@ $^

$(BUILD)/obj/handlers/%.o: handlers/%.c $(HEADERS)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# One receiver main() per provider (handlers/receiver.c), naming its
# struct provider.
$(BUILD)/obj/handlers/receiver-%.o: handlers/receiver.c $(HEADERS)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $< ($*)"
	$(Q)$(CC) $(CPPFLAGS) -DIH_PROVIDER=$*_provider $(ALL_CFLAGS) -c -o $@ $<

RECEIVER_OBJS = $(BUILD)/obj/handlers/receiver-%.o $(BUILD)/obj/handlers/%.o

$(PROVIDERS:%=$(BUILD)/%.fcgi): $(BUILD)/%.fcgi: $(RECEIVER_OBJS) $(LIB)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROG_LIBS)

$(BUILD)/console.fcgi: $(CONSOLE_OBJS) $(LIB)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROG_LIBS)

$(BUILD)/idemhook: $(CLI_OBJS) $(HANDLER_OBJS) $(LIB)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PROG_LIBS) $(CURL_LIBS)

$(BUILD)/obj/handlers/cli/api_%.o: handlers/cli/api_%.c $(HEADERS)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CURL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(HANDLER_OBJS) $(LIB) $(HEADERS) \
    $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
	    $(HANDLER_OBJS) $(LIB) $(PKG_LIBS) $(CMOCKA_LIBS)

tests: all $(UNIT_TESTS)

# Package lists (tests/deps.sh): make check's, building's, the demo's.
deps:
	@tests/deps.sh test

deps-build:
	@tests/deps.sh build

deps-demo:
	@tests/deps.sh demo

# Everything a test needs is installed first, then built: the sanitized
# build and the static one (handlers/static.mk, for test_static.py) side by
# side, one compiler per processor between them; then tests/run.sh.
check: deps lint
	$(MAKE) -j$$(nproc 2>/dev/null || echo 1) check-build
	tests/run.sh $(BUILD)/san

check-build: check-san static-check

check-san:
	$(MAKE) BUILD=$(BUILD)/san SANITIZE=1 tests

demo: deps-demo all
	www-config/demo.sh $(BUILD)

# The house style, in the manner of curl's checksrc: line width, no
# assignment inside a condition, a contract atop each header, banned
# functions, files of at most 700 lines (tests/lint/checksrc.py; known
# leftovers in tests/lint/pending).
LINT_SRCS = $(wildcard shared/*.[ch] shared/store/*.[ch] handlers/*.[ch] \
	handlers/cli/*.[ch] handlers/console/*.[ch])
lint:
	@python3 tests/lint/checksrc.py --pending tests/lint/pending $(LINT_SRCS)

clean:
	rm -rf $(BUILD)

# Larger targets live beside what they build or run.
-include handlers/static.mk www-config/install.mk tests/bench/bench.mk \
	tests/fuzz/fuzz.mk tests/reliability.mk
