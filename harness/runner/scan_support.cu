/* scan_support.cu - the harness helpers declared in scan.h. */
#include "scan.h"

size_t scan_work_bytes(size_t n) { return n / 2 + 65536; }
