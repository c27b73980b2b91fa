/*
 * gpu/kernels.cu: the device kernels ccprobe runs, kept for reference. The
 * build never compiles this file: ccprobe carries the PTX that
 * scripts/gen-ptx.sh made from it once (gpu/kernels_ptx.c) and loads that
 * at run time with the driver API (cuModuleLoadData, cuLaunchKernel;
 * gpu/driver.c), so no nvcc is needed to build ccprobe, and the driver
 * compiles the PTX for whatever GPU it finds. Edit this file, then run
 * scripts/gen-ptx.sh and commit both.
 *
 * The hbm probe's kernels (docs/gpu.md, "hbm"), as BabelStream's copy and
 * triad: grid-stride loops over 16-byte elements (one vector load and store
 * per element), as many blocks as the GPU holds at once.
 */
#include <stddef.h>

/* c[i] = a[i], n elements of 16 bytes: reads and writes 16 n bytes */
extern "C" __global__ void ccdiag_copy(const uint4 *__restrict__ a, uint4 *__restrict__ c, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		c[i] = a[i];
}

/* a[i] = b[i] + s c[i], n elements of two doubles: reads 32 n bytes, writes 16 n */
extern "C" __global__ void ccdiag_triad(double2 *__restrict__ a, const double2 *__restrict__ b,
					const double2 *__restrict__ c, double s, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		double2 x = b[i], y = c[i];

		a[i] = make_double2(x.x + s * y.x, x.y + s * y.y);
	}
}
