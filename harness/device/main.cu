/*
 * main.cu - the device program's main: serves the checker's requests (protocol.h) on two descriptors, one at a
 * time, with the pattern file's functions (serve.h), which call the lab's function in the runner (runner_link.h).
 * Kit code only, built once per pattern and device (mk/lab.mk, mk/sim.mk); started by the checker in its sandbox as
 * `PATTERN_device --fds R,W --runner-fd S [--module-fd M] --bulk-fds I,O [--modules lazy]`, beside the runner,
 * whose socket is S; I and O are the checker's bulk areas (protocol.h): a LOAD's input, mapped read-only, and the
 * replies' bulk. It never judges anything and holds no secret; the runner, which holds the student's code, reaches
 * only S.
 */
#include "backend.h"
#include "bench.h"
#include "check_i32.h"
#include "device.h"
#include "runner_link.h"
#include "serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int from_checker = -1, to_checker = -1;
static int area_fd[2] = {-1, -1}; /* the checker's bulk areas: [0] inputs, [1] the replies' bulk */
static ppl_device_info device_info;

const ppl_device_info *ppl_serve_device(void) { return &device_info; }

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = (const char *)buf;
    while (len > 0) {
        const ssize_t done = write(fd, p, len);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += done;
        len -= (size_t)done;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = (char *)buf;
    while (len > 0) {
        const ssize_t done = read(fd, p, len);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return -1;
        p += done;
        len -= (size_t)done;
    }
    return 0;
}

extern "C" void ppl_device_fatal(const char *message, int status)
{
    size_t len = strlen(message);
    if (len > PPL_MSG_SMALL_MAX)
        len = PPL_MSG_SMALL_MAX;
    const ppl_msg_header h = {PPL_PROTO_MAGIC, PPL_MSG_ERROR, len, (uint32_t)status, 0};
    fflush(stdout);
    fflush(stderr);
    /* the checker prints what it receives (with the case it ends); said here only when it cannot be sent */
    if (to_checker < 0 || write_all(to_checker, &h, sizeof h) != 0 || write_all(to_checker, message, len) != 0)
        fprintf(stderr, "%s\n", message);
    _exit(status);
}

/* The harness's fatal errors (CUDA_CHECK's ppl_cuda_check, the yardsticks) end here too. */
extern "C" void ppl_results_fatal(const char *message, int status) { ppl_device_fatal(message, status); }

/* ---- the reply being built: the fixed struct, then bulk ---- */

static char *reply_buf;
static size_t reply_len, reply_cap, reply_limit;
static char *bulk_map; /* the output area, mapped; bulk_len bytes of this reply are in it */
static size_t bulk_mapped, bulk_len;

static void reply_begin(size_t limit)
{
    reply_len = bulk_len = 0;
    reply_limit = limit;
}

/* The size of bulk area k as the checker made it (0 when it cannot be read). */
static size_t area_size(int k)
{
    struct stat st;
    return area_fd[k] >= 0 && fstat(area_fd[k], &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
}

/* Fatal when bytes more would make the reply (its fixed part and its bulk) longer than its request allows. */
static void reply_fits(size_t bytes)
{
    if (reply_len + bulk_len + bytes > reply_limit)
        ppl_device_fatal("the device program's reply outgrew its request (a kit bug)", PPL_EXIT_USAGE);
}

static void *reply_room(size_t bytes)
{
    reply_fits(bytes);
    if (reply_len + bytes > reply_cap) {
        size_t cap = reply_cap ? reply_cap : 4096;
        while (cap < reply_len + bytes)
            cap *= 2;
        char *p = (char *)realloc(reply_buf, cap);
        if (!p)
            ppl_device_fatal("out of host memory for a reply", PPL_EXIT_CUDA);
        reply_buf = p;
        reply_cap = cap;
    }
    void *p = reply_buf + reply_len;
    reply_len += bytes;
    return p;
}

void *ppl_reply_bulk(size_t bytes)
{
    reply_fits(bytes);
    if (bulk_len + bytes > bulk_mapped) { /* the checker grew the area for this reply (ppl_link_expect_bulk) */
        const size_t size = area_size(1);
        if (size < bulk_len + bytes)
            ppl_device_fatal("the checker's output area is smaller than the reply (a kit bug)", PPL_EXIT_USAGE);
        if (bulk_map)
            munmap(bulk_map, bulk_mapped);
        void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, area_fd[1], 0);
        if (map == MAP_FAILED)
            ppl_device_fatal("the device program cannot map the checker's output area", PPL_EXIT_USAGE);
        bulk_map = (char *)map;
        bulk_mapped = size;
    }
    void *p = bulk_map + bulk_len;
    bulk_len += bytes;
    return p;
}

