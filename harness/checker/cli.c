/* cli.c - command-line pieces shared by the harness programs (see cli.h). */
#include "cli.h"
#include "protocol.h"
#include "sandbox.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Reads the decimal digits at p (no sign, no space) into *v; returns the end, or NULL for no digit or a value
 * above limit. */
static const char *read_whole(const char *p, unsigned long long limit, unsigned long long *v)
{
    if (*p < '0' || *p > '9')
        return NULL;
    unsigned long long x = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        const unsigned digit = (unsigned)(*p - '0');
        if (x > (limit - digit) / 10)
            return NULL;
        x = 10 * x + digit;
    }
    *v = x;
    return p;
}

int ppl_parse_sizes(const char *text, size_t *sizes, int max)
{
    int count = 0;
    const char *p = text;
    for (;;) {
        if (count >= max) /* also max <= 0: no room at all */
            return -1;
        unsigned long long value, k, d;
        const char *end;
        if (p[0] == '2' && p[1] == '^') {
            if (!(end = read_whole(p + 2, 40, &k)))
                return -1;
            value = 1ull << k;
            if (*end == '+' || *end == '-') {
                const char sign = *end;
                if (!(end = read_whole(end + 1, SIZE_MAX, &d)))
                    return -1;
                if (sign == '+' ? d > SIZE_MAX - value : d >= value)
                    return -1;
                value = sign == '+' ? value + d : value - d;
            }
        } else if (!(end = read_whole(p, SIZE_MAX, &value))) {
            return -1;
        }
        if (value < 1 || (*end != ',' && *end != '\0'))
            return -1;
        sizes[count++] = (size_t)value;
        if (*end == '\0')
            return count;
        p = end + 1; /* after a comma another entry must follow: "1," and "1,,2" are refused */
    }
}

uint64_t ppl_default_seed(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 40);
}

void ppl_options_init(ppl_options *o, const char *default_sizes)
{
    memset(o, 0, sizeof *o);
    o->host_memory_mib = PPL_SANDBOX_DATA_MIB;
    o->seed = ppl_default_seed();
    o->seed_fd = o->result_fd = o->runs_fd = -1;
    o->min_samples = 10;
    o->max_samples = 100;
    o->num_sizes = ppl_parse_sizes(default_sizes, o->sizes, PPL_MAX_SIZES);
}

/* A whole number in [0, limit] (--min-samples, --max-samples, descriptors); -1 if arg is not one. */
static int parse_count(const char *arg, long limit)
{
    char *end;
    long v = strtol(arg, &end, 10);
    return end != arg && *end == '\0' && v >= 0 && v <= limit ? (int)v : -1;
}

