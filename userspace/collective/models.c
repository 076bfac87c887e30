// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Layer tables of AlexNet, VGG-16, ResNet-50 and GoogLeNet, computed from
 * the architectures (torchvision's definitions, 3x224x224 input, 1000
 * classes): a small builder follows the tensor shape through the network
 * and derives each layer's parameters and forward FLOPs (2 per
 * multiply-add) from channels, kernel, stride and spatial size.
 *
 *	conv	k*k*cin/groups*cout weights (+ cout bias), 2*k*k*cin*cout*Ho*Wo
 *	fc	in*out weights + out bias, 2*in*out
 *	bn	2*c (scale and shift; running statistics are buffers, not
 *		parameters), 2*c*H*W
 *
 * Variants (and the totals the tests assert):
 *	alexnet		torchvision AlexNet (the one-GPU variant with 64/192
 *			channels), 61,100,840
 *	vgg16		VGG-16 without batch norm (configuration D),
 *			138,357,544
 *	resnet50	ResNet-50 v1.5 (stride on the 3x3 conv), batch-norm
 *			scale/shift counted as layers, 25,557,032
 *	googlenet	torchvision GoogLeNet (conv + BN blocks, the "5x5"
 *			branch with a 3x3 kernel as torchvision has it), no
 *			auxiliary classifiers, 6,624,904
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/incnn/wfbp.h"

struct md_b {
	struct incnn_model *m;
	size_t cap;
	int err;
	long c, h, w;		/* current tensor shape */
};

static struct incnn_model_layer *md_push(struct md_b *b, const char *name,
					 enum incnn_layer_kind kind)
{
	struct incnn_model_layer *l;

	if (b->err)
		return NULL;
	if (b->m->nlayers == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;

		l = realloc(b->m->layer, cap * sizeof(*l));
		if (!l) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->m->layer = l;
		b->cap = cap;
	}
	l = &b->m->layer[b->m->nlayers++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->kind = kind;
	return l;
}

/* @pfx then @sfx into @dst, cut to fit */
static void md_join(char *dst, size_t cap, const char *pfx, const char *sfx)
{
	size_t n = strlen(pfx);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, pfx, n);
	snprintf(dst + n, cap - n, "%s", sfx);
}

