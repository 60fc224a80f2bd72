// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/clock.h>
#include <xnf/runtime/conntrack_list.h>
#include <xnf/runtime/control.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/map_ref.h>
#include <xnf/runtime/process.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The longest a client may take to send its request, or to take the answer: the control thread answers one
 * request at a time (clients send theirs side by side), and also runs housekeeping and the offload controller. */
#define CLIENT_TIMEOUT_MS 1000

const char *xnf_run_dir(const char *override)
{
	const char *env = getenv("XNF_RUN_DIR");

	if (override && *override)
		return override;
	return env && *env ? env : XNF_DEFAULT_RUN_DIR;
}

static int valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > XNF_MAX_NAME)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return 0;
	}
	return name[0] != '.';
}

static int make_dir(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

/* A socket file whose owner died is stale; a live one means the name is taken. */
static int name_in_use(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int live;

	if (fd < 0)
		return 0;
	live = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	return live;
}

/* NAME.owner beside the socket, whole or not at all: whose the socket is. */
static int write_owner(struct xnf_control_server *s, const char *name, const char *nf, const char *mode)
{
	char tmp[sizeof(s->owner_path) + 4];
	struct xnf_process_id self;
	FILE *f;

	snprintf(s->owner_path, sizeof(s->owner_path), "%.*s.owner", (int)(strlen(s->path) - strlen(".sock")),
		 s->path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->owner_path);
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	xnf_process_self(&self);
	fprintf(f, "{\"name\": \"%s\", \"nf\": \"%s\", \"mode\": \"%s\", \"pid\": %d, \"start_time\": %llu, "
		"\"pid_ns\": %llu}\n", name, nf, mode, self.pid, self.start, self.pid_ns);
	if (fclose(f) || rename(tmp, s->owner_path)) {
		unlink(tmp);
		s->owner_path[0] = '\0';
		return -1;
	}
	return 0;
}

/* A live instance's socket under the name refuses it; a dead one's is stale, and goes. */
static int refuse_name_in_use(const char *path, const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (access(addr.sun_path, F_OK) != 0)
		return 0;
	if (name_in_use(&addr)) {
		xnf_error("an instance named '%s' is already running (control socket %s): stop it, or give this one "
			  "another --name", name, addr.sun_path);
		return -1;
	}
	unlink(addr.sun_path);
	return 0;
}

int xnf_control_claim(struct xnf_control_server *s, const char *run_dir, const char *name)
{
	int n;

	s->listen_fd = -1;
	s->path[0] = s->owner_path[0] = s->claimed[0] = '\0';
	for (int i = 0; i < XNF_CONTROL_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	if (!valid_name(name)) {
		xnf_error("instance name '%s' is invalid: use up to %d letters, digits, '.', '_' or '-'",
			  name, XNF_MAX_NAME);
		return -1;
	}
	/* Checked before anything is created: a refused directory is not left behind. */
	n = snprintf(s->claimed, sizeof(s->claimed), "%s/%s.sock", run_dir, name);
	if (n < 0 || (size_t)n >= sizeof(s->claimed)) {
		xnf_error("control socket path %s/%s.sock is too long (a socket path holds %zu bytes): use a shorter "
			  "--run-dir or XNF_RUN_DIR", run_dir, name, sizeof(s->claimed) - 1);
		s->claimed[0] = '\0';
		return -1;
	}
	if (make_dir(run_dir)) {
		xnf_error("cannot create the run directory %s: %s", run_dir, strerror(errno));
		return -1;
	}
	return refuse_name_in_use(s->claimed, name);
}

int xnf_control_listen(struct xnf_control_server *s, const char *name, const char *nf, const char *mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	/* Another start under the name may have come between the claim and now. */
	if (refuse_name_in_use(s->claimed, name))
		return -1;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", s->claimed);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(s->listen_fd, 16)) {
		xnf_error("cannot create the control socket %s: %s", addr.sun_path, strerror(errno));
		if (s->listen_fd >= 0)
			close(s->listen_fd);
		s->listen_fd = -1;
		return -1;
	}
	chmod(addr.sun_path, 0600);
	strcpy(s->path, addr.sun_path);
	if (write_owner(s, name, nf, mode)) {
		xnf_error("cannot write the control socket's owner record beside %s: %s", s->path, strerror(errno));
		xnf_control_close(s);
		return -1;
	}
	return 0;
}

static int dispatch_rules(const char *args, const struct xnf_control_handlers *h, FILE *body,
			  char *err, size_t errlen)
{
	if (strcmp(args, "list") == 0)
		return xnf_rules_list(body, &h->rules, err, errlen) < 0 ? -1 : 0;
	bool add = strncmp(args, "add ", 4) == 0, del = strncmp(args, "del ", 4) == 0;

	if ((add || del) && h->before_rules_change)
		h->before_rules_change(h->ctx);
	if (add)
		return xnf_rules_add(args + 4, &h->rules, err, errlen);
	if (del)
		return xnf_rules_del(args + 4, &h->rules, err, errlen);
	snprintf(err, errlen, "unknown rules command '%s': use list, add RULE or del RULE", args);
	return -1;
}

/* How many entries one of the NF's maps holds now, and how many it can. */
static int report_entries(const char *map_name, const struct xnf_control_handlers *h, FILE *body, char *err,
			  size_t errlen)
{
	struct xnf_map_ref ref;
	long long count;

	if (!h->rules.resolve || h->rules.resolve(h->rules.ctx, map_name, &ref)) {
		snprintf(err, errlen, "no map '%s' in this NF: its maps are the XNF_MAP_... lines of its source",
			 map_name);
		return -1;
	}
	count = xnf_map_ref_count(&ref);
	if (count < 0) {
		snprintf(err, errlen, "map '%s' cannot be walked: %s", map_name, strerror((int)-count));
		return -1;
	}
	fprintf(body, "{\"map\": \"%s\", \"entries\": %lld, \"capacity\": %u}\n", ref.name, count,
		ref.max_entries);
	return 0;
}

int xnf_control_dispatch(const char *request, const struct xnf_control_handlers *h, FILE *body, char *err,
			 size_t errlen)
{
	if (strcmp(request, "info") == 0)
		return h->info(h->ctx, body);
	if (strcmp(request, "stats") == 0)
		return h->stats(h->ctx, body);
	if (strcmp(request, "frames") == 0) {
		if (h->frames && h->frames(h->ctx, body) == 0)
			return 0;
		snprintf(err, errlen, "no frame accounting: this instance has no AF_XDP sockets, or its "
			 "workers did not answer");
		return -1;
	}
	if (strncmp(request, "rules ", 6) == 0)
		return dispatch_rules(request + 6, h, body, err, errlen);
	if (strncmp(request, "entries ", 8) == 0)
		return report_entries(request + 8, h, body, err, errlen);
	if (strncmp(request, "connections ", 12) == 0 && h->rules.resolve)
		return xnf_ct_list(&h->rules, request + 12, body, err, errlen);
	if (strcmp(request, "reload") == 0) {
		if (h->reload)
			return h->reload(h->ctx, body, err, errlen);
		snprintf(err, errlen, "this instance cannot reload its rules");
		return -1;
	}
	snprintf(err, errlen, "unknown request '%s': use info, stats, frames, entries MAP, connections TABLE, rules or "
		 "reload", request);
	return -1;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void answer_error(int fd, const char *err)
{
	char line[1100];
	int n = snprintf(line, sizeof(line), "error: %s\n", err[0] ? err : "request failed");

	write_all(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* ------------------------------------------------------------------ clients, side by side */

static void drop_client(struct xnf_control_client *c)
{
	close(c->fd);
	c->fd = -1;
}

/* What a request is answered with: the capture takes the connection, the rest get their answer and are closed. */
static void answer(struct xnf_control_client *c, const struct xnf_control_handlers *h)
{
	/* Whole seconds and microseconds below a million: the kernel refuses anything else (EDOM). */
	struct timeval timeout = { .tv_sec = CLIENT_TIMEOUT_MS / 1000, .tv_usec = CLIENT_TIMEOUT_MS % 1000 * 1000 };
	char err[1024] = "", *body_buf = NULL, *request = c->buf;
	size_t body_len = 0;
	FILE *body;
	int rc;

	request[strcspn(request, "\r\n")] = '\0';
	/* The answer is sent blocking, but a client that does not read it gets no more than the timeout. */
	if (fcntl(c->fd, F_SETFL, 0) || setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout))) {
		drop_client(c);
		return;
	}
	if (strncmp(request, "capture ", 8) == 0 && h->capture) {
		if (h->capture(h->ctx, c->fd, request + 8, err, sizeof(err)) == 0) {
			c->fd = -1; /* the capture owns the connection now */
			return;
		}
		answer_error(c->fd, err);
		drop_client(c);
		return;
	}
	body = open_memstream(&body_buf, &body_len);
	if (!body) {
		drop_client(c);
		return;
	}
	rc = xnf_control_dispatch(request, h, body, err, sizeof(err));
	fclose(body);
	if (rc) {
		answer_error(c->fd, err);
	} else {
		write_all(c->fd, "ok\n", 3);
		write_all(c->fd, body_buf, body_len);
	}
	free(body_buf);
	drop_client(c);
}

/* Reads what a client sent; answers once its line is whole. A line longer than a request gets its error. */
static void take_input(struct xnf_control_client *c, const struct xnf_control_handlers *h)
{
	ssize_t n = recv(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got, MSG_DONTWAIT);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop_client(c);
		return;
	}
	c->got += (size_t)n;
	c->buf[c->got] = '\0';
	if (memchr(c->buf, '\n', c->got)) {
		answer(c, h);
	} else if (c->got == sizeof(c->buf) - 1) {
		char text[80];
		int len = snprintf(text, sizeof(text), "error: a request is one line of at most %d bytes\n",
				   XNF_CONTROL_REQUEST_MAX);

		write_all(c->fd, text, (size_t)len);
		drop_client(c);
	}
}

static void accept_waiting(struct xnf_control_server *s)
{
	static const char busy[] = "error: busy: too many clients at once; try again\n";
	int fd;

	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct xnf_control_client *free_slot = NULL;

		for (int i = 0; i < XNF_CONTROL_MAX_CLIENTS && !free_slot; i++)
			free_slot = s->clients[i].fd < 0 ? &s->clients[i] : NULL;
		if (!free_slot) {
			write_all(fd, busy, sizeof(busy) - 1);
			close(fd);
			continue;
		}
		free_slot->fd = fd;
		free_slot->got = 0;
		clock_gettime(CLOCK_MONOTONIC, &free_slot->since);
	}
}

