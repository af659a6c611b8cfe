# tokbench: build, test, bench, report, data, setup.
#
#   make            build/tokbench and build/libtokbench.a (release flags)
#   make test       install what is missing, fetch test data, run all tests
#   make bench      the default suite into results/tokbench.db, then a report
#   make SANITIZE=1 the same targets built with ASan and UBSan in build/san
#   make SANITIZE=clang  the same with clang in build/san-clang (its UBSan
#                   also checks null pointers with zero lengths, pointer
#                   overflow and more that gcc's does not)
#   make fuzz       every libFuzzer target in fuzz/ for FUZZ_SECONDS each
#
# Sources are found by directory, so adding a module file needs no edit here.

SANITIZE ?= 0
SAN_OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=all
ifeq ($(SANITIZE),1)
BUILD   ?= build/san
OPT     := $(SAN_OPT)
else ifeq ($(SANITIZE),clang)
BUILD   ?= build/san-clang
CC      := clang
CXX     := clang++
OPT     := $(SAN_OPT)
else ifeq ($(SANITIZE),fuzz)
# The library as the fuzz targets link it: coverage for libFuzzer, the
# sanitizers as in SANITIZE=clang.
BUILD   ?= build/fuzz
CC      := clang
CXX     := clang++
OPT     := $(SAN_OPT) -fsanitize=fuzzer-no-link
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

LIB_SRC := $(wildcard base/*.c tok/*.c trie/*.c lexer/*.c) \
           $(filter-out experiments/main.c,$(wildcard experiments/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB     := $(BUILD)/libtokbench.a
BIN     := $(BUILD)/tokbench

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))

.PHONY: all setup data test test-unit test-conform bench report clean fuzz
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

setup:
	@scripts/setup.sh

data: setup
	@scripts/fetch-data.sh

# Unit tests, then conformance of every manifest vocabulary on a sample.
test: data
	@$(MAKE) --no-print-directory $(BIN) $(TEST_BIN)
	@BUILD=$(BUILD) scripts/run-tests.sh $(TEST_BIN)

# libFuzzer targets (fuzz/fuzz_*.c, see fuzz/README.md), each run for
# FUZZ_SECONDS from its seed corpus; a crash fails and keeps its input in
# build/fuzz/crashes/.
FUZZ_SECONDS ?= 20
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_SUPPORT := $(filter-out $(FUZZ_SRC),$(wildcard fuzz/*.c)) tests/oracle.c
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build/fuzz/bin/%)

fuzz: setup
	@$(MAKE) --no-print-directory SANITIZE=fuzz $(FUZZ_BIN)
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

build/fuzz/bin/%: fuzz/%.c $(FUZZ_SUPPORT) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer $< $(FUZZ_SUPPORT) $(LIB) -o $@ $(LDLIBS)

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