static long md_out(long in, int k, int s, int p, bool ceil_mode)
{
	long span = in + 2 * p - k;

	return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static void md_conv(struct md_b *b, const char *name, long cout, int k,
		    int s, int p, bool bias)
{
	struct incnn_model_layer *l = md_push(b, name, INCNN_LAYER_CONV);
	long ho = md_out(b->h, k, s, p, false), wo = md_out(b->w, k, s, p, false);

	if (!l)
		return;
	l->params = (uint64_t)k * k * b->c * cout + (bias ? cout : 0);
	l->flops = 2.0 * k * k * b->c * cout * ho * wo;
	b->c = cout;
	b->h = ho;
	b->w = wo;
}

static void md_bn(struct md_b *b, const char *name)
{
	struct incnn_model_layer *l = md_push(b, name, INCNN_LAYER_BN);

	if (!l)
		return;
	l->params = 2 * (uint64_t)b->c;
	l->flops = 2.0 * b->c * b->h * b->w;
}

static void md_pool(struct md_b *b, int k, int s, int p, bool ceil_mode)
{
	b->h = md_out(b->h, k, s, p, ceil_mode);
	b->w = md_out(b->w, k, s, p, ceil_mode);
}

static void md_fc(struct md_b *b, const char *name, long out)
{
	struct incnn_model_layer *l = md_push(b, name, INCNN_LAYER_FC);
	long in = b->c * b->h * b->w;

	if (!l)
		return;
	l->params = (uint64_t)in * out + out;
	l->flops = 2.0 * in * out;
	b->c = out;
	b->h = b->w = 1;
}

static void md_alexnet(struct md_b *b)
{
	md_conv(b, "features.0", 64, 11, 4, 2, true);
	md_pool(b, 3, 2, 0, false);
	md_conv(b, "features.3", 192, 5, 1, 2, true);
	md_pool(b, 3, 2, 0, false);
	md_conv(b, "features.6", 384, 3, 1, 1, true);
	md_conv(b, "features.8", 256, 3, 1, 1, true);
	md_conv(b, "features.10", 256, 3, 1, 1, true);
	md_pool(b, 3, 2, 0, false);
	b->h = b->w = 6;	/* adaptive average pool to 6x6 */
	md_fc(b, "classifier.1", 4096);
	md_fc(b, "classifier.4", 4096);
	md_fc(b, "classifier.6", 1000);
}

static void md_vgg16(struct md_b *b)
{
	/* configuration D: channels, 0 = max pool */
	static const int cfg[] = { 64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
				   512, 512, 512, 0, 512, 512, 512, 0 };
	char name[40];
	size_t i;

	for (i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		if (!cfg[i]) {
			md_pool(b, 2, 2, 0, false);
			continue;
		}
		/* torchvision's index in features: conv, relu (, pool) */
		snprintf(name, sizeof(name), "features.%zu", i * 2 -
			 (i > 2) - (i > 5) - (i > 9) - (i > 13));
		md_conv(b, name, cfg[i], 3, 1, 1, true);
	}
	b->h = b->w = 7;
	md_fc(b, "classifier.0", 4096);
	md_fc(b, "classifier.3", 4096);
	md_fc(b, "classifier.6", 1000);
}

/* ResNet-50 bottleneck: 1x1, 3x3 (stride), 1x1 x4, projection if needed */
static void md_bottleneck(struct md_b *b, const char *pfx, long planes,
			  int stride)
{
	long in = b->c, h = b->h, w = b->w;
	char name[40];

	md_join(name, sizeof(name), pfx, ".conv1");
	md_conv(b, name, planes, 1, 1, 0, false);
	md_join(name, sizeof(name), pfx, ".bn1");
	md_bn(b, name);
	md_join(name, sizeof(name), pfx, ".conv2");
	md_conv(b, name, planes, 3, stride, 1, false);
	md_join(name, sizeof(name), pfx, ".bn2");
	md_bn(b, name);
	md_join(name, sizeof(name), pfx, ".conv3");
	md_conv(b, name, 4 * planes, 1, 1, 0, false);
	md_join(name, sizeof(name), pfx, ".bn3");
	md_bn(b, name);
	if (stride != 1 || in != 4 * planes) {
		long c = b->c, ho = b->h, wo = b->w;

		b->c = in;
		b->h = h;
		b->w = w;
		md_join(name, sizeof(name), pfx, ".downsample.0");
		md_conv(b, name, 4 * planes, 1, stride, 0, false);
		md_join(name, sizeof(name), pfx, ".downsample.1");
		md_bn(b, name);
		if (b->c != c || b->h != ho || b->w != wo)
			b->err = -EINVAL;
	}
}

static void md_resnet50(struct md_b *b)
{
	static const int blocks[4] = { 3, 4, 6, 3 };
	char pfx[32];
	int s, i;

	md_conv(b, "conv1", 64, 7, 2, 3, false);
	md_bn(b, "bn1");
	md_pool(b, 3, 2, 1, false);
	for (s = 0; s < 4; s++)
		for (i = 0; i < blocks[s]; i++) {
			snprintf(pfx, sizeof(pfx), "layer%d.%d", s + 1, i);
			md_bottleneck(b, pfx, 64L << s, i == 0 && s ? 2 : 1);
		}
	b->h = b->w = 1;	/* global average pool */
	md_fc(b, "fc", 1000);
}

/* GoogLeNet's BasicConv2d: conv without bias, then batch norm */
static void md_basic(struct md_b *b, const char *pfx, long cout, int k,
		     int s, int p)
{
	char name[40];

	md_join(name, sizeof(name), pfx, ".conv");
	md_conv(b, name, cout, k, s, p, false);
	md_join(name, sizeof(name), pfx, ".bn");
	md_bn(b, name);
}

static void md_inception(struct md_b *b, const char *pfx, long c1, long c3r,
			 long c3, long c5r, long c5, long pp)
{
	long in = b->c;
	char name[40];

	md_join(name, sizeof(name), pfx, ".branch1");
	md_basic(b, name, c1, 1, 1, 0);
	b->c = in;
	md_join(name, sizeof(name), pfx, ".branch2.0");
	md_basic(b, name, c3r, 1, 1, 0);
	md_join(name, sizeof(name), pfx, ".branch2.1");
	md_basic(b, name, c3, 3, 1, 1);
	b->c = in;
	md_join(name, sizeof(name), pfx, ".branch3.0");
	md_basic(b, name, c5r, 1, 1, 0);
	/* torchvision: 3x3 here (the original paper has 5x5) */
	md_join(name, sizeof(name), pfx, ".branch3.1");
	md_basic(b, name, c5, 3, 1, 1);
	b->c = in;
	/* max pool 3x3 stride 1 pad 1 keeps the size */
	md_join(name, sizeof(name), pfx, ".branch4.1");
	md_basic(b, name, pp, 1, 1, 0);
	b->c = c1 + c3 + c5 + pp;
}

static void md_googlenet(struct md_b *b)
{
	md_basic(b, "conv1", 64, 7, 2, 3);
	md_pool(b, 3, 2, 0, true);
	md_basic(b, "conv2", 64, 1, 1, 0);
	md_basic(b, "conv3", 192, 3, 1, 1);
	md_pool(b, 3, 2, 0, true);
	md_inception(b, "inception3a", 64, 96, 128, 16, 32, 32);
	md_inception(b, "inception3b", 128, 128, 192, 32, 96, 64);
	md_pool(b, 3, 2, 0, true);
	md_inception(b, "inception4a", 192, 96, 208, 16, 48, 64);
	md_inception(b, "inception4b", 160, 112, 224, 24, 64, 64);
	md_inception(b, "inception4c", 128, 128, 256, 24, 64, 64);
	md_inception(b, "inception4d", 112, 144, 288, 32, 64, 64);
	md_inception(b, "inception4e", 256, 160, 320, 32, 128, 128);
	md_pool(b, 2, 2, 0, true);
	md_inception(b, "inception5a", 256, 160, 320, 32, 128, 128);
	md_inception(b, "inception5b", 384, 192, 384, 48, 128, 128);
	b->h = b->w = 1;
	md_fc(b, "fc", 1000);
}

static const struct {
	const char *name;
	void (*build)(struct md_b *b);
} md_models[] = {
	{ "alexnet", md_alexnet },
	{ "vgg16", md_vgg16 },
	{ "resnet50", md_resnet50 },
	{ "googlenet", md_googlenet },
};

const char *incnn_model_name(size_t i)
{
	return i < sizeof(md_models) / sizeof(md_models[0]) ?
	       md_models[i].name : NULL;
}

int incnn_model_build(const char *name, struct incnn_model **out)
{
	struct md_b b = { .c = 3, .h = 224, .w = 224 };
	size_t i;

	*out = NULL;
	for (i = 0; incnn_model_name(i); i++)
		if (name && !strcmp(name, md_models[i].name))
			break;
	if (!incnn_model_name(i))
		return -ENOENT;
	b.m = calloc(1, sizeof(*b.m));
	if (!b.m)
		return -ENOMEM;
	b.m->name = md_models[i].name;
	md_models[i].build(&b);
	if (b.err) {
		incnn_model_free(b.m);
		return b.err;
	}
	for (i = 0; i < b.m->nlayers; i++) {
		b.m->params += b.m->layer[i].params;
		b.m->flops += b.m->layer[i].flops;
	}
	*out = b.m;
	return 0;
}

void incnn_model_free(struct incnn_model *m)
{
	if (!m)
		return;
	free(m->layer);
	free(m);
}

void incnn_model_timeline(const struct incnn_model *m, double backward,
			  struct incnn_plan_layer *out)
{
	double acc = 0;
	size_t i, L = m->nlayers;

	for (i = 0; i < L; i++) {
		const struct incnn_model_layer *l = &m->layer[L - 1 - i];

		acc += m->flops > 0 ? l->flops / m->flops : 0;
		out[i].count = l->params;
		out[i].ready = backward * acc;
	}
	/* the last layer is ready exactly when the backward pass ends */
	if (L)
		out[L - 1].ready = backward;
}
