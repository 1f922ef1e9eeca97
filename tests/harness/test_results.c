/*
 * test_results.c - harness/checker/results.c: the JSON-lines result channel the grader reads, and its fatal
 * errors.
 *
 * The grader parses these lines with Python's json module, so the text must be valid JSON whatever a message holds
 * (quotes from a file name, newlines, control bytes), numbers must parse back to the same double, and NaN or
 * infinity, which JSON lacks, must arrive as strings.
 *
 * results.c keeps its file and the plan in static variables, so each test here relies on Check's fork mode for a
 * fresh start. Under CK_FORK=no the "no_file" case still passes because it runs before any file is opened.
 */
#include "test_util.h"

#include "results.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ppl_json_string(value) as a malloc'd string. */
static char *json_of(const char *value)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ppl_json_string(f, value);
    fclose(f);
    return buf;
}

static void assert_json(const char *value, const char *want)
{
    char *got = json_of(value);
    ck_assert_str_eq(got, want);
    free(got);
}

/* Decodes the JSON string literal at s (the escapes results.c writes); returns the number of bytes, -1 if invalid. */
static int json_decode(const char *s, char *out)
{
    int n = 0;
    if (*s++ != '"')
        return -1;
    for (; *s != '"'; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '\0' || c < 0x20)
            return -1; /* JSON forbids raw control characters in strings */
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        s++;
        switch (*s) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
            unsigned v;
            if (sscanf(s + 1, "%4x", &v) != 1 || v > 0xff)
                return -1;
            out[n++] = (char)v;
            s += 4;
            break;
        }
        default: return -1;
        }
    }
    return s[1] == '\0' ? n : -1;
}

/* Redirects fd (1 or 2) into path until capture_end; returns the saved descriptor. */
static int capture_begin(int fd, const char *path)
{
    fflush(stdout);
    fflush(stderr);
    const int saved = dup(fd);
    const int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(f, 0);
    dup2(f, fd);
    close(f);
    return saved;
}

static void capture_end(int fd, int saved)
{
    fflush(stdout);
    fflush(stderr);
    dup2(saved, fd);
    close(saved);
}

/* Splits the file's text into lines and compares them one by one with want[0..n). */
static void assert_lines(const char *path, const char *const *want, int n)
{
    size_t len;
    char *text = (char *)read_bytes(path, &len);
    ck_assert_msg(len > 0 && text[len - 1] == '\n', "%s does not end with a newline", path);
    int line = 0;
    for (char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1, line++) {
        *nl = '\0';
        ck_assert_msg(line < n, "%s has more than %d lines: extra line \"%s\"", path, n, p);
        ck_assert_str_eq(p, want[line]);
    }
    ck_assert_int_eq(line, n);
    free(text);
}

/* ---- ppl_json_string ---- */

START_TEST(test_json_plain)
{
    assert_json("", "\"\"");
    assert_json("pass", "\"pass\"");
    assert_json("n=1025 integer", "\"n=1025 integer\"");
    assert_json("caf\xc3\xa9 \xe2\x9c\x93", "\"caf\xc3\xa9 \xe2\x9c\x93\""); /* UTF-8 passes through */
    assert_json("a/b\x7f", "\"a/b\x7f\"");
}
END_TEST

START_TEST(test_json_escapes)
{
    assert_json("say \"hi\"", "\"say \\\"hi\\\"\"");
    assert_json("C:\\labs\\01", "\"C:\\\\labs\\\\01\"");
    assert_json("line 1\nline 2", "\"line 1\\nline 2\"");
    assert_json("a\tb\rc", "\"a\\tb\\rc\"");
    assert_json("\x01\x1f", "\"\\u0001\\u001f\"");
    assert_json("\b\f\x1b[31m", "\"\\u0008\\u000c\\u001b[31m\"");
    assert_json("\\\"\n", "\"\\\\\\\"\\n\"");
}
END_TEST