/* Sends the reply: its fixed part through the pipe; the header counts the bulk, which is in the output area. */
static void reply_send(uint32_t type)
{
    const ppl_msg_header h = {PPL_PROTO_MAGIC, type, reply_len + bulk_len, 0, 0};
    fflush(stdout); /* what the lab's code printed comes before the checker's verdict */
    if (write_all(to_checker, &h, sizeof h) != 0 || write_all(to_checker, reply_buf, reply_len) != 0)
        _exit(PPL_EXIT_USAGE); /* the checker is gone */
}

/* ---- messages the runner starts during a benchmark ---- */

ppl_perturbation ppl_serve_perturbation(uint64_t run)
{
    const ppl_msg_header ask = {PPL_PROTO_MAGIC, PPL_MSG_PERTURB, sizeof run, 0, 0};
    if (write_all(to_checker, &ask, sizeof ask) != 0 || write_all(to_checker, &run, sizeof run) != 0)
        _exit(PPL_EXIT_USAGE);
    ppl_msg_header h;
    ppl_perturbation p;
    if (read_all(from_checker, &h, sizeof h) != 0 || h.magic != PPL_PROTO_MAGIC || h.type != PPL_MSG_PERTURB ||
        h.bytes != sizeof p || read_all(from_checker, &p, sizeof p) != 0)
        ppl_device_fatal("the device program got no perturbation for a timed run (a kit bug)", PPL_EXIT_USAGE);
    return p;
}

uint64_t ppl_serve_key(void)
{
    const ppl_msg_header ask = {PPL_PROTO_MAGIC, PPL_MSG_KEY, 0, 0, 0};
    if (write_all(to_checker, &ask, sizeof ask) != 0)
        _exit(PPL_EXIT_USAGE);
    ppl_msg_header h;
    uint64_t key;
    if (read_all(from_checker, &h, sizeof h) != 0 || h.magic != PPL_PROTO_MAGIC || h.type != PPL_MSG_KEY ||
        h.bytes != sizeof key || read_all(from_checker, &key, sizeof key) != 0)
        ppl_device_fatal("the device program got no checksum key (a kit bug)", PPL_EXIT_USAGE);
    return key;
}

uint64_t ppl_serve_input_sum(const ppl_run_request *rq, const void *d_in, uint64_t n)
{
    return rq->want_input_sum ? ppl_checksum_device(d_in, n, ppl_serve_key()) : 0;
}

/* A pattern whose device side makes no inputs (all but the reductions'): the checker never asks it to. */
__attribute__((weak)) void ppl_pattern_generate(uint64_t n, const ppl_generator *gen)
{
    (void)n;
    (void)gen;
    ppl_device_fatal("the device program got a GENERATE its pattern does not serve (a kit bug)", PPL_EXIT_USAGE);
}

void ppl_serve_record(const ppl_run_record *r)
{
    const ppl_msg_header h = {PPL_PROTO_MAGIC, PPL_MSG_RECORD, sizeof *r, 0, 0};
    if (write_all(to_checker, &h, sizeof h) != 0 || write_all(to_checker, r, sizeof *r) != 0)
        _exit(PPL_EXIT_USAGE);
}

/* ---- requests ---- */

static uint64_t loaded_n;           /* elements of the input loaded last (0: none) */
static uint32_t loaded_elem_bytes; /* and their size */

/* The input of the runs to come is n elements of elem_bytes bytes (a LOAD's or a GENERATE's): replied to type. */
static void loaded(uint32_t type, uint64_t n, uint32_t elem_bytes)
{
    loaded_n = n;
    loaded_elem_bytes = elem_bytes;
    reply_begin(sizeof(ppl_load_reply));
    ((ppl_load_reply *)reply_room(sizeof(ppl_load_reply)))->n = n;
    reply_send(type);
}

