/* results.c - the JSON-lines result channel (see results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static FILE *results_file;
static char **plan_names, **plan_reruns; /* plan_reruns[k]: case k's rerun arguments as a JSON array, or NULL */
static size_t plan_count, plan_capacity;
static char current_case[256] = "startup";
static char current_rerun[PPL_RERUN_JSON_MAX]; /* the case's rerun arguments as a JSON array; "" for none */
static long current_run = -1; /* ppl_results_set_run: the run every line names, -1 for none */
static void (*fatal_sink)(const char *message, int status);

int ppl_results_open(const char *path)
{
    ppl_results_close();
    if (!path)
        return 0;
    results_file = fopen(path, "a");
    if (!results_file) {
        fprintf(stderr, "cannot open result file %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int ppl_results_open_fd(int fd)
{
    ppl_results_close();
    results_file = fdopen(fd, "w");
    if (!results_file) {
        fprintf(stderr, "cannot write results to descriptor %d: %s\n", fd, strerror(errno));
        return -1;
    }
    return 0;
}

void ppl_results_close(void)
{
    if (results_file)
        fclose(results_file);
    results_file = NULL;
}

static char *copy_of(const char *text)
{
    const size_t len = strlen(text) + 1;
    char *copy = (char *)malloc(len);
    if (copy)
        memcpy(copy, text, len);
    return copy;
}

/* Appends text to buf[*at..len), keeping room for the terminator; returns 0 once it no longer fits. */
static int put(char *buf, size_t len, size_t *at, const char *text)
{
    const size_t n = strlen(text);
    if (*at + n + 1 > len)
        return 0;
    memcpy(buf + *at, text, n + 1);
    *at += n;
    return 1;
}

/* argv[0..argc) as a JSON array of strings into buf ("" when it does not fit, or argc is 0). The arguments are the
 * harness's own options and numbers: any byte below 0x20, a quote or a backslash is escaped all the same. */
static void json_array(char *buf, size_t len, int argc, const char *const *argv)
{
    size_t at = 0;
    int ok = argc > 0 && put(buf, len, &at, "[");
    for (int k = 0; ok && k < argc; k++) {
        ok = put(buf, len, &at, k ? ", \"" : "\"");
        for (const unsigned char *p = (const unsigned char *)argv[k]; ok && *p; p++) {
            char one[8];
            if (*p == '"' || *p == '\\')
                snprintf(one, sizeof one, "\\%c", *p);
            else if (*p < 0x20)
                snprintf(one, sizeof one, "\\u%04x", *p);
            else
                snprintf(one, sizeof one, "%c", *p);
            ok = put(buf, len, &at, one);
        }
        ok = ok && put(buf, len, &at, "\"");
    }
    ok = ok && put(buf, len, &at, "]");
    if (!ok)
        buf[0] = '\0';
}

void ppl_plan_add_case(const char *name, int argc, const char *const *argv)
{
    if (plan_count == plan_capacity) {
        size_t capacity = plan_capacity ? 2 * plan_capacity : 16;
        char **grown = (char **)realloc(plan_names, capacity * sizeof *grown);
        if (!grown)
            return;
        plan_names = grown;
        grown = (char **)realloc(plan_reruns, capacity * sizeof *grown);
        if (!grown)
            return;
        plan_reruns = grown;
        plan_capacity = capacity;
    }
    char rerun[PPL_RERUN_JSON_MAX];
    json_array(rerun, sizeof rerun, argc, argv);
    char *copy = copy_of(name);
    if (!copy)
        return;
    plan_reruns[plan_count] = rerun[0] ? copy_of(rerun) : NULL;
    plan_names[plan_count++] = copy;
}

void ppl_plan_add(const char *name) { ppl_plan_add_case(name, 0, NULL); }

void ppl_plan_write(void)
{
    if (results_file) {
        fputs("{\"case\": \"plan\", ", results_file);
        if (current_run >= 0)
            fprintf(results_file, "\"run\": %ld, ", current_run);
        fputs("\"kind\": \"plan\", \"cases\": [", results_file);
        int any_rerun = 0;
        for (size_t k = 0; k < plan_count; k++) {
            if (k)
                fputs(", ", results_file);
            ppl_json_string(results_file, plan_names[k]);
            any_rerun |= plan_reruns[k] != NULL;
        }
        fputs("]", results_file);
        if (any_rerun) {
            fputs(", \"reruns\": [", results_file);
            for (size_t k = 0; k < plan_count; k++)
                fprintf(results_file, "%s%s", k ? ", " : "", plan_reruns[k] ? plan_reruns[k] : "null");
            fputs("]", results_file);
        }
        fputs("}\n", results_file);
        fflush(results_file);
    }
    for (size_t k = 0; k < plan_count; k++) {
        free(plan_names[k]);
        free(plan_reruns[k]);
    }
    free(plan_names);
    free(plan_reruns);
    plan_names = plan_reruns = NULL;
    plan_count = plan_capacity = 0;
}

void ppl_results_set_run(long run) { current_run = run; }

void ppl_results_begin_case_args(const char *name, int argc, const char *const *argv)
{
    snprintf(current_case, sizeof current_case, "%s", name);
    json_array(current_rerun, sizeof current_rerun, argc, argv);
}

void ppl_results_begin_case(const char *name) { ppl_results_begin_case_args(name, 0, NULL); }

void ppl_json_string(FILE *f, const char *value)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void ppl_results_start(const char *kind, const char *status)
{
    if (!results_file)
        return;
    fputs("{\"case\": ", results_file);
    ppl_json_string(results_file, current_case);
    if (current_run >= 0)
        ppl_results_int("run", current_run);
    ppl_results_str("kind", kind);
    ppl_results_str("status", status);
    if (current_rerun[0])
        fprintf(results_file, ", \"rerun\": %s", current_rerun);
}

void ppl_results_str(const char *key, const char *value)
{
    if (!results_file)
        return;
    fprintf(results_file, ", \"%s\": ", key);
    ppl_json_string(results_file, value);
}

void ppl_results_num(const char *key, double value)
{
    if (!results_file)
        return;
    if (isfinite(value))
        fprintf(results_file, ", \"%s\": %.17g", key, value);
    else /* JSON has no NaN or infinity: write them as strings the grader shows as they are */
        fprintf(results_file, ", \"%s\": \"%s\"", key, isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf"));
}

void ppl_results_int(const char *key, long long value)
{
    if (results_file)
        fprintf(results_file, ", \"%s\": %lld", key, value);
}

void ppl_results_u64(const char *key, unsigned long long value)
{
    if (results_file)
        fprintf(results_file, ", \"%s\": %llu", key, value);
}

void ppl_results_end(void)
{
    if (!results_file)
        return;
    fputs("}\n", results_file);
    fflush(results_file);
}

void ppl_results_set_fatal_sink(void (*sink)(const char *message, int status))
{
    fatal_sink = sink;
}

void ppl_results_fatal(const char *message, int status)
{
    fflush(stdout);
    if (fatal_sink) {
        fatal_sink(message, status);
    } else {
        ppl_results_start("error", "error");
        ppl_results_str("message", message);
        ppl_results_end();
    }
    exit(status);
}