/* Every byte 1..255 alone and all together: the output is a valid JSON string that decodes to the input. */
START_TEST(test_json_every_byte)
{
    char all[256], decoded[256];
    for (int c = 1; c < 256; c++) {
        const char one[2] = {(char)c, '\0'};
        char *got = json_of(one);
        ck_assert_msg(json_decode(got, decoded) == 1 && (unsigned char)decoded[0] == c,
                      "byte 0x%02x is written as %s", c, got);
        free(got);
        all[c - 1] = (char)c;
    }
    all[255] = '\0';
    char *got = json_of(all);
    ck_assert_int_eq(json_decode(got, decoded), 255);
    ck_assert_mem_eq(decoded, all, 255);
    free(got);
}
END_TEST

/* ---- result files ---- */

START_TEST(test_no_file_is_noop)
{
    const char *out = tmp_path("stdout.txt");
    char err_path[4096];
    snprintf(err_path, sizeof err_path, "%s", tmp_path("stderr.txt"));
    const int saved_out = capture_begin(1, out), saved_err = capture_begin(2, err_path);
    ck_assert_int_eq(ppl_results_open(NULL), 0);
    ppl_results_begin_case("nothing");
    ppl_results_start("check", "pass");
    ppl_results_str("message", "dropped");
    ppl_results_num("got", 1.0);
    ppl_results_num("nan", NAN);
    ppl_results_int("n", 3);
    ppl_results_end();
    capture_end(2, saved_err);
    capture_end(1, saved_out);
    size_t len;
    free(read_bytes(out, &len));
    ck_assert_uint_eq(len, 0);
    free(read_bytes(err_path, &len));
    ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(test_open_failure)
{
    char bad[4096], err_path[4096];
    snprintf(bad, sizeof bad, "%s", tmp_path("no-such-dir/results.json"));
    snprintf(err_path, sizeof err_path, "%s", tmp_path("stderr.txt"));
    const int saved = capture_begin(2, err_path);
    const int rc = ppl_results_open(bad);
    capture_end(2, saved);
    ck_assert_int_eq(rc, -1);
    size_t len;
    char *msg = (char *)read_bytes(err_path, &len);
    ck_assert_msg(strstr(msg, bad) != NULL, "stderr does not name %s: %s", bad, msg);
    free(msg);
}
END_TEST

/* The two line shapes of docs/DESIGN.md, written and read back as exact text. */
START_TEST(test_lines_exact)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);

    ppl_results_begin_case("n=1025 integer");
    ppl_results_start("check", "pass");
    ppl_results_int("n", 1025);
    ppl_results_str("data", "integer");
    ppl_results_int("seed", 42);
    ppl_results_num("got", 1234.0);
    ppl_results_num("expected", 1234.0);
    ppl_results_num("tolerance", 0.0);
    ppl_results_str("message", "sum 1234, expected 1234 (tolerance 0)");
    ppl_results_end();

    ppl_results_begin_case("bench n=67108864");
    ppl_results_start("bench", "fail");
    ppl_results_num("student_ms", 0.17);
    ppl_results_num("speedup", 6.125);
    ppl_results_num("spread", 0.008);
    ppl_results_int("samples", 20);
    ppl_results_str("device", "NVIDIA H100 80GB HBM3");
    ppl_results_str("message", "wrong sum in 1 of 20 runs:\n\"got\" nan");
    ppl_results_end();

    const char *want[] = {
        "{\"case\": \"n=1025 integer\", \"kind\": \"check\", \"status\": \"pass\", \"n\": 1025, \"data\": \"integer\", "
        "\"seed\": 42, \"got\": 1234, \"expected\": 1234, \"tolerance\": 0, "
        "\"message\": \"sum 1234, expected 1234 (tolerance 0)\"}",
        "{\"case\": \"bench n=67108864\", \"kind\": \"bench\", \"status\": \"fail\", \"student_ms\": 0.17000000000000001, "
        "\"speedup\": 6.125, \"spread\": 0.0080000000000000002, \"samples\": 20, \"device\": \"NVIDIA H100 80GB HBM3\", "
        "\"message\": \"wrong sum in 1 of 20 runs:\\n\\\"got\\\" nan\"}",
    };
    assert_lines(path, want, 2); /* read while the file is still open: each line is flushed as it ends */
}
END_TEST

