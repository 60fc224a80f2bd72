/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control socket of a running instance: a UNIX stream socket at
 * RUN_DIR/NAME.sock (RUN_DIR is /run/xnf unless XNF_RUN_DIR says otherwise).
 * A filesystem path, not an abstract socket, so it is reachable from every
 * network namespace. One request per connection, one line:
 *   info | stats | frames | entries MAP | rules list | rules add RULE | rules del RULE
 * answered with "ok" or "error: REASON" on the first line, then the body. One request keeps its connection:
 *   capture VERDICTS COUNT   (xnf dump: a stream of captured frames, lib/runtime/capture_session.c)
 * Clients are served side by side (up to XNF_CONTROL_MAX_CLIENTS reading their requests at once), so one that
 * connects and says nothing delays nobody. Beside the socket, RUN_DIR/NAME.owner says whose it is (one JSON
 * line: pid, start time, NF, mode), so a client can tell a stopped or killed instance without waiting for it.
 */
#ifndef XNF_RUNTIME_CONTROL_H
#define XNF_RUNTIME_CONTROL_H

#include <poll.h>
#include <stdio.h>
#include <sys/un.h>
#include <time.h>

#include <xnf/runtime/rules_engine.h>

#define XNF_DEFAULT_RUN_DIR "/run/xnf"
#define XNF_MAX_NAME 64

/* A request is one line of at most this many bytes, its newline not counted. */
#define XNF_CONTROL_REQUEST_MAX 1023
#define XNF_CONTROL_MAX_CLIENTS 32

struct xnf_control_client {
	int fd;                    /* -1: a free slot */
	size_t got;
	struct timespec since;     /* when it connected: it has CLIENT_TIMEOUT_MS to say what it wants */
	char buf[XNF_CONTROL_REQUEST_MAX + 2];
};

struct xnf_control_server {
	int listen_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char owner_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 8];
	char claimed[sizeof(((struct sockaddr_un *)0)->sun_path)];   /* the socket's path, before it exists */
	struct xnf_control_client clients[XNF_CONTROL_MAX_CLIENTS];
};

struct xnf_control_handlers {
	void *ctx;
	int (*info)(void *ctx, FILE *out);
	int (*stats)(void *ctx, FILE *out);
	int (*frames)(void *ctx, FILE *out); /* AF_XDP frame accounting */
	struct xnf_rules_target rules;
	/* Called before a rule is added or deleted (the offload controller withdraws its copies); or NULL. */
	void (*before_rules_change)(void *ctx);
	/* "capture ARGS": 0 when it took the connection fd (it answers and closes it), -1 with a reason; or NULL. */
	int (*capture)(void *ctx, int fd, const char *args, char *err, size_t errlen);
	/* "reload": the --rules file read again and put in force; what changed written to out. Or NULL. */
	int (*reload)(void *ctx, FILE *out, char *err, size_t errlen);
};

const char *xnf_run_dir(const char *override);
/* Takes the name before anything is set up: refuses an invalid one, or one a live instance has (a dead one's
 * socket goes), and creates the run directory. 0, or -1 with the reason printed. Nothing exists yet. */
int xnf_control_claim(struct xnf_control_server *s, const char *run_dir, const char *name);
/* Creates the claimed socket and its owner record (nf, mode: what the record says besides the process), once the
 * instance is in force: a client that finds the socket finds the NF doing what its rules say. 0, or -1. */
int xnf_control_listen(struct xnf_control_server *s, const char *name, const char *nf, const char *mode);
/* The descriptors to poll for (POLLIN): the listening socket and every client still reading. How many. */
unsigned xnf_control_pollfds(const struct xnf_control_server *s, struct pollfd *fds);
/* Milliseconds until the first reading client runs out of time, or -1 when none reads. */
int xnf_control_timeout_ms(const struct xnf_control_server *s);
/* Accepts who is waiting, reads what arrived, answers every whole request, drops clients out of time. fds are
 * what xnf_control_pollfds gave, after poll(). */
void xnf_control_serve(struct xnf_control_server *s, const struct pollfd *fds, unsigned nfds,
		       const struct xnf_control_handlers *h);
/* Answers one request line (no newline) into body: 0, or -1 with the reason in err. What serve does with a
 * request once read; on its own for the fuzzer (tests/fuzz/fuzz_control.c). */
int xnf_control_dispatch(const char *request, const struct xnf_control_handlers *h, FILE *body, char *err,
			 size_t errlen);
void xnf_control_close(struct xnf_control_server *s);

#endif
