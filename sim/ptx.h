/*
 * ptx.h - the simulator core's internal representation of a PTX module: the parser (ptx_parse.c) turns PTX text
 * into these tables once, and the interpreter (interp.c) executes the pre-decoded instruction array without any
 * string handling. Internal to sim/: the runtime side only sees sim.h.
 *
 * Addresses. Every value a PTX program computes is a 64-bit integer. An address in a state space is:
 *   global, const  the host address itself (device memory is host memory, see sim.h);
 *   shared         a byte offset into the block's shared window (static variables first, then extern/dynamic);
 *   local          a byte offset into the thread's local window (stack depots, then the param frames of .func);
 *   param          (kernel parameters) a byte offset into the launch's parameter buffer.
 * Generic addresses tag shared and local offsets with the window bases below; anything else is global.
 */
#ifndef PPL_SIM_PTX_H
#define PPL_SIM_PTX_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#define PTX_GENERIC_SHARED 0xA000000000000000ull /* generic address of shared offset 0 */
#define PTX_GENERIC_LOCAL 0xB000000000000000ull  /* generic address of local offset 0 (of the running thread) */
#define PTX_GENERIC_PARAM 0xC000000000000000ull  /* generic address of kernel parameter offset 0 */
#define PTX_GENERIC_MASK 0xF000000000000000ull
#define PTX_FUNC_TAG 0xD000000000000000ull /* a device function's address: the tag | its index in funcs */
#define PTX_FUNC_ADDR(i) (PTX_FUNC_TAG | (uint64_t)(i))

/* Value types. Values live in the low bits of a 64-bit register slot, zero-extended. */
typedef enum ptx_type {
    T_NONE = 0,
    T_B8, T_B16, T_B32, T_B64,
    T_U8, T_U16, T_U32, T_U64,
    T_S8, T_S16, T_S32, T_S64,
    T_F16, T_F32, T_F64,
    T_PRED,
    T_BF16,            /* bfloat16 (8-bit exponent, 7-bit fraction) */
    T_F16X2, T_BF16X2, /* two halves packed in 32 bits: element 0 in the low half */
    T_COUNT
} ptx_type;

typedef enum ptx_space {
    SP_NONE = 0, /* generic */
    SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_PARAM, SP_CONST,
    SP_KPARAM /* resolved: a kernel parameter (param space of an .entry) */
} ptx_space;

typedef enum ptx_opcode {
    OP_NOP = 0,
    /* integer and float arithmetic */
    OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_DIV, OP_REM, OP_MIN, OP_MAX, OP_ABS, OP_NEG,
    OP_AND, OP_OR, OP_XOR, OP_NOT, OP_CNOT, OP_SHL, OP_SHR, OP_POPC, OP_CLZ, OP_BREV, OP_BFE, OP_BFI, OP_BFIND,
    OP_PRMT, OP_SAD, OP_MUL24, OP_MAD24, OP_COPYSIGN,
    OP_RCP, OP_SQRT, OP_RSQRT, OP_SIN, OP_COS, OP_LG2, OP_EX2, OP_TANH, OP_TESTP,
    /* comparison, selection, conversion, moves */
    OP_SETP, OP_SET, OP_SELP, OP_SLCT, OP_CVT, OP_CVTA, OP_MOV,
    /* memory */
    OP_LD, OP_ST, OP_ATOM, OP_RED, OP_MEMBAR, OP_PREFETCH,
    /* control */
    OP_BRA, OP_CALL, OP_RET, OP_EXIT, OP_TRAP, OP_BAR, OP_BARWARP, OP_NANOSLEEP,
    /* warp-level */
    OP_SHFL, OP_VOTE, OP_ACTIVEMASK, OP_MATCH, OP_REDUX,
    /* bit manipulation added with the PTX coverage table (sim/README.md) */
    OP_LOP3, OP_SHF, OP_FNS,
    /* extended precision (the carry flag: add.cc, addc, sub.cc, subc, mad.cc, madc) and dot products */
    OP_ADDC, OP_SUBC, OP_MADC, OP_DP4A, OP_DP2A,
    /* an instruction the parser read but the interpreter cannot run: executing it fails with SIM_ERR_UNSUPPORTED,
       naming it and the student's line (so a module with, say, a tensor-core kernel that is never launched loads) */
    OP_UNSUPPORTED,
    OP_COUNT
} ptx_opcode;

