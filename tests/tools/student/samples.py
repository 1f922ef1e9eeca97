"""Recorded-by-hand samples of what `ncu --csv --metrics ...` prints (the details page: one row per kernel launch and
metric), for tests/tools/student/test_nsight.py."""

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def row(launch, kernel, metric, unit, value, grid="(16384, 1, 1)", block="(1024, 1, 1)"):
    return (f'"{launch}","4242","reduce_lab","127.0.0.1","{kernel}","1","7","{block}","{grid}","0","9.0",'
            f'"Command line profiler metrics","{metric}","{unit}","{value}"')


K = "reduce_kernel(const float *, float *, unsigned long)"

# Three launches of one reduce() call (16384 blocks, then 16, then 1), printed with --print-units base, between the
# profiler's own lines and nothing of the program's (it ran with --quiet).
LAB02_ROWS = [
    row(0, K, "dram__bytes_read.sum", "byte", "67,108,864"),
    row(0, K, "dram__bytes_read.sum.per_second", "byte/second", "1,342,177,280,000"),
    row(0, K, "gpu__time_duration.sum", "nsecond", "50,000"),
    row(0, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "7,000,000"),
    row(0, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", "3,500,000"),
    row(0, K, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", "9,000,000"),
    row(0, K, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request", "524,288"),
    row(0, K, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "2,097,152"),
    row(0, K, "smsp__inst_executed.sum", "inst", "9,000,000"),
    row(0, K, "smsp__inst_executed_op_shared_ld.sum", "inst", "3,000,000"),
    row(0, K, "smsp__sass_average_branch_targets_threads_uniform.pct", "%", "90"),
    row(0, K, "smsp__sass_branch_targets.sum", "", "900,000"),
    row(0, K, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", "30"),
    row(1, K, "dram__bytes_read.sum", "byte", "65,536", grid="(16, 1, 1)"),
    row(1, K, "dram__bytes_read.sum.per_second", "byte/second", "21,845,333,333.33", grid="(16, 1, 1)"),
    row(1, K, "gpu__time_duration.sum", "nsecond", "3,000", grid="(16, 1, 1)"),
    row(1, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "7,000", grid="(16, 1, 1)"),
    row(1, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", "0", grid="(16, 1, 1)"),
    row(1, K, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", "9,000", grid="(16, 1, 1)"),
    row(1, K, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request", "512", grid="(16, 1, 1)"),
    row(1, K, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "2,048", grid="(16, 1, 1)"),
    row(1, K, "smsp__inst_executed.sum", "inst", "1,000,000", grid="(16, 1, 1)"),
    row(1, K, "smsp__inst_executed_op_shared_ld.sum", "inst", "3,000", grid="(16, 1, 1)"),
    row(1, K, "smsp__sass_average_branch_targets_threads_uniform.pct", "%", "50", grid="(16, 1, 1)"),
    row(1, K, "smsp__sass_branch_targets.sum", "", "100,000", grid="(16, 1, 1)"),
    row(1, K, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", "20", grid="(16, 1, 1)"),
    row(2, K, "dram__bytes_read.sum", "byte", "0", grid="(1, 1, 1)"),
    row(2, K, "dram__bytes_read.sum.per_second", "byte/second", "0", grid="(1, 1, 1)"),
    row(2, K, "gpu__time_duration.sum", "nsecond", "2,000", grid="(1, 1, 1)"),
    row(2, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", "0", grid="(1, 1, 1)"),
    row(2, K, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", "0", grid="(1, 1, 1)"),
    row(2, K, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "", "0", grid="(1, 1, 1)"),
    row(2, K, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request", "0", grid="(1, 1, 1)"),
    row(2, K, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", "0", grid="(1, 1, 1)"),
    row(2, K, "smsp__inst_executed.sum", "inst", "1,000,000", grid="(1, 1, 1)"),
    row(2, K, "smsp__inst_executed_op_shared_ld.sum", "inst", "0", grid="(1, 1, 1)"),
    row(2, K, "smsp__sass_average_branch_targets_threads_uniform.pct", "%", "n/a", grid="(1, 1, 1)"),
    row(2, K, "smsp__sass_branch_targets.sum", "", "0", grid="(1, 1, 1)"),
    row(2, K, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", "10", grid="(1, 1, 1)"),
]
LAB02_CSV = "\n".join([
    "==PROF== Connected to process 4242 (/kit/build/profile/reference/02-shared-strided/reduce_lab)",
    '==PROF== Profiling "reduce_kernel": 0%....50%....100% - 3 passes',
    '==PROF== Profiling "reduce_kernel": 0%....50%....100% - 3 passes',
    '==PROF== Profiling "reduce_kernel": 0%....50%....100% - 3 passes',
    "==PROF== Disconnected from process 4242",
    HEADER, *LAB02_ROWS]) + "\n"

# One launch of a kernel, from an ncu that scaled its units (no --print-units base): usecond, Mbyte, Tbyte/second,
# Ksector. Among the launches a CUB kernel the harness's compaction runs, which is not the lab's.
C = "scatter_kernel(const int *, int *, unsigned long, int, const int *, const int *, unsigned long *)"
CUB = ("void cub::CUB_300000_SM_900::DeviceScanKernel<cub::DeviceScanPolicy<int, int>::Policy900, const int *, int *, "
       "cub::ScanTileState<int, true>, cuda::std::plus<void>, cub::NullType, int, int>(const int *, int *, ...)")
SCALED_ROWS = [
    row(0, C, "gpu__time_duration.sum", "usecond", "55.00", grid="(8192, 1, 1)", block="(256, 1, 1)"),
    row(0, C, "dram__bytes_read.sum", "Mbyte", "67.11", grid="(8192, 1, 1)", block="(256, 1, 1)"),
    row(0, C, "dram__bytes_read.sum.per_second", "Tbyte/second", "1.22", grid="(8192, 1, 1)", block="(256, 1, 1)"),
    row(0, C, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "Ksector", "2,097.15", grid="(8192, 1, 1)",
        block="(256, 1, 1)"),
    row(0, C, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "Krequest", "524.29", grid="(8192, 1, 1)",
        block="(256, 1, 1)"),
    row(0, C, "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "", "32", grid="(8192, 1, 1)",
        block="(256, 1, 1)"),
    row(1, CUB, "gpu__time_duration.sum", "usecond", "4.00", grid="(4, 1, 1)", block="(128, 1, 1)"),
]
SCALED_CSV = "\n".join(["some output of the program", HEADER, *SCALED_ROWS]) + "\n"

# What `ncu --query-metrics` lists (its beginning), without smsp__inst_executed.
QUERY_METRICS = """Device NVIDIA H100 80GB HBM3 (GH100)
------------------------------------------------------------------------------------------------------
Metric Name                                                  Metric Description
dram__bytes_read                                             # of bytes read from DRAM
gpu__time_duration                                           total duration in nanoseconds
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld         # of bank conflicts, shared loads
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st         # of bank conflicts, shared stores
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld             # of shared memory data wavefronts for loads
l1tex__t_requests_pipe_lsu_mem_global_op_ld                  # of requests sent to T-Stage for global loads
l1tex__t_sectors_pipe_lsu_mem_global_op_ld                   # of sectors requested for global loads
smsp__inst_executed_op_shared_ld                             # of warp instructions executed: shared loads
smsp__sass_average_branch_targets_threads_uniform            branch targets all active threads took
smsp__thread_inst_executed_pred_on_per_inst_executed                 average # of active threads per instruction executed
""" + "".join(f"sm__filler_metric_{k:02d}                                     filler\n" for k in range(30))