unsigned xnf_control_pollfds(const struct xnf_control_server *s, struct pollfd *fds)
{
	unsigned n = 0;

	fds[n++] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
	for (int i = 0; i < XNF_CONTROL_MAX_CLIENTS; i++) {
		if (s->clients[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = s->clients[i].fd, .events = POLLIN };
	}
	return n;
}

int xnf_control_timeout_ms(const struct xnf_control_server *s)
{
	long first = -1;

	for (int i = 0; i < XNF_CONTROL_MAX_CLIENTS; i++) {
		long left;

		if (s->clients[i].fd < 0)
			continue;
		left = CLIENT_TIMEOUT_MS - (long)(xnf_seconds_since(&s->clients[i].since) * 1000);
		left = left < 0 ? 0 : left;
		if (first < 0 || left < first)
			first = left;
	}
	return (int)first;
}

void xnf_control_serve(struct xnf_control_server *s, const struct pollfd *fds, unsigned nfds,
		       const struct xnf_control_handlers *h)
{
	for (unsigned i = 1; i < nfds; i++) {
		for (int c = 0; c < XNF_CONTROL_MAX_CLIENTS && fds[i].revents; c++) {
			if (s->clients[c].fd == fds[i].fd) {
				take_input(&s->clients[c], h);
				break;
			}
		}
	}
	/* A client with no whole line in time, however it trickles bytes, gives way. */
	for (int c = 0; c < XNF_CONTROL_MAX_CLIENTS; c++) {
		if (s->clients[c].fd >= 0 && xnf_seconds_since(&s->clients[c].since) * 1000 >= CLIENT_TIMEOUT_MS)
			drop_client(&s->clients[c]);
	}
	if (fds[0].revents)
		accept_waiting(s);
}

void xnf_control_close(struct xnf_control_server *s)
{
	for (int i = 0; i < XNF_CONTROL_MAX_CLIENTS; i++) {
		if (s->clients[i].fd >= 0)
			drop_client(&s->clients[i]);
	}
	if (s->owner_path[0]) {
		unlink(s->owner_path);
		s->owner_path[0] = '\0';
	}
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		s->listen_fd = -1;
	}
	if (s->path[0]) {
		unlink(s->path);
		s->path[0] = '\0';
	}
}