/* Modifier values packed into ptx_insn.mod (meaning depends on the opcode). */
enum { CMP_EQ = 1, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_LO, CMP_LS, CMP_HI, CMP_HS,
       CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU, CMP_NUM, CMP_NAN };
enum { BOOL_NONE = 0, BOOL_AND, BOOL_OR, BOOL_XOR };
enum { ATOM_ADD = 1, ATOM_MIN, ATOM_MAX, ATOM_INC, ATOM_DEC, ATOM_CAS, ATOM_EXCH, ATOM_AND, ATOM_OR, ATOM_XOR };
enum { SHFL_UP = 1, SHFL_DOWN, SHFL_BFLY, SHFL_IDX };
enum { VOTE_ALL = 1, VOTE_ANY, VOTE_UNI, VOTE_BALLOT };
enum { MATCH_ANY = 1, MATCH_ALL };
enum { SHF_L = 1, SHF_R };           /* shf's direction (mod); mod2: SHF_WRAP or SHF_CLAMP */
enum { SHF_WRAP = 1, SHF_CLAMP };
enum { PRMT_DEFAULT = 0, PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16 };
enum { FMA_RELU = 1 };               /* fma.relu (halves): negative results become 0 (mod) */
enum { MOD2_CC = 15 };               /* add/sub/mad and addc/subc/madc .cc: writes the carry flag (mod2) */
enum { UNSUP_OPCODE = 1, UNSUP_MODIFIER, UNSUP_TYPE, UNSUP_OPERANDS }; /* OP_UNSUPPORTED's mod: what was not known */
enum { RND_NONE = 0, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNI, RND_RZI, RND_RMI, RND_RPI };
enum { MUL_LO = 0, MUL_HI, MUL_WIDE };
enum { TESTP_FINITE = 1, TESTP_INFINITE, TESTP_NUMBER, TESTP_NOTANUMBER, TESTP_NORMAL, TESTP_SUBNORMAL };

/* ptx_insn.sem: the memory-order qualifier of ld/st/atom/red/fence/membar (none: weak, or membar's sequential
   consistency), and ptx_insn.scope: its .cta/.cluster/.gpu/.sys scope (membar.gl is .gpu). The store buffer of the
   adversarial schedules (sim/sched_mem.c) reads them; bar.red's reduction (ptx_insn.mod): BARRED_*. */
enum { SEM_WEAK = 0, SEM_VOLATILE, SEM_RELAXED, SEM_ACQUIRE, SEM_RELEASE, SEM_ACQ_REL, SEM_SC, SEM_MMIO };
enum { SCOPE_NONE = 0, SCOPE_CTA, SCOPE_CLUSTER, SCOPE_GPU, SCOPE_SYS };
enum { BARRED_NONE = 0, BARRED_POPC, BARRED_AND, BARRED_OR };

/* ptx_insn.flags */
#define IF_SAT 0x01u
#define IF_FTZ 0x02u
#define IF_UNI 0x04u
#define IF_CVTA_TO 0x08u    /* cvta.to.space (generic -> space) rather than cvta.space (space -> generic) */
#define IF_VOLATILE 0x10u   /* .volatile / .relaxed / .acquire / .release: ordering qualifiers on ld/st */
#define IF_SHIFTAMT 0x20u   /* bfind.shiftamt */
#define IF_SPECIAL_DST 0x40u
#define IF_NAN 0x80u        /* min/max.NaN: a NaN operand gives NaN */

