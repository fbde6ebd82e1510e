# reliability.mk -- the long runs: make soak and make valgrind.
#
#   make soak       the load test (tests/e2e/test_load.py) at full size,
#                   SOAK_EVENTS deliveries (default 10000) across all five
#                   providers, 20% duplicates, 32 connections, against a
#                   build without sanitizers in $(BUILD)/soak
#   make valgrind   every end-to-end test with each receiver run under
#                   valgrind (harness IH_WRAP), from a build without
#                   sanitizers (crash points compiled in) in $(BUILD)/vg;
#                   valgrind's reports go to $(BUILD)/vg/valgrind-<pid>.log
#                   and any error in them fails the target.  Slow; the
#                   load test runs at VG_LOAD_EVENTS (default 200).

SOAK_EVENTS    ?= 10000
VALGRIND       ?= valgrind
VALGRIND_FLAGS ?= -q --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite
VG_LOAD_EVENTS ?= 200
VG_DIR          = $(abspath $(BUILD))/vg

.PHONY: soak valgrind

soak: deps
	$(MAKE) BUILD=$(BUILD)/soak all
	IH_LOAD_EVENTS=$(SOAK_EVENTS) IH_BIN=$(BUILD)/soak \
	    python3 tests/e2e/test_load.py $(BUILD)/soak

valgrind: deps
	$(MAKE) BUILD=$(BUILD)/vg FAULTS=1 all
	@rm -f $(VG_DIR)/valgrind-*.log
	@vg=$$(command -v $(VALGRIND)) || { echo "valgrind: not installed"; \
	    exit 1; }; \
	wrap="$$vg $(VALGRIND_FLAGS) --log-file=$(VG_DIR)/valgrind-%p.log"; \
	out=$$(mktemp); passed=0; failed=0; \
	for t in tests/e2e/test_*.py; do \
		case $$t in *test_fuzz.py) continue;; esac; \
		echo "# --- $$t under valgrind"; \
		IH_WRAP="$$wrap" IH_BIN=$(VG_DIR) \
		    IH_LOAD_EVENTS=$(VG_LOAD_EVENTS) timeout -k 10 1800 \
		    python3 $$t $(VG_DIR) > $$out 2>&1; \
		cat $$out; \
		passed=$$((passed + $$(grep -c '^ok' $$out))); \
		failed=$$((failed + $$(grep -c '^not ok' $$out))); \
	done; rm -f $$out; \
	reports=$$(grep -l -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|Invalid (read|write)|uninitialised' \
	    $(VG_DIR)/valgrind-*.log 2>/dev/null | wc -l); \
	logs=$$(ls $(VG_DIR)/valgrind-*.log 2>/dev/null | wc -l); \
	echo "valgrind: $$passed passed, $$failed failed; $$logs receiver" \
	    "processes ran under valgrind, $$reports with errors" \
	    "($(VG_DIR)/valgrind-*.log)"; \
	[ $$logs -gt 0 ] && [ $$reports -eq 0 ]
