# xnf build. Every NF in nfs/<name>/<name>.c is compiled twice (BPF object and
# native object) and linked with its embedded BPF skeleton into build/bin/xnf-<name>.
#   make            all NF binaries, tools and test harnesses
#   make clean

ARCH      := $(shell uname -m)
# The compilers and flags, and the rules that turn one NF folder into one binary (shared with `xnf build`).
include mk/nf.mk

BUILD     := build
# The SDK line: an NF's sources see include/ only (<xnf/nf.h>, <xnf/control.h> and what they include);
# the runtime, tools and tests also see lib/include/ and xnf's own glue (include/xnf/internal/).
SDK_INCLUDES     := -Iinclude
RUNTIME_INCLUDES := -Iinclude -Ilib/include -DXNF_INTERNAL_OK

# VARIANT_DEFINES: a variant build for a benchmark (make BUILD=build/variants/X VARIANT_DEFINES=-DXNF_NO_CAPTURE):
# xnf bench run capture-cost builds the data path with no capture hook at all.
# The version is pyproject.toml's, written there once; the runtime's --version prints it.
VERSION   := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
NF_CFLAGS  = $(CFLAGS) $(XNF_C_FLAGS) $(SDK_INCLUDES) $(VARIANT_DEFINES)
RT_CFLAGS  = $(CFLAGS) $(XNF_C_FLAGS) $(RUNTIME_INCLUDES) $(VARIANT_DEFINES) -DXNF_VERSION='"$(VERSION)"'
BPF_CFLAGS = $(XNF_BPF_FLAGS) $(SDK_INCLUDES) $(VARIANT_DEFINES)
# An NF's source must not reach past the SDK: checked before it is compiled, with a message that says so.
CHECK_SDK  = scripts/check-sdk-line
LDLIBS    := $(XNF_LDLIBS)

# Test NFs live under tests/nfs: built the same way, never installed. NF_EXTRA_DIRS adds NF folders from
# elsewhere (each DIR/NAME/NAME.c), built into build/bin/xnf-NAME the same way.
NF_DIRS   := $(wildcard nfs/*/) $(wildcard tests/nfs/*/) $(foreach d,$(NF_EXTRA_DIRS),$(patsubst %/,%,$(d))/)
NFS       := $(patsubst %/,%,$(notdir $(patsubst %/,%,$(NF_DIRS))))
nf_src     = $(firstword $(wildcard $(addsuffix $(1).c,$(filter %/$(1)/,$(NF_DIRS)))))
nf_dir     = $(patsubst %/,%,$(dir $(call nf_src,$(1))))