int ppl_options_parse(ppl_options *o, int code, const char *arg)
{
    switch (code) {
    case PPL_OPT_N:
        if ((o->num_sizes = ppl_parse_sizes(arg, o->sizes, PPL_MAX_SIZES)) < 0) {
            fprintf(stderr, "--n %s: expected sizes >= 1 separated by commas, like 1,1025,2^20+1\n", arg);
            return -1;
        }
        return 1;
    case PPL_OPT_SEED: {
        char *end;
        o->seed = strtoull(arg, &end, 0);
        if (end == arg || *end != '\0') {
            fprintf(stderr, "--seed %s: expected a whole number\n", arg);
            return -1;
        }
        o->seed_given = 1;
        return 1;
    }
    case PPL_OPT_SEED_FD:
    case PPL_OPT_RESULT_FD:
    case PPL_OPT_RUNS_FD: {
        const int fd = parse_count(arg, 1 << 20);
        if (fd < 3) { /* 0, 1 and 2 are the standard streams, which the lab's code shares */
            fprintf(stderr, "--%s %s: expected a descriptor number of 3 or more\n",
                    code == PPL_OPT_SEED_FD ? "seed-fd" : code == PPL_OPT_RUNS_FD ? "runs-fd" : "result-fd", arg);
            return -1;
        }
        *(code == PPL_OPT_SEED_FD ? &o->seed_fd : code == PPL_OPT_RUNS_FD ? &o->runs_fd : &o->result_fd) = fd;
        return 1;
    }
    case PPL_OPT_IN_PROCESS: o->sandbox_mode = PPL_SANDBOX_OFF; return 1;
    case PPL_OPT_PATTERN: o->pattern = arg; return 1;
    case PPL_OPT_RUNNER: o->runner = arg; return 1;
    case PPL_OPT_RUNNER_WRAP:
        if (o->num_wrap >= (int)(sizeof o->wrap / sizeof *o->wrap)) {
            fputs("--runner-wrap: at most 32 arguments\n", stderr);
            return -1;
        }
        o->wrap[o->num_wrap++] = arg;
        return 1;
    case PPL_OPT_RUNNER_RW:
        if (o->num_rw >= 4) {
            fputs("--runner-rw: at most 4 folders\n", stderr);
            return -1;
        }
        o->rw_paths[o->num_rw++] = arg;
        return 1;
    case PPL_OPT_RUNNER_RO:
        if (o->num_ro >= 4 || arg[0] != '/') {
            fputs("--runner-ro: at most 4 folders, each an absolute path\n", stderr);
            return -1;
        }
        o->ro_paths[o->num_ro++] = arg;
        return 1;
    case PPL_OPT_DEVICE:
    case PPL_OPT_MODULE:
        if (arg[0] != '/') {
            fprintf(stderr, "--%s %s: expected an absolute path\n", code == PPL_OPT_DEVICE ? "device" : "module", arg);
            return -1;
        }
        *(code == PPL_OPT_DEVICE ? &o->device : &o->module) = arg;
        return 1;
    case PPL_OPT_SCHEDULE:
        if (!*arg || strlen(arg) >= PPL_SCHEDULE_MAX) {
            fprintf(stderr, "--schedule %s: expected a schedule (inorder, interleave:SEED, reverse, random:SEED)\n",
                    arg);
            return -1;
        }
        o->schedule = arg;
        return 1;
    case PPL_OPT_SANDBOX:
        if (strcmp(arg, "auto") == 0)
            o->sandbox_mode = PPL_SANDBOX_AUTO;
        else if (strcmp(arg, "require") == 0)
            o->sandbox_mode = PPL_SANDBOX_REQUIRE;
        else if (strcmp(arg, "off") == 0)
            o->sandbox_mode = PPL_SANDBOX_OFF;
        else {
            fprintf(stderr, "--sandbox %s: expected auto, require or off\n", arg);
            return -1;
        }
        return 1;
    case PPL_OPT_RUNNER_FD: {
        const int fd = parse_count(arg, 1 << 20);
        if (fd < 5 || o->num_runner_fds >= 4) { /* 3 and 4 are the runner's pipes */
            fprintf(stderr, "--runner-fd %s: expected a descriptor number of 5 or more (at most 4 of them)\n", arg);
            return -1;
        }
        o->runner_fds[o->num_runner_fds++] = fd;
        return 1;
    }
    case PPL_OPT_HOST_MEMORY: {
        char *end;
        const long mib = strtol(arg, &end, 10);
        if (*arg == '\0' || *end || mib < 0 || mib > (1L << 30)) {
            fprintf(stderr, "--host-memory-mib %s: expected a whole number of MiB (0: no limit)\n", arg);
            return -1;
        }
        o->host_memory_mib = mib;
        return 1;
    }
    case PPL_OPT_CPU_SECONDS:
    case PPL_OPT_CALL_SECONDS:
    case PPL_OPT_TIMEOUT: {
        char *end;
        const double s = strtod(arg, &end);
        if (*end || !(s >= 0)) {
            fprintf(stderr, "--%s %s: expected a number of seconds\n",
                    code == PPL_OPT_TIMEOUT ? "timeout" : code == PPL_OPT_CALL_SECONDS ? "call-seconds" : "cpu-seconds",
                    arg);
            return -1;
        }
        *(code == PPL_OPT_TIMEOUT ? &o->timeout_s : code == PPL_OPT_CALL_SECONDS ? &o->call_seconds : &o->cpu_seconds) = s;
        return 1;
    }
    case PPL_OPT_DATASET: o->dataset = arg; return 1;
    case PPL_OPT_EXPECTED: o->expected = arg; return 1;
    case PPL_OPT_BENCH:
        if (ppl_parse_sizes(arg, &o->bench_n, 1) != 1) {
            fprintf(stderr, "--bench %s: expected one size, like 2^26\n", arg);
            return -1;
        }
        return 1;
    case PPL_OPT_MIN_SAMPLES:
    case PPL_OPT_MAX_SAMPLES: {
        const int v = parse_count(arg, 1000000);
        if (v < 0) {
            fprintf(stderr, "--%s %s: expected a whole number\n",
                    code == PPL_OPT_MIN_SAMPLES ? "min-samples" : "max-samples", arg);
            return -1;
        }
        *(code == PPL_OPT_MIN_SAMPLES ? &o->min_samples : &o->max_samples) = v;
        return 1;
    }
    case PPL_OPT_RESULT: o->result_path = arg; return 1;
    case PPL_OPT_QUIET: o->quiet = 1; return 1;
    case PPL_OPT_HELP: return 2;
    }
    return 0;
}

