# fuzz.mk -- libFuzzer harnesses for every parser of untrusted input.
#
#   make fuzz                  build, then run each harness FUZZ_SECONDS
#                              (default 60) from its seed corpus, and
#                              list each one's number of executions
#   make fuzz FUZZ_SECONDS=600 FUZZ_ONLY=fuzz_stripe
#   make fuzz-build            only build $(BUILD)/fuzz/fuzz_*
#
# The harnesses (tests/fuzz/fuzz_*.c) are built with clang and
# -fsanitize=fuzzer,address,undefined, together with their own copy of
# shared/*.c and of the provider objects, in $(BUILD)/fuzz.
# Seeds are in tests/fuzz/corpus/<harness>/, which is never written to: new
# inputs go to $(BUILD)/fuzz/corpus/<harness>/, crashes to
# $(BUILD)/fuzz/crash-<harness>-*.  A crash, once fixed, is copied into
# tests/fuzz/corpus/<harness>/, where every run (and tests/e2e/test_fuzz.py in
# make check) replays it.

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_ONLY    ?=
FUZZ_DIR      = $(BUILD)/fuzz
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   = -std=c99 -g -O1 -fno-omit-frame-pointer \
	$(filter-out -Werror,$(WARN)) -Wno-unused-function \
	-fsanitize=fuzzer-no-link $(FUZZ_SAN) $(PKG_CFLAGS)
FUZZ_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Ishared -Ishared/store \
	-Ihandlers -Ihandlers/cli -Itests/fuzz
FUZZ_SRCS     = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES    = $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_BINS     = $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)
FUZZ_LIB_OBJS = $(LIB_SRCS:shared/%.c=$(FUZZ_DIR)/obj/shared/%.o) \
	$(FUZZ_DIR)/obj/schema_sql.o
FUZZ_HANDLERS = $(PROVIDERS:%=$(FUZZ_DIR)/obj/handlers/%.o) \
	$(FUZZ_DIR)/obj/handlers/providers.o
FUZZ_RUN      = $(if $(FUZZ_ONLY),$(FUZZ_ONLY),$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build

fuzz-build: $(FUZZ_BINS)

$(FUZZ_DIR)/obj/shared/%.o: shared/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/schema_sql.o: $(BUILD)/schema_sql.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/handlers/%.o: handlers/%.c $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h tests/fuzz/fuzz_receipt.h \
    $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/fuzz/fuzz_%.o $(FUZZ_HANDLERS) \
    $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(PKG_LIBS)

# Each harness runs FUZZ_SECONDS, whatever another one did; then each
# one's executions (libFuzzer's final stats) are listed, and the target
# fails if any harness stopped early (a crash, a leak, a timeout).
fuzz: fuzz-build
	@failed=""; summary=""; \
	for h in $(FUZZ_RUN); do \
		mkdir -p $(FUZZ_DIR)/corpus/$$h; \
		echo "fuzz: $$h for $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/$$h -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
		    -rss_limit_mb=2048 -print_final_stats=1 \
		    -artifact_prefix=$(FUZZ_DIR)/crash-$$h- \
		    $(FUZZ_DIR)/corpus/$$h tests/fuzz/corpus/$$h \
		    > $(FUZZ_DIR)/$$h.log 2>&1; rc=$$?; \
		execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' \
		    $(FUZZ_DIR)/$$h.log); \
		secs=$$(sed -n 's/^stat::average_exec_per_sec: *//p' \
		    $(FUZZ_DIR)/$$h.log); \
		new=$$(sed -n 's/^stat::new_units_added: *//p' \
		    $(FUZZ_DIR)/$$h.log); \
		rss=$$(sed -n 's/^stat::peak_rss_mb: *//p' $(FUZZ_DIR)/$$h.log); \
		if [ $$rc -ne 0 ] || [ -z "$$execs" ]; then \
		    tail -40 $(FUZZ_DIR)/$$h.log; \
		    line="$$h: FAILED (exit $$rc) after $${execs:-?} executions," \
		    line="$$line log $(FUZZ_DIR)/$$h.log"; \
		    failed="$$failed $$h"; \
		else \
		    line="$$h: $$execs executions ($$secs/s), $$new new" \
		    line="$$line inputs, peak RSS $$rss MB"; \
		fi; \
		echo "  $$line"; summary="$$summary$$line\n"; \
	done; \
	printf "fuzz: %s s per harness\n$$summary" "$(FUZZ_SECONDS)" | \
	    sed '2,$$s/^/  /'; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed"; exit 1; fi