typedef enum ptx_opkind {
    OK_NONE = 0,
    OK_REG,     /* register slot `reg` */
    OK_IMM,     /* an immediate: constant pool entry `reg`, value `imm` */
    OK_SPECIAL, /* special register `reg` (SR_*) */
    OK_MEM,     /* [reg + imm] (reg < 0: [imm]); `space` says how the symbol, if any, was resolved */
    OK_VEC,     /* {vregs[0..nvec)} (a slot of -1 is the sink `_`, PTX_VEC_IMM(k) constant pool entry k) */
    OK_LABEL,   /* branch target: instruction index `imm` */
    OK_FUNC,    /* call target: function index `imm` */
    OK_ARGS     /* a call's arguments: `reg` operands from entry `imm` of the module's args table */
} ptx_opkind;

enum { SR_TID_X = 1, SR_TID_Y, SR_TID_Z, SR_NTID_X, SR_NTID_Y, SR_NTID_Z, SR_CTAID_X, SR_CTAID_Y, SR_CTAID_Z,
       SR_NCTAID_X, SR_NCTAID_Y, SR_NCTAID_Z, SR_LANEID, SR_WARPID, SR_NWARPID, SR_SMID, SR_NSMID, SR_CLOCK,
       SR_CLOCK64, SR_GLOBALTIMER, SR_LANEMASK_EQ, SR_LANEMASK_LE, SR_LANEMASK_LT, SR_LANEMASK_GE, SR_LANEMASK_GT,
       SR_DYN_SMEM, SR_TOTAL_SMEM, SR_GRIDID };

#define PTX_VEC_IMM(k) (-2 - (int32_t)(k)) /* a vector element that is an immediate: constant pool entry k */

typedef struct ptx_operand {
    uint8_t kind;  /* ptx_opkind */
    uint8_t neg;   /* !%p (predicate operands) */
    uint8_t space; /* OK_MEM: ptx_space of a symbolic base, SP_NONE if none */
    uint8_t nvec;
    int32_t reg;   /* register slot, constant pool index, special register, or memory base register (-1: none) */
    int64_t imm;   /* immediate value, memory offset (symbol address folded in), label or function index */
    int32_t vregs[4];
} ptx_operand;

#define PTX_MAX_OPS 6

typedef struct ptx_insn {
    uint8_t op;    /* ptx_opcode */
    uint8_t type;  /* main ptx_type (destination type for cvt) */
    uint8_t type2; /* cvt: source type; setp/set: compared type is `type`, set's dest type here */
    uint8_t space; /* ld/st/atom/red/cvta: ptx_space */
    uint8_t vec;   /* 1, 2 or 4 */
    uint8_t mod;   /* CMP_*, ATOM_*, SHFL_*, VOTE_*, MUL_*, TESTP_* */
    uint8_t mod2;  /* setp: BOOL_*; cvt/float ops: RND_* */
    uint8_t flags; /* IF_* */
    uint8_t nops;
    uint8_t guard_neg;
    uint8_t sem;        /* SEM_* */
    uint8_t scope;      /* SCOPE_* */
    int32_t guard;      /* guard predicate slot, or -1 */
    int32_t dst2;       /* second destination (setp p|q, shfl d|p), or -1 */
    ptx_operand ops[PTX_MAX_OPS];
    uint32_t ptx_line;  /* 1-based line in the PTX text */
    uint32_t text_off;  /* the instruction's text in the module's copy of the PTX */
    uint16_t text_len;
    uint16_t file;      /* source file index (module's file table; 0: none) */
    uint32_t line;      /* source line (.loc), 0 if none */
    int32_t fn;         /* index of the function holding it */
    uint32_t loc;       /* its .loc frame chain in the module's line table (0: none); see ptx_lines.c */
} ptx_insn;

typedef struct ptx_param {
    char *name;
    uint32_t offset, size, align;
} ptx_param;

