/*
 * ATTACK 22-build-include-solution-deep: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 04-unrolled, on nothing of its own: it includes whichever path to the solution exists.
 *
 * Tries: submit the instructors' reference solution whatever the include path and the build folder are: try
 *   "../solutions/..." to "../../../../../../../solutions/..." (relative to the build folder, which the grader puts
 *   inside the kit, or to an include folder such as harness/include) until one exists.
 *
 * How: a chain of __has_include tests, the first path that exists included; #error when none does.
 *
 * Safety: it writes nothing and signals no process.
 */
#if __has_include("../solutions/04-unrolled/reduce.cu")
#include "../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../solutions/04-unrolled/reduce.cu")
#include "../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../solutions/04-unrolled/reduce.cu")
#include "../../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../../solutions/04-unrolled/reduce.cu")
#include "../../../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../../../solutions/04-unrolled/reduce.cu")
#include "../../../../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../../../../solutions/04-unrolled/reduce.cu")
#include "../../../../../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../../../../../solutions/04-unrolled/reduce.cu")
#include "../../../../../../../solutions/04-unrolled/reduce.cu"
#elif __has_include("../../../../../../../../solutions/04-unrolled/reduce.cu")
#include "../../../../../../../../solutions/04-unrolled/reduce.cu"
#else
#error "no copy of the solution found: the build cannot see the kit's solutions/"
#endif