START_TEST(test_non_finite_as_strings)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("odd numbers");
    ppl_results_start("check", "fail");
    ppl_results_num("got", NAN);
    ppl_results_num("up", INFINITY);
    ppl_results_num("down", -INFINITY);
    ppl_results_num("neg_nan", -NAN);
    ppl_results_num("zero", -0.0);
    ppl_results_end();
    const char *want[] = {"{\"case\": \"odd numbers\", \"kind\": \"check\", \"status\": \"fail\", \"got\": \"nan\", "
                          "\"up\": \"inf\", \"down\": \"-inf\", \"neg_nan\": \"nan\", \"zero\": -0}"};
    assert_lines(path, want, 1);
}
END_TEST

/* %.17g keeps every double: each number parses back to the same bits; ints print in full. */
START_TEST(test_numbers_round_trip)
{
    const double values[] = {1.0 / 3.0, 0.1, 1e-300, 6.02214076e23, 4.9e-324, 1.7976931348623157e308, -2.5, 1e21};
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("numbers");
    ppl_results_start("check", "pass");
    for (int k = 0; k < 8; k++)
        ppl_results_num("v", values[k]);
    ppl_results_int("min", LLONG_MIN);
    ppl_results_int("max", LLONG_MAX);
    ppl_results_end();
    size_t len;
    char *text = (char *)read_bytes(path, &len);
    char *p = text;
    for (int k = 0; k < 8; k++) {
        p = strstr(p, "\"v\": ");
        ck_assert_ptr_nonnull(p);
        p += 5;
        const double back = strtod(p, NULL);
        ck_assert_msg(memcmp(&back, &values[k], sizeof back) == 0, "%.17g came back as %.17g", values[k], back);
    }
    ck_assert_ptr_nonnull(strstr(text, "\"min\": -9223372036854775808, \"max\": 9223372036854775807}\n"));
    free(text);
}
END_TEST

/* The file is opened for appending: earlier lines (an earlier lab's, or an earlier run's) stay. */
START_TEST(test_appends)
{
    const char *path = tmp_path("results.json");
    const char *old = "{\"case\": \"earlier\"}\n";
    write_bytes(path, old, strlen(old));
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("later");
    ppl_results_start("device", "no-device");
    ppl_results_str("message", "no CUDA device here");
    ppl_results_end();
    const char *want[] = {"{\"case\": \"earlier\"}",
                          "{\"case\": \"later\", \"kind\": \"device\", \"status\": \"no-device\", "
                          "\"message\": \"no CUDA device here\"}"};
    assert_lines(path, want, 2);
}
END_TEST

/* Case names are escaped like any string, and the current case stays until the next begin_case. */
START_TEST(test_case_names)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("datasets/reduce/\"odd\"\\name\n/input.raw");
    ppl_results_start("check", "error");
    ppl_results_end();
    ppl_results_start("check", "pass");
    ppl_results_end();
    const char *want[] = {
        "{\"case\": \"datasets/reduce/\\\"odd\\\"\\\\name\\n/input.raw\", \"kind\": \"check\", \"status\": \"error\"}",
        "{\"case\": \"datasets/reduce/\\\"odd\\\"\\\\name\\n/input.raw\", \"kind\": \"check\", \"status\": \"pass\"}",
    };
    assert_lines(path, want, 2);
}
END_TEST

/* Names longer than the 255 bytes results.c keeps are cut, not overflowed. */
START_TEST(test_long_case_name)
{
    char name[1000];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case(name);
    ppl_results_start("check", "pass");
    ppl_results_end();
    char want[400];
    snprintf(want, sizeof want, "{\"case\": \"%.255s\", \"kind\": \"check\", \"status\": \"pass\"}", name);
    const char *lines[] = {want};
    assert_lines(path, lines, 1);
}
END_TEST

