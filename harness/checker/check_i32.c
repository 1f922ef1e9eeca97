/* check_i32.c - the checker's side of checking int32 outputs (see check_i32.h): comparisons with the first
 * difference named. */
#include "check_i32.h"
#include "checksum.h"

#include <stdio.h>
#include <string.h>

int ppl_compare_i32(const int *got, const int *want, size_t n, char *message, size_t message_len)
{
    size_t first = n, wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (first == n)
                first = i;
            wrong++;
        }
    if (wrong == 0)
        return 1;
    snprintf(message, message_len, "element %zu: got %d, expected %d%s (%zu of %zu elements wrong)", first,
             got[first], want[first], got[first] == PPL_POISON_I32 ? " (never written)" : "", wrong, n);
    return 0;
}

int ppl_check_guard_i32(const int *got, size_t from, size_t end, char *message, size_t message_len)
{
    for (size_t i = from; i < end + PPL_GUARD_ELEMS; i++)
        if (got[i] != PPL_POISON_I32) {
            snprintf(message, message_len,
                     "wrote past the end of the output: element %zu was written (the output has %zu elements)", i,
                     from);
            return 0;
        }
    return 1;
}

int ppl_check_input_unchanged_i32(const int *now, const int *was, size_t n, char *message, size_t message_len)
{
    for (size_t i = 0; i < n; i++)
        if (now[i] != was[i]) {
            snprintf(message, message_len, "the input was modified: element %zu is now %d, was %d", i, now[i], was[i]);
            return 0;
        }
    return 1;
}

int ppl_check_input_sum(uint64_t got, const void *was, size_t n, uint64_t key, char *message, size_t message_len)
{
    if (got == ppl_checksum_u32(was, n, 0, key))
        return 1;
    snprintf(message, message_len,
             "the input was modified: its checksum after the call differs (at n = %zu only a checksum comes back, so "
             "the element is not named: a smaller n shows it); the lab's code must leave d_in as it found it", n);
    return 0;
}
