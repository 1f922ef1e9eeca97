/*
 * fake_runner.c - a stand-in for a lab's device program (harness/device/), for test_link.c: it speaks protocol.h on
 * descriptors 3 (requests) and 4 (replies), with the bulk in the areas of its --bulk-fds, as the real one does,
 * without CUDA, and misbehaves on demand.
 *
 *   HELLO  a device named after the descriptors open here ("fds 0,1,2,3,4"), so a test sees what the sandbox left
 *   LOAD   keeps the input
 *   RUN    value: the sum of the input's 32-bit words; output word i: input word i times 2, then PPL_GUARD_WORDS
 *          words of FAKE_GUARD; the input as it is
 *   BENCH  count contenders (2, or 4 with extra), FAKE_WARMUPS warm-ups and min_samples samples each: before every
 *          run it asks for the run's perturbation, then records value[0] = fake_record_value(perturbation);
 *          contender c's samples are (c + 1) ms, at 1500 MHz
 *
 * A request of type FAKE_MSG_MODE (payload: uint32 mode) makes it misbehave on the next request, after reading that
 * request whole (FAKE_EXIT: after its header only, as a lab that calls exit() in the middle of a call would).
 */
#include "protocol.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_runner.h"

#define IN 3
#define OUT 4

static int area_fd[2] = {-1, -1}; /* --bulk-fds: the input area and the output area (protocol.h) */

/* Maps bytes of bulk area k (prot), or NULL when it is smaller. */
static void *map_area(int k, size_t bytes, int prot)
{
    struct stat st;
    if (area_fd[k] < 0 || fstat(area_fd[k], &st) != 0 || (size_t)st.st_size < bytes)
        return NULL;
    void *p = mmap(NULL, bytes ? bytes : 1, prot, MAP_SHARED, area_fd[k], 0);
    return p == MAP_FAILED ? NULL : p;
}

static void write_all(const void *buf, size_t len)
{
    const char *p = (const char *)buf;
    while (len > 0) {
        const ssize_t done = write(OUT, p, len);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            _exit(120); /* the checker is gone */
        p += done;
        len -= (size_t)done;
    }
}

static void read_all(void *buf, size_t len)
{
    char *p = (char *)buf;
    while (len > 0) {
        const ssize_t done = read(IN, p, len);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            _exit(121);
        p += done;
        len -= (size_t)done;
    }
}

static __attribute__((noreturn)) void send_error(const char *text, size_t len, uint32_t status);

/* A message: its header (bytes), a through the reply pipe, b (bulk) into the output area. */
static void send_msg(uint32_t type, uint64_t bytes, const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    if (b_bytes) {
        void *area = map_area(1, b_bytes, PROT_READ | PROT_WRITE);
        if (!area)
            send_error("fake runner: the output area is too small", 41, 2);
        memcpy(area, b, b_bytes);
        munmap(area, b_bytes);
    }
    const ppl_msg_header h = {PPL_PROTO_MAGIC, type, bytes, 0, 0};
    write_all(&h, sizeof h);
    if (a_bytes)
        write_all(a, a_bytes);
}

static void reply(uint32_t type, const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    send_msg(type, (uint64_t)a_bytes + b_bytes, a, a_bytes, b, b_bytes);
}

static __attribute__((noreturn)) void send_error(const char *text, size_t len, uint32_t status)
{
    const ppl_msg_header h = {PPL_PROTO_MAGIC, PPL_MSG_ERROR, len, status, 0};
    write_all(&h, sizeof h);
    write_all(text, len);
    _exit((int)status);
}

/* "fds 0,1,2,3,4": the descriptors open in this process (the one /proc/self/fd's listing uses left out). */
static void open_fds(char *buf, size_t len)
{
    DIR *d = opendir("/proc/self/fd");
    int fds[64], count = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && count < 64)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
            fds[count++] = atoi(e->d_name);
    if (d)
        closedir(d);
    for (int i = 1; i < count; i++) /* readdir's order is the kernel's */
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            const int t = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = t;
        }
    size_t used = (size_t)snprintf(buf, len, "fds");
    for (int i = 0; i < count && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : " ", fds[i]);
}

static uint32_t *input;
static uint64_t input_n;