/* ---- the plan line ---- */

#define PLAN_HEAD "{\"case\": \"plan\", \"kind\": \"plan\", \"cases\": "

/* The line scan_lab writes before a dataset run, then the first case's line. */
START_TEST(test_plan_exact)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_add("n=1025 dataset kogge-stone inclusive");
    ppl_plan_add("n=1025 dataset brent-kung inclusive");
    ppl_plan_add("bench n=67108864");
    ppl_plan_write();
    ppl_results_begin_case("n=1025 dataset kogge-stone inclusive");
    ppl_results_start("check", "pass");
    ppl_results_u64("seed", 42);
    ppl_results_end();
    const char *want[] = {
        PLAN_HEAD "[\"n=1025 dataset kogge-stone inclusive\", \"n=1025 dataset brent-kung inclusive\", "
                  "\"bench n=67108864\"]}",
        "{\"case\": \"n=1025 dataset kogge-stone inclusive\", \"kind\": \"check\", \"status\": \"pass\", "
        "\"seed\": 42}",
    };
    assert_lines(path, want, 2); /* read while the file is open: the plan is flushed as it is written */
}
END_TEST

START_TEST(test_plan_single_and_empty)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_write(); /* nothing added: an empty list, still a line the grader can read */
    ppl_plan_add("only");
    ppl_plan_write();
    ppl_plan_add("");
    ppl_plan_write();
    const char *want[] = {PLAN_HEAD "[]}", PLAN_HEAD "[\"only\"]}", PLAN_HEAD "[\"\"]}"};
    assert_lines(path, want, 3);
}
END_TEST

/* Names are escaped like every other string; unlike case names they are kept whole, however long. */
START_TEST(test_plan_escapes_names)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_add("datasets/scan/\"odd\"\\name\n/input.raw");
    ppl_plan_add("tab\there\x01\x1f caf\xc3\xa9");
    char long_name[1001];
    memset(long_name, 'b', 1000);
    long_name[1000] = '\0';
    ppl_plan_add(long_name);
    ppl_plan_write();
    static char want[2048];
    snprintf(want, sizeof want,
             PLAN_HEAD "[\"datasets/scan/\\\"odd\\\"\\\\name\\n/input.raw\", \"tab\\there\\u0001\\u001f caf\xc3\xa9\", "
                       "\"%s\"]}",
             long_name);
    const char *lines[] = {want};
    assert_lines(path, lines, 1);
}
END_TEST

/* A case planned and begun with its rerun arguments: the plan line gains "reruns" (null for a case without), every
 * line of the case "rerun"; the next ppl_results_begin_case clears it. Arguments are escaped like any string, and
 * a list too long for PPL_RERUN_JSON_MAX is left out rather than cut. */
START_TEST(test_rerun_arguments)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    const char *const first[] = {"--n", "1025", "--data", "integer"};
    const char *const odd[] = {"--n", "2", "--x", "a\"b\\c"};
    char big[PPL_RERUN_JSON_MAX];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *const too_long[] = {"--n", big};
    ppl_plan_add_case("n=1025 integer", 4, first);
    ppl_plan_add("no arguments");
    ppl_plan_add_case("odd", 4, odd);
    ppl_plan_add_case("too long", 2, too_long);
    ppl_plan_write();
    ppl_results_begin_case_args("n=1025 integer", 4, first);
    ppl_results_start("check", "fail");
    ppl_results_end();
    ppl_results_begin_case("later");
    ppl_results_start("check", "pass");
    ppl_results_end();
    const char *want[] = {
        PLAN_HEAD "[\"n=1025 integer\", \"no arguments\", \"odd\", \"too long\"], \"reruns\": "
                  "[[\"--n\", \"1025\", \"--data\", \"integer\"], null, [\"--n\", \"2\", \"--x\", \"a\\\"b\\\\c\"], null]}",
        "{\"case\": \"n=1025 integer\", \"kind\": \"check\", \"status\": \"fail\", "
        "\"rerun\": [\"--n\", \"1025\", \"--data\", \"integer\"]}",
        "{\"case\": \"later\", \"kind\": \"check\", \"status\": \"pass\"}",
    };
    assert_lines(path, want, 3);
}
END_TEST

