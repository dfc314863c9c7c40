/*
 * File parts of ferry_multipart.c: which names are refused, and the files they are
 * spooled to, named and created as the front's os.CreateTemp(dir, "ferry-upload-*") does
 * (so that cleanup, docs and operators see one kind of file whichever side wrote it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ferry_multipart_int.h"

/* forbidden: name's last path element, less trailing dots and spaces, ends in an
 * extension of forbid (compared as Go's strings.ToLower leaves both) */
bool mp_forbidden(const char *name, size_t len, const char *const *forbid)
{
	const char *base = name, *end = name + len;
	for (const char *p = name; p < end; p++) {
		if (*p == '/' || *p == '\\') {
			base = p + 1;
		}
	}
	while (end > base && (end[-1] == '.' || end[-1] == ' ')) {
		end--;
	}
	for (; forbid && *forbid; forbid++) {
		const char *e = *forbid, *ee = e + strlen(e), *p = end;
		if (e == ee) {
			continue;
		}
		size_t w, we;
		while (ee > e && p > base) {
			int c = mp_lower_ascii_last(e, ee, &we), d = mp_lower_ascii_last(base, p, &w);
			if (c < 0) { /* other runes than ASCII are compared as bytes */
				if (ee[-1] != p[-1]) {
					break;
				}
				we = w = 1;
			} else if (d != c) {
				break;
			}
			ee -= we, p -= w;
		}
		if (ee == e) {
			return true;
		}
	}
	return false;
}

/* os.CreateTemp(dir, "ferry-upload-*"): a random decimal, O_EXCL, mode 0600 */
int mp_create(const char *dir, char **path)
{
	if (!dir || !*dir) {
		dir = getenv("TMPDIR");
		if (!dir || !*dir) {
			dir = "/tmp";
		}
	}
	size_t dl = strlen(dir), cap = dl + 32;
	char *p = malloc(cap);
	if (!p) {
		return -1;
	}
	for (int try = 0; try < 10000; try++) {
		uint32_t r;
		if (getrandom(&r, sizeof r, 0) != sizeof r) {
			break;
		}
		snprintf(p, cap, "%s%sferry-upload-%u", dir, dir[dl - 1] == '/' ? "" : "/", r);
		int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*path = p;
			return fd;
		}
		if (errno != EEXIST) {
			break;
		}
	}
	free(p);
	return -1;
}

bool mp_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return false;
		}
		p += w, n -= (size_t)w;
	}
	return true;
}

