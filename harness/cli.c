/* cli.c - command-line pieces shared by the harness programs (see cli.h). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int ppl_parse_sizes(const char *text, size_t *sizes, int max)
{
    int count = 0;
    const char *p = text;
    while (*p) {
        if (count == max)
            return -1;
        char *end;
        double value;
        if (p[0] == '2' && p[1] == '^') {
            long k = strtol(p + 2, &end, 10);
            if (end == p + 2 || k < 0 || k > 40)
                return -1;
            value = ldexp(1.0, (int)k);
            if (*end == '+' || *end == '-') {
                char *e2;
                long d = strtol(end + 1, &e2, 10);
                if (e2 == end + 1)
                    return -1;
                value += *end == '+' ? (double)d : -(double)d;
                end = e2;
            }
        } else {
            long long v = strtoll(p, &end, 10);
            if (end == p)
                return -1;
            value = (double)v;
        }
        if (value < 1 || (*end != ',' && *end != '\0'))
            return -1;
        sizes[count++] = (size_t)value;
        p = *end == ',' ? end + 1 : end;
    }
    return count > 0 ? count : -1;
}

uint64_t ppl_default_seed(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) ^ ((uint64_t)getpid() << 40);
}
