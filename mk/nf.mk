# How one NF becomes one binary: the rules shared by xnf's own build (the Makefile includes this file and
# evaluates XNF_NF_RULES for every NF folder) and by NFs built outside it (`xnf build DIR`, or
# `make -f $(pkg-config --variable=nfmk xnf) NF_DIR=DIR`, against an installed xnf).
#
#   NAME.c           the NF (compiled three times: XDP and tc objects, native object), <xnf/nf.h> only
#   NAME_rules.c     its rules codec, NAME_control.c its start/housekeeping steps (optional), <xnf/control.h> only
#
# The including side sets:
#   XNF_INCLUDE     the SDK's headers (include/ in the tree)       XNF_RT_INCLUDE  headers skel_glue.c needs
#   XNF_LIBS        libxnf.a and the object with main()            XNF_SKEL_GLUE   lib/xdp/skel_glue.c
#   XNF_CHECK_SDK   scripts/check-sdk-line
# and calls $(eval $(call XNF_NF_RULES,NAME,SOURCE_DIR,BUILD_DIR,BINARY)).

# The compilers and flags, for every C file of xnf as well (the tree's Makefile reads them from here).
CLANG           ?= clang
BPFTOOL         ?= bpftool
CFLAGS          ?= -O2 -g
XNF_C_FLAGS     := -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-format-truncation \
                   -fno-strict-aliasing -D_GNU_SOURCE -MMD -MP
XNF_BPF_FLAGS   := -O2 -g -target bpf -std=gnu11 -Wall -Werror -Wno-unused-function -MMD -MP \
                   -I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)
XNF_LDLIBS      := -lxdp -lbpf -lmnl -lurcu-qsbr -lpcap -lelf -lz -lpthread -lm

XNF_NF_CFLAGS   = $(CFLAGS) $(XNF_C_FLAGS) -I$(XNF_INCLUDE)
XNF_GLUE_CFLAGS = $(CFLAGS) $(XNF_C_FLAGS) -I$(XNF_INCLUDE) -I$(XNF_RT_INCLUDE) -DXNF_INTERNAL_OK
XNF_BPF_CFLAGS  = $(XNF_BPF_FLAGS) -I$(XNF_INCLUDE)

# $(1) name, $(2) its source folder, $(3) where its objects go, $(4) the binary.
define XNF_NF_RULES
$(3)/$(1).bpf.o: $(2)/$(1).c
	@mkdir -p $$(@D)
	@$(XNF_CHECK_SDK) $$<
	$(CLANG) $(XNF_BPF_CFLAGS) -I$(2) -c $$< -o $$@

$(3)/$(1).skel.h: $(3)/$(1).bpf.o
	$(BPFTOOL) gen skeleton $$< name $(1)_bpf > $$@.tmp && mv $$@.tmp $$@

# The same source for the tc hook (--mode tc): the skb layer's glue.
$(3)/$(1).tc.bpf.o: $(2)/$(1).c
	@mkdir -p $$(@D)
	$(CLANG) $(XNF_BPF_CFLAGS) -DXNF_HOOK_TC -I$(2) -c $$< -o $$@

$(3)/$(1).tc.skel.h: $(3)/$(1).tc.bpf.o
	$(BPFTOOL) gen skeleton $$< name $(1)_tc_bpf > $$@.tmp && mv $$@.tmp $$@

$(3)/$(1).native.o: $(2)/$(1).c
	@mkdir -p $$(@D)
	@$(XNF_CHECK_SDK) $$<
	$(CC) $(XNF_NF_CFLAGS) -I$(2) -c $$< -o $$@

$(3)/skel_glue.o: $(XNF_SKEL_GLUE) $(3)/$(1).skel.h $(3)/$(1).tc.skel.h
	$(CC) $(XNF_GLUE_CFLAGS) -I$(3) -DXNF_SKEL_HEADER='"$(1).skel.h"' -DXNF_SKEL=$(1)_bpf \
		-DXNF_TC_SKEL_HEADER='"$(1).tc.skel.h"' -DXNF_TC_SKEL=$(1)_tc_bpf -c $$< -o $$@

# The NF's native-only side: its rules codec (NAME_rules.c) and/or start step (NAME_control.c).
$(1)_CONTROL_SRC := $(wildcard $(2)/$(1)_rules.c $(2)/$(1)_control.c)
$(1)_OBJS := $(3)/$(1).native.o $(3)/skel_glue.o $$(patsubst $(2)/%.c,$(3)/%.o,$$($(1)_CONTROL_SRC))

$(3)/%.o: $(2)/%.c
	@mkdir -p $$(@D)
	@$(XNF_CHECK_SDK) $$<
	$(CC) $(XNF_NF_CFLAGS) -I$(2) -c $$< -o $$@

$(4): $$($(1)_OBJS) $(XNF_LIBS)
	@mkdir -p $$(@D)
	$(CC) -o $$@ $$^ $(XNF_LDLIBS)
endef

# Stand-alone use: make -f nf.mk NF_DIR=DIR [OUT=BINDIR], or `include` this file from an NF's own Makefile;
# the NF is named after its folder. This file knows where the SDK is from where it sits itself: in a
# checkout (mk/nf.mk, after `make`) or in an installed prefix (share/xnf/nf.mk, after `make install`).
XNF_MK_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ifdef NF_DIR
ifneq ($(wildcard $(XNF_MK_DIR)/../lib/include/xnf/runtime),)
XNF_ROOT        := $(abspath $(XNF_MK_DIR)/..)
XNF_INCLUDE     ?= $(XNF_ROOT)/include
XNF_RT_INCLUDE  ?= $(XNF_ROOT)/lib/include
XNF_LIBS        ?= $(XNF_ROOT)/build/lib/runtime/main.o $(XNF_ROOT)/build/libxnf.a
XNF_SKEL_GLUE   ?= $(XNF_ROOT)/lib/xdp/skel_glue.c
XNF_CHECK_SDK   ?= $(XNF_ROOT)/scripts/check-sdk-line
else
XNF_PREFIX      ?= $(abspath $(XNF_MK_DIR)/../..)
XNF_INCLUDE     ?= $(XNF_PREFIX)/include
XNF_RT_INCLUDE  ?= $(XNF_PREFIX)/share/xnf/include
XNF_LIBS        ?= $(XNF_PREFIX)/lib/xnf/main.o $(XNF_PREFIX)/lib/xnf/libxnf.a
XNF_SKEL_GLUE   ?= $(XNF_PREFIX)/share/xnf/skel_glue.c
XNF_CHECK_SDK   ?= $(XNF_PREFIX)/share/xnf/check-sdk-line
endif
$(foreach lib,$(XNF_LIBS),$(if $(wildcard $(lib)),,$(error $(lib) is missing: build xnf first (make, or make install))))
NF_NAME         := $(notdir $(abspath $(NF_DIR)))
NF_BUILD        ?= $(abspath $(NF_DIR))/build
OUT             ?= $(NF_BUILD)
NF_BINARY       := $(abspath $(OUT))/xnf-$(NF_NAME)
$(if $(wildcard $(abspath $(NF_DIR))/$(NF_NAME).c),,$(error $(NF_DIR) holds no $(NF_NAME).c: an NF folder is named after its NF, and NAME/NAME.c is the NF))

.PHONY: nf
nf: $(NF_BINARY)
$(eval $(call XNF_NF_RULES,$(NF_NAME),$(abspath $(NF_DIR)),$(NF_BUILD),$(NF_BINARY)))
-include $(wildcard $(NF_BUILD)/*.d)
endif
