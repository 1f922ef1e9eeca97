/* kernels.cu - device code for the runtime's tests (fatbin_test.c reads its fatbinary; runtime_test.cu runs it). */
__device__ int scale;

__global__ void add_one(int *p, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += scale;
}

template <int STRIDE> __global__ void write_strided(int *p) { p[threadIdx.x * STRIDE] = threadIdx.x; }

template __global__ void write_strided<1>(int *);
