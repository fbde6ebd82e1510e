# tests/bench/bench.mk -- make bench: throughput, latency and memory of the
# receivers against the machine's own ceilings (issues 6 and 17).  A
# benchmark, not a test: make check never runs it.
#
#   make bench                  the whole run, about 7 minutes
#   make bench BENCH_SECONDS=3  shorter wrk runs (default 5 s each)
#   make bench BENCH_ONLY=stripe  one provider, with its variants
#   make bench-readme           put $(BUILD)/bench/results.md's tables into
#                               tests/bench/README.md's Performance section
#                               and its chart into tests/bench/chart.svg
#   make bench BENCH_GROWTH=1000000  also stripe on stores (SQLite and
#                               PostgreSQL) already holding that many
#                               events, filled through the library
#                               (store_ceiling -F; about 1.3 GB for SQLite;
#                               BENCH_OPTS=--growth-only: just those)
#   make bench BENCH_OPTS='--runs reference:16 stripe:16 stripe:16::worker'
#                               issue 40's ratios alone: the reference
#                               (tests/bench/reference.c, a minimal
#                               receiver of the same design, built here
#                               as $(BUILD)/bench/tools/reference.fcgi
#                               and run as stripe.fcgi under the shipped
#                               hooks-stripe.conf), the defaults and
#                               worker mode, side by side
#   make bench BENCH_OPTS=--no-apache   (or --no-pg, --pg-only,
#                               --no-accounts, --apache-only,
#                               --apache-conf 'LINE', --runs ...: run.py -h)
#   make bench-pages            per event, with deterministic tools (strace,
#                               callgrind): WAL pages and bytes, fsyncs,
#                               instructions of stripe.fcgi behind lighttpd
#                               (tests/bench/pages.py; BENCH_PAGES_N events;
#                               BENCH_PAGES_PROVIDER=github, shopify, asaas
#                               or standard: that provider's program)
#   make bench-pg-trips         the same on PostgreSQL: round trips (sendto
#                               calls) and statements per event and per
#                               commit, on a
#                               throwaway cluster (tests/pg_cluster.sh,
#                               $(BUILD)/bench/pg); BENCH_CONC=K sends
#                               from K clients at once, so that a commit
#                               carries several events
#   make bench-pg-cost          the PostgreSQL server's instructions per
#                               event (callgrind on a throwaway cluster's
#                               backends, tests/bench/pg_cost.py;
#                               BENCH_PG_COST_OPTS='--objects 1' or
#                               '--statements')
#   make bench-cgi              one plain CGI delivery, counted: callgrind
#                               and strace -c (tests/bench/cgi_cost.sh),
#                               of the dynamic and the make static build
#   make bench-accounts         stripe with 1 account and with 100
#                               accounts: accepted/s and CPU per event
#                               of alternating runs, instructions per
#                               request (tests/bench/accounts.py; issue
#                               29; make bench runs a shorter one)
#
# Everything is built without sanitizers at -O2 into $(BUILD)/bench, so
# that it never disturbs another build, and the results go to
# $(BUILD)/bench/results.md (and results.json, chart.svg).  Stores, the
# servers' configurations and request files live in $(BUILD)/bench/run, on
# the disk being measured.

BENCH_SECONDS ?= 5
BENCH_ONLY    ?=
BENCH_OPTS    ?=
BENCH_GROWTH  ?=

BENCH_PAGES_N ?= 200
BENCH_PAGES_PROVIDER ?= stripe
BENCH_CONC    ?= 1

.PHONY: bench bench-build bench-tools bench-readme bench-pages bench-cgi \
	bench-accounts bench-pg-trips bench-pg-cost bench-static

