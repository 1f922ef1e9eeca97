"""The simulator's device process (sim/device_main.c, harness/common/device_protocol.h): the runner's CUDA calls go to it over a
socket, and it alone holds the report channel, so the student's host code cannot touch what the simulator reports.

- the runtime's Check tests (tests/sim/runtime/test_runtime.cu), linked with the client library instead of the
  simulator, pass through a device: the client forwards every call as the runtime would answer it;
- a hostile runner: requests no kit's runner sends (a wrong magic, an unknown call, more data than a call may
  carry, a name without its end, a fatbinary that is not in the runner's program or whose header lies about its
  length, a cut-short request) end the device with exit status 2 and a message, never a crash; handles and pointers
  it never gave out are refused as CUDA refuses them, and the device goes on;
- through the checker (--sim-device): the report channel is the device's, so the runner holds no descriptor of it.

Needs nvcc and Check (skipped, saying so, without them). About a minute on 2 cores.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import unittest

from grader.patterns import KIT

HAVE_NVCC = shutil.which(os.environ.get("NVCC", "nvcc")) is not None
SIM_BUILD = KIT / "build" / "sim" / "lib"
DEVICE = SIM_BUILD / "ppl_sim_device"
CLIENT_TEST = KIT / "build" / "tests" / "sim-runtime" / "test_runtime_client"

MAGIC = 0x44565050
REQUEST = struct.Struct("<II6QQ")  # magic, call, a[6], bulk (device_protocol.h's ppl_dev_request)
REPLY = struct.Struct("<Ii2QQ")  # magic, status, r[2], bulk


def calls() -> dict:
    """device_protocol.h's ppl_dev_call: name -> number (the enum counts from PPL_DEV_HELLO = 1)."""
    text = (KIT / "harness" / "common" / "device_protocol.h").read_text()
    body = text[text.index("typedef enum {"):text.index("} ppl_dev_call;")]
    names = re.findall(r"^\s*PPL_DEV_([A-Z_]+)", body, re.M)
    return {name: number for number, name in enumerate(names, start=1)}


CALL = calls()
VERSION = int(re.search(r"#define PPL_DEV_VERSION (\d+)",
                        (KIT / "harness" / "common" / "device_protocol.h").read_text()).group(1))
HELLO, FATBIN, FUNCTION, MANAGED, PARAMS, LAUNCH, MALLOC, FREE, STREAM_DESTROY, EVENT_RECORD = (
    CALL[n] for n in ("HELLO", "FATBIN", "FUNCTION", "MANAGED", "PARAMS", "LAUNCH", "MALLOC", "FREE",
                      "STREAM_DESTROY", "EVENT_RECORD"))
CUDA_SUCCESS, CUDA_INVALID_VALUE, CUDA_INVALID_DEVICE_FUNCTION, CUDA_INVALID_HANDLE = 0, 1, 98, 400
FATBIN_MAGIC = 0xBA55ED50


def build(*targets) -> None:
    for folder, target in targets:
        proc = subprocess.run(["make", "-s", "-C", str(KIT / folder), target], capture_output=True, text=True,
                              timeout=1800)
        if proc.returncode != 0:
            raise AssertionError(f"make -C {folder} {target}:\n{proc.stdout}{proc.stderr}")


