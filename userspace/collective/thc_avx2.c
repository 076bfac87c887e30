// SPDX-License-Identifier: GPL-2.0 OR MIT
/* THC's hot loops with AVX2 (placeholder until the kernels land) */
#include "thc_int.h"

const struct thc_simd_ops *thc_avx2_ops(void)
{
	return NULL;
}