typedef struct ptx_func {
    char *name;
    int is_entry, is_extern;
    uint32_t first, count;     /* instruction range in the module's code array */
    uint32_t reg_base, nregs;  /* register slots: [reg_base, reg_base + nregs) */
    ptx_param *params;         /* formal parameters (kernel: the param buffer layout) */
    uint32_t nparams, param_size;
    ptx_param ret;             /* .func return value (size 0: none) */
    uint32_t frame_off, frame_size; /* .func: the local-window frame holding its formal params and return value */
    uint32_t local_off, local_size; /* its .local variables (stack depot, call-site params) in the local window */
    int has_calls;
    struct sim_kstats *stats;  /* entries: the report's counters for this kernel */
} ptx_func;

typedef struct ptx_var {
    char *name;
    uint8_t space; /* SP_GLOBAL, SP_CONST or SP_SHARED */
    uint32_t align;
    uint64_t size;
    uint64_t addr; /* host address (global/const) or shared offset */
    int is_extern;
} ptx_var;

/* One frame of the line table: a .loc's place, the function it is in (for code inlined from another function)
   and the frame it was inlined at (0: none, the outermost frame). (file, line) of an instruction is its "user"
   frame: the innermost frame in a file where some function of the module is defined, see ptx_lines.c. */
typedef struct ptx_loc {
    uint32_t file, line, col;
    uint32_t parent;  /* inlined_at: the caller's frame, 0 if none */
    int32_t name;     /* function_name: index into the module's fnames, -1 if none */
} ptx_loc;

struct sim_module {
    char *origin;
    char *text;            /* a NUL-terminated copy of the PTX (instruction texts point into it) */
    size_t text_len;
    ptx_insn *code;
    uint32_t ncode, cap_code;
    ptx_func *funcs;
    uint32_t nfuncs, cap_funcs;
    ptx_var *vars;
    uint32_t nvars, cap_vars;
    char **files;          /* .file table: index -> path (index 0 unused) */
    uint32_t nfiles;
    ptx_operand *args;     /* the arguments of every call (a call may pass more than PTX_MAX_OPS): ptx_call_arg */
    uint32_t nargs, cap_args;
    ptx_loc *locs;         /* line table frames (index 0 unused) */
    uint32_t nlocs, cap_locs;
    char **fnames;         /* function_name strings (.debug_str labels), short names; NULL where unknown */
    uint32_t nfnames;
    uint64_t *cpool;       /* constant pool: each constant replicated over 32 lanes */
    uint32_t ncpool, cap_cpool;
    uint32_t static_shared; /* bytes of static shared memory (all .shared variables of the module) */
    uint32_t extern_shared_align;
    uint32_t local_size;    /* bytes of local memory per thread (every function's depot and frame) */
    uint32_t max_entry_regs, func_regs; /* register file sizing: see interp.c */
};

/* call [(ret),] func, (args...): ops[0] the function, ops[1] the return parameter (OK_NONE: none), ops[2] OK_ARGS. */
static inline unsigned ptx_call_nargs(const ptx_insn *ins)
{
    return ins->nops > 2 && ins->ops[2].kind == OK_ARGS ? (unsigned)ins->ops[2].reg : 0;
}
static inline const ptx_operand *ptx_call_arg(const struct sim_module *m, const ptx_insn *ins, unsigned i)
{
    return &m->args[ins->ops[2].imm + i];
}

/* Parses PTX text into m (already zeroed, origin set). Returns 0 or SIM_ERR_PARSE with a message in err. */
int ptx_parse(struct sim_module *m, const char *text, size_t len, char *err, size_t errlen);

/* Size in bytes of a type (pred: 1). */
static inline unsigned ptx_type_size(ptx_type t)
{
    static const unsigned char sizes[T_COUNT] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 1, 2, 4, 4};
    return (unsigned)t < T_COUNT ? sizes[t] : 0;
}
/* Number of set bits (no dependence on the host CPU's popcnt instruction). */
static inline unsigned ptx_popc32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}
const char *ptx_type_name(ptx_type t);