class Device:
    """A device process on one end of a socket pair, the test holding the other end as the runner would."""

    def __init__(self, program: bytes | None = None):
        self.sock, theirs = socket.socketpair()
        fds = [theirs.fileno()]
        args = [str(DEVICE), "--channel", str(theirs.fileno())]
        self.program_file = None
        if program is not None:
            self.program_file = tempfile.TemporaryFile()
            self.program_file.write(program)
            self.program_file.seek(0)
            fds.append(self.program_file.fileno())
            args += ["--program-fd", str(self.program_file.fileno())]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPL_SIM_")}
        self.proc = subprocess.Popen(args, pass_fds=fds, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        theirs.close()

    def send(self, call: int, a=(), bulk: bytes = b"", bulk_len: int | None = None, magic: int = MAGIC) -> None:
        args = list(a) + [0] * (6 - len(a))
        self.sock.sendall(REQUEST.pack(magic, call, *args, len(bulk) if bulk_len is None else bulk_len) + bulk)

    def reply(self) -> tuple:
        head = self._read(REPLY.size)
        magic, status, r0, r1, bulk = REPLY.unpack(head)
        assert magic == MAGIC
        return status, r0, r1, self._read(bulk)

    def call(self, call: int, a=(), bulk: bytes = b"") -> tuple:
        self.send(call, a, bulk)
        return self.reply()

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def end(self, timeout: float = 60) -> tuple:
        """Closes the runner's end; (exit status, stderr)."""
        self.sock.close()
        _, err = self.proc.communicate(timeout=timeout)
        if self.program_file:
            self.program_file.close()
        return self.proc.returncode, err.decode(errors="replace")


def fatbin(body: bytes) -> bytes:
    """A fatbinary container around body (a header that says its length; no entries the device could run)."""
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the simulator's tests")
class HostileRunner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build(("sim", "device"))

    def assertStopped(self, device, words):
        status, err = device.end()
        self.assertEqual(status, 2, err)
        self.assertIn("sent the device a malformed request", err)
        self.assertIn(words, err)

    def test_the_end_of_the_socket_ends_the_device_cleanly(self):
        device = Device()
        self.assertEqual(device.call(HELLO, [VERSION])[0], CUDA_SUCCESS)
        self.assertEqual(device.end(), (0, ""))

    def test_requests_no_runner_of_the_kit_sends_stop_the_device(self):
        cases = [
            ("wrong magic", dict(call=HELLO, a=[1], magic=0x12345678), "not a request of this protocol"),
            ("unknown call", dict(call=9999), "not a request of this protocol"),
            ("another version", dict(call=HELLO, a=[99]), "another version of the protocol"),
            ("data on a call that takes none", dict(call=MALLOC, a=[16], bulk=b"x"), "more data than the call"),
            ("a huge bulk, announced only", dict(call=FATBIN, bulk=b"", bulk_len=1 << 40), "more data than the call"),
            ("a name without its end", dict(call=MANAGED, bulk=b"name"), "a name without its end"),
            ("a name with a NUL inside", dict(call=MANAGED, bulk=b"na\0me\0"), "a name without its end"),
            ("a lying fatbinary header", dict(call=FATBIN, bulk=fatbin(b"x" * 64)[:-8]), "does not match its length"),
            ("not a fatbinary", dict(call=FATBIN, bulk=b"\0" * 64), "does not match its length"),
            ("a handle never given", dict(call=FUNCTION, a=[7, 1], bulk=b"k\0"), "did not give out"),
        ]
        for what, request, words in cases:
            with self.subTest(what):
                device = Device()
                device.send(**request)
                self.assertStopped(device, words)

    def test_a_request_cut_short_stops_the_device(self):
        device = Device()
        device.sock.sendall(REQUEST.pack(MAGIC, MALLOC, 16, 0, 0, 0, 0, 0, 0)[:20])
        self.assertStopped(device, "a request cut short")

    def test_a_fatbinary_not_in_the_runners_program_is_refused(self):
        inside = fatbin(b"\1" * 48)
        device = Device(program=b"ELF..." + inside + b"...")
        self.assertEqual(device.call(FATBIN, bulk=inside)[0], CUDA_SUCCESS)  # the program's own: registered
        device.send(FATBIN, bulk=fatbin(b"\2" * 48))
        self.assertStopped(device, "not the module the grader's checks read")

    def test_pointers_and_handles_it_never_gave_are_refused_and_it_goes_on(self):
        device = Device()
        self.assertEqual(device.call(FREE, [0x1234])[0], CUDA_INVALID_VALUE)
        self.assertEqual(device.call(PARAMS, [0x1234])[0], CUDA_INVALID_DEVICE_FUNCTION)
        self.assertEqual(device.call(LAUNCH, [0x1234, 1 | 1 << 32, 1 | 1 << 32, 1 | 1 << 32])[0],
                         CUDA_INVALID_DEVICE_FUNCTION)
        self.assertEqual(device.call(STREAM_DESTROY, [5])[0], CUDA_INVALID_HANDLE)
        self.assertEqual(device.call(EVENT_RECORD, [3, 0])[0], CUDA_INVALID_HANDLE)
        status, pointer, _, _ = device.call(MALLOC, [256])
        self.assertEqual(status, CUDA_SUCCESS)
        self.assertEqual(device.call(FREE, [pointer])[0], CUDA_SUCCESS)
        self.assertEqual(device.call(FREE, [pointer])[0], CUDA_INVALID_VALUE)  # freed twice
        self.assertEqual(device.end()[0], 0)


# test_runtime.cu's graded_gpu case sets these in its own process; through a device, the device holds them
GRADED_GPU_ENV = {"PPL_SIM_DEVICE_NAME": "NVIDIA Test GPU", "PPL_SIM_DEVICE_MEMORY": "85899345920",
                  "PPL_SIM_DEVICE_L2": "52428800", "PPL_SIM_DEVICE": "132,2048,32,233472",
                  "PPL_SIM_DEVICE_TIMING": "1000000000,7"}


@unittest.skipUnless(HAVE_NVCC, "nvcc not found: install the CUDA toolkit to build the simulator's tests")
class RuntimeTestsThroughTheDevice(unittest.TestCase):
    def test_the_runtime_tests_pass_with_the_client(self):
        build(("tests/sim/runtime", "test-runtime-client"))
        text = (KIT / "tests" / "sim" / "runtime" / "test_runtime.cu").read_text()
        cases = re.findall(r'\{"(\w+)", test_\w+\}', text)
        self.assertGreaterEqual(len(cases), 6)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPL_SIM_")}
        for case in cases:  # a device for each: it holds the errors a test leaves
            with self.subTest(case=case):
                sock, theirs = socket.socketpair()
                device = subprocess.Popen([str(DEVICE), "--channel", str(theirs.fileno())],
                                          pass_fds=[theirs.fileno()], stdout=subprocess.PIPE,
                                          env={**env, **(GRADED_GPU_ENV if case == "graded_gpu" else {})},
                                          stderr=subprocess.PIPE)
                theirs.close()
                test = subprocess.run([str(CLIENT_TEST)], pass_fds=[sock.fileno()], capture_output=True, text=True,
                                      timeout=600, env={**env, "PPL_SIM_DEVICE_FD": str(sock.fileno()),
                                                        "CK_RUN_CASE": case})
                sock.close()
                device.communicate(timeout=60)
                self.assertEqual(test.returncode, 0, test.stdout + test.stderr)
                self.assertIn("100%: Checks: 1, Failures: 0, Errors: 0", test.stdout)

    def test_a_runner_without_its_device_says_how_to_run_it(self):
        build(("tests/sim/runtime", "test-runtime-client"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPL_SIM_")}
        test = subprocess.run([str(CLIENT_TEST)], capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(test.returncode, 2)
        self.assertIn("needs its device process", test.stderr)
        self.assertIn("PPL_SIM_DEVICE_FD is not set", test.stderr)


if __name__ == "__main__":
    unittest.main()