/* ppl_plan_add copies the name: the caller's buffer may change or go away before the plan is written. */
START_TEST(test_plan_copies_names)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    char name[32];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "n=%d", k + 1);
        ppl_plan_add(name);
    }
    memset(name, 'x', sizeof name - 1);
    ppl_plan_write();
    const char *want[] = {PLAN_HEAD "[\"n=1\", \"n=2\", \"n=3\"]}"};
    assert_lines(path, want, 1);
}
END_TEST

/* Many names (the list grows past its first allocation) come out all, in order. */
START_TEST(test_plan_many_names)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    enum { COUNT = 1000 };
    char name[32];
    for (int k = 0; k < COUNT; k++) {
        snprintf(name, sizeof name, "case %d", k);
        ppl_plan_add(name);
    }
    ppl_plan_write();
    size_t len;
    char *text = (char *)read_bytes(path, &len);
    char *want = malloc(COUNT * 16 + 128);
    ck_assert_ptr_nonnull(want);
    strcpy(want, PLAN_HEAD "[");
    for (int k = 0; k < COUNT; k++)
        sprintf(want + strlen(want), "%s\"case %d\"", k ? ", " : "", k);
    strcat(want, "]}\n");
    ck_assert_str_eq(text, want);
    free(want);
    free(text);
}
END_TEST

/* Writing a plan empties it: a second plan holds only what was added after the first was written. */
START_TEST(test_plan_reset_after_write)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_add("a");
    ppl_plan_add("b");
    ppl_plan_write();
    ppl_plan_write();
    ppl_plan_add("c");
    ppl_plan_write();
    const char *want[] = {PLAN_HEAD "[\"a\", \"b\"]}", PLAN_HEAD "[]}", PLAN_HEAD "[\"c\"]}"};
    assert_lines(path, want, 3);
}
END_TEST

/* With no result file the plan is written nowhere, and still emptied: a plan after opening a file starts clean. */
START_TEST(test_plan_without_file)
{
    const char *path = tmp_path("results.json");
    ppl_plan_add("lost 1");
    ppl_plan_add("lost 2");
    ppl_plan_write();
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_add("kept");
    ppl_plan_write();
    const char *want[] = {PLAN_HEAD "[\"kept\"]}"};
    assert_lines(path, want, 1);
}
END_TEST

/* Names added before the file is opened stay in the plan: the file only matters when the plan is written. */
START_TEST(test_plan_added_before_open)
{
    const char *path = tmp_path("results.json");
    ppl_plan_add("early");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_plan_add("late");
    ppl_plan_write();
    const char *want[] = {PLAN_HEAD "[\"early\", \"late\"]}"};
    assert_lines(path, want, 1);
}
END_TEST

/* The plan does not touch the current case. */
START_TEST(test_plan_keeps_current_case)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("running");
    ppl_plan_add("next");
    ppl_plan_write();
    ppl_results_start("check", "pass");
    ppl_results_end();
    const char *want[] = {PLAN_HEAD "[\"next\"]}",
                          "{\"case\": \"running\", \"kind\": \"check\", \"status\": \"pass\"}"};
    assert_lines(path, want, 2);
}
END_TEST

/* ---- ppl_results_u64 ---- */