/* ---- ptx_lines.c: the line table (.loc frames followed through inlined_at) ---- */

typedef struct ptx_lines_builder ptx_lines_builder;
/* The parser's side: begin once per module, function() at each function's body, loc() at each .loc (has_at:
   it has `inlined_at af al ac`; name: its function_name's index or -1); returns the frame the following
   instructions get. end() gives every instruction its user frame (ins->file, ins->line) and frees b. */
ptx_lines_builder *ptx_lines_begin(void);
void ptx_lines_function(ptx_lines_builder *b);
uint32_t ptx_lines_loc(ptx_lines_builder *b, struct sim_module *m, uint32_t file, uint32_t line, uint32_t col,
                       int32_t name, int has_at, uint32_t af, uint32_t al, uint32_t ac);
void ptx_lines_end(ptx_lines_builder *b, struct sim_module *m);
/* Short name of a mangled function name (`_ZN18cooperative_groups4__v16reduceI...` -> "reduce"), malloc'd. */
char *ptx_short_name(const char *mangled);
/* "file:line" of an instruction's user frame, with the last `dirs` directories of the path (0: the file's name
   alone), or "PTX line N" when it has no line. */
const char *ptx_where(const struct sim_module *m, const ptx_insn *ins, int dirs, char *buf, size_t n);
/* When the instruction was inlined into its user frame from another function: "in NAME, from FILE:LINE" (the
   function called on the user's line and the innermost frame's place); "" otherwise. */
const char *ptx_inlined_from(const struct sim_module *m, const ptx_insn *ins, char *buf, size_t n);

/* ---- report.c: counters and findings ---- */

/* Counters of one instruction, summed over every launch of its kernel. */
typedef struct sim_icount {
    uint64_t insts;         /* warp instructions issued (guard evaluated, whatever it said) */
    uint64_t lanes;         /* active lanes summed over them */
    uint64_t pred_lanes;    /* lanes whose guard predicate was true (threads that did work) */
    uint64_t branches;      /* warp-level branches executed */
    uint64_t div_branches;  /* branches whose active lanes went both ways */
    uint64_t shm_req;       /* shared-memory requests (warp-wide ld/st/atom) */
    uint64_t shm_wave;      /* wavefronts those requests took */
    uint64_t shm_ideal;     /* wavefronts they would take without bank conflicts */
    uint64_t gld_req, gst_req; /* global load / store (and atomic) requests */
    uint64_t gsectors;      /* 32-byte sectors those requests touched */
    uint64_t gideal;        /* sectors they would touch if perfectly coalesced */
    uint64_t dsectors;      /* of gsectors, those the launch had not touched yet (read and write sets apart): the
                               DRAM traffic if every reuse within a launch hits in L2 and none across launches */
} sim_icount;

typedef struct sim_kstats {
    char *name;
    char *origin;
    uint32_t ninsn;
    sim_icount *ic;          /* per instruction */
    uint32_t *ptx_line, *src_line;
    uint16_t *src_file;
    char **files;            /* copy of the module's file table */
    uint32_t nfiles;
    uint64_t launches, blocks, threads, barriers, fences, atomics;
    uint64_t global_atomics; /* the lanes of those atomics that went to global memory (the rest: shared) */
    uint64_t atomics_one_address; /* over its launches, the sum of each launch's largest count of global atomic
                                     lanes on one address: what same-address atomics serialize */
    int orphan;              /* its module was freed */
    struct sim_kstats *next;
} sim_kstats;

