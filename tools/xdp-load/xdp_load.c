// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-xdp-load: attaches the first XDP program of any BPF object file to
 * interfaces until SIGINT/SIGTERM, through bpf_links (nothing stays attached
 * after it ends). For hand-written baselines measured beside our NFs.
 *
 *   xnf-xdp-load OBJECT.o --iface IF [--iface IF ...] [--generic]
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/xdp_attach.h>

int main(int argc, char **argv)
{
	char *names[XNF_MAX_PORTS];
	struct xnf_port ports[XNF_MAX_PORTS];
	int link_fds[XNF_MAX_PORTS];
	struct bpf_program *prog = NULL, *p;
	struct bpf_object *obj;
	bool generic = false;
	__u32 n = 0;
	sigset_t mask;
	int sig;

	if (argc < 2) {
		fprintf(stderr, "usage: xnf-xdp-load OBJECT.o --iface IF [--iface IF ...] [--generic]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--iface") == 0 && i + 1 < argc && n < XNF_MAX_PORTS)
			names[n++] = argv[++i];
		else if (strcmp(argv[i], "--generic") == 0)
			generic = true;
		else {
			xnf_error("unexpected argument '%s'", argv[i]);
			return 2;
		}
	}
	if (xnf_ports_resolve(names, n, ports))
		return 1;
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		xnf_error("cannot open %s: %s", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		if (!prog && bpf_program__type(p) == BPF_PROG_TYPE_XDP)
			prog = p;
	}
	if (!prog || bpf_object__load(obj)) {
		xnf_error("%s has no XDP program that loads", argv[1]);
		bpf_object__close(obj);
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (xnf_xdp_attach_ports(bpf_program__fd(prog), ports, n, generic, link_fds)) {
		bpf_object__close(obj);
		return 1;
	}
	printf("xnf-xdp-load: %s attached\n", bpf_program__name(prog));
	fflush(stdout);
	sigwait(&mask, &sig);
	xnf_xdp_detach_ports(link_fds, n);
	bpf_object__close(obj);
	return 0;
}
