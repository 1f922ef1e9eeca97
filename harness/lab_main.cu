/* lab_main.cu - the start of every lab program and a benchmark's traffic between runner and checker (see lab_main.h). */
#include "lab_main.h"

#include "results.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t status; /* 0, or PPL_EXIT_NO_DEVICE */
    ppl_device_info dev;
} hello_reply;

static ppl_serve_fn lab_serve;
static ppl_device_info runner_device;

const ppl_device_info *ppl_runner_device(void) { return &runner_device; }

static size_t serve_with_hello(uint32_t type, const void *request, size_t request_bytes, void *region,
                               size_t region_bytes, void *reply)
{
    if (type != PPL_MSG_HELLO)
        return lab_serve(type, request, request_bytes, region, region_bytes, reply);
    hello_reply *r = (hello_reply *)reply;
    memset(r, 0, sizeof *r);
    r->status = ppl_device_open(&runner_device);
    r->dev = runner_device;
    return sizeof *r;
}

void ppl_call(ppl_isolate *iso, uint32_t type, const void *request, size_t request_bytes, void *reply,
              size_t reply_bytes)
{
    const int code = ppl_isolate_call(iso, type, request, request_bytes, reply, reply_bytes);
    if (code != 0)
        ppl_isolate_fail(iso, code);
}

void *ppl_region(ppl_isolate *iso, size_t bytes)
{
    void *p = ppl_isolate_region(iso, bytes);
    if (!p) {
        char message[160];
        snprintf(message, sizeof message, "out of host memory: the shared region cannot grow to %zu bytes", bytes);
        ppl_results_fatal(message, PPL_EXIT_USAGE);
    }
    return p;
}

void ppl_runner_need(size_t region_bytes, size_t bytes)
{
    if (region_bytes < bytes) {
        char message[160];
        snprintf(message, sizeof message, "the request needs %zu bytes of the region, which has %zu (a kit bug)", bytes,
                 region_bytes);
        ppl_results_fatal(message, PPL_EXIT_USAGE);
    }
}

int ppl_lab_main(ppl_options *o, ppl_serve_fn serve, ppl_check_fn check, void *ctx)
{
    lab_serve = serve;
    const int secret_fds[2] = {o->seed_fd, o->result_fd}; /* the runner closes them before serving anything */
    ppl_isolate iso;
    if (ppl_isolate_start(&iso, serve_with_hello, o->in_process, secret_fds, 2) != 0)
        return PPL_EXIT_USAGE;
    /* from here on this is the checker */
    if (o->seed_fd >= 0) {
        if (ppl_read_seed_fd(o->seed_fd, &o->seed) != 0) {
            ppl_isolate_stop(&iso);
            return PPL_EXIT_USAGE;
        }
    } else if (!o->seed_given) {
        o->seed = ppl_default_seed(); /* drawn after the fork: the runner's copy of the options has another */
    }
    if ((o->result_fd >= 0 ? ppl_results_open_fd(o->result_fd) : ppl_results_open(o->result_path)) != 0) {
        ppl_isolate_stop(&iso);
        return PPL_EXIT_USAGE;
    }
    hello_reply hello;
    ppl_call(&iso, PPL_MSG_HELLO, NULL, 0, &hello, sizeof hello);
    if (hello.status != 0) {
        ppl_results_begin_case("device");
        ppl_results_start("device", "no-device");
        ppl_results_str("message", "no CUDA device here");
        ppl_results_end();
        ppl_isolate_stop(&iso);
        return PPL_EXIT_NO_DEVICE;
    }
    if (!o->quiet) {
        char seed[64];
        if (o->seed_fd >= 0)
            snprintf(seed, sizeof seed, "from --seed-fd");
        else
            snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
        printf("device: %s (sm_%d%d, %d SMs), seed %s%s\n", hello.dev.name, hello.dev.cc_major, hello.dev.cc_minor,
               hello.dev.sm_count, seed, o->in_process ? ", in one process" : "");
    }
    const int failures = check(&iso, &hello.dev, ctx);
    ppl_isolate_stop(&iso);
    if (failures < 0)
        return PPL_EXIT_USAGE;
    return failures ? PPL_EXIT_FAIL : PPL_EXIT_PASS;
}

/* ---- benchmarks ---- */

static uint64_t align8(uint64_t x) { return (x + 7) / 8 * 8; }

/* Each contender's samples in the region: the struct as the runner had it, then its ms and mhz arrays. */
static size_t contender_bytes(int max_samples)
{
    return align8(sizeof(ppl_contender)) + 2 * (size_t)max_samples * sizeof(double);
}

ppl_bench_layout ppl_bench_layout_of(size_t input_bytes, int count, int max_samples)
{
    ppl_bench_layout l;
    memset(&l, 0, sizeof l);
    l.count = count;
    l.max_samples = max_samples;
    l.input = 0;
    l.table = align8(input_bytes);
    l.records = l.table + align8(PPL_PERTURBATIONS * sizeof(ppl_perturbation));
    l.samples = l.records + (uint64_t)PPL_MAX_RECORDS * sizeof(ppl_run_record);
    l.total = l.samples + (uint64_t)count * contender_bytes(max_samples);
    return l;
}

void ppl_tape_init(ppl_bench_tape *t, void *region, const ppl_bench_layout *l)
{
    memset(t, 0, sizeof *t);
    t->table = (const ppl_perturbation *)((char *)region + l->table);
    t->records = (ppl_run_record *)((char *)region + l->records);
}