static void bench(uint32_t mode)
{
    ppl_bench_request rq;
    read_all(&rq, sizeof rq);
    const int count = rq.extra ? 4 : 2, samples = rq.min_samples, runs = FAKE_WARMUPS + samples;
    uint64_t run = 0;
    if (mode == FAKE_BENCH_ASKS)
        for (;; run++)
            reply(PPL_MSG_PERTURB, &run, sizeof run, NULL, 0);
    if (mode == FAKE_BENCH_RECORDS) {
        const ppl_run_record r = {1, 0, {0, 0, 0, 0}};
        for (;;)
            reply(PPL_MSG_RECORD, &r, sizeof r, NULL, 0);
    }
    for (int c = 0; c < count; c++)
        for (int k = 0; k < runs; k++, run++) {
            if (mode == FAKE_BENCH_NOISE && c == 1 && k == 1) {
                const uint64_t half[2] = {1, 2};
                reply(PPL_MSG_RECORD, half, sizeof half, NULL, 0); /* a record of 16 bytes */
            }
            reply(PPL_MSG_PERTURB, &run, sizeof run, NULL, 0);
            ppl_msg_header h;
            ppl_perturbation p;
            read_all(&h, sizeof h);
            if (h.magic != PPL_PROTO_MAGIC || h.type != PPL_MSG_PERTURB || h.bytes != sizeof p)
                send_error("fake runner: no perturbation", 28, 2);
            read_all(&p, sizeof p);
            ppl_run_record r = {(uint32_t)c, (uint32_t)run, {fake_record_value(&p), 0, 0, 0}};
            if (mode == FAKE_BENCH_WRONG && c == 1 && k == runs - 1)
                r.value[0]++;
            if (mode == FAKE_BENCH_MISSING && c == 1 && k >= runs - 3)
                continue; /* three runs of the student never recorded */
            if (mode == FAKE_BENCH_NOBODY && c == 1 && k == 0) {
                ppl_run_record stray = r;
                stray.contender = 7; /* no such contender */
                reply(PPL_MSG_RECORD, &stray, sizeof stray, NULL, 0);
                stray.contender = 3; /* the copy, whose runs are not judged */
                reply(PPL_MSG_RECORD, &stray, sizeof stray, NULL, 0);
            }
            if (c != 3) /* the copy's runs are not judged: no record */
                reply(PPL_MSG_RECORD, &r, sizeof r, NULL, 0);
        }
    ppl_bench_reply out = {samples, count, (int32_t)run, 0};
    if (mode == FAKE_BENCH_IMPOSSIBLE)
        out.samples = rq.max_samples + 1;
    const uint64_t bulk = ppl_bench_bulk_bytes(count, rq.max_samples);
    char *b = (char *)calloc(1, bulk);
    char *p = b;
    for (int c = 0; c < count; c++) {
        ppl_contender_wire w;
        memset(&w, 0, sizeof w);
        w.warmups = FAKE_WARMUPS;
        w.excess_ms = mode == FAKE_BENCH_OUTSIDE && c == 1 ? FAKE_OUTSIDE_MS : FAKE_EXCESS_MS;
        memcpy(p, &w, sizeof w);
        p += sizeof w;
        double *ms = (double *)p, *mhz = ms + rq.max_samples;
        for (int i = 0; i < samples; i++) {
            ms[i] = c + 1.0;
            mhz[i] = 1500.0;
        }
        p += 2 * (size_t)rq.max_samples * sizeof(double);
    }
    reply(PPL_MSG_BENCH, &out, sizeof out, b, bulk);
    free(b);
}

/* Reads requests to their end, answering none: the checker decides what happens next. */
static __attribute__((noreturn)) void linger(void)
{
    char sink[4096];
    for (;;) {
        const ssize_t done = read(IN, sink, sizeof sink);
        if (done == 0 || (done < 0 && errno != EINTR))
            _exit(0);
    }
}

/* Does what the mode asks instead of the reply; returns only for the modes that reply as usual afterwards. */
static void misbehave(uint32_t mode, uint32_t type, uint64_t fixed_bytes)
{
    static char text[FAKE_LONG_ERROR];
    switch (mode) {
    case FAKE_CRASH: raise(SIGSEGV); _exit(122);
    case FAKE_EXIT: exit(0);
    case FAKE_SILENT: linger();
    case FAKE_JUNK: {
        const char junk[] = "{\"case\": \"n=1\", \"status\": \"pass\"}\n and some more bytes to fill a header";
        write_all(junk, sizeof junk);
        return;
    }
    case FAKE_HALF_HEADER: {
        const ppl_msg_header h = {PPL_PROTO_MAGIC, type, fixed_bytes, 0, 0};
        write_all(&h, sizeof h / 2);
        _exit(0);
    }
    case FAKE_WRONG_TYPE: {
        static const char zeros[4096];
        reply(type == PPL_MSG_LOAD ? PPL_MSG_RUN : PPL_MSG_LOAD, zeros, fixed_bytes, NULL, 0);
        linger();
    }
    case FAKE_WRONG_LENGTH: {
        static const char zeros[4096];
        reply(type, zeros, fixed_bytes - 4, NULL, 0);
        linger();
    }
    case FAKE_LONG_ERROR_MODE:
        for (size_t i = 0; i < sizeof text; i++)
            text[i] = (char)('a' + i % 26);
        memcpy(text, "CUDA error at reduce.cu:30: ", 28);
        send_error(text, sizeof text, 3);
    case FAKE_ERROR_0: send_error("a fatal error that asks for status 0", 36, 0);
    case FAKE_ERROR_2: send_error("the input is not a multiple of 4 bytes", 38, 2);
    case FAKE_FLOOD:
    case FAKE_FLOOD_HEADER: {
        char bytes[65536];
        memset(bytes, 'x', sizeof bytes);
        if (mode == FAKE_FLOOD_HEADER) /* the right type, and a length of a terabyte */
            send_msg(type, (uint64_t)1 << 40, NULL, 0, NULL, 0);
        for (;;)
            write_all(bytes, sizeof bytes);
    }
    case FAKE_STALL: {
        static const char zeros[4096];
        const ppl_msg_header h = {PPL_PROTO_MAGIC, type, fixed_bytes, 0, 0};
        write_all(&h, sizeof h);
        write_all(zeros, fixed_bytes / 2);
        sleep(30);
        _exit(0);
    }
    case FAKE_PERTURB_OUTSIDE: {
        const uint64_t run = 0;
        reply(PPL_MSG_PERTURB, &run, sizeof run, NULL, 0);
        linger();
    }
    }
}