bench: deps bench-build bench-static
	python3 tests/bench/run.py --bin $(BUILD)/bench \
	    --cgi-bin $(BUILD)/bench/static \
	    --tools $(BUILD)/bench/tools --seconds $(BENCH_SECONDS) \
	    $(if $(BENCH_ONLY),--only $(BENCH_ONLY)) \
	    $(if $(BENCH_GROWTH),--growth $(BENCH_GROWTH)) $(BENCH_OPTS) \
	    --out $(BUILD)/bench/results.md

bench-pages: bench-build
	python3 tests/bench/pages.py --bin $(BUILD)/bench \
	    --events $(BENCH_PAGES_N) --provider $(BENCH_PAGES_PROVIDER)

bench-accounts: bench-build
	python3 tests/bench/accounts.py --bin $(BUILD)/bench \
	    --tools $(BUILD)/bench/tools --seconds $(BENCH_SECONDS) \
	    --out $(BUILD)/bench/accounts.md

# Absolute paths: the server's socket folder and lighttpd's bin-path are
# taken from their own working folders.
# The server loads pg_stat_statements when it is installed, for the
# statements per event.
bench-pg-trips: bench-build
	o=; ls /usr/lib/postgresql/*/lib/pg_stat_statements.so >/dev/null \
	    2>&1 && o='-c shared_preload_libraries=pg_stat_statements'; \
	u=$$(IH_PG_OPTS="$$o $${IH_PG_OPTS:-}" \
	    tests/pg_cluster.sh start $(abspath $(BUILD))/bench/pg) && \
	python3 tests/bench/pages.py --bin $(abspath $(BUILD))/bench \
	    --no-callgrind --events $(BENCH_PAGES_N) --conc $(BENCH_CONC) \
	    --pg "$$u"; \
	rc=$$?; tests/pg_cluster.sh stop $(abspath $(BUILD))/bench/pg; exit $$rc

bench-pg-cost: bench-build
	python3 tests/bench/pg_cost.py --bin $(abspath $(BUILD))/bench \
	    $(BENCH_PG_COST_OPTS)

bench-cgi: bench-build bench-static
	tests/bench/cgi_cost.sh $(BUILD)/bench $(BUILD)/bench/cgi
	tests/bench/cgi_cost.sh $(BUILD)/bench/static $(BUILD)/bench/cgi-static

# stripe.fcgi as make static builds it (handlers/static.mk), unstripped so
# that callgrind names its functions: what the shared-hosting recipe runs
# under plain CGI.
bench-static:
	$(MAKE) BUILD=$(BUILD)/bench/static/build SANITIZE=0 FAULTS=0 STATIC=1 NO_PG=1 \
	    NO_CURL=1 CFLAGS='-O2 -g' STATIC_DIR=$(BUILD)/bench/static \
	    STATIC_LDFLAGS= $(BUILD)/bench/static/stripe.fcgi

# A separate make, so that $(BUILD)/bench gets its own flags and objects.
bench-build:
	$(MAKE) BUILD=$(BUILD)/bench SANITIZE=0 FAULTS=0 CFLAGS='-O2 -g' \
	    bench-tools

# Run inside bench-build's make, where $(BUILD) is already .../bench.
bench-tools: $(LIB) $(PROVIDERS:%=$(BUILD)/%.fcgi) $(BUILD)/idemhook \
	$(BUILD)/tools/store_ceiling $(BUILD)/tools/null.fcgi \
	$(BUILD)/tools/reference.fcgi

$(BUILD)/tools/store_ceiling: tests/bench/store_ceiling.c $(LIB) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) \
	    $(PKG_LIBS)

$(BUILD)/tools/null.fcgi: tests/bench/null.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(PKG_LIBS)

# The measured peer (issue 40): a minimal receiver of the same design.
$(BUILD)/tools/reference.fcgi: tests/bench/reference.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(PROG_LIBS)

bench-readme:
	cp $(BUILD)/bench/chart.svg tests/bench/chart.svg
	python3 tests/bench/readme.py $(BUILD)/bench/results.md tests/bench/README.md \
	    tests/bench/notes.md
