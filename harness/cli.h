/* cli.h - command-line pieces shared by the harness programs (host code). */
#ifndef PPL_CLI_H
#define PPL_CLI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parses a comma-separated list of sizes into sizes[0..max): each a whole number >= 1, or 2^K, 2^K+D, 2^K-D
 * (K <= 40). Returns the number parsed, or -1 for an empty list, a bad entry, or more than max entries.
 */
int ppl_parse_sizes(const char *text, size_t *sizes, int max);

/* A seed that differs from run to run (clock and process id), for runs given no --seed. */
uint64_t ppl_default_seed(void);

#ifdef __cplusplus
}
#endif
#endif
