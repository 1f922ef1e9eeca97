/*
 * device_protocol.h - the calls between a lab's runner and the device program (docs/DESIGN.md, "Three programs").
 *
 * Why a process of its own. The runner holds the student's host code, which can do anything its process can: close
 * or fill any descriptor it holds, read or write any of its memory, run code before main, call any function it can
 * find (tests/attacks/46 and 47 did the first two to a simulator that ran in the runner; issue 20's attacks answered
 * the checker from before main and called the kit's yardsticks through computed pointers). So the runner holds no
 * GPU, no kit kernel and no channel to the checker: it links sim/device_client.c as its CUDA runtime, whose API
 * forwards every call that touches the device over one socket, as a GPU's driver forwards them to the GPU, to the
 * pattern's device program (harness/device/), which runs them on the GPU or the simulator (harness/device/
 * runner_link.c, backend.h) and alone talks to the checker and holds the report channel. Device memory lives in the
 * device program; a device pointer is an address there, meaningless in the runner. The runner's main asks for the
 * next call of the lab's function with PPL_DEV_NEXT; the device program answers it when it wants the call made.
 *
 * The socket carries requests and replies in turn: the runner sends a request (ppl_dev_request, then `bulk` bytes),
 * the device program answers with a reply (ppl_dev_reply, then `bulk` bytes). Everything the runner sends is hostile
 * input: the device program checks every field (a handle it did not give out, a size past its limits, a string
 * without its end) and answers a malformed request by failing the run, never by guessing. Nothing the runner sends
 * can take back what the device program reported: findings go out on the report channel after every launch.
 *
 * Both sides are built by the same compiler from the same headers, on one machine: the structs travel as they lie
 * in memory.
 */
#ifndef PPL_SIM_DEVICE_PROTOCOL_H
#define PPL_SIM_DEVICE_PROTOCOL_H

#include <stdint.h>

#define PPL_DEV_MAGIC 0x44565050u /* "PPVD" */
#define PPL_DEV_VERSION 2
/* The environment variable that gives the runner its end of the socket (the checker sets it). */
#define PPL_DEV_FD_ENV "PPL_SIM_DEVICE_FD"
/* The most bytes one request or reply carries after its header: larger copies go in pieces of this size. */
#define PPL_DEV_MAX_BULK ((uint64_t)64 << 20)
/* The longest name (kernel, variable) a registration carries, its NUL included. */
#define PPL_DEV_MAX_NAME 4096