/* Unsigned 64-bit values print in full, including the seeds above LLONG_MAX that ppl_results_int cannot hold. */
START_TEST(test_u64_values)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("seeds");
    ppl_results_start("check", "pass");
    ppl_results_u64("zero", 0);
    ppl_results_u64("small", 42);
    ppl_results_u64("past_int", 9223372036854775808ull);
    ppl_results_u64("max", 18446744073709551615ull);
    ppl_results_u64("clock_seed", 0xDEADBEEFCAFEF00Dull);
    ppl_results_end();
    const char *want[] = {"{\"case\": \"seeds\", \"kind\": \"check\", \"status\": \"pass\", \"zero\": 0, "
                          "\"small\": 42, \"past_int\": 9223372036854775808, \"max\": 18446744073709551615, "
                          "\"clock_seed\": 16045690984503111693}"};
    assert_lines(path, want, 1);
}
END_TEST

/* ---- ppl_results_close ---- */

/* The number of open file descriptors of this process. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the one opendir holds */
}

/* Close writes out what was written, releases the file, and later lines go nowhere until the next open. */
START_TEST(test_close)
{
    const char *path = tmp_path("results.json");
    const int fds = open_fds();
    ck_assert_int_eq(ppl_results_open(path), 0);
    ck_assert_int_eq(open_fds(), fds + 1);
    ppl_results_begin_case("before");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    ck_assert_int_eq(open_fds(), fds);

    ppl_results_begin_case("after close");
    ppl_results_start("check", "fail");
    ppl_results_u64("seed", 1);
    ppl_results_end();
    ppl_plan_add("after close");
    ppl_plan_write();
    const char *want[] = {"{\"case\": \"before\", \"kind\": \"check\", \"status\": \"pass\"}"};
    assert_lines(path, want, 1);
}
END_TEST

/* Closing twice, or with nothing open, is harmless; reopening appends to what is there. */
START_TEST(test_close_twice_and_reopen)
{
    const char *path = tmp_path("results.json");
    ppl_results_close();
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("first");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    ppl_results_close();
    ck_assert_int_eq(ppl_results_open(path), 0);
    ppl_results_begin_case("second");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    const char *want[] = {"{\"case\": \"first\", \"kind\": \"check\", \"status\": \"pass\"}",
                          "{\"case\": \"second\", \"kind\": \"check\", \"status\": \"pass\"}"};
    assert_lines(path, want, 2);
}
END_TEST

/* Opening another file closes the first: no descriptor leaks, and lines go to the new file only. */
START_TEST(test_open_switches_file)
{
    char first[4096];
    snprintf(first, sizeof first, "%s", tmp_path("first.json"));
    const char *second = tmp_path("second.json");
    const int fds = open_fds();
    ck_assert_int_eq(ppl_results_open(first), 0);
    ppl_results_begin_case("one");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ck_assert_int_eq(ppl_results_open(second), 0);
    ck_assert_int_eq(open_fds(), fds + 1);
    ppl_results_begin_case("two");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    ck_assert_int_eq(open_fds(), fds);
    const char *want_first[] = {"{\"case\": \"one\", \"kind\": \"check\", \"status\": \"pass\"}"};
    const char *want_second[] = {"{\"case\": \"two\", \"kind\": \"check\", \"status\": \"pass\"}"};
    assert_lines(first, want_first, 1);
    assert_lines(second, want_second, 1);
}
END_TEST

/* results.h: "NULL: no result file". Opening NULL after a file keeps writing to the earlier file. */
START_TEST(bug_open_null_keeps_file)
{
    const char *path = tmp_path("results.json");
    ck_assert_int_eq(ppl_results_open(path), 0);
    ck_assert_int_eq(ppl_results_open(NULL), 0);
    ppl_results_start("check", "pass");
    ppl_results_end();
    size_t len;
    free(read_bytes(path, &len));
    ck_assert_msg(len == 0, "a line went to the file opened before ppl_results_open(NULL)");
}
END_TEST

/* ---- fatal errors and descriptors ---- */

static char sunk_message[256];
static int sunk_status;

static void sink(const char *message, int status)
{
    snprintf(sunk_message, sizeof sunk_message, "%s", message);
    sunk_status = status;
    ppl_results_set_fatal_sink(NULL);
    ppl_results_open(tmp_path("sink.jsonl"));
    ppl_results_fatal("second", 2); /* without the sink, the line goes to the file: exit status 2 */
}

