// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers shared by the incnn command-line tools.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "toolutil.h"

int tu_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	switch (*p) {
	case '\0':
		break;
	case 'k': case 'K':
		mul = 1ull << 10;
		p++;
		break;
	case 'm': case 'M':
		mul = 1ull << 20;
		p++;
		break;
	case 'g': case 'G':
		mul = 1ull << 30;
		p++;
		break;
	default:
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

int tu_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int tu_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	/* no hex floats, inf or nan: a leading sign, digits or '.' only */
	if (!*s || isspace((unsigned char)*s) || strpbrk(s, "xXnN"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

int tu_parse_bound(const char *s, unsigned int *k)
{
	static const struct incnn_codec_param bound = {
		.kind = INCNN_PARAM_BOUND,
		.min = INCNN_BOUND_MIN_K,
		.max = INCNN_BOUND_MAX_K,
	};

	return incnn_codec_param_parse(&bound, s, k);
}

ssize_t tu_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (!r)
			break;
		done += r;
	}
	return done;
}

int tu_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = write(fd, (const char *)buf + done, len - done);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += r;
	}
	return 0;
}

static const uint32_t crc32_tab[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba,
	0x076dc419, 0x706af48f, 0xe963a535, 0x9e6495a3,
	0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91,
	0x1db71064, 0x6ab020f2, 0xf3b97148, 0x84be41de,
	0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec,
	0x14015c4f, 0x63066cd9, 0xfa0f3d63, 0x8d080df5,
	0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b,
	0x35b5a8fa, 0x42b2986c, 0xdbbbc9d6, 0xacbcf940,
	0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116,
	0x21b4f4b5, 0x56b3c423, 0xcfba9599, 0xb8bda50f,
	0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d,
	0x76dc4190, 0x01db7106, 0x98d220bc, 0xefd5102a,
	0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818,
	0x7f6a0dbb, 0x086d3d2d, 0x91646c97, 0xe6635c01,
	0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457,
	0x65b0d9c6, 0x12b7e950, 0x8bbeb8ea, 0xfcb9887c,
	0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2,
	0x4adfa541, 0x3dd895d7, 0xa4d1c46d, 0xd3d6f4fb,
	0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9,
	0x5005713c, 0x270241aa, 0xbe0b1010, 0xc90c2086,
	0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4,
	0x59b33d17, 0x2eb40d81, 0xb7bd5c3b, 0xc0ba6cad,
	0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683,
	0xe3630b12, 0x94643b84, 0x0d6d6a3e, 0x7a6a5aa8,
	0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe,
	0xf762575d, 0x806567cb, 0x196c3671, 0x6e6b06e7,
	0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5,
	0xd6d6a3e8, 0xa1d1937e, 0x38d8c2c4, 0x4fdff252,
	0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60,
	0xdf60efc3, 0xa867df55, 0x316e8eef, 0x4669be79,
	0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f,
	0xc5ba3bbe, 0xb2bd0b28, 0x2bb45a92, 0x5cb36a04,
	0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a,
	0x9c0906a9, 0xeb0e363f, 0x72076785, 0x05005713,
	0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21,
	0x86d3d2d4, 0xf1d4e242, 0x68ddb3f8, 0x1fda836e,
	0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c,
	0x8f659eff, 0xf862ae69, 0x616bffd3, 0x166ccf45,
	0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db,
	0xaed16a4a, 0xd9d65adc, 0x40df0b66, 0x37d83bf0,
	0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6,
	0xbad03605, 0xcdd70693, 0x54de5729, 0x23d967bf,
	0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

uint32_t tu_crc32(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	crc = ~crc;
	while (len--)
		crc = crc32_tab[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

double tu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double tu_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tu_bench_opt(const char *prog, int c, const char *arg, uint64_t max_n,
		 uint64_t *n, double *secs)
{
	uint64_t u;

	if (c == 'n') {
		if (tu_parse_u64(arg, &u) || !u || u > max_n)
			return tu_error(prog, TU_EXIT_USAGE,
					"-n %s: not a count in [1, 1G]", arg);
		*n = u;
		return 0;
	}
	if (c == 't') {
		if (tu_parse_double(arg, secs) || !(*secs > 0 && *secs <= 60))
			return tu_error(prog, TU_EXIT_USAGE,
					"-t %s: not a number in (0, 60]", arg);
		return 0;
	}
	return -1;
}

void tu_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void tu_json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

void tu_codec_names(char *buf, size_t len)
{
	unsigned int id;
	size_t pos = 0;

	buf[0] = '\0';
	for (id = 0; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);
		int r;

		if (!c)
			continue;
		r = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "",
			     c->name);
		if (r < 0 || (size_t)r >= len - pos)
			break;
		pos += r;
	}
}

void *tu_scratch_alloc(void)
{
	size_t sz = (INCNN_CODEC_SCRATCH + 63) / 64 * 64;

	return aligned_alloc(64, sz);
}

int tu_error(const char *prog, int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

int tu_getopt_error(const char *prog, int c, char *const *argv)
{
	/* the word the user typed, or the unknown short option letter */
	if (c == ':')
		return tu_error(prog, TU_EXIT_USAGE, "option %s needs an argument",
				argv[optind - 1]);
	if (optopt && optopt < 256)
		return tu_error(prog, TU_EXIT_USAGE, "unknown option -%c",
				optopt);
	return tu_error(prog, TU_EXIT_USAGE, "unknown option %s",
			argv[optind - 1]);
}

const char *tu_codec_label(unsigned int id, unsigned int param, char *buf,
			   size_t len)
{
	const struct incnn_codec *c = incnn_codec_get(id);

	if (!id || !c)
		snprintf(buf, len, "none");
	else if (tu_codec_takes_bits(c))
		snprintf(buf, len, "%s %u bits", c->name, param);
	else
		snprintf(buf, len, "%s 2^-%u", c->name, param);
	return buf;
}

int tu_parse_algo(const char *prog, const char *s, bool *ps)
{
	if (!strcmp(s, "ring"))
		*ps = false;
	else if (!strcmp(s, "ps"))
		*ps = true;
	else
		return tu_error(prog, TU_EXIT_USAGE,
				"--algo %s: must be ring or ps", s);
	return 0;
}

int tu_parse_bound_opt(const char *prog, const char *s,
		       const struct incnn_codec *codec, unsigned int *param)
{
	if (!codec || !tu_codec_takes_bound(codec))
		return tu_error(prog, TU_EXIT_USAGE,
				"--bound needs --codec inceptionn, ebq or zebq");
	if (incnn_codec_param_parse(&codec->param, s, param))
		return tu_error(prog, TU_EXIT_USAGE,
				"--bound %s: must be 2^-K with K in %u..%u", s,
				codec->param.min, codec->param.max);
	return 0;
}

int tu_coll_opt(const char *prog, struct tu_coll_opts *co, int c,
		const char *arg, char *const *argv)
{
	long l;

	switch (c) {
	case 'n':
		if (tu_parse_long(arg, 1, TU_MAX_LOCAL, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"-n %s: must be 1..%d", arg,
					TU_MAX_LOCAL);
		co->local = (int)l;
		return 0;
	case 'a':
		return tu_parse_algo(prog, arg, &co->ps) ? TU_EXIT_USAGE : 0;
	case 'c':
		co->codec_name = arg;
		return 0;
	case TU_OPT_BOUND:
		co->bound = arg;
		return 0;
	case TU_OPT_TOS:
		if (tu_parse_long(arg, 0, 255, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"--tos %s: must be 0..255 (e.g. 0x28)",
					arg);
		co->tos = (int)l;
		return 0;
	case TU_OPT_TIMEOUT:
		if (tu_parse_long(arg, 1, 86400000, &l))
			return tu_error(prog, TU_EXIT_USAGE,
					"--timeout %s: must be 1..86400000 ms",
					arg);
		co->timeout_ms = (int)l;
		return 0;
	}
	return tu_getopt_error(prog, c, argv);
}

int tu_launch_local(const char *prog, int world, tu_rank_fn *fn, void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd, r, status, worst = 0;
	pid_t *pid;

	pid = calloc((size_t)world, sizeof(*pid));
	if (!pid)
		return tu_error(prog, TU_EXIT_RUNTIME, "out of memory");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 4 * world + 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		worst = tu_error(prog, TU_EXIT_RUNTIME,
				 "cannot listen on 127.0.0.1: %s",
				 strerror(errno));
		if (fd >= 0)
			close(fd);
		free(pid);
		return worst;
	}
	/* what is buffered now must not be written once per child */
	fflush(stdout);
	fflush(stderr);
	for (r = 0; r < world; r++) {
		pid[r] = fork();
		if (pid[r] < 0) {
			worst = tu_error(prog, TU_EXIT_RUNTIME, "fork: %s",
					 strerror(errno));
			while (r--)
				kill(pid[r], SIGKILL);
			close(fd);
			free(pid);
			return worst;
		}
		if (pid[r] == 0) {
			free(pid);
			if (r != 0) {
				close(fd);
				fd = -1;
				/* rank 0 reports the job's error */
				if (!freopen("/dev/null", "w", stderr))
					_exit(TU_EXIT_RUNTIME);
			}
			/* exit(): flush stdout (and let LeakSanitizer look) */
			exit(fn(arg, r, world, ntohs(a.sin_port), fd));
		}
	}
	close(fd);
	for (r = 0; r < world; r++) {
		if (waitpid(pid[r], &status, 0) < 0)
			continue;
		if (WIFSIGNALED(status)) {
			tu_error(prog, TU_EXIT_RUNTIME, "rank %d died of signal %d",
				 r, WTERMSIG(status));
			worst = TU_EXIT_RUNTIME;
		} else if (WEXITSTATUS(status) && !worst) {
			worst = WEXITSTATUS(status);
		}
	}
	free(pid);
	return worst;
}
