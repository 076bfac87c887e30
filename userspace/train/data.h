/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Datasets for incnn-train.
 *
 * File format (written by scripts/demo/mnist-fetch.sh; all integers little
 * endian):
 *
 *	offset	size	field
 *	0	8	magic "INCNNMN1"
 *	8	4	n_train
 *	12	4	n_test
 *	16	4	rows (28)
 *	20	4	cols (28)
 *	24	...	n_train + n_test records, training split first:
 *			rows * cols pixel bytes (row-major, 0..255; the
 *			network sees byte / 255.0f), then 1 label byte (0..9)
 *
 * The file must be exactly that long. The synthetic dataset (tests, no
 * download) has the same shape: 10 classes of 28 x 28 images, each class
 * a random prototype image; every pixel of a sample is its class's
 * prototype pixel (60%) or a random class's, plus uniform noise in
 * [-60, 60]; deterministic from its seed.
 */
#ifndef INCNN_TRAIN_DATA_H
#define INCNN_TRAIN_DATA_H

#include <stddef.h>
#include <stdint.h>

#define TR_DATA_MAGIC	"INCNNMN1"
#define TR_DATA_HDR	24
#define TR_CLASSES	10

struct tr_data {
	int n_train, n_test, dim;
	uint8_t *pix;		/* (n_train + n_test) x dim */
	uint8_t *label;		/* n_train + n_test */
	float scale[256];	/* byte -> input value: i / 255.0f */
};

/*
 * Load @path. Returns 0, or a negative errno with a one-line reason in
 * @err: -ENOENT/-EACCES/... (open), -EINVAL (not the format, wrong size,
 * a label >= 10, no training or test sample), -ENOMEM.
 */
int tr_data_load(struct tr_data *d, const char *path, char *err,
		 size_t errlen);

/* The synthetic dataset: @n_train + @n_test samples from @seed. */
int tr_data_synth(struct tr_data *d, int n_train, int n_test, uint64_t seed);

void tr_data_free(struct tr_data *d);

/* Sample @idx (0..n_train-1 training, then test) as floats into @x. */
void tr_data_get(const struct tr_data *d, int idx, float *x, uint8_t *label);

/*
 * The training order of @epoch (1-based): a Fisher-Yates shuffle of
 * 0..n-1 from @seed and the epoch number, the same on every rank.
 */
void tr_shuffle(int *perm, int n, uint64_t seed, int epoch);

#endif
