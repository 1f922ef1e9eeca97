/*
 * ATTACK 21-build-include-solution: its class and expected verdict are in tests/attacks/attacks.toml.
 * Lab 03-sequential, on nothing of its own: the whole file is one #include.
 *
 * Tries: submit the instructors' reference solution: include it from the kit's solutions/ folder, which the
 *   compiler finds through the harness's include path (-I KIT/harness, so "../solutions/..." is KIT/solutions/...).
 *
 * How: `#include "../solutions/03-sequential/reduce.cu"`.
 *
 * Safety: it writes nothing and signals no process.
 */
#include "../solutions/03-sequential/reduce.cu"