void ppl_tape_perturb(ppl_bench_tape *t, void *d_in)
{
    uint32_t *words = (uint32_t *)d_in;
    if (t->last && t->last->count) /* undo first: the two may overlap */
        CUDA_CHECK(cudaMemcpy(words + t->last->index, t->last->original, t->last->count * sizeof(uint32_t),
                              cudaMemcpyHostToDevice));
    const ppl_perturbation *p = &t->table[t->run % PPL_PERTURBATIONS];
    if (p->count)
        CUDA_CHECK(cudaMemcpy(words + p->index, p->value, p->count * sizeof(uint32_t), cudaMemcpyHostToDevice));
    t->last = p;
    t->run++;
}

void ppl_tape_record(ppl_bench_tape *t, uint32_t contender, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    if (t->num_records >= PPL_MAX_RECORDS) {
        t->overflow = 1;
        return;
    }
    ppl_run_record *r = &t->records[t->num_records++];
    r->contender = contender;
    r->run = t->run - 1;
    r->value[0] = a;
    r->value[1] = b;
    r->value[2] = c;
    r->value[3] = d;
}

void ppl_bench_pack(void *region, const ppl_bench_layout *l, const ppl_contender *contenders)
{
    char *p = (char *)region + l->samples;
    const size_t row = (size_t)l->max_samples * sizeof(double);
    for (int c = 0; c < l->count; c++, p += contender_bytes(l->max_samples)) {
        memcpy(p, &contenders[c], sizeof(ppl_contender));
        memcpy(p + align8(sizeof(ppl_contender)), contenders[c].ms, row);
        memcpy(p + align8(sizeof(ppl_contender)) + row, contenders[c].mhz, row);
    }
}

void ppl_contenders_init(ppl_contender *contenders, int count, const char *const *names, void (*run)(void *ctx),
                         int (*check)(void *ctx), int checked, void *ctxs, size_t ctx_size)
{
    memset(contenders, 0, (size_t)count * sizeof *contenders);
    for (int c = 0; c < count; c++) {
        contenders[c].name = names[c];
        contenders[c].run = run;
        contenders[c].check = c < checked ? check : NULL;
        contenders[c].ctx = (char *)ctxs + (size_t)c * ctx_size;
    }
}

#define BENCH_TARGET_SPREAD 0.02
#define BENCH_WALL_LIMIT_S 60.0

int ppl_runner_bench(void *region, const ppl_bench_layout *l, ppl_contender *contenders, void (*prepare)(void *ctx),
                     void *prepare_ctx, int min_samples, int max_samples)
{
    const ppl_bench_plan plan = {prepare, prepare_ctx, min_samples, max_samples, BENCH_TARGET_SPREAD,
                                 BENCH_WALL_LIMIT_S};
    ppl_l2_flusher flusher;
    ppl_l2_flusher_init(&flusher, ppl_runner_device());
    const int samples = ppl_bench_run(contenders, l->count, &plan, &flusher);
    ppl_l2_flusher_free(&flusher);
    ppl_bench_pack(region, l, contenders);
    ppl_bench_free(contenders, l->count);
    return samples;
}

void ppl_bench_unpack(const void *region, const ppl_bench_layout *l, ppl_contender *contenders)
{
    const char *p = (const char *)region + l->samples;
    const size_t row = (size_t)l->max_samples * sizeof(double);
    for (int c = 0; c < l->count; c++, p += contender_bytes(l->max_samples)) {
        ppl_contender mine = contenders[c], theirs;
        memcpy(&theirs, p, sizeof theirs);
        contenders[c] = theirs; /* the counts bench.cu keeps (warm-ups, throttled samples, ...) */
        contenders[c].name = mine.name;
        contenders[c].run = mine.run;
        contenders[c].check = mine.check;
        contenders[c].ctx = mine.ctx;
        contenders[c].wrong_runs = 0; /* the checker's own count, from the records */
        contenders[c].ms = (double *)malloc(row);
        contenders[c].mhz = (double *)malloc(row);
        if (!contenders[c].ms || !contenders[c].mhz)
            ppl_results_fatal("out of host memory for the samples", PPL_EXIT_USAGE);
        memcpy(contenders[c].ms, p + align8(sizeof(ppl_contender)), row);
        memcpy(contenders[c].mhz, p + align8(sizeof(ppl_contender)) + row, row);
    }
}

int ppl_bench_judge(const void *region, const ppl_bench_layout *l, int num_records, ppl_contender *contenders,
                    int samples, int student, int (*check)(void *ctx, const ppl_run_record *r), void *ctx)
{
    const ppl_run_record *records = (const ppl_run_record *)((const char *)region + l->records);
    if (num_records < 0 || num_records > PPL_MAX_RECORDS)
        num_records = 0;
    int seen[8] = {0};
    for (int k = 0; k < num_records; k++) {
        const ppl_run_record r = records[k]; /* a copy: the checker reads each record once */
        if (r.contender >= (uint32_t)l->count || r.contender >= 8 || !contenders[r.contender].check) {
            contenders[student].wrong_runs++;
            continue;
        }
        seen[r.contender]++;
        if (!check(ctx, &r))
            contenders[r.contender].wrong_runs++;
    }
    for (int c = 0; c < l->count && c < 8; c++)
        if (contenders[c].check && seen[c] < samples)
            contenders[c].wrong_runs += samples - seen[c]; /* a run the checker never saw is not a right one */
    return num_records;
}

uint64_t ppl_secret_below(uint64_t seed, uint64_t counter, uint64_t bound)
{
    /* a stream of its own, apart from the inputs' streams (ppl_random_bits(seed, n)) */
    return bound ? ppl_random_bits(ppl_mix64(seed ^ 0x5EC12E7ull), counter) % bound : 0;
}
