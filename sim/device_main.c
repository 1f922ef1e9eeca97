/*
 * device_main.c - ppl_sim_device, the simulator as a device process on its own, with no lab behind it: it serves
 * the CUDA calls of a program linked with the client runtime (sim/device_client.c) until that program closes the
 * socket, with harness/device/runner_link.c on the simulator's runtime (backend_sim.c). The runtime's own tests
 * run through it (tests/sim/runtime, tests/sim/test_device.py). A lab's programs use the device program of their
 * pattern instead (harness/device/, built for the simulator by mk/sim.mk), which is this and the lab's harness.
 *
 *     ppl_sim_device --channel FD [--program-fd FD]
 *
 * --program-fd: the client program's file; a fatbinary it registers must lie in it, byte for byte. A request no
 * client of the kit's sends ends the device (exit status 2, saying why on stderr).
 */
#include "../harness/device/runner_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

/* runner_link.c's fatal errors outside the standalone ones (serve.h's in a lab's device program). */
void ppl_device_fatal(const char *message, int status)
{
    fflush(stdout);
    fprintf(stderr, "ppl-sim: device: %s\n", message);
    (void)status;
    exit(EXIT_USAGE); /* on its own, every end but the socket's is a request it refused */
}

static int descriptor(const char *text, const char *option)
{
    char *end;
    const long fd = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || fd < 0 || fd > 65535) {
        fprintf(stderr, "ppl-sim: device: %s %s: expected a descriptor number\n", option, text);
        exit(EXIT_USAGE);
    }
    return (int)fd;
}

int main(int argc, char **argv)
{
    int channel = -1, program_fd = -1;
    for (int k = 1; k < argc; k += 2) {
        const char *opt = argv[k], *arg = k + 1 < argc ? argv[k + 1] : NULL;
        if (arg && strcmp(opt, "--channel") == 0)
            channel = descriptor(arg, opt);
        else if (arg && strcmp(opt, "--program-fd") == 0)
            program_fd = descriptor(arg, opt);
        else {
            fprintf(stderr, "usage: ppl_sim_device --channel FD [--program-fd FD] (sim/device_main.c)\n");
            return EXIT_USAGE;
        }
    }
    if (channel < 0) {
        fprintf(stderr, "ppl-sim: device: no --channel (sim/device_main.c says how it is started)\n");
        return EXIT_USAGE;
    }
    ppl_runner_open(channel, program_fd);
    ppl_runner_serve_all();
    return 0;
}
