// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-train datasets: the MNIST file of scripts/demo/mnist-fetch.sh and a
 * synthetic stand-in (see data.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <incnn/gen.h>
#include "data.h"

static void init_scale(struct tr_data *d)
{
	int i;

	for (i = 0; i < 256; i++)
		d->scale[i] = (float)i / 255.0f;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int read_all(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EINVAL;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int tr_data_load(struct tr_data *d, const char *path, char *err,
		 size_t errlen)
{
	unsigned char hdr[TR_DATA_HDR];
	uint32_t ntr, nte, rows, cols;
	unsigned char *rec = NULL;
	struct stat st;
	size_t n, i, recsz;
	int fd, ret;

	memset(d, 0, sizeof(*d));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || read_all(fd, hdr, sizeof(hdr)) ||
	    memcmp(hdr, TR_DATA_MAGIC, 8)) {
		snprintf(err, errlen, "%s: not an incnn-train data file (magic " TR_DATA_MAGIC ")",
			 path);
		ret = -EINVAL;
		goto out;
	}
	ntr = le32(hdr + 8);
	nte = le32(hdr + 12);
	rows = le32(hdr + 16);
	cols = le32(hdr + 20);
	if (!ntr || !nte || ntr > 10000000 || nte > 10000000 || !rows ||
	    !cols || rows > 1024 || cols > 1024) {
		snprintf(err, errlen, "%s: bad header (train %u, test %u, %ux%u)",
			 path, ntr, nte, rows, cols);
		ret = -EINVAL;
		goto out;
	}
	n = (size_t)ntr + nte;
	recsz = (size_t)rows * cols + 1;
	if ((uint64_t)st.st_size != TR_DATA_HDR + n * recsz) {
		snprintf(err, errlen, "%s: %lld bytes, the header says %zu",
			 path, (long long)st.st_size, TR_DATA_HDR + n * recsz);
		ret = -EINVAL;
		goto out;
	}
	d->n_train = (int)ntr;
	d->n_test = (int)nte;
	d->dim = (int)(rows * cols);
	d->pix = malloc(n * d->dim);
	d->label = malloc(n);
	rec = malloc(recsz);
	if (!d->pix || !d->label || !rec) {
		snprintf(err, errlen, "out of memory for %zu samples", n);
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		ret = read_all(fd, rec, recsz);
		if (ret) {
			snprintf(err, errlen, "%s: read error", path);
			goto out;
		}
		if (rec[recsz - 1] >= TR_CLASSES) {
			snprintf(err, errlen, "%s: sample %zu has label %u",
				 path, i, rec[recsz - 1]);
			ret = -EINVAL;
			goto out;
		}
		memcpy(d->pix + i * d->dim, rec, d->dim);
		d->label[i] = rec[recsz - 1];
	}
	init_scale(d);
	ret = 0;
out:
	free(rec);
	close(fd);
	if (ret)
		tr_data_free(d);
	return ret;
}

int tr_data_synth(struct tr_data *d, int n_train, int n_test, uint64_t seed)
{
	uint8_t proto[TR_CLASSES][784];
	struct incnn_rng rng;
	int i, k, c, n = n_train + n_test;

	memset(d, 0, sizeof(*d));
	if (n_train < 1 || n_test < 1 || n_train > 1000000 ||
	    n_test > 1000000)
		return -EINVAL;
	d->n_train = n_train;
	d->n_test = n_test;
	d->dim = 784;
	d->pix = malloc((size_t)n * d->dim);
	d->label = malloc(n);
	if (!d->pix || !d->label) {
		tr_data_free(d);
		return -ENOMEM;
	}
	incnn_rng_seed(&rng, seed);
	/* prototypes: about a quarter of the pixels lit */
	for (c = 0; c < TR_CLASSES; c++)
		for (k = 0; k < 784; k++)
			proto[c][k] = (incnn_rng_next(&rng) & 3) == 0 ?
				      (uint8_t)(128 + (incnn_rng_next(&rng) & 127)) : 0;
	for (i = 0; i < n; i++) {
		uint8_t *x = d->pix + (size_t)i * d->dim;

		c = (int)(incnn_rng_next(&rng) % TR_CLASSES);
		d->label[i] = (uint8_t)c;
		for (k = 0; k < 784; k++) {
			/* 60%: the class's pixel, else another class's */
			uint64_t u = incnn_rng_next(&rng);
			int src = u % 10 < 6 ? c : (int)((u >> 8) % TR_CLASSES);
			int v = proto[src][k] + (int)((u >> 16) % 121) - 60;

			x[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
	}
	init_scale(d);
	return 0;
}

void tr_data_free(struct tr_data *d)
{
	free(d->pix);
	free(d->label);
	d->pix = NULL;
	d->label = NULL;
}

void tr_data_get(const struct tr_data *d, int idx, float *x, uint8_t *label)
{
	const uint8_t *p = d->pix + (size_t)idx * d->dim;
	int k;

	for (k = 0; k < d->dim; k++)
		x[k] = d->scale[p[k]];
	*label = d->label[idx];
}

void tr_shuffle(int *perm, int n, uint64_t seed, int epoch)
{
	struct incnn_rng rng;
	int i;

	incnn_rng_seed(&rng, seed * 0x9e3779b97f4a7c15ull ^
		       (0xd1b54a32d192ed03ull * (uint64_t)epoch));
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		int j = (int)(incnn_rng_next(&rng) % (uint64_t)(i + 1));
		int t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}
