/* cli.c - command-line pieces shared by the harness programs (see cli.h). */
#include "cli.h"

#include <stdint.h>
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
