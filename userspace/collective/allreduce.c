// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The flat allreduce calls of the API: the communicator's method picks
 * the data phase (fp32: ring.c, agg.c; THC: thc_comm.c; GradiVeQ needs
 * the layer shapes of incnn_allreduce_layers(), layers.c).
 */
#include <math.h>

#include "coll.h"

/* GradiVeQ needs the layer shapes: the flat calls are errors */
static int ar_gvq_refuse(struct incnn_comm *c, const char *call)
{
	if (c->err)
		return c->err;
	return incnn_coll_fail(c, -EINVAL, false,
			       "method gradiveq needs incnn_allreduce_layers() (layer shapes; ring only), not %s",
			       call);
}

int incnn_allreduce(struct incnn_comm *c, float *buf, size_t n)
{
	if (c && c->method == INCNN_COLL_METHOD_THC)
		return incnn_allreduce_thc(c, buf, n);
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return ar_gvq_refuse(c, "incnn_allreduce()");
	return incnn_coll_allreduce_ring(c, buf, n);
}

int incnn_allreduce_div(struct incnn_comm *c, float *buf, size_t n,
			float divisor)
{
	int ret;

	if (c && !c->err && !(isfinite(divisor) && divisor != 0))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid divisor %g for incnn_allreduce_div",
				       (double)divisor);
	if (c && c->method == INCNN_COLL_METHOD_THC) {
		ret = incnn_coll_check_args(c, buf, n);
		if (ret)
			return ret;
		incnn_coll_div(buf, n, divisor);
		return incnn_allreduce_thc(c, buf, n);
	}
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return ar_gvq_refuse(c, "incnn_allreduce_div()");
	return incnn_coll_allreduce_bk(c, buf, n, divisor, NULL);
}


int incnn_allreduce_ps(struct incnn_comm *c, float *buf, size_t n)
{
	if (c && c->method == INCNN_COLL_METHOD_THC)
		return incnn_allreduce_thc_ps(c, buf, n);
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return ar_gvq_refuse(c, "incnn_allreduce_ps()");
	return incnn_coll_allreduce_agg(c, buf, n);
}
