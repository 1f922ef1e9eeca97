/*
 * test_main.c - runs the harness unit tests: one Check suite per module of harness/ plus the committed datasets.
 *
 *   test_harness                  every suite
 *   test_harness SUITE [TCASE]    one suite (dataset, rng, reference, stats, results, committed_datasets)
 *
 * Environment: PPL_DATASETS_DIR overrides the datasets folder compiled in (the kit's datasets/reduce);
 * Check's own CK_FORK=no (for a debugger), CK_VERBOSITY=verbose, CK_DEFAULT_TIMEOUT, CK_TAP_LOG_FILE_NAME.
 * Exit status 0 when every check passed, 1 otherwise.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PPL_DATASETS_DIR
#define PPL_DATASETS_DIR "datasets/reduce"
#endif

int main(int argc, char **argv)
{
    const char *dir = getenv("PPL_DATASETS_DIR");
    if (!dir || !*dir)
        dir = PPL_DATASETS_DIR;

    SRunner *sr = srunner_create(dataset_suite());
    srunner_add_suite(sr, rng_suite());
    srunner_add_suite(sr, reference_suite());
    srunner_add_suite(sr, stats_suite());
    srunner_add_suite(sr, results_suite());
    srunner_add_suite(sr, committed_datasets_suite(dir));

    srunner_run(sr, argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL, CK_ENV);
    const int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
    srunner_free(sr);
    if (ran == 0) {
        fprintf(stderr, "no test matched: suites are dataset, rng, reference, stats, results, committed_datasets\n");
        return EXIT_FAILURE;
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
