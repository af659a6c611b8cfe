# tokbench: build, test, bench, report, data, setup.
#
#   make            build/tokbench and build/libtokbench.a (release flags)
#   make test       install what is missing, fetch test data, run all tests
#   make bench      the default suite into results/tokbench.db, then a report
#   make SANITIZE=1 the same targets built with ASan and UBSan in build/san
#
# Sources are found by directory, so adding a module file needs no edit here.

SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD   ?= build/san
OPT     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=all
else
BUILD   ?= build
OPT     := -O2 -g
endif

CC      ?= cc
CXX     ?= c++
WARN    := -Wall -Wextra -Werror
CFLAGS  += -std=c17 $(OPT) $(WARN) -D_GNU_SOURCE -MMD -MP \
           -DTB_CFLAGS='"-std=c17 $(OPT) $(WARN)"' \
           $(shell pkg-config --cflags libpcre2-8 jansson sqlite3 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs libpcre2-8 jansson sqlite3 2>/dev/null) \
           -lunistring -lcsv -lpapi -lm -lpthread
LDFLAGS += $(filter -fsanitize=%,$(OPT))

LIB_SRC := $(wildcard base/*.c tok/*.c trie/*.c lexer/*.c grammar/*.c) \
           $(filter-out experiments/main.c,$(wildcard experiments/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB     := $(BUILD)/libtokbench.a
BIN     := $(BUILD)/tokbench

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_DOUBLES := $(wildcard tests/*_double.c)
TEST_SUPPORT := $(filter-out $(TEST_SRC) $(TEST_DOUBLES),$(wildcard tests/*.c))

.PHONY: all setup data test test-unit test-conform bench report clean
all: $(BIN) $(LIB)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# tok/unorm.c includes normalization tables generated from the Unicode data
# files (package unicode-data) by scripts/gen-unorm.pl.
$(BUILD)/gen/unorm_tables.h: scripts/gen-unorm.pl
	@mkdir -p $(dir $@)
	perl scripts/gen-unorm.pl > $@.tmp && mv $@.tmp $@ || { rm -f $@.tmp; exit 1; }

$(BUILD)/obj/tok/unorm.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/obj/tok/unorm.o: $(BUILD)/gen/unorm_tables.h

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# External tries that the lookup driver measures beside tokbench's own
# (experiments/ext/, C++ glue over Darts and MARISA): linked into the
# binary only, never into the library or the tests' programs.
EXT_OBJ := $(patsubst %.cc,$(BUILD)/obj/%.o,$(wildcard experiments/ext/*.cc))
CXXFLAGS += -std=c++17 $(OPT) $(WARN) -MMD -MP

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BIN): $(BUILD)/obj/experiments/main.o $(LIB) $(EXT_OBJ)
	$(CXX) $(LDFLAGS) $^ -o $@ $(LDLIBS) -lmarisa

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(TEST_SUPPORT) $(LIB) -o $@ $(LDLIBS) -lcmocka

# A test double tests/X_double.c stands in for the library -lX in the one
# test program tests/test_X.c (PAPI without a PMU: tests/papi_double.c).
define test_with_double
$(BUILD)/tests/test_$(1): tests/test_$(1).c tests/$(1)_double.c $(TEST_SUPPORT) $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(LDFLAGS) $$< tests/$(1)_double.c $$(TEST_SUPPORT) $$(LIB) -o $$@ \
	    $$(filter-out -l$(1),$$(LDLIBS)) -lcmocka
endef
$(foreach d,$(TEST_DOUBLES:tests/%_double.c=%),$(eval $(call test_with_double,$(d))))

# Measuring tools run by hand (tools/*.c), not part of `all` or `test`:
# make build/schema-coverage (docs/json-schema.md).
$(BUILD)/%: tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB) -o $@ $(LDLIBS)

setup:
	@scripts/setup.sh

data: setup
	@scripts/fetch-data.sh

# Unit tests, then conformance of every manifest vocabulary on a sample.
test: data
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN)
	@BUILD=$(BUILD) scripts/run-tests.sh $(TEST_BIN)

bench: data
	@$(MAKE) --no-print-directory $(BIN)
	@mkdir -p results
	$(BIN) run experiments/suites/default.csv --db results/tokbench.db
	$(BIN) report --db results/tokbench.db --out results/report

report: $(BIN)
	$(BIN) report --db results/tokbench.db --out results/report

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
