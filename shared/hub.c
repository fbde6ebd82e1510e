/* hub.c -- one process of a FastCGI program records for its siblings. */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "hub.h"
#include "ih.h"
#include "log.h"

/* Connections waiting for the hub's threads. */
#define HUB_BACKLOG	128
/* Tries to reach or become the hub while another process binds it. */
#define HUB_TRIES	2

enum { HUB_SENT, HUB_NONE, HUB_FAIL };

/* The name: a digest of the program's path, the user and environment. */
void
hub_init(struct hub *h, int on, char **env)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	char exe[PATH_MAX], uid[32];
	unsigned int mdlen = 0, i;
	EVP_MD_CTX *ctx;
	ssize_t n;
	int ok;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	pthread_mutex_init(&h->mu, NULL);
	if (!on)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ctx = EVP_MD_CTX_new();
	ok = n > 0 && ctx != NULL &&
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, exe, (size_t)n) == 1;
	snprintf(uid, sizeof(uid), "|%lu|", (unsigned long)geteuid());
	ok = ok && EVP_DigestUpdate(ctx, uid, strlen(uid)) == 1;
	for (i = 0; ok && env != NULL && env[i] != NULL; i++)
		ok = EVP_DigestUpdate(ctx, env[i], strlen(env[i]) + 1) == 1;
	ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen >= 16;
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		log_emit(NULL, "IDEMHOOK_HUB: cannot name the hub: each "
		    "process records its own deliveries");
		return;
	}
	/* An abstract name: a leading NUL, gone when its socket closes. */
	h->name[0] = '\0';
	h->namelen = 1 + snprintf(h->name + 1, sizeof(h->name) - 1,
	    "idemhook-hub-");
	for (i = 0; i < 16; i++) {
		h->name[h->namelen++] = hex[md[i] >> 4];
		h->name[h->namelen++] = hex[md[i] & 15];
	}
	h->on = 1;
}

static socklen_t
hub_addr(const struct hub *h, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, h->name, (size_t)h->namelen);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    (size_t)h->namelen);
}

/* SO_PEERCRED's answer (struct ucred, which needs _GNU_SOURCE). */
struct peer {
	pid_t	pid;
	uid_t	uid;
	gid_t	gid;
};

/* Does the other end of s run as this process's user? */
static int
same_user(int s)
{
	struct peer cr;
	socklen_t len = sizeof(cr);

	return getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
	    cr.uid == geteuid();
}

/* A one-byte message with room for one descriptor, either way. */
struct fd_msg {
	struct msghdr	msg;
	struct iovec	iov;
	char		byte;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	} u;
};

static void
fd_msg_init(struct fd_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->byte = 'h';
	m->iov.iov_base = &m->byte;
	m->iov.iov_len = 1;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
}

/* Passes conn to the hub over a connection of its own. */
static int
hub_send(struct hub *h, int conn)
{
	struct sockaddr_un sa;
	struct fd_msg m;
	struct cmsghdr *cm;
	socklen_t len = hub_addr(h, &sa);
	int s, rc = HUB_FAIL;

	/*
	 * Never waits: a hub whose queue is full (stalled, or slower than
	 * its siblings) fails the connect with EAGAIN, and this process
	 * serves the connection itself.
	 */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return HUB_FAIL;
	if (connect(s, (struct sockaddr *)&sa, len) != 0) {
		rc = errno == ECONNREFUSED || errno == ENOENT ? HUB_NONE :
		    HUB_FAIL;
		goto out;
	}
	if (!same_user(s)) {
		pthread_mutex_lock(&h->mu);
		if (!h->warned)
			log_emit(NULL, "IDEMHOOK_HUB: the hub's name is held "
			    "by another user: each process records its own "
			    "deliveries");
		h->warned = 1;
		pthread_mutex_unlock(&h->mu);
		goto out;
	}
	fd_msg_init(&m);
	cm = CMSG_FIRSTHDR(&m.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &conn, sizeof(int));
	if (sendmsg(s, &m.msg, MSG_NOSIGNAL) == 1)
		rc = HUB_SENT;
out:
	close(s);
	return rc;
}

/* Under h->mu: binds the hub's name; HUB_NONE when another holds it. */
static int
hub_listen(struct hub *h)
{
	struct sockaddr_un sa;
	socklen_t len = hub_addr(h, &sa);
	int s, busy;

	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return HUB_FAIL;
	if (bind(s, (struct sockaddr *)&sa, len) != 0 ||
	    listen(s, HUB_BACKLOG) != 0) {
		busy = errno == EADDRINUSE;
		close(s);
		return busy ? HUB_NONE : HUB_FAIL;
	}
	h->fd = s;
	return HUB_SENT;
}

int
hub_pass(struct hub *h, int conn, int *became)
{
	int i, rc, here;

	*became = 0;
	if (!h->on)
		return 0;
	/*
	 * Nothing waits here: a hub bound but not yet listening gets one
	 * more try, then this process serves the connection itself.
	 */
	for (i = 0; i < HUB_TRIES; i++) {
		pthread_mutex_lock(&h->mu);
		here = h->fd >= 0;
		pthread_mutex_unlock(&h->mu);
		if (here)
			return 0;
		rc = hub_send(h, conn);
		if (rc != HUB_NONE)
			return rc == HUB_SENT;
		/* No hub: this process becomes it, unless another just did. */
		pthread_mutex_lock(&h->mu);
		rc = h->fd >= 0 ? HUB_FAIL : hub_listen(h);
		pthread_mutex_unlock(&h->mu);
		if (rc == HUB_SENT) {
			*became = 1;
			return 0;
		}
		if (rc == HUB_FAIL)
			return 0;
	}
	return 0;
}

/* The descriptor a message on c carries, or -1. */
static int
recv_conn(int c)
{
	struct fd_msg m;
	struct cmsghdr *cm;
	int fd = -1;

	fd_msg_init(&m);
	if (recvmsg(c, &m.msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m.msg);
	if (cm != NULL && cm->cmsg_level == SOL_SOCKET &&
	    cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	/* More than one descriptor: none is served (the rest are closed). */
	if (fd >= 0 && (m.msg.msg_flags & MSG_CTRUNC)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int
hub_take(struct hub *h)
{
	int c, fd;

	for (;;) {
		c = accept(h->fd, NULL, NULL);
		if (c < 0) {
			if (errno == ECONNABORTED || errno == EAGAIN)
				continue;
			return -1;
		}
		(void)fcntl(c, F_SETFD, FD_CLOEXEC);
		fd = same_user(c) ? recv_conn(c) : -1;
		close(c);
		if (fd >= 0)
			return fd;
	}
}

void
hub_free(struct hub *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	pthread_mutex_destroy(&h->mu);
}