int main(int argc, char **argv)
{
    if (argc == 1) { /* started as the runner, beside the device program: waits for the end of its socket */
        char byte;
        while (read(3, &byte, 1) > 0)
            ;
        return 0;
    }
    for (int k = 5; k + 1 < argc; k++)
        if (strcmp(argv[k], "--bulk-fds") == 0)
            sscanf(argv[k + 1], "%d,%d", &area_fd[0], &area_fd[1]);
    if (argc < 5 || strcmp(argv[1], "--fds") != 0 || strcmp(argv[2], "3,4") != 0 ||
        strcmp(argv[3], "--runner-fd") != 0 || area_fd[0] < 0 || area_fd[1] < 0) {
        fprintf(stderr, "usage: fake_runner --fds 3,4 --runner-fd N --bulk-fds I,O (as the device program), or no "
                        "options (as the runner)\n");
        return 2;
    }
    uint32_t mode = FAKE_NORMAL;
    for (;;) {
        ppl_msg_header h;
        const ssize_t got = read(IN, &h, sizeof h);
        if (got == 0)
            return 0; /* the checker closed the requests: done */
        if (got != (ssize_t)sizeof h || h.magic != PPL_PROTO_MAGIC)
            send_error("fake runner: a bad request", 26, 2);
        if (h.type == FAKE_MSG_MODE) {
            read_all(&mode, sizeof mode);
            continue;
        }
        if (mode == FAKE_EXIT)
            misbehave(mode, h.type, 0);
        if (h.type == PPL_MSG_BENCH) {
            bench(mode);
            mode = FAKE_NORMAL;
            continue;
        }
        ppl_hello_reply hello;
        ppl_load_reply loaded;
        ppl_run_reply ran;
        uint32_t *bulk = NULL;
        size_t fixed_bytes = 0, bulk_bytes = 0;
        const void *fixed = NULL;
        if (h.type == PPL_MSG_HELLO) {
            memset(&hello, 0, sizeof hello);
            open_fds(hello.dev.name, sizeof hello.dev.name);
            hello.dev.cc_major = 7;
            hello.dev.cc_minor = 5;
            hello.dev.sm_count = 40;
            snprintf(hello.dev.pci_bus_id, sizeof hello.dev.pci_bus_id, "0000:00:00.0");
            fixed = &hello;
            fixed_bytes = sizeof hello;
        } else if (h.type == PPL_MSG_LOAD) {
            ppl_load_request rq;
            read_all(&rq, sizeof rq);
            free(input);
            input_n = rq.n;
            input = (uint32_t *)malloc(rq.n * 4 + 4);
            const void *area = h.bytes == sizeof rq + rq.n * 4 ? map_area(0, rq.n * 4, PROT_READ) : NULL;
            if (!area)
                send_error("fake runner: a LOAD whose input is not in the input area", 56, 2);
            memcpy(input, area, rq.n * 4);
            munmap((void *)area, rq.n * 4);
            loaded.n = rq.n;
            fixed = &loaded;
            fixed_bytes = sizeof loaded;
        } else if (h.type == PPL_MSG_RUN) {
            ppl_run_request rq;
            read_all(&rq, sizeof rq);
            ran.value = 0;
            for (uint64_t i = 0; i < input_n; i++)
                ran.value += input[i];
            bulk_bytes = 4 * ppl_run_bulk_words(&rq); /* the tests ask for n + guard words, then n */
            bulk = (uint32_t *)malloc(bulk_bytes + 4);
            uint32_t *w = bulk;
            if (rq.want_output) {
                for (uint64_t i = 0; i < input_n; i++)
                    *w++ = 2 * input[i];
                for (int i = 0; i < PPL_GUARD_WORDS; i++)
                    *w++ = FAKE_GUARD;
            }
            if (rq.want_input)
                memcpy(w, input, input_n * 4);
            fixed = &ran;
            fixed_bytes = sizeof ran;
        } else {
            send_error("fake runner: an unknown request", 31, 2);
        }
        if (mode != FAKE_NORMAL && mode != FAKE_DEAF) {
            misbehave(mode, h.type, fixed_bytes);
            mode = FAKE_NORMAL;
        }
        reply(h.type, fixed, fixed_bytes, bulk, bulk_bytes);
        free(bulk);
        if (mode == FAKE_DEAF) {
            sleep(30);
            _exit(0);
        }
    }
}
