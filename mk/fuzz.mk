# Fuzzing: libFuzzer targets built with clang under AddressSanitizer and UndefinedBehaviorSanitizer
# (tests/fuzz/, docs/robustness.md). Included by the Makefile.
#
#   make fuzz-bins                 build them: build/fuzz/bin/
#   make fuzz [FUZZ_SECONDS=60]    build, then run each for FUZZ_SECONDS (scripts/fuzz writes a results file)
#
# Targets: nf-NAME (an NF's data path, native build, fed frames with its rules loaded), rules-NAME (its
# rules codec: parse, and list-then-load round trips), control (the control protocol's dispatcher).

FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
# Alignment is not checked: headers sit at their wire offsets (the IPv4 header 2 bytes off a 4-byte boundary
# after Ethernet), in the UMEM as in the kernel; docs/robustness.md says why that stays.
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize=alignment -fno-sanitize-recover=undefined
# clang, and only the flags clang shares with the tree's gcc build.
FUZZ_CFLAGS  := -g -O1 -std=gnu11 -D_GNU_SOURCE -fno-strict-aliasing -Wall -Werror -Wno-unused-parameter \
                -Wno-unused-function $(FUZZ_SAN) -fsanitize=fuzzer-no-link -Iinclude -Ilib/include
FUZZ_LDFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer
FUZZ_NFS     := $(patsubst nfs/%/,%,$(wildcard nfs/*/))
# The NFs with a rules codec (NAME_rules.c).
FUZZ_RULE_NFS := $(foreach n,$(FUZZ_NFS),$(if $(wildcard nfs/$(n)/$(n)_rules.c),$(n)))

# An NF's sources compiled for fuzzing: its data path and its control files.
fuzz_objs = $(patsubst nfs/%.c,$(FUZZ_DIR)/obj/%.o,$(wildcard nfs/$(1)/$(1).c nfs/$(1)/$(1)_rules.c \
              nfs/$(1)/$(1)_control.c))

$(FUZZ_DIR)/obj/%.o: nfs/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -I$(dir $<) -c $< -o $@

$(FUZZ_DIR)/obj/harness/%.o: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -DXNF_INTERNAL_OK -c $< -o $@

define FUZZ_RULES
$(FUZZ_DIR)/bin/nf-$(1): $(call fuzz_objs,$(1)) $(FUZZ_DIR)/obj/harness/fuzz_nf.o $(LIBXNF)
	@mkdir -p $$(@D)
	$(CLANG) $(FUZZ_LDFLAGS) -o $$@ $$^ $(LDLIBS)

$(FUZZ_DIR)/bin/rules-$(1): $(call fuzz_objs,$(1)) $(FUZZ_DIR)/obj/harness/fuzz_rules.o $(LIBXNF)
	@mkdir -p $$(@D)
	$(CLANG) $(FUZZ_LDFLAGS) -o $$@ $$^ $(LDLIBS)
endef
$(foreach n,$(FUZZ_NFS),$(eval $(call FUZZ_RULES,$(n))))

$(FUZZ_DIR)/bin/control: $(call fuzz_objs,firewall) $(FUZZ_DIR)/obj/harness/fuzz_control.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_LDFLAGS) -o $@ $^ $(LDLIBS)

FUZZ_BINS := $(foreach n,$(FUZZ_NFS),$(FUZZ_DIR)/bin/nf-$(n)) \
             $(foreach n,$(FUZZ_RULE_NFS),$(FUZZ_DIR)/bin/rules-$(n)) $(FUZZ_DIR)/bin/control

.PHONY: fuzz fuzz-bins
fuzz-bins: $(FUZZ_BINS)
fuzz: fuzz-bins
	python3 scripts/fuzz --seconds $(FUZZ_SECONDS)
