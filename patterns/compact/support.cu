/* patterns/compact/support.cu - the size helper declared in compact.h, for the runner and the device program alike (the
 * runner's kit_exclusive_scan is patterns/compact/runner.cpp's). */
#include "compact.h"

size_t compact_work_bytes(size_t n) { return n + 65536; }
