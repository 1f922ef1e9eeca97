/*
 * test_main.c - runs the checker's unit tests: one Check suite per module of harness/checker/ plus the committed
 * datasets.
 *
 *   test_harness                  every suite
 *   test_harness SUITE [TCASE]    one suite (dataset, rng, reference, stats, results, cli, link, checksum,
 *                                 check_i32, committed_datasets)
 *
 * The link suite starts runners in the sandbox, which under bubblewrap runs this program again as its trusted stage
 * (sandbox.h): main answers that first, as the checker's does.
 *
 * Environment: PPL_DATASETS_ROOT overrides the datasets folder compiled in (the kit's datasets/, which holds
 * reduce/, scan/ and compact/); Check's own CK_FORK=no (for a debugger), CK_VERBOSITY=verbose, CK_DEFAULT_TIMEOUT,
 * CK_TAP_LOG_FILE_NAME. Exit status 0 when every check passed, 1 otherwise.
 */
#include "test_util.h"

#include "sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PPL_DATASETS_ROOT
#define PPL_DATASETS_ROOT "datasets"
#endif

#define SUITES "dataset, rng, reference, stats, results, cli, link, checksum, check_i32, committed_datasets"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], PPL_SANDBOX_STAGE_FLAG) == 0)
        return ppl_sandbox_stage_main(argc, argv);
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
        srunner_add_suite(sr, link_suite());
        srunner_add_suite(sr, checksum_suite());
        srunner_add_suite(sr, check_i32_suite());
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