int ppl_options_check(const ppl_options *o, int argc, char **argv, int dataset_needs_expected, size_t max_n)
{
    if (optind < argc) {
        fprintf(stderr, "unexpected argument: %s\n", argv[optind]);
        return -1;
    }
    if (dataset_needs_expected ? !o->dataset != !o->expected : o->expected != NULL) {
        fputs(dataset_needs_expected ? "--dataset and --expected go together\n"
                                     : "this program takes --dataset alone: it computes the expected output\n",
              stderr);
        return -1;
    }
    if (o->seed_given && o->seed_fd >= 0) {
        fputs("--seed and --seed-fd exclude each other\n", stderr);
        return -1;
    }
    if (o->result_path && o->result_fd >= 0) {
        fputs("--result and --result-fd exclude each other\n", stderr);
        return -1;
    }
    if (o->seed_fd >= 0 && o->seed_fd == o->result_fd) {
        fputs("--seed-fd and --result-fd must be different descriptors\n", stderr);
        return -1;
    }
    if (o->min_samples < 3 || o->max_samples < o->min_samples) {
        fputs("--min-samples must be >= 3 and <= --max-samples\n", stderr);
        return -1;
    }
    for (int k = 0; k < o->num_sizes; k++)
        if (o->sizes[k] > max_n) {
            fprintf(stderr, "--n: %zu is larger than this program takes (%zu)\n", o->sizes[k], max_n);
            return -1;
        }
    if (o->bench_n > max_n) {
        fprintf(stderr, "--bench: %zu is larger than this program takes (%zu)\n", o->bench_n, max_n);
        return -1;
    }
    return 0;
}

/* Where the first whole list in buf ends (the byte after its empty argument), or -1 when none is whole yet. */
static long list_end(const char *buf, size_t len)
{
    size_t at = 0;
    while (at < len) {
        if (buf[at] == '\0')
            return (long)(at + 1);
        const char *nul = (const char *)memchr(buf + at, '\0', len - at);
        if (!nul)
            return -1;
        at = (size_t)(nul - buf) + 1;
    }
    return -1;
}

/* Reads more of the descriptor into buf: 1, 0 at its end (closed then), or -1 after a message. */
static int lists_fill(ppl_run_lists *r)
{
    if (r->len == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 1 << 16;
        char *more = (char *)realloc(r->buf, cap);
        if (!more) {
            fprintf(stderr, "--runs-fd %d: out of memory\n", r->fd);
            return -1;
        }
        r->buf = more;
        r->cap = cap;
    }
    for (;;) {
        const ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fprintf(stderr, "--runs-fd %d: %s\n", r->fd, strerror(errno));
            return -1;
        }
        if (got == 0) {
            close(r->fd);
            r->fd = -1;
            return 0;
        }
        r->len += (size_t)got;
        return 1;
    }
}

/* Reads until a whole list, or the end, is in buf. 0, or -1 after a message (r->error set). */
static int lists_wait(ppl_run_lists *r)
{
    while (r->fd >= 0 && list_end(r->buf, r->len) < 0) {
        if (lists_fill(r) < 0) {
            r->error = 1;
            return -1;
        }
    }
    if (r->fd < 0 && r->len > 0 && list_end(r->buf, r->len) < 0 && r->buf[r->len - 1] != '\0') {
        fprintf(stderr, "--runs-fd: expected arguments ended by NUL bytes\n");
        r->error = 1;
        return -1;
    }
    return 0;
}

int ppl_run_lists_read(int fd, const char *program, ppl_run_lists *r)
{
    *r = (ppl_run_lists){0};
    r->fd = fd;
    r->program = program;
    if (lists_wait(r) != 0 || r->len == 0) {
        if (!r->error)
            fprintf(stderr, "--runs-fd %d: expected arguments ended by NUL bytes\n", fd);
        ppl_run_lists_free(r);
        return -1;
    }
    return 0;
}

char **ppl_run_lists_next(ppl_run_lists *r, int *argc)
{
    if (r->error || lists_wait(r) != 0 || r->len == 0)
        return NULL;
    long end = list_end(r->buf, r->len);
    const int ended = end >= 0; /* else the last list, its end left out */
    const size_t bytes = ended ? (size_t)end : r->len;
    free(r->text);
    free(r->argv);
    r->text = (char *)malloc(bytes);
    r->argv = (char **)malloc((bytes + 2) * sizeof(char *)); /* at most a word a byte, the name and NULL */
    if (!r->text || !r->argv) {
        fprintf(stderr, "--runs-fd: out of memory\n");
        r->error = 1;
        return NULL;
    }
    memcpy(r->text, r->buf, bytes);
    memmove(r->buf, r->buf + bytes, r->len - bytes);
    r->len -= bytes;
    int k = 0;
    r->argv[k++] = (char *)r->program;
    for (size_t at = 0; at < bytes && r->text[at] != '\0'; at += strlen(r->text + at) + 1)
        r->argv[k++] = r->text + at;
    r->argv[k] = NULL;
    r->count++;
    *argc = k;
    return r->argv;
}

void ppl_run_lists_free(ppl_run_lists *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    free(r->buf);
    free(r->text);
    free(r->argv);
    r->buf = r->text = NULL;
    r->argv = NULL;
}