START_TEST(test_fatal_goes_to_the_sink)
{
    ppl_results_set_fatal_sink(sink);
    ppl_results_fatal("first", 3);
}
END_TEST

START_TEST(test_fatal_writes_an_error_line)
{
    ck_assert_int_eq(ppl_results_open(tmp_path("fatal.jsonl")), 0);
    ppl_results_begin_case("bench n=1024");
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        ppl_results_fatal("not enough device memory for this size", 3);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    size_t len;
    char *text = (char *)read_bytes(tmp_path("fatal.jsonl"), &len);
    ck_assert_str_eq(text, "{\"case\": \"bench n=1024\", \"kind\": \"error\", \"status\": \"error\", \"message\": "
                           "\"not enough device memory for this size\"}\n");
    free(text);
}
END_TEST

START_TEST(test_results_to_a_descriptor)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(ppl_results_open_fd(fds[1]), 0);
    ppl_results_begin_case("n=1 uniform");
    ppl_results_start("check", "pass");
    ppl_results_end();
    ppl_results_close();
    char text[128] = "";
    ck_assert_int_gt(read(fds[0], text, sizeof text - 1), 0);
    ck_assert_str_eq(text, "{\"case\": \"n=1 uniform\", \"kind\": \"check\", \"status\": \"pass\"}\n");
    ck_assert_int_eq(ppl_results_open_fd(1000), -1);
}
END_TEST

Suite *results_suite(void)
{
    Suite *s = suite_create("results");
    TCase *tc;

    /* first, so that it also holds under CK_FORK=no, before any test opens a file */
    tc = tcase_create("no_file");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_no_file_is_noop);
    suite_add_tcase(s, tc);

    tc = tcase_create("json_string");
    tcase_add_test(tc, test_json_plain);
    tcase_add_test(tc, test_json_escapes);
    tcase_add_test(tc, test_json_every_byte);
    suite_add_tcase(s, tc);

    tc = tcase_create("lines");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_open_failure);
    tcase_add_test(tc, test_lines_exact);
    tcase_add_test(tc, test_non_finite_as_strings);
    tcase_add_test(tc, test_numbers_round_trip);
    tcase_add_test(tc, test_appends);
    tcase_add_test(tc, test_case_names);
    tcase_add_test(tc, test_long_case_name);
    suite_add_tcase(s, tc);

    tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_plan_exact);
    tcase_add_test(tc, test_plan_single_and_empty);
    tcase_add_test(tc, test_plan_escapes_names);
    tcase_add_test(tc, test_plan_copies_names);
    tcase_add_test(tc, test_rerun_arguments);
    tcase_add_test(tc, test_plan_many_names);
    tcase_add_test(tc, test_plan_reset_after_write);
    tcase_add_test(tc, test_plan_without_file);
    tcase_add_test(tc, test_plan_added_before_open);
    tcase_add_test(tc, test_plan_keeps_current_case);
    suite_add_tcase(s, tc);

    tc = tcase_create("u64_and_close");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, test_u64_values);
    tcase_add_test(tc, test_close);
    tcase_add_test(tc, test_close_twice_and_reopen);
    tcase_add_test(tc, test_open_switches_file);
    suite_add_tcase(s, tc);

    tc = tcase_create("known_bugs");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_test(tc, bug_open_null_keeps_file);
    suite_add_tcase(s, tc);

    tc = tcase_create("fatal");
    tcase_add_checked_fixture(tc, tmp_setup_fixture, tmp_teardown_fixture);
    tcase_add_exit_test(tc, test_fatal_goes_to_the_sink, 2);
    tcase_add_test(tc, test_fatal_writes_an_error_line);
    tcase_add_test(tc, test_results_to_a_descriptor);
    suite_add_tcase(s, tc);
    return s;
}