/* A LOAD: the request through the pipe, the input in the checker's input area, mapped read-only (its pages mapped
 * at once: one fault per page would cost more than the copy) and unmapped once it is on the device. */
static void serve_load(const ppl_msg_header *h)
{
    ppl_load_request rq;
    if (h->bytes < sizeof rq || read_all(from_checker, &rq, sizeof rq) != 0)
        ppl_device_fatal("the device program got a malformed LOAD (a kit bug)", PPL_EXIT_USAGE);
    const uint64_t bytes = h->bytes - sizeof rq;
    const int elem_ok = rq.elem_bytes == 1 || rq.elem_bytes == 2 || rq.elem_bytes == 4 || rq.elem_bytes == 8;
    if (!elem_ok || rq.n == 0 || rq.n > (1ull << 40) || bytes != rq.n * rq.elem_bytes ||
        bytes > area_size(0))
        ppl_device_fatal("the device program got a LOAD of the wrong size (a kit bug)", PPL_EXIT_USAGE);
    void *input = mmap(NULL, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, area_fd[0], 0);
    if (input == MAP_FAILED)
        ppl_device_fatal("the device program cannot map the checker's input area", PPL_EXIT_CUDA);
    ppl_pattern_load(input, rq.n, rq.elem_bytes);
    munmap(input, bytes);
    loaded(PPL_MSG_LOAD, rq.n, rq.elem_bytes);
}

/* A GENERATE: the pattern makes the input on the device from the generator; nothing is mapped. */
static void serve_generate(const ppl_msg_header *h)
{
    ppl_generate_request rq;
    if (h->bytes != sizeof rq || read_all(from_checker, &rq, sizeof rq) != 0)
        ppl_device_fatal("the device program got a malformed GENERATE (a kit bug)", PPL_EXIT_USAGE);
    if (rq.n == 0 || rq.n > (1ull << 40) || rq.gen.kind < PPL_GEN_UNIFORM || rq.gen.kind > PPL_GEN_SIGNS ||
        rq.gen.m < 1)
        ppl_device_fatal("the device program got a GENERATE it cannot serve (a kit bug)", PPL_EXIT_USAGE);
    ppl_pattern_generate(rq.n, &rq.gen);
    loaded(PPL_MSG_GENERATE, rq.n, 4);
}

static void serve(const ppl_msg_header *h, uint64_t n)
{
    union {
        ppl_run_request run;
        ppl_bench_request bench;
        ppl_case_request case_;
        char bytes[256];
    } rq;
    if (h->bytes > sizeof rq)
        ppl_device_fatal("the device program got a request too long for its type (a kit bug)", PPL_EXIT_USAGE);
    if (h->bytes && read_all(from_checker, &rq, h->bytes) != 0)
        _exit(PPL_EXIT_USAGE);
    switch (h->type) {
    case PPL_MSG_HELLO: {
        reply_begin(sizeof(ppl_hello_reply));
        ppl_hello_reply *r = (ppl_hello_reply *)reply_room(sizeof *r);
        memset(r, 0, sizeof *r);
        r->status = ppl_device_open(&device_info);
        r->dev = device_info;
        break;
    }
    case PPL_MSG_RUN: {
        if (h->bytes != sizeof rq.run || n == 0 || rq.run.output_words > (1ull << 40) ||
            ((rq.run.want_input || rq.run.want_input_sum) &&
             rq.run.input_words != ppl_input_words(n, loaded_elem_bytes)))
            ppl_device_fatal("the device program got a RUN it cannot serve (a kit bug)", PPL_EXIT_USAGE);
        reply_begin(sizeof(ppl_run_reply) + 4 * ppl_run_bulk_words(&rq.run));
        ppl_run_reply *r = (ppl_run_reply *)reply_room(sizeof *r);
        memset(r, 0, sizeof *r);
        ppl_run_reply value;
        memset(&value, 0, sizeof value);
        ppl_pattern_run(&rq.run, &value);
        memcpy(reply_buf, &value, sizeof value); /* the bulk may have moved the buffer */
        break;
    }
    case PPL_MSG_BENCH: {
        if (h->bytes != sizeof rq.bench || n == 0 || rq.bench.max_samples < 1 || rq.bench.max_samples > 100000)
            ppl_device_fatal("the device program got a BENCH it cannot serve (a kit bug)", PPL_EXIT_USAGE);
        reply_begin(sizeof(ppl_bench_reply) + ppl_bench_bulk_bytes(PPL_MAX_CONTENDERS, rq.bench.max_samples));
        ppl_bench_reply *r = (ppl_bench_reply *)reply_room(sizeof *r);
        memset(r, 0, sizeof *r);
        ppl_bench_reply value;
        memset(&value, 0, sizeof value);
        ppl_pattern_bench(&rq.bench, &value);
        memcpy(reply_buf, &value, sizeof value);
        break;
    }
    case PPL_MSG_CASE: {
        char err[512];
        if (h->bytes != sizeof rq.case_ || memchr(rq.case_.schedule, 0, sizeof rq.case_.schedule) == NULL)
            ppl_device_fatal("the device program got a malformed CASE (a kit bug)", PPL_EXIT_USAGE);
        if (ppl_backend_begin_run((long long)rq.case_.run, rq.case_.schedule, err, sizeof err) != 0)
            ppl_device_fatal(err, PPL_EXIT_USAGE);
        reply_begin(0);
        break;
    }
    default:
        ppl_device_fatal("the device program got a request it does not know (a kit bug)", PPL_EXIT_USAGE);
    }
    reply_send(h->type);
}