/* What a request asks for. a[]: its arguments; r[]: the reply's results; "bulk" says what follows the header. */
typedef enum {
    PPL_DEV_HELLO = 1,       /* a[0] = PPL_DEV_VERSION */
    PPL_DEV_FATBIN,          /* bulk: one fatbinary, as nvcc embeds it; r[0] = its handle */
    PPL_DEV_FUNCTION,        /* a[0] fatbin handle, a[1] the kernel's host stub (an opaque key); bulk: its name */
    PPL_DEV_VARIABLE,        /* a[0] handle, a[1] the variable's host shadow (a key), a[2] size, a[3] constant,
                                a[4] global; bulk: its name */
    PPL_DEV_MANAGED,         /* bulk: the __managed__ variable's name: the device says it cannot simulate it */
    PPL_DEV_PARAMS,          /* a[0] kernel key; r[0] = number of parameters; bulk back: their sizes (uint32_t) */
    PPL_DEV_LAUNCH,          /* a[0] kernel key, a[1] grid x | y << 32, a[2] grid z | block x << 32, a[3] block y |
                                block z << 32, a[4] dynamic shared bytes, a[5] stream; bulk: the parameters' bytes,
                                in order */
    PPL_DEV_GET_KERNEL,      /* a[0] kernel key: whether it is a registered kernel */
    PPL_DEV_MALLOC,          /* a[0] bytes; r[0] = the device pointer */
    PPL_DEV_FREE,            /* a[0] device pointer */
    PPL_DEV_WRITE,           /* a[0] device pointer, a[1] offset, a[2] total bytes of the copy; bulk: the piece at
                                offset (host to device; the first piece checks the whole range) */
    PPL_DEV_READ,            /* a[0] device pointer, a[1] offset, a[2] total, a[3] bytes; bulk back: that piece */
    PPL_DEV_COPY,            /* a[0] device dst, a[1] device src, a[2] bytes, a[3] stream (device to device, in
                                stream order: no wait for the host, as cudaMemcpyAsync) */
    PPL_DEV_SET,             /* a[0] device pointer, a[1] value, a[2] bytes, a[3] stream (cudaMemsetAsync) */
    PPL_DEV_IS_DEVICE,       /* a[0] pointer, a[1] bytes: r[0] = 1 when it is device memory (cudaMemcpyDefault) */
    PPL_DEV_MEM_INFO,        /* r[0] free, r[1] total */
    PPL_DEV_SYMBOL_ADDRESS,  /* a[0] variable key: r[0] its device address */
    PPL_DEV_SYMBOL_SIZE,     /* a[0] variable key: r[0] its size */
    PPL_DEV_TO_SYMBOL,       /* a[0] variable key, a[1] bytes, a[2] offset, a[3] kind, a[4] the device source (device
                                to device); bulk: the bytes (host to device) */
    PPL_DEV_FROM_SYMBOL,     /* a[0] variable key, a[1] bytes, a[2] offset, a[3] kind, a[4] the device destination
                                (device to device); bulk back: the bytes (device to host) */
    PPL_DEV_DEVICE_COUNT,    /* r[0] */
    PPL_DEV_SET_DEVICE,      /* a[0] */
    PPL_DEV_GET_DEVICE,      /* r[0] */
    PPL_DEV_PROPERTIES,      /* a[0] device; bulk back: its cudaDeviceProp */
    PPL_DEV_ATTRIBUTE,       /* a[0] attribute, a[1] device; r[0] */
    PPL_DEV_PCI_BUS_ID,      /* a[0] length, a[1] device; bulk back: the string, NUL included */
    PPL_DEV_SYNCHRONIZE,
    PPL_DEV_RESET,
    PPL_DEV_RUNTIME_VERSION, /* r[0] */
    PPL_DEV_DRIVER_VERSION,  /* r[0] */
    PPL_DEV_STREAM_CREATE,   /* a[0] flags; r[0] its handle */
    PPL_DEV_STREAM_DESTROY,  /* a[0] handle */
    PPL_DEV_STREAM_SYNC,     /* a[0] handle (0: the default stream) */
    PPL_DEV_EVENT_CREATE,    /* a[0] flags; r[0] its handle */
    PPL_DEV_EVENT_DESTROY,   /* a[0] handle */
    PPL_DEV_EVENT_RECORD,    /* a[0] event, a[1] stream */
    PPL_DEV_EVENT_SYNC,      /* a[0] event */
    PPL_DEV_EVENT_QUERY,     /* a[0] event */
    PPL_DEV_EVENT_ELAPSED,   /* a[0] start, a[1] end; r[0] the float's bits */
    PPL_DEV_STREAM_WAIT_EVENT, /* a[0] stream, a[1] event, a[2] flags (cudaStreamWaitEvent) */
    PPL_DEV_LAST_ERROR,      /* the status is cudaGetLastError's */
    PPL_DEV_PEEK_ERROR,
    PPL_DEV_ERROR_TEXT,      /* a[0] error, a[1] 0: its name, 1: its string; bulk back: the text, NUL included */
    PPL_DEV_FUNC_ATTRIBUTES, /* a[0] kernel key; bulk back: its cudaFuncAttributes */
    PPL_DEV_FUNC_SET,        /* a[0] kernel key, a[1] attribute, a[2] value */
    PPL_DEV_FUNC_CACHE,      /* a[0] kernel key, a[1] cache configuration */
    PPL_DEV_OCCUPANCY,       /* a[0] kernel key, a[1] block size, a[2] dynamic shared bytes, a[3] flags; r[0] */
    PPL_DEV_OCCUPANCY_SMEM,  /* a[0] kernel key, a[1] blocks, a[2] block size; r[0] */
    PPL_DEV_FINDINGS,        /* r[0] = the findings so far (PPL_SIM_STRICT) */
    PPL_DEV_NEXT,            /* the runner's main, between two calls of the lab's function: a[0] how the last one
                                ended (0: it returned; else the exit status its CUDA_CHECK asked for, its message as
                                bulk); r[0] the next call (PPL_CALL_*, PPL_CALL_END: exit 0), bulk back: its
                                arguments, PPL_CALL_ARGS uint64_t */
    PPL_DEV_KIT_SCAN,        /* a[0] device in, a[1] device out, a[2] n: the kit's exclusive scan of int32
                                (kit_exclusive_scan, compact.h), run by the device; only a compaction's device has it */
    PPL_DEV_CALLS            /* one past the last */
} ppl_dev_call;

/* What PPL_DEV_NEXT tells the runner to call, and with what (device pointers are the device's addresses). */
enum {
    PPL_CALL_END = 0, /* no more calls: the runner exits 0 */
    PPL_CALL_LAB = 1  /* the lab's function, with up to PPL_CALL_ARGS arguments in the order of its declaration (the
                         pattern's serve.cu sends them, its runner.cpp makes the call: patterns/PATTERN/) */
};
#define PPL_CALL_ARGS 6
/* The longest message a runner's failed call carries (its CUDA_CHECK's text). */
#define PPL_DEV_MAX_MESSAGE 4096

typedef struct {
    uint32_t magic; /* PPL_DEV_MAGIC */
    uint32_t call;  /* a ppl_dev_call */
    uint64_t a[6];
    uint64_t bulk;  /* bytes that follow, at most PPL_DEV_MAX_BULK */
} ppl_dev_request;

typedef struct {
    uint32_t magic;  /* PPL_DEV_MAGIC */
    int32_t status;  /* the call's cudaError_t */
    uint64_t r[2];
    uint64_t bulk;   /* bytes that follow */
} ppl_dev_reply;

#endif /* PPL_SIM_DEVICE_PROTOCOL_H */
