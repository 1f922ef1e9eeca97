/*
 * test_main.c - runs the harness unit tests: one Check suite per module of harness/ plus the committed datasets.
 *
 *   test_harness                  every suite
 *   test_harness SUITE [TCASE]    one suite (dataset, rng, reference, stats, results, cli, isolate,
 *                                 committed_datasets)
 *
 * Environment: PPL_DATASETS_ROOT overrides the datasets folder compiled in (the kit's datasets/, which holds
 * reduce/, scan/ and compact/); Check's own CK_FORK=no (for a debugger), CK_VERBOSITY=verbose, CK_DEFAULT_TIMEOUT,
 * CK_TAP_LOG_FILE_NAME. Exit status 0 when every check passed, 1 otherwise.
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PPL_DATASETS_ROOT
#define PPL_DATASETS_ROOT "datasets"
#endif

#define SUITES "dataset, rng, reference, stats, results, cli, isolate, committed_datasets"

int main(int argc, char **argv)
{
    const char *root = getenv("PPL_DATASETS_ROOT");
    if (!root || !*root)
        root = PPL_DATASETS_ROOT;
    const char *suite = argc > 1 ? argv[1] : NULL;

    SRunner *sr;
    {
        sr = srunner_create(dataset_suite());
        srunner_add_suite(sr, rng_suite());
        srunner_add_suite(sr, reference_suite());
        srunner_add_suite(sr, stats_suite());
        srunner_add_suite(sr, results_suite());
        srunner_add_suite(sr, cli_suite());
        srunner_add_suite(sr, isolate_suite());
        srunner_add_suite(sr, committed_datasets_suite(root));
    }

    srunner_run(sr, suite, argc > 2 ? argv[2] : NULL, CK_ENV);
    const int failed = srunner_ntests_failed(sr), ran = srunner_ntests_run(sr);
    srunner_free(sr);
    if (ran == 0) {
        fprintf(stderr, "no test matched: suites are " SUITES "\n");
        return EXIT_FAILURE;
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