int main(int argc, char **argv)
{
    int runner_fd = -1, module_fd = -1, lazy = 0;
    int ok = argc >= 5 && strcmp(argv[1], "--fds") == 0 && sscanf(argv[2], "%d,%d", &from_checker, &to_checker) == 2;
    for (int k = 3; ok && k + 1 < argc; k += 2) {
        if (strcmp(argv[k], "--runner-fd") == 0)
            ok = sscanf(argv[k + 1], "%d", &runner_fd) == 1;
        else if (strcmp(argv[k], "--module-fd") == 0)
            ok = sscanf(argv[k + 1], "%d", &module_fd) == 1;
        else if (strcmp(argv[k], "--bulk-fds") == 0)
            ok = sscanf(argv[k + 1], "%d,%d", &area_fd[0], &area_fd[1]) == 2;
        else if (strcmp(argv[k], "--modules") == 0)
            ok = (lazy = strcmp(argv[k + 1], "lazy") == 0) || strcmp(argv[k + 1], "eager") == 0;
        else
            ok = 0;
    }
    if (!ok || argc % 2 == 0 || runner_fd < 0 || area_fd[0] < 0 || area_fd[1] < 0) {
        fprintf(stderr, "usage: %s --fds R,W --runner-fd S [--module-fd M] --bulk-fds I,O [--modules eager|lazy]\n"
                        "The device program of a lab's pattern: the kit's checker starts it beside the lab's runner\n"
                        "(run the lab with PATTERN_lab); it serves the checker's requests on R and W and the runner's\n"
                        "CUDA calls on S, with the inputs and the replies' bulk in the memory files I and O.\n",
                argv[0]);
        return PPL_EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN); /* a gone checker or runner makes write() fail instead */
    /* Every module loads when the context is made, not at its first launch: a lazy load inside a timed run waits for
       the gate (device.h) that holds the run. Under a tool (compute-sanitizer), which times nothing, they load lazily
       (--modules lazy): the tool then instruments only the kernels that run, not every yardstick's. */
    setenv("CUDA_MODULE_LOADING", lazy ? "LAZY" : "EAGER", 1);
    ppl_runner_open(runner_fd, module_fd);
    for (;;) {
        ppl_msg_header h;
        char first;
        const ssize_t got = read(from_checker, &first, 1);
        if (got == 0) {
            ppl_runner_close(); /* the runner exits 0 */
            return PPL_EXIT_PASS; /* the checker is done */
        }
        if (got < 0 && errno == EINTR)
            continue;
        memcpy(&h, &first, 1);
        if (got < 0 || read_all(from_checker, (char *)&h + 1, sizeof h - 1) != 0 || h.magic != PPL_PROTO_MAGIC)
            ppl_device_fatal("the device program got a malformed request (a kit bug)", PPL_EXIT_USAGE);
        if (h.type == PPL_MSG_LOAD) {
            serve_load(&h);
            continue;
        }
        if (h.type == PPL_MSG_GENERATE) {
            serve_generate(&h);
            continue;
        }
        serve(&h, loaded_n);
    }
}
