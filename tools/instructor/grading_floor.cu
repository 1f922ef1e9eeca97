// grading_floor.cu - the fixed costs of one grading on this GPU, for make bench-grader
// (tools/instructor/bench_grader.py), which times the process from outside.
//
//   grading_floor context        creates a CUDA context (cudaFree(0)) and exits: the cost every lab program pays
//   grading_floor copy BYTES     the same, then copies BYTES from pageable host memory to the device once, as the
//                                checker's largest input travels; prints the copy's own time: "copy_ms 12.3"
//
// Exit status: 0 done, 77 no CUDA device here (the kit's "cannot run here"), 1 any other CUDA error (named on stderr).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int failed(cudaError_t err, const char *what)
{
    fprintf(stderr, "grading_floor: %s: %s%s\n", what,
            err == cudaErrorInsufficientDriver ? "no NVIDIA driver, or one older than this CUDA: CUDA says " : "",
            cudaGetErrorString(err));
    return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? 77 : 1;
}

int main(int argc, char **argv)
{
    cudaError_t err = cudaFree(0);
    if (err != cudaSuccess)
        return failed(err, "creating a CUDA context");
    if (argc == 2 && strcmp(argv[1], "context") == 0)
        return 0;
    if (argc != 3 || strcmp(argv[1], "copy") != 0) {
        fprintf(stderr, "usage: grading_floor context | grading_floor copy BYTES\n");
        return 2;
    }
    size_t bytes = strtoull(argv[2], NULL, 10);
    char *h_in = (char *)malloc(bytes);
    void *d_in = NULL;
    if (h_in == NULL) {
        fprintf(stderr, "grading_floor: no host memory for %zu bytes\n", bytes);
        return 1;
    }
    memset(h_in, 1, bytes);  // touch every page, as the checker's generated input is
    if ((err = cudaMalloc(&d_in, bytes)) != cudaSuccess)
        return failed(err, "cudaMalloc");
    auto start = std::chrono::steady_clock::now();
    if ((err = cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
        return failed(err, "cudaMemcpy");
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    printf("copy_ms %.3f\n", ms);
    cudaFree(d_in);
    free(h_in);
    return 0;
}