LIB_SRCS  := $(wildcard lib/*/*.c)
LIB_SRCS  := $(filter-out lib/runtime/main.c lib/xdp/skel_glue.c lib/chain/% %.bpf.c,$(LIB_SRCS))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
LIBXNF    := $(BUILD)/libxnf.a

TOOLS     := $(BUILD)/bin/xnf-gen $(BUILD)/bin/xnf-xdp-load $(BUILD)/bin/xnf-afxdp-ref $(BUILD)/bin/xnf-gen-ref \
             $(BUILD)/bin/xnf-live-tx-cost $(BUILD)/bin/xnf-xdp-cost $(BUILD)/bin/xnf-afpacket-ref \
             $(BUILD)/bin/xnf-core-pair $(BUILD)/bin/xnf-kernel $(BUILD)/bin/xnf-sender-ref
NF_BINS   := $(foreach n,$(NFS),$(BUILD)/bin/xnf-$(n))
DIFF_BINS := $(foreach n,$(NFS),$(BUILD)/tests/xnf-diff-$(n))
# C tests linked with libxnf: build/tests/test-NAME from tests/c/test_NAME.c (NAME's dashes as underscores).
C_TESTS   := native-maps rules-words map-walk ct-sweep lb-sweep nat-sweep
TEST_BINS := $(foreach t,$(C_TESTS),$(BUILD)/tests/test-$(t)) $(BUILD)/tests/test-maps-concurrent
# The lab's own XDP programs: the generator side's pass and sink, the hand-written baselines.
LAB_BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(wildcard bpf/*.bpf.c))

.PHONY: all clean install install-files man mode-table test-quick
all: $(NF_BINS) $(DIFF_BINS) $(TOOLS) $(TEST_BINS) $(LAB_BPF_OBJS) mode-table

# The functional tier (tests/tiers.py, docs/testing.md): what must hold on every kernel, in a few minutes.
test-quick: all
	python3 -m pytest -q -p no:cacheprovider -m functional $$(python3 tests/tiers.py)

# The runtime's mode table as Python reads it without a binary (scripts/write-mode-table): rewritten when it changed.
mode-table: $(BUILD)/bin/xnf-drop
	@scripts/write-mode-table $< python/xnf/mode_table.json

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(RT_CFLAGS) -c $< -o $@

# The AF_XDP runtime's live-frames transmit program, embedded in libxnf as a skeleton.
$(BUILD)/lib/afxdp/live_tx.bpf.o: lib/afxdp/live_tx.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/lib/afxdp/live_tx.skel.h: $(BUILD)/lib/afxdp/live_tx.bpf.o
	$(BPFTOOL) gen skeleton $< name live_tx_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/lib/afxdp/live_tx.o: RT_CFLAGS += -I$(BUILD)/lib/afxdp
$(BUILD)/lib/afxdp/live_tx.o: $(BUILD)/lib/afxdp/live_tx.skel.h

# The kernel probes' compiled programs (freplace, tp_btf), embedded in libxnf as a skeleton.
$(BUILD)/lib/util/kernel_probe.bpf.o: lib/util/kernel_probe.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/lib/util/kernel_probe.skel.h: $(BUILD)/lib/util/kernel_probe.bpf.o
	$(BPFTOOL) gen skeleton $< name kernel_probe_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/lib/util/kernel_probes.o: RT_CFLAGS += -I$(BUILD)/lib/util
$(BUILD)/lib/util/kernel_probes.o: $(BUILD)/lib/util/kernel_probe.skel.h

# The AF_XDP runtime's pass-to-stack program (a TAP's frames on into its port), embedded as a skeleton.
$(BUILD)/lib/afxdp/pass_redirect.bpf.o: lib/afxdp/pass_redirect.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/lib/afxdp/pass_redirect.skel.h: $(BUILD)/lib/afxdp/pass_redirect.bpf.o
	$(BPFTOOL) gen skeleton $< name pass_redirect_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/lib/afxdp/pass_tap.o: RT_CFLAGS += -I$(BUILD)/lib/afxdp
$(BUILD)/lib/afxdp/pass_tap.o: $(BUILD)/lib/afxdp/pass_redirect.skel.h

# The egress watcher's tracepoint programs, embedded in libxnf as a skeleton.
$(BUILD)/lib/xdp/egress_watch.bpf.o: lib/xdp/egress_watch.bpf.c lib/xdp/egress_watch_abi.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/lib/xdp/egress_watch.skel.h: $(BUILD)/lib/xdp/egress_watch.bpf.o
	$(BPFTOOL) gen skeleton $< name egress_watch_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/lib/xdp/egress_watch.o: RT_CFLAGS += -I$(BUILD)/lib/xdp
$(BUILD)/lib/xdp/egress_watch.o: $(BUILD)/lib/xdp/egress_watch.skel.h

$(LIBXNF): $(LIB_OBJS)
	@mkdir -p $(@D)
	ar rcs $@ $^

# Per-NF rules: the shared NF build (mk/nf.mk, included above; also what `xnf build` uses outside the tree), then the
# differential harness, which links the same objects with its own main.
XNF_INCLUDE     := include
XNF_RT_INCLUDE  := lib/include
XNF_LIBS        := $(BUILD)/lib/runtime/main.o $(LIBXNF)
XNF_SKEL_GLUE   := lib/xdp/skel_glue.c
XNF_CHECK_SDK   := $(CHECK_SDK)

define NF_RULES
$(call XNF_NF_RULES,$(1),$(call nf_dir,$(1)),$(BUILD)/nfs/$(1),$(BUILD)/bin/xnf-$(1))

$(BUILD)/tests/xnf-diff-$(1): $$($(1)_OBJS) $(BUILD)/tests/c/diff_main.o $(LIBXNF)
	@mkdir -p $$(@D)
	$(CC) -o $$@ $$^ $(LDLIBS)
endef
$(foreach n,$(NFS),$(eval $(call NF_RULES,$(n))))

# Chains: python/xnf/chain.py writes build/chains/<id>/ (chain.c, chain_control.c and
# members.mk, which sets <id>_MEMBERS) and then asks for build/bin/xnf-chain-<id>.
# Member control files are compiled again with -DXNF_CHAIN_MEMBER so their exports
# get member names instead of the standalone ones.
-include $(wildcard $(BUILD)/chains/*/members.mk)
CHAINS := $(notdir $(patsubst %/,%,$(wildcard $(BUILD)/chains/*/)))
define CHAIN_RULES
$(1)_DIR := $(BUILD)/chains/$(1)
$(1)_INCLUDES := $$(foreach m,$$($(1)_MEMBERS),-I$$(call nf_dir,$$(m)))
$(1)_SRCS := $$(foreach m,$$($(1)_MEMBERS),$$(call nf_src,$$(m)))
$(1)_CONTROL_SRCS := $$(foreach m,$$($(1)_MEMBERS),\
	$$(wildcard $$(call nf_dir,$$(m))/$$(m)_rules.c $$(call nf_dir,$$(m))/$$(m)_control.c))
$(1)_MEMBER_CONTROL := $$(patsubst %.c,$$($(1)_DIR)/%.o,$$($(1)_CONTROL_SRCS))

$$($(1)_DIR)/chain.bpf.o: $$($(1)_DIR)/chain.c $$($(1)_SRCS)
	$(CLANG) $(BPF_CFLAGS) -I. $$($(1)_INCLUDES) -c $$< -o $$@
$$($(1)_DIR)/chain.skel.h: $$($(1)_DIR)/chain.bpf.o
	$(BPFTOOL) gen skeleton $$< name xnf_chain_bpf > $$@.tmp && mv $$@.tmp $$@
$$($(1)_DIR)/chain.tc.bpf.o: $$($(1)_DIR)/chain.c $$($(1)_SRCS)
	$(CLANG) $(BPF_CFLAGS) -DXNF_HOOK_TC -I. $$($(1)_INCLUDES) -c $$< -o $$@
$$($(1)_DIR)/chain.tc.skel.h: $$($(1)_DIR)/chain.tc.bpf.o
	$(BPFTOOL) gen skeleton $$< name xnf_chain_tc_bpf > $$@.tmp && mv $$@.tmp $$@
$$($(1)_DIR)/chain.native.o: $$($(1)_DIR)/chain.c $$($(1)_SRCS)
	$(CC) $(NF_CFLAGS) -I. $$($(1)_INCLUDES) -c $$< -o $$@
$$($(1)_DIR)/skel_glue.o: lib/xdp/skel_glue.c $$($(1)_DIR)/chain.skel.h $$($(1)_DIR)/chain.tc.skel.h
	$(CC) $(RT_CFLAGS) -I$$($(1)_DIR) -DXNF_SKEL_HEADER='"chain.skel.h"' -DXNF_SKEL=xnf_chain_bpf \
		-DXNF_TC_SKEL_HEADER='"chain.tc.skel.h"' -DXNF_TC_SKEL=xnf_chain_tc_bpf -c $$< -o $$@
$$($(1)_MEMBER_CONTROL): $$($(1)_DIR)/%.o: %.c
	@mkdir -p $$(@D)
	$(CC) $(NF_CFLAGS) -I$$(dir $$<) -DXNF_CHAIN_MEMBER -c $$< -o $$@
$$($(1)_DIR)/chain_control.o: $$($(1)_DIR)/chain_control.c
	$(CC) $(NF_CFLAGS) -c $$< -o $$@
$(1)_OBJS := $$($(1)_DIR)/chain.native.o $$($(1)_DIR)/skel_glue.o $$($(1)_MEMBER_CONTROL) \
	$$($(1)_DIR)/chain_control.o $(BUILD)/lib/chain/chain_control.o

$(BUILD)/bin/xnf-chain-$(1): $$($(1)_OBJS) $(BUILD)/lib/runtime/main.o $(LIBXNF)
	@mkdir -p $$(@D)
	$(CC) -o $$@ $$^ $(LDLIBS)
$(BUILD)/tests/xnf-diff-chain-$(1): $$($(1)_OBJS) $(BUILD)/tests/c/diff_main.o $(LIBXNF)
	@mkdir -p $$(@D)
	$(CC) -o $$@ $$^ $(LDLIBS)
endef
$(foreach c,$(CHAINS),$(eval $(call CHAIN_RULES,$(c))))

# The generator and its helper BPF program.
$(BUILD)/tools/gen/gen.bpf.o: tools/gen/gen.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/tools/gen/gen.skel.h: $(BUILD)/tools/gen/gen.bpf.o
	$(BPFTOOL) gen skeleton $< name gen_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/tools/gen/recv.bpf.o: tools/gen/recv.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/tools/gen/recv.skel.h: $(BUILD)/tools/gen/recv.bpf.o
	$(BPFTOOL) gen skeleton $< name recv_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/tools/gen/xnf_gen.o: tools/gen/xnf_gen.c $(BUILD)/tools/gen/gen.skel.h $(BUILD)/tools/gen/recv.skel.h
	$(CC) $(RT_CFLAGS) -I$(BUILD)/tools/gen -c $< -o $@
$(BUILD)/tools/gen/receiver.o: tools/gen/receiver.c $(BUILD)/tools/gen/recv.skel.h
	$(CC) $(RT_CFLAGS) -I$(BUILD)/tools/gen -c $< -o $@
$(BUILD)/bin/xnf-gen: $(BUILD)/tools/gen/xnf_gen.o $(BUILD)/tools/gen/frame.o $(BUILD)/tools/gen/receiver.o \
		$(BUILD)/tools/gen/classes.o $(BUILD)/tools/gen/pcap_out.o $(BUILD)/tools/gen/socket_sender.o \
		$(BUILD)/tools/gen/tc_sender.o \
		$(BUILD)/tools/gen/iface_stats.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# The reference live-frames generator (the yardstick for xnf-gen).
$(BUILD)/tools/gen-ref/gen_ref.bpf.o: tools/gen-ref/gen_ref.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
$(BUILD)/tools/gen-ref/gen_ref.skel.h: $(BUILD)/tools/gen-ref/gen_ref.bpf.o
	$(BPFTOOL) gen skeleton $< name gen_ref_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/tools/gen-ref/xnf_gen_ref.o: tools/gen-ref/xnf_gen_ref.c $(BUILD)/tools/gen-ref/gen_ref.skel.h
	@mkdir -p $(@D)
	$(CC) $(RT_CFLAGS) -I$(BUILD)/tools/gen-ref -Itools/gen -c $< -o $@
# It sends xnf-gen's template frame, built by xnf-gen's own code.
$(BUILD)/bin/xnf-gen-ref: $(BUILD)/tools/gen-ref/xnf_gen_ref.o $(BUILD)/tools/gen/frame.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# The live-frames transmit path alone (the runtime's own code, lib/afxdp/live_tx.c), for benchmarks.
$(BUILD)/tools/live-tx-cost/live_tx_cost.o: RT_CFLAGS += -Ilib/afxdp -I$(BUILD)/lib/afxdp
$(BUILD)/bin/xnf-live-tx-cost: $(BUILD)/tools/live-tx-cost/live_tx_cost.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# The attached XDP program's time per frame (BPF_PROG_RUN), for costs below veth's spread.
$(BUILD)/bin/xnf-xdp-cost: $(BUILD)/tools/xdp-cost/xdp_cost.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# AF_PACKET's receive path (TPACKET_V2/V3), the kernel's older way to user space, measured beside AF_XDP.
$(BUILD)/bin/xnf-afpacket-ref: $(BUILD)/tools/afpacket-ref/afpacket_ref.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# What a thread spinning on one vCPU costs the other (the host's placement of the pair), for the lab's notes.
$(BUILD)/bin/xnf-core-pair: $(BUILD)/tools/core-pair/core_pair.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# The other ways to send without live frames, at their best, measured beside xnf-gen's senders (xnf bench run senders).
$(BUILD)/tools/sender-ref/sender_ref.o: RT_CFLAGS += -Itools/gen
$(BUILD)/bin/xnf-sender-ref: $(BUILD)/tools/sender-ref/sender_ref.o $(BUILD)/tools/gen/frame.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# What this kernel gives xnf: the facility table (lib/util/kernel_facilities.c), for xnf doctor and scripts.
$(BUILD)/bin/xnf-kernel: $(BUILD)/tools/kernel/xnf_kernel.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/bin/xnf-xdp-load: $(BUILD)/tools/xdp-load/xdp_load.o $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

# The reference AF_XDP loop borrows drop's embedded object for its redirect program.
$(BUILD)/bin/xnf-afxdp-ref: $(BUILD)/tools/afxdp-ref/afxdp_ref.o $(drop_OBJS) $(LIBXNF)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDLIBS)

define c_test
$(BUILD)/tests/test-$(1): $(BUILD)/tests/c/test_$(subst -,_,$(1)).o $(LIBXNF)
	@mkdir -p $$(@D)
	$$(CC) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach t,$(C_TESTS),$(eval $(call c_test,$(t))))

# The concurrency test runs under AddressSanitizer, with its own build of the map code.
ASAN_FLAGS := -fsanitize=address -fno-omit-frame-pointer
$(BUILD)/tests/test-maps-concurrent: tests/c/test_maps_concurrent.c lib/maps/native_maps.c lib/maps/hash_table.c lib/maps/rcu_glue.c \
                                    lib/maps/map_memory.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -MMD -MP,$(RT_CFLAGS)) $(ASAN_FLAGS) -o $@ $^ -lurcu-qsbr -lpthread

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# make install [PREFIX=/usr/local] [DESTDIR=...]: the SDK (headers, libxnf.a, the runtime's objects, nf.mk,
# xnf.pc), the NFs and tools, the lab's BPF programs, and the Python package with its `xnf` command (its
# dependencies too, unless DESTDIR stages the install for a package whose system provides them; a staged
# install leaves the xnf package Python already has alone).
PREFIX  ?= /usr/local
PYTHON  ?= python3
SHIPPED_NFS := $(patsubst nfs/%/,%,$(wildcard nfs/*/))

include mk/fuzz.mk
INSTALL_TO   = $(DESTDIR)$(PREFIX)
# Man pages from each program's own --help and --version (help2man): nothing is written twice.
MAN_PROGRAMS := $(TOOLS) $(foreach n,$(SHIPPED_NFS),$(BUILD)/bin/xnf-$(n))
man: all
	@mkdir -p $(BUILD)/man
	for p in $(MAN_PROGRAMS); do \
		help2man --no-info --no-discard-stderr --output $(BUILD)/man/$$(basename $$p).1 $$p || exit 1; done
	help2man --no-info --name "write a network function once, run it with XDP, AF_XDP or both" \
		--output $(BUILD)/man/xnf.1 "env PYTHONPATH=$(CURDIR)/python $(PYTHON) -m xnf"
	sed -i 's/^\.TH "\?ENV[^ ]*/.TH XNF/' $(BUILD)/man/xnf.1

# The programs, BPF objects and SDK under a prefix: what `make install` installs, and what a wheel carries
# (setup.py: pip install . runs it with PREFIX inside the package).
install-files: all
	install -d $(INSTALL_TO)/bin $(INSTALL_TO)/include/xnf/internal $(INSTALL_TO)/lib/xnf/bpf \
		$(INSTALL_TO)/lib/pkgconfig $(INSTALL_TO)/share/xnf/include/xnf/runtime
	install -m 644 include/xnf/*.h $(INSTALL_TO)/include/xnf/
	install -m 644 include/xnf/internal/*.h $(INSTALL_TO)/include/xnf/internal/
	install -m 644 $(LIBXNF) $(BUILD)/lib/runtime/main.o $(INSTALL_TO)/lib/xnf/
	install -m 644 $(BUILD)/bpf/*.bpf.o $(INSTALL_TO)/lib/xnf/bpf/
	install -m 644 mk/nf.mk lib/xdp/skel_glue.c $(INSTALL_TO)/share/xnf/
	install -m 644 lib/include/xnf/runtime/embedded.h $(INSTALL_TO)/share/xnf/include/xnf/runtime/
	install -m 755 scripts/check-sdk-line $(INSTALL_TO)/share/xnf/
	install -d $(INSTALL_TO)/share/xnf/systemd
	install -m 644 deploy/systemd/xnf.service deploy/systemd/xnf.toml $(INSTALL_TO)/share/xnf/systemd/
	install -m 755 $(TOOLS) $(foreach n,$(SHIPPED_NFS),$(BUILD)/bin/xnf-$(n)) $(INSTALL_TO)/bin/
	printf '%s\n' $(SHIPPED_NFS) > $(INSTALL_TO)/share/xnf/nfs
	sed -e 's|@VERSION@|$(VERSION)|' mk/xnf.pc.in > $(INSTALL_TO)/lib/pkgconfig/xnf.pc

install: install-files man
	install -d $(INSTALL_TO)/share/man/man1
	install -m 644 $(BUILD)/man/*.1 $(INSTALL_TO)/share/man/man1/
	XNF_WHEEL_PROGRAMS=no $(PYTHON) -m pip install -q --root-user-action=ignore --prefix=$(PREFIX) \
		$(if $(DESTDIR),--root=$(DESTDIR) --no-deps --ignore-installed) .

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