/* Finding kinds. */
typedef enum sim_finding_kind {
    F_SHARED_RACE_WARP = 1, /* two lanes of one warp, no __syncwarp between */
    F_SHARED_RACE_BLOCK,    /* two warps of one block, no __syncthreads between */
    F_UNINIT_SHARED,
    F_UNINIT_GLOBAL,
    F_BARRIER_EXITED,       /* a bar.sync passed while threads that had passed an earlier one had exited: they
                               skipped it (a barrier in divergent code); an exit before any barrier is none */
    F_BARRIER_DIVERGENT,    /* threads of one block released from different bar.sync instructions */
    F_GLOBAL_RACE_WARP,     /* global memory: two lanes of one warp, no __syncwarp between */
    F_GLOBAL_RACE_BLOCK,    /* global memory: two warps of one block, no __syncthreads between */
    F_SHFL_OUTSIDE_MASK,    /* a shfl.sync read a lane its member mask does not name */
    F_STREAM_RACE           /* two kernels or copies on streams with no order between them touch the same bytes,
                               one writing (runtime_stream.c) */
} sim_finding_kind;

/* Where a kernel touched memory (sim.h's footprints): the module, the kernel, the instruction. */
struct sim_site {
    const struct sim_module *m;
    const ptx_func *k;
    const ptx_insn *ins;
};

/* Registers a kernel's stats block (called by the parser for each .entry). */
sim_kstats *sim_stats_new(struct sim_module *m, ptx_func *f);
/* Marks the module's stats blocks as orphans (their module is being freed). */
void sim_stats_detach(struct sim_module *m);
/* What a race's two accesses were (the `access` bits of sim_finding_add and sim_finding_again; a finding ORs them
   over its occurrences): read after write, write after read, write after write, and read-modify-write (a write
   after write whose writer had itself just read the word: x++ or x += v by two threads at once, a lost update). */
enum { SIM_ACC_RAW = 1, SIM_ACC_WAR = 2, SIM_ACC_WAW = 4, SIM_ACC_RMW = 8 };

/* The fix a finding's advice names: an atomic for a read-modify-write race, __syncthreads() for any other race that
   crosses warps (even where the same lines also race within a warp), __syncwarp() for one confined to a warp; none
   for the other kinds (their message says what to do). */
typedef enum sim_fix { SIM_FIX_NONE = 0, SIM_FIX_ATOMIC, SIM_FIX_SYNCTHREADS, SIM_FIX_SYNCWARP } sim_fix;

/* Records a finding: one record per (kind, kernel, the unordered pair of the two instructions' source places; the
   kind names the memory space), counting its occurrences and ORing `access` (SIM_ACC_* bits, races; 0 otherwise).
   b may be NULL. detail says what happened, where and when first (the message's advice is added by the reports). */
void sim_finding_add(sim_finding_kind kind, const struct sim_module *m, const ptx_func *kernel, const ptx_insn *a,
                     const ptx_insn *b, unsigned access, const char *detail);

/* Counts one more occurrence of a finding already recorded at this kind, kernel and pair of instruction indices
   (insn_b UINT32_MAX: none), ORing access into it: 1, or 0 when there is none yet (describe it with
   sim_finding_add). Constant time whatever the number of findings: a hash of the instruction pairs seen, so that a
   race met a million times costs a lookup each, not a message. */
int sim_finding_again(sim_finding_kind kind, const ptx_func *kernel, uint32_t insn_a, uint32_t insn_b,
                      unsigned access);

/* The i-th finding (tests and tools): its kind, kernel and "file:line" of both instructions (b: NULL if none).
   Returns 0, or -1 past the end. */
int sim_finding_get(size_t i, sim_finding_kind *kind, const char **kernel, const char **where_a,
                    const char **where_b, uint64_t *count);

/* The i-th finding's access bits (SIM_ACC_*) and the fix its advice names (SIM_FIX_NONE past the end). */
unsigned sim_finding_access(size_t i);
sim_fix sim_finding_fix(size_t i);

/* The words of a fix's advice, for students ("" for SIM_FIX_NONE): the one place they are written (the reports
   append them to the race's message, and give them apart as "advice"). */
const char *sim_fix_advice(sim_fix fix);

#endif /* PPL_SIM_PTX_H */
