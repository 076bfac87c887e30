// SPDX-License-Identifier: GPL-2.0
/*
 * A throwaway prototype, not a codec: how fast could ebq's values go in a
 * different container? ebq's q (round half up of |x| * 2^(k-1)) in
 * blocks of 32 values of one width each, SIMD-BP128 style: a control
 * area of one byte per block (the width: 0, 4, 8 or 32 bits per value),
 * then the blocks' data. Width 4 is sign-magnitude (|q| <= 7), width 8
 * ebq's payload byte (|q| <= 127), width 32 the raw floats; q = 0 is
 * +0.0 as in ebq. The decoded values are ebq's, bit for bit (checked
 * here against the library's ebq). Encode and decode are timed against
 * memcpy in the same run (CPU time, medians of rounds), beside ebq's
 * AVX2 path.
 *
 *   cc -O2 -mavx2 -Iuapi -Ikmod/codec -Iuserspace/include \
 *	scripts/bench/fmt-proto.c build/rel/lib/libincnn-codec.a \
 *	build/rel/lib/libincnn.a -llz4 -lm -o /tmp/fmt-proto
 *   /tmp/fmt-proto [K [SCALE [ROUNDS]]]
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-time.h"
#include "codec.h"
#include <incnn/gen.h>

#define BLK	32
#define TOTAL	(256 * 1024)

/* q of 8 values (avx2_ebq_q()) and their sign bits where q != 0 */
static inline __m256i proto_q(__m256 x, __m256 scale, __m256i *sgn)
{
	const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	__m256 y = _mm256_mul_ps(_mm256_and_ps(x, absm), scale);
	__m256i q = _mm256_cvttps_epi32(_mm256_add_ps(y,
		_mm256_castsi256_ps(_mm256_set1_epi32(0x3effffff))));
	__m256i nz = _mm256_xor_si256(_mm256_cmpeq_epi32(q, _mm256_setzero_si256()),
				      _mm256_set1_epi32(-1));

	*sgn = _mm256_and_si256(_mm256_srai_epi32(_mm256_castps_si256(x), 31), nz);
	return q;
}

/* 32 dword lanes (< 256 each) to 32 bytes in value order */
static inline __m256i proto_bytes(__m256i a, __m256i b, __m256i c, __m256i d)
{
	__m256i w = _mm256_packus_epi16(_mm256_packus_epi32(a, b),
					_mm256_packus_epi32(c, d));

	return _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

static size_t proto_encode(const float *in, size_t n, uint8_t *out, int k)
{
	const __m256 scale = _mm256_set1_ps((float)(1 << (k - 1)));
	size_t nb = n / BLK, b, pos = nb;

	for (b = 0; b < nb; b++) {
		const float *p = in + BLK * b;
		__m256i q[4], s[4], m;
		uint32_t mx;
		int j;

		for (j = 0; j < 4; j++)
			q[j] = proto_q(_mm256_loadu_ps(p + 8 * j), scale, &s[j]);
		m = _mm256_or_si256(_mm256_or_si256(q[0], q[1]),
				    _mm256_or_si256(q[2], q[3]));
		mx = _mm256_testz_si256(m, _mm256_set1_epi32(~7)) ? 7 :
		     _mm256_testz_si256(m, _mm256_set1_epi32(~127)) ? 127 : ~0u;
		if (mx == 7) {
			__m256i v;
			__m128i lo, hi;

			if (_mm256_testz_si256(m, m)) {
				out[b] = 0;
				continue;
			}
			for (j = 0; j < 4; j++)
				q[j] = _mm256_or_si256(q[j], _mm256_and_si256(s[j],
						       _mm256_set1_epi32(8)));
			v = proto_bytes(q[0], q[1], q[2], q[3]);
			lo = _mm256_castsi256_si128(v);
			hi = _mm256_extracti128_si256(v, 1);
			_mm_storeu_si128((__m128i *)(out + pos),
					 _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
			out[b] = 4;
			pos += 16;
		} else if (mx == 127) {
			for (j = 0; j < 4; j++)
				q[j] = _mm256_or_si256(q[j], _mm256_and_si256(s[j],
						       _mm256_set1_epi32(0x80)));
			_mm256_storeu_si256((__m256i *)(out + pos),
					    proto_bytes(q[0], q[1], q[2], q[3]));
			out[b] = 8;
			pos += 32;
		} else {
			memcpy(out + pos, p, 4 * BLK);
			out[b] = 32;
			pos += 4 * BLK;
		}
	}
	return pos;
}

/* 8 signed bytes (sign-magnitude already made two's complement) to floats */
static inline void proto_put8(float *o, __m128i v, __m256 step)
{
	_mm256_storeu_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)),
					  step));
}

/* 32 bytes +-m (bit 7 or 3 the sign, @mm the magnitude bits) to floats */
static inline void proto_put32(float *o, __m256i v, __m256i mm, __m256i sb,
			       __m256 step)
{
	__m256i mag = _mm256_and_si256(v, mm);
	__m256i neg = _mm256_cmpeq_epi8(_mm256_and_si256(v, sb), sb);
	__m256i s = _mm256_sub_epi8(_mm256_xor_si256(mag, neg), neg);
	__m128i lo = _mm256_castsi256_si128(s), hi = _mm256_extracti128_si256(s, 1);

	proto_put8(o, lo, step);
	proto_put8(o + 8, _mm_srli_si128(lo, 8), step);
	proto_put8(o + 16, hi, step);
	proto_put8(o + 24, _mm_srli_si128(hi, 8), step);
}

static void proto_decode(const uint8_t *in, size_t n, float *out, int k)
{
	const __m256 step = _mm256_set1_ps(1.0f / (float)(1 << (k - 1)));
	size_t nb = n / BLK, b, pos = nb;

	for (b = 0; b < nb; b++) {
		float *o = out + BLK * b;
		uint8_t w = in[b];

		if (w == 4) {
			__m128i v = _mm_loadu_si128((const __m128i *)(in + pos));
			__m128i lo = _mm_and_si128(v, _mm_set1_epi8(15));
			__m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(15));

			proto_put32(o, _mm256_set_m128i(hi, lo), _mm256_set1_epi8(7),
				    _mm256_set1_epi8(8), step);
			pos += 16;
		} else if (w == 8) {
			proto_put32(o, _mm256_loadu_si256((const __m256i *)(in + pos)),
				    _mm256_set1_epi8(127), _mm256_set1_epi8(-128), step);
			pos += 32;
		} else if (w == 0) {
			for (int j = 0; j < 4; j++)
				_mm256_storeu_ps(o + 8 * j, _mm256_setzero_ps());
		} else {
			memcpy(o, in + pos, 4 * BLK);
			pos += 4 * BLK;
		}
	}
}

static int check(const float *in, size_t size, int k, uint8_t *enc, float *a,
		 float *b)
{
	ssize_t l = incnn_codec_encode(&incnn_codec_ebq, INCNN_SIMD_NONE, k,
				       (const uint8_t *)in, size, enc,
				       incnn_codec_ebq.bound(size), NULL, NULL);

	if (l < 0 || incnn_codec_decode(&incnn_codec_ebq, INCNN_SIMD_NONE, k,
					enc, l, (uint8_t *)a, size))
		return -1;
	proto_encode(in, size / 4, enc, k);
	proto_decode(enc, size / 4, b, k);
	return memcmp(a, b, size) ? -1 : 0;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 10, rounds = argc > 3 ? atoi(argv[3]) : 7;
	double sc = argc > 2 ? atof(argv[2]) : 1e-3;
	static const size_t sizes[] = { 1408, 65536 };
	float *in = malloc(TOTAL), *dec = malloc(TOTAL), *a = malloc(TOTAL);
	uint8_t *enc = malloc(3 * TOTAL), *e2 = malloc(3 * TOTAL);
	struct incnn_rng r;

	if (!in || !dec || !a || !enc || !e2 || k < 1 || k > 20 || rounds < 1 ||
	    rounds > 31)
		return 2;
	incnn_rng_seed(&r, 1);
	incnn_gen_f32(&r, INCNN_DIST_LAPLACE, sc, in, TOTAL / 4);
	for (int z = 0; z < 2; z++) {
		size_t size = sizes[z], n = TOTAL / size, slot = 2 * size, el = 0;
		double pe[32], pd[32], ee[32], ed[32];
		ssize_t lens[TOTAL / 1408 + 1];

		for (size_t i = 0; i < n; i++)
			if (check(in + i * size / 4, size, k, enc, a, dec)) {
				fprintf(stderr, "fmt-proto: not ebq's values\n");
				return 1;
			}
		for (int rr = 0; rr < rounds; rr++) {
			double t[5] = { 0 };

			for (int rep = 0; rep < 200; rep++) {
				double t0 = bench_cpu_now(), t1, t2, t3, t4, t5;

				for (size_t i = 0; i < n; i++)
					memcpy((uint8_t *)dec + i * size,
					       (uint8_t *)in + i * size, size);
				__asm__ volatile("" : : "r"(dec) : "memory");
				t1 = bench_cpu_now();
				for (size_t i = 0; i < n; i++)
					el = proto_encode(in + i * size / 4, size / 4,
							  enc + i * slot, k);
				t2 = bench_cpu_now();
				for (size_t i = 0; i < n; i++)
					proto_decode(enc + i * slot, size / 4,
						     dec + i * size / 4, k);
				t3 = bench_cpu_now();
				for (size_t i = 0; i < n; i++)
					lens[i] = incnn_codec_encode(&incnn_codec_ebq,
						INCNN_SIMD_AVX2, k,
						(uint8_t *)in + i * size, size,
						e2 + i * slot, slot, NULL, NULL);
				t4 = bench_cpu_now();
				for (size_t i = 0; i < n; i++)
					if (incnn_codec_decode(&incnn_codec_ebq,
							       INCNN_SIMD_AVX2, k,
							       e2 + i * slot, lens[i],
							       (uint8_t *)a + i * size,
							       size))
						return 1;
				t5 = bench_cpu_now();
				t[0] += t1 - t0;
				t[1] += t2 - t1;
				t[2] += t3 - t2;
				t[3] += t4 - t3;
				t[4] += t5 - t4;
			}
			pe[rr] = t[0] / t[1];
			pd[rr] = t[0] / t[2];
			ee[rr] = t[0] / t[3];
			ed[rr] = t[0] / t[4];
		}
		qsort(pe, rounds, sizeof(double), bench_cmp_double);
		qsort(pd, rounds, sizeof(double), bench_cmp_double);
		qsort(ee, rounds, sizeof(double), bench_cmp_double);
		qsort(ed, rounds, sizeof(double), bench_cmp_double);
		printf("k=%d laplace:%g %6zu B, of memcpy: proto enc %.3f dec %.3f (ratio %.2f), ebq avx2 enc %.3f dec %.3f (ratio %.2f)\n",
		       k, sc, size, pe[rounds / 2], pd[rounds / 2],
		       (double)size / el, ee[rounds / 2], ed[rounds / 2],
		       (double)size / lens[n - 1]);
	}
	return 0;
}
