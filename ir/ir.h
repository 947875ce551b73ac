/*
 * ir.h: the tile IR -- the contract between the front end, the passes,
 * the simulator and code generation.  One internal header for ir/, with a
 * section per .c file.
 *
 * Shape of the IR (MLIR-like, in plain C):
 *   Module  -> Func*          kernels, device functions, grid functions
 *   Func    -> Block (body)   the body's arguments are the parameters
 *   Block   -> Op list        doubly linked; a region is exactly one block
 *   Op      -> operands (Value), results (Value), attributes, regions
 * Values are 32-bit ids into the function's value table (QBE); id 0 is
 * "no value".  Loop-carried values are block arguments of a region and
 * results of the op that owns it.  Types are interned: equal types are
 * the same pointer.  Everything lives in the module's arena.
 */
#ifndef TLX_IR_H
#define TLX_IR_H

#include "support/support.h"

/* ---- types (type.c) ------------------------------------------------- */

typedef enum TypeKind {
	TY_VOID,
	/* scalars, in promotion order within each class */
	TY_I1, TY_I8, TY_I16, TY_I32, TY_I64,
	TY_U8, TY_U16, TY_U32, TY_U64,
	TY_F8E4M3, TY_F8E5M2, TY_F16, TY_BF16, TY_F32, TY_F64,
	/* compound */
	TY_PTR,    /* pointer to `elem` in address space `as` */
	TY_TILE,   /* tile of `elem` (scalar or pointer) with `shape` */
	TY_SMEM,   /* shared-memory buffer or view of `elem` with `shape` */
	TY_MBAR,   /* rank 0: one mbarrier; rank 1: an array of shape[0] */
	TY_TMA,    /* tensor descriptor of `elem`, `rank`; shape: box or 0s */
	TY_PIPE,   /* a pipe (its buffers are operands of pipe_create) */
	TY_SCHED,  /* a tile schedule */
	TY_KIND_COUNT
} TypeKind;

enum { TY_MAX_RANK = 4 };
/* The most elements a tile or shared buffer has, in every dimension and in
 * all: the front end, the IR reader and the simulator share the limit. */
enum { TY_MAX_ELEMS = 1 << 20 };
enum { AS_GLOBAL = 1, AS_SHARED = 3 };

typedef struct Type Type;
typedef struct Layout Layout;
struct Type {
	TypeKind kind;
	uint8_t rank;
	uint8_t as;          /* TY_PTR */
	Type *elem;          /* TY_PTR, TY_TILE, TY_SMEM, TY_TMA */
	int64_t shape[TY_MAX_RANK];
	const Layout *layout;  /* TY_TILE: its distribution (laid-out IR) */
	Type *next;          /* interning chain */
};

typedef struct TypeTable {
	Type *buckets[256];
	Type *scalars[TY_F64 + 1];
} TypeTable;

static inline bool ty_is_scalar_kind(TypeKind k) { return k >= TY_I1 && k <= TY_F64; }
static inline bool ty_is_int_kind(TypeKind k) { return k >= TY_I1 && k <= TY_U64; }
static inline bool ty_is_float_kind(TypeKind k) { return k >= TY_F8E4M3 && k <= TY_F64; }
static inline bool ty_is_unsigned_kind(TypeKind k) { return k >= TY_U8 && k <= TY_U64; }

/* ---- layouts (layout.c) --------------------------------------------- */

/*
 * A distributed layout maps the bits of (register, lane, warp) of a
 * thread of a program to the bits of a tile's row-major flat index (all
 * dims are powers of two): a linear map over GF(2), one basis (a flat
 * index mask) per input bit, combined by XOR.  A zero basis is
 * replication.  The layouts the compiler makes have distinct single-bit
 * bases, so a coordinate is a bit field of the OR of the selected bases.
 * Kinds are how a layout was made (the printed form names them):
 *   blocked  `vec` contiguous elements per thread along order[0], then
 *            lanes, then warps along the dims in `order` (fastest first),
 *            the rest repeated in registers;
 *   slice    a reduction result: the parent's bases with dim `slice_dim`
 *            removed;
 *   mma      the mma.sync m16n8 accumulator over warps wm x wn;
 *   wgmma    the wgmma m64nN accumulator: warpgroups (4 warps, each 16
 *            rows of a 64-row tile) over wm x wn;
 *   linear   anything else (what shape ops make of the others); a
 *            linear layout may remember the parent of the slice it was
 *            expanded from, so broadcasting back to it is free.
 * A shared buffer's *encoding* is a layout too, of kind swizzle: a linear
 * map over GF(2) of the buffer's byte addresses (row-major, from its
 * shape): phys = addr ^ (((addr >> shift) & (bytes / 16 - 1)) << 4), the
 * 16-byte chunks of each `bytes`-wide span XOR-permuted by the address
 * bits from `shift` up.  With shift 7 it is TMA's and wgmma's 32-, 64- or
 * 128-byte swizzle (tensor-core-layouts.md 3.5); rows wider than 128
 * bytes take the bits above their row (shift = log2 of the row).
 */
enum {
	LY_MAX_REG = 16,   /* at most 2^16 registers per thread */
	LY_LANES = 5,      /* 32 lanes */
	LY_MAX_WARP = 5,   /* 32 warps */
};

typedef enum LayoutKind {
	LY_BLOCKED, LY_SLICE, LY_MMA, LY_WGMMA, LY_LINEAR, LY_SWIZZLE,
	LY_KIND_COUNT
} LayoutKind;

struct Layout {
	uint8_t kind, rank, nreg, nwarp;
	int64_t shape[TY_MAX_RANK];
	uint32_t reg[LY_MAX_REG], lane[LY_LANES], warp[LY_MAX_WARP];
	/* LY_SLICE (and a linear expand_dims of one): the parent layout
	 * and the dim removed from it. */
	const Layout *parent;
	uint8_t slice_dim;
	/* LY_BLOCKED: elements per vector and the dims fastest first. */
	uint16_t vec;
	uint8_t order[TY_MAX_RANK];
	/* LY_MMA: warps along m and n, 16x8 tiles per warp along m and n;
	 * LY_WGMMA: warpgroups along m and n, 64xN tiles per warpgroup
	 * along m (mreps) and the N of each (nreps = N / 8). */
	uint8_t wm, wn;
	int mreps, nreps;
	/* LY_SWIZZLE: the span of 16-byte chunks permuted, the first address
	 * bit that permutes them; tiled: rows wider than the span are stored
	 * as column strips of swz_bytes, one after the other (each strip all
	 * rows of its columns), as TMA boxes land and wgmma reads them. */
	uint16_t swz_bytes;
	uint8_t swz_shift;
	uint8_t swz_tiled;
	Layout *next;  /* interning chain */
};

/* Interned layouts: equal layouts are the same pointer.  A table may sit
 * on a read-only base table (codegen's threads derive layouts of their
 * own over the module's): lookups search the base first. */
typedef struct LayoutTab {
	Layout *buckets[64];
	Arena *arena;
	const struct LayoutTab *base;
} LayoutTab;

void ly_tab_init(LayoutTab *t, Arena *a, const LayoutTab *base);
const Layout *ly_intern(LayoutTab *t, const Layout *proto);
/* Blocked: `vec` elements per thread along dim order[0], lanes and warps
 * filled along `order` (fastest first). */
const Layout *ly_blocked(LayoutTab *t, int rank, const int64_t *shape,
			 const int *order, int vec, int nwarps);
/* ly_blocked's registers and lanes with its warps filled along `worder`
 * instead (a linear layout, or the blocked one where that is the same). */
const Layout *ly_blocked_warps(LayoutTab *t, int rank, const int64_t *shape,
			       const int *order, int vec, int nwarps,
			       const int *worder);
/* The default blocked layout of a shape: 16 bytes per thread along the
 * last dimension. */
const Layout *ly_default(LayoutTab *t, int rank, const int64_t *shape,
			 int ebytes, int nwarps);
const Layout *ly_mma(LayoutTab *t, const int64_t *shape, int nwarps);
/* The wgmma accumulator of an M x N tile (M a multiple of 64, N of 8)
 * over nwarps (a multiple of 4): thread (warp w, lane 4g + q) register i
 * of a 64 x N' tile holds row 16 (w % 4) + g + 8 ((i >> 1) & 1), column
 * 8 (i >> 2) + 2q + (i & 1) (tensor-core-layouts.md 3.2); warpgroups split
 * M first, then N; further 64-row tiles of a warpgroup are more
 * registers. */
const Layout *ly_wgmma(LayoutTab *t, const int64_t *shape, int nwarps);
/* How ly_wgmma splits M x N among nwarps / 4 warpgroups (gm along M,
 * gn along N); false when they cannot all get a part. */
bool ly_wgmma_split(int64_t M, int64_t N, int nwarps, int *gm, int *gn);
/* The register A operand of a wgmma (RS form, 16-bit elements) of an
 * M x K tile into accumulator layout `acc`: for each k16 step the
 * accumulator fragment of an m64n16 tile (tensor-core-layouts.md 3.3),
 * so register i of a 64 x 16 step holds row 16 (w % 4) + g + 8 ((i >> 1)
 * & 1), column 2q + (i & 1) + 8 (i >> 2); warpgroups split M as acc's do
 * and repeat along n.  NULL when acc is not a wgmma accumulator of M rows
 * or K is not a multiple of 16. */
const Layout *ly_wgmma_a(LayoutTab *t, const int64_t *shape, const Layout *acc);
/* The register of layout `a` (ly_wgmma_a) that holds element i (0..7)
 * of the RS fragment of k16 step s of the thread's 64-row tile mt: row
 * mt 64 + 8 ((i >> 1) & 1), column 16 s + (i & 1) + 8 (i >> 2) of the
 * thread's part; -1 if none does. */
int ly_wgmma_a_reg(const Layout *a, int64_t mt, int64_t s, int i);
/* The swizzle encoding permuting `bytes` (32, 64 or 128) from address bit
 * `shift`; and the one for a buffer whose rows are `rowbytes` long (the
 * 8 rows an ldmatrix reads, and a blocked layout's 16-byte stores, fall
 * on distinct banks; NULL for rows under 32 bytes or not a power of
 * two). */
const Layout *ly_swizzle(LayoutTab *t, int bytes, int shift);
/* The tiled swizzle of `bytes`: strips of `bytes` per row, each strip
 * its rows `bytes` apart (shift 7), strips one after the other: the
 * canonical layouts of wgmma operands (K- or MN-major alike, the
 * contiguous dim last) and TMA's boxes. */
const Layout *ly_swizzle_tiled(LayoutTab *t, int bytes);
const Layout *ly_swizzle_for(LayoutTab *t, int64_t rowbytes);
/* `l` with dim `dim` removed (a reduction along dim). */
const Layout *ly_slice(LayoutTab *t, const Layout *l, int dim);
/* The same registers seen with another shape of equal element count
 * (expand_dims, reshape: the flat index does not change). */
const Layout *ly_reshape(LayoutTab *t, const Layout *l, int rank,
			 const int64_t *shape);
const Layout *ly_trans(LayoutTab *t, const Layout *l, const int64_t *perm);
/* The layout of a broadcast operand (size-1 dims of `shape`) that makes
 * broadcast to a value in layout `l` free. */
const Layout *ly_project(LayoutTab *t, const Layout *l, int rank,
			 const int64_t *shape);
/* A layout for the broadcast of a value in `l` to `shape` that moves no
 * data (the parent of a slice when it fits). */
const Layout *ly_broadcast(LayoutTab *t, const Layout *l, int rank,
			   const int64_t *shape);
/* Aligned slices (extract_slice: each offset a multiple of the slice's
 * size in its dim).  ly_extract_fits: a tile in `res` can be a slice of
 * one in `src` without moving data -- the same lanes and warps on the
 * slice's bits, none on the bits above it, and every register of `res`
 * one of `src`'s.  ly_extract: the layout of a slice of shape `shape`
 * of a tile in `l` (`l`'s registers above the slice dropped), NULL when
 * lanes or warps hold bits above it.  ly_extract_operand: a layout of a
 * tile of shape `shape` each of whose aligned slices of `l`'s shape is in
 * `l` (the bits above as more registers), NULL when they do not fit.
 * ly_extract_reg: the register of `src` that holds register r of the
 * slice at `offs` in `res`, -1 when none does. */
bool ly_extract_fits(const Layout *src, const Layout *res);
const Layout *ly_extract(LayoutTab *t, const Layout *l, const int64_t *shape);
const Layout *ly_extract_operand(LayoutTab *t, const Layout *l, int rank,
				 const int64_t *shape);
int64_t ly_extract_reg(const Layout *src, const Layout *res,
		       const int64_t *offs, uint32_t r);
static inline int ly_nregs(const Layout *l) { return 1 << l->nreg; }
static inline int ly_nwarps(const Layout *l) { return 1 << l->nwarp; }
/* Registers that repeat another (zero bases): reg r equals reg
 * r & ~ly_dup_mask(l). */
uint32_t ly_dup_mask(const Layout *l);
uint32_t ly_lane_dup(const Layout *l);  /* lane bits with a zero basis */
uint32_t ly_warp_dup(const Layout *l);
/* Flat index of register r for lane 0 of warp 0. */
uint32_t ly_reg_flat(const Layout *l, uint32_t r);
/* Flat index of register r of lane `lane` of warp `warp`. */
uint32_t ly_flat(const Layout *l, uint32_t r, uint32_t lane, uint32_t warp);
/* Elements along the flat index's lowest bits that register r .. r+n-1
 * cover contiguously: the number of leading reg bases 1, 2, 4, ... */
int ly_contig_regs(const Layout *l);
/* Bit position of dim d's field in the flat index, and its width. */
int ly_dim_shift(const Layout *l, int d);
int ly_dim_bits(const Layout *l, int d);
/* Is basis b (of a register, lane or warp bit) inside dim d's field, i.e.
 * does that bit move along d?  A zero basis (a repeat) is in no dim. */
bool ly_in_dim(const Layout *l, int d, uint32_t b);
int log2i(int64_t v);
/* NULL when every basis is zero or a single bit inside the shape, the
 * non-zero ones are distinct and together they cover every bit of the
 * flat index (every element has a thread); else what is wrong. */
const char *ly_check(const Layout *l);
/* The printed form, in full (parents inline): blocked<[128, 64], vec = 4,
 * order = [1, 0], warps = 4>, slice<..., dim = 1>, mma<[128, 128],
 * warps = 4>, linear<[64, 2], reg = [[0, 1], ...], lane = [...], warp =
 * [...]>.  `name`, when given, names a parent by its alias instead. */
typedef const char *(*LayoutNamer)(void *ud, const Layout *l);
void ly_print(Buf *b, const Layout *l, LayoutNamer name, void *ud);
const char *ly_kind_name(int kind);
/* A conversion (convert_layout) goes through a row-major copy of the tile
 * in shared memory, with 16 bytes of padding after each row of at least
 * 64 bytes (the rows of an mma fragment then fall on distinct banks):
 * its row pitch, its size, and the byte offset of flat index `flat` in
 * it; `eb` is the element's bytes (i1: 1). */
int64_t ly_copy_row_bytes(const Layout *l, int eb);
int64_t ly_copy_bytes(const Layout *l, int eb);
int64_t ly_copy_offset(const Layout *l, uint32_t flat, int eb);
/* Do a and b put every element in the same thread (then a conversion
 * renames registers)? */
bool ly_same_threads(const Layout *a, const Layout *b);
/* Bytes of shared memory a conversion from `from` to `to` needs (0: it
 * renames registers). */
int64_t ly_convert_bytes(const Layout *from, const Layout *to, int eb);


/* ---- attributes (attr.c) -------------------------------------------- */

typedef enum AttrKind {
	ATTR_INT,     /* 42, -1, true (1), false (0) */
	ATTR_FLOAT,   /* 1.5, inf, nan */
	ATTR_STR,     /* "text" */
	ATTR_SYM,     /* a bare word: sum, lt, clc */
	ATTR_INTS,    /* [1, 2, 3] */
	ATTR_TYPE,    /* !f32, !tile<4xf32> */
} AttrKind;

typedef struct Attr {
	const char *name;  /* interned */
	AttrKind kind;
	union {
		int64_t i;
		double f;
		const char *s;  /* STR, SYM (interned) */
		Type *ty;
		struct {
			int64_t *v;
			uint32_t n;
		} ints;
	};
} Attr;

typedef struct AttrList {
	Attr *v;
	uint32_t n, cap;
} AttrList;

/* ---- ops, blocks, functions, modules (ir.c) ------------------------- */

/* Target features (target.def), which ops need (ops.def) and targets
 * have (target.c).  TF_NONE: every target has it. */
typedef enum TargetFeature {
	TF_NONE,
#define FEATURE(name, text, what, note) TF_##name,
#include "target.def"
#undef FEATURE
	TF_COUNT
} TargetFeature;

typedef enum OpKind {
#define OP(name, text, minop, maxop, nres, nreg, feat, flags) OP_##name,
#include "ops.def"
#undef OP
	OP_COUNT
} OpKind;

enum OpFlags {
	F_PURE = 1 << 0,
	F_TERM = 1 << 1,
	F_COMM = 1 << 2,
	F_ELEM = 1 << 3,
	F_MATH = 1 << 4,
	F_ASYNC = 1 << 5,
	F_REMAT = 1 << 6,
	F_CHEAP = 1 << 7,
	F_UNLOWERED = 1 << 8,
};

typedef struct OpInfo {
	const char *name;
	int min_opnds, max_opnds;  /* max -1: no limit */
	int nres, nregions;        /* nres -1: variadic */
	TargetFeature feature;     /* target_op_feature refines it */
	unsigned flags;
} OpInfo;
extern const OpInfo op_info[OP_COUNT];

typedef uint32_t Value;
typedef struct Op Op;
typedef struct Block Block;
typedef struct Func Func;
typedef struct Module Module;

struct Op {
	OpKind kind;
	Op *prev, *next;
	Block *parent;
	Value *opnds;
	uint32_t nopnds;
	Value *res;
	uint32_t nres;
	Block **regions;
	uint32_t nregions;
	AttrList attrs;
	SrcLoc loc;   /* where it came from in the module's source (.tlx) */
	SrcLoc tloc;  /* where ir_read found it in IR text; 0:0 when built */
};

struct Block {
	Value *args;
	uint32_t nargs;
	Op *first, *last;
	Op *parent;  /* NULL for a function body */
	Func *fn;
};

typedef struct ValInfo {
	Type *ty;
	Op *def;           /* the defining op, or NULL for a block argument */
	Block *blk;        /* the block of a block argument */
	uint32_t idx;      /* result or argument number */
	const char *name;  /* a name hint for printing, or NULL */
} ValInfo;

typedef enum FuncKind { FN_KERNEL, FN_DEVICE, FN_GRID } FuncKind;

struct Func {
	Module *mod;
	FuncKind kind;
	const char *name;   /* interned */
	Block *body;        /* its args are the parameters */
	Type **rtypes;
	uint32_t nrtypes;
	AttrList attrs;
	SrcLoc loc;
	SrcLoc tloc;        /* as Op.tloc */
	Vec(ValInfo) vals;  /* vals.v[0] is the null value */
};

typedef struct IrCtx {
	Arena *arena;
	Strtab strs;
	TypeTable types;
	LayoutTab layouts;
} IrCtx;

struct Module {
	IrCtx *ctx;
	const char *source;  /* the .tlx file the module came from */
	Vec(Func *) funcs;
	/* ir_func_find's table by name, rebuilt when funcs change */
	Func **byname;
	uint32_t byname_cap;
	bool byname_stale;
};

/* Op table queries */
static inline bool op_has(const Op *op, unsigned f) { return (op_info[op->kind].flags & f) != 0; }
static inline const char *op_name(OpKind k) { return op_info[k].name; }
int op_kind_from_name(const char *s, size_t n);  /* -1 when unknown */

/* ---- type.c ----------------------------------------------------------- */

void ir_ctx_init(IrCtx *c, Arena *a);
Type *ty_scalar(IrCtx *c, TypeKind k);
Type *ty_ptr(IrCtx *c, Type *elem, int as);
Type *ty_tile(IrCtx *c, Type *elem, int rank, const int64_t *shape);
Type *ty_smem(IrCtx *c, Type *elem, int rank, const int64_t *shape);
Type *ty_mbar(IrCtx *c, int64_t n);  /* n < 0: one barrier */
/* box: the box shape (rank entries), or NULL while unknown */
Type *ty_tma(IrCtx *c, Type *elem, int rank, const int64_t *box);
Type *ty_simple(IrCtx *c, TypeKind k);  /* TY_VOID, TY_PIPE, TY_SCHED */
/* t without its layout (tiles) or encoding (shared buffers); other
 * types are returned as they are. */
Type *ty_strip(IrCtx *c, Type *t);
/* A tile type with a layout (NULL: without one). */
Type *ty_with_layout(IrCtx *c, Type *t, const Layout *layout);
/* The tile of `t`'s shape (and layout) with element `elem`; a scalar when
 * t is scalar. */
Type *ty_like(IrCtx *c, Type *t, Type *elem);
/* The element of a tile, else the type itself. */
static inline Type *ty_elem(Type *t) { return t->kind == TY_TILE ? t->elem : t; }
static inline bool ty_is_tile(Type *t) { return t->kind == TY_TILE; }
static inline bool ty_is_int(Type *t) { return ty_is_int_kind(ty_elem(t)->kind); }
static inline bool ty_is_float(Type *t) { return ty_is_float_kind(ty_elem(t)->kind); }
static inline bool ty_is_ptr(Type *t) { return ty_elem(t)->kind == TY_PTR; }
bool ty_is_unsigned(Type *t);
int ty_bits(Type *t);           /* bits of a scalar kind's element */
int ty_bytes(Type *t);          /* bytes of one element (pointers: 8) */
int64_t ty_numel(Type *t);      /* elements of a tile or smem; 1 for scalars */
const char *ty_kind_name(TypeKind k);  /* "f32", "bf16", ... */
int ty_kind_from_name(const char *s, size_t n);  /* scalar kinds; -1 */
void ty_print(Buf *b, Type *t);
/* The same, naming layouts through `name` (the module printer's aliases). */
void ty_print_named(Buf *b, Type *t, LayoutNamer name, void *ud);
bool is_pow2(int64_t v);

/* ---- attr.c ------------------------------------------------------------ */

Attr *attr_find(AttrList *l, const char *name);
bool attr_has(AttrList *l, const char *name);
void attr_remove(IrCtx *c, AttrList *l, const char *name);
int64_t attr_int(AttrList *l, const char *name, int64_t dflt);
const char *attr_str(AttrList *l, const char *name);  /* STR or SYM; NULL */
void attr_set(IrCtx *c, AttrList *l, Attr a);  /* replaces same name */
void attr_set_int(IrCtx *c, AttrList *l, const char *name, int64_t v);
void attr_set_float(IrCtx *c, AttrList *l, const char *name, double v);
void attr_set_str(IrCtx *c, AttrList *l, const char *name, const char *s);
void attr_set_sym(IrCtx *c, AttrList *l, const char *name, const char *s);
void attr_set_ints(IrCtx *c, AttrList *l, const char *name, const int64_t *v,
		   uint32_t n);
bool attr_equal(const Attr *a, const Attr *b);
uint64_t attr_hash(const Attr *a);
void attr_print(Buf *b, const Attr *a);
/* A quoted string with \" \\ and \xNN escapes. */
void ir_print_string(Buf *b, const char *s);

/* ---- ir.c: construction and mutation -------------------------------- */

Module *ir_module_new(IrCtx *c, const char *source);
Func *ir_func_new(Module *m, FuncKind k, const char *name, uint32_t nparams,
		  Type *const *ptypes);
Func *ir_func_find(Module *m, const char *name);
/* A copy of src named `name`, appended to m (its attributes too). */
Func *ir_func_clone(Module *m, Func *src, const char *name);
void ir_func_set_results(Func *f, uint32_t n, Type *const *types);

Value ir_value_new(Func *f, Type *t);
static inline ValInfo *ir_val(Func *f, Value v) { return &f->vals.v[v]; }
static inline Type *ir_type(Func *f, Value v) { return f->vals.v[v].ty; }
void ir_value_set_name(Func *f, Value v, const char *name);

/* A detached op with fresh result values of the given types. */
Op *ir_op_new(Func *f, OpKind k, uint32_t nopnds, const Value *opnds,
	      uint32_t nres, Type *const *rtypes, uint32_t nregions);
Block *ir_block_new(Func *f, uint32_t nargs, Type *const *atypes);
Value ir_block_add_arg(Block *b, Type *t);

void ir_insert_before(Op *before, Op *op);
void ir_insert_after(Op *after, Op *op);
void ir_append(Block *b, Op *op);
void ir_remove(Op *op);  /* unlinks; memory returns with the arena */

/* Replaces every use of `from` by `to` in the function. */
void ir_replace_uses(Func *f, Value from, Value to);

/* Structural edits that keep ValInfo.idx right.  The erased value
 * itself stays in the table, unused. */
void ir_op_erase_operand(Op *op, uint32_t i);
/* Appends an operand; appends a result of type t and returns it. */
void ir_op_add_operand(Op *op, Value v);
Value ir_op_add_result(Op *op, Type *t);
void ir_op_erase_result(Op *op, uint32_t i);
void ir_block_erase_arg(Block *b, uint32_t i);
/* The global pointers of an access (load, store, atomic, atomic_cas,
 * cp_async's source) and its mask; 0 for other ops, or without a mask. */
Value ir_access_ptr(Op *op);
Value ir_access_mask(Op *op);
/* A task of `replicas = n` (merge-replicas) as n task ops again, each
 * with its replica index as a constant, its warps and its barrier. */
void ir_unmerge_task(Func *f, Op *task);
/* Is f in the laid-out stage (one of its tiles has a layout)? */
bool ir_func_laid_out(Func *f);
/* Unlinks a function from its module (its memory stays in the arena). */
void ir_func_remove(Module *m, Func *f);

/* A user error about `op` (or about `f` when op is NULL): reported at
 * the op's IR-text location when it was read from text, else at its
 * source location, else without one, naming the function. */
void ir_error(Diag *d, Func *f, Op *op, const char *fmt, ...)
	TLX_PRINTF(4, 5);
void ir_warning(Diag *d, Func *f, Op *op, const char *fmt, ...)
	TLX_PRINTF(4, 5);
void ir_note(Diag *d, Func *f, Op *op, const char *fmt, ...)
	TLX_PRINTF(4, 5);

/* Walks ops in pre-order (an op before the ops in its regions).
 * The callback may not remove the op it is given. */
typedef void (*OpVisit)(Op *op, void *ud);
void ir_walk_block(Block *b, OpVisit fn, void *ud);
void ir_walk(Func *f, OpVisit fn, void *ud);
/* The ops of kind k in f, in walk order (*n of them; allocated in a). */
Op **ir_find_ops(Func *f, OpKind k, Arena *a, uint32_t *n);
/* Number of uses of every value, indexed by value id (scratch arena). */
uint32_t *ir_count_uses(Func *f, Arena *scratch);
/* Deep copy of an op (its regions too) into `dst`, mapping operands
 * through map[] (indexed by src's values; 0 or past *mapn: not mapped, the
 * value stays).  The copies' results and block arguments are added to the
 * map, which grows in dst's arena when needed.  Used by inlining. */
Op *ir_clone_op(Func *dst, Func *src, Op *op, Value **map, uint32_t *mapn);

/* ---- builder.c ---------------------------------------------------------- */

typedef struct Builder {
	Func *fn;
	Block *blk;   /* append here ... */
	Op *before;   /* ... or insert before this op when non-NULL */
	SrcLoc loc;   /* given to every op built */
} Builder;

static inline IrCtx *b_ctx(Builder *b) { return b->fn->mod->ctx; }
Op *b_insert(Builder *b, Op *op);
Op *b_op(Builder *b, OpKind k, uint32_t nopnds, const Value *opnds,
	 Type *rtype);  /* rtype NULL: no result */
Value b_op0(Builder *b, OpKind k, Type *rt);
Value b_op1(Builder *b, OpKind k, Type *rt, Value a);
Value b_op2(Builder *b, OpKind k, Type *rt, Value a, Value c);
Value b_op3(Builder *b, OpKind k, Type *rt, Value a, Value c, Value d);
Value b_const_int(Builder *b, Type *t, int64_t v);
Value b_const_float(Builder *b, Type *t, double v);
Value b_cmp(Builder *b, const char *pred, Value x, Value y);
Value b_with_int(Builder *b, OpKind k, Type *rt, const char *attr,
		 int64_t v);  /* program_id {axis} and friends */

/* ---- print.c --------------------------------------------------------------- */

typedef struct PrintOpts {
	bool locs;  /* print @line:col after each op */
} PrintOpts;

void ir_print_module(Buf *b, Module *m, const PrintOpts *o);
void ir_print_func(Buf *b, Func *f, const PrintOpts *o);
void ir_print_op(Buf *b, Func *f, Op *op, const PrintOpts *o);  /* one op, debug */
void ir_dump_func(Func *f);  /* to stderr */

/* ---- numeric.c: exact scalar semantics (shared with the simulator) -------- */

/* A scalar constant: `i` for integer types, `f` for float types.  Integers
 * are kept canonical: truncated to the type's width, then sign-extended
 * for signed types and zero-extended for unsigned ones (u64 keeps its bit
 * pattern); i1 is 0 or 1 and behaves as unsigned.  Floats hold a value
 * exactly representable in the type. */
typedef union Num {
	int64_t i;
	double f;
} Num;

/* Bit-exact conversions, rounding to nearest even.  f8e4m3 has no
 * infinities: overflow and infinities saturate to +-448, NaN stays NaN.
 * f8e5m2 is IEEE-like (overflow gives infinity). */
uint16_t ir_f32_to_f16(float f);
float ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_bf16(float f);
float ir_bf16_to_f32(uint16_t h);
uint8_t ir_f32_to_e4m3(float f);
float ir_e4m3_to_f32(uint8_t b);
uint8_t ir_f32_to_e5m2(float f);
float ir_e5m2_to_f32(uint8_t b);
/* The same for any float kind, from and to double (single rounding). */
uint64_t ir_float_to_bits(TypeKind k, double v);
double ir_float_from_bits(TypeKind k, uint64_t bits);
double ir_float_round(TypeKind k, double v);  /* nearest value of kind k */

/* Integer k's canonical form of the low bits of v. */
int64_t ir_int_wrap(TypeKind k, uint64_t v);
/* cvt between numeric kinds, as docs/il.md says (int->float rounds to
 * nearest even, float->int truncates and saturates, NaN -> 0, any -> i1
 * is != 0). */
Num ir_num_cvt(TypeKind to, TypeKind from, Num v);
/* Evaluates an elementwise op of kind k on canonical operands.  Returns
 * false when the result is not defined at compile time (integer division
 * by zero) or the op has no exact evaluation here (transcendental math). */
bool ir_num_unary(OpKind op, TypeKind k, Num a, Num *r);
bool ir_num_binary(OpKind op, TypeKind k, Num a, Num b, Num *r);
bool ir_num_fma(TypeKind k, Num a, Num b, Num c, Num *r);
/* cmp {pred}: pred is eq ne lt le gt ge; returns -1 for an unknown pred. */
int ir_num_cmp(const char *pred, TypeKind k, Num a, Num b);

/* ---- read.c: parse the printed form ---------------------------------------- */

/* Parses IR text into a new module.  Errors go to `d` (a user error: the
 * text came from outside) and NULL is returned. */
Module *ir_read(IrCtx *c, Diag *d, const Source *src);

/* ---- verify.c --------------------------------------------------------------- */

/* Checks structure and types.  Problems are reported to `d` at the op's
 * location; returns false when any was found. */
bool ir_verify_module(Module *m, Diag *d);
bool ir_verify_func(Func *f, Diag *d);
/* verify_layout.c: the rules of the laid-out stage (every tile has a
 * layout codegen can lower; ops agree on them); ir_verify_func runs it on
 * functions in that stage. */
bool ir_verify_layouts(Func *f, Diag *d);

/* ---- axis.c: contiguity, divisibility, constancy ------------------------ */

typedef struct Axis {
	int64_t contig[TY_MAX_RANK];  /* runs of +1 (elements) along dim */
	int64_t cnst[TY_MAX_RANK];    /* runs of equal values along dim */
	int64_t div;                  /* power of 2 dividing run starts
					 (bytes for pointers) */
	int64_t known;                /* the value, when has_known */
	bool has_known;
	uint64_t deps;                /* fast-path assumptions used */
} Axis;

typedef struct Assume {
	uint64_t eq1;    /* int params assumed == 1 (bit = param index) */
	uint64_t div;    /* int params assumed % divisor == 0 */
	uint64_t align;  /* pointer params assumed aligned to `bytes` */
	int64_t divisor; /* `bytes` over the kernel's smallest global
			    element: at 16 bytes 16 for bytes, 8 for bf16,
			    4 for f32 */
	int64_t bytes;   /* the alignment assumed; 0: 16 */
} Assume;

/* Analyses f's body; returns one Axis per value (in arena a). */
Axis *axis_compute(Func *f, Arena *a, const Assume *as);
/* Picks the fast-path assumptions worth checking at run time, given the
 * facts proven without assumptions. */
void axis_pick_assumptions(Func *f, const Axis *gen, Assume *as);
/* as at an alignment of `bytes` (8 or 4) instead of 16: the same
 * parameters assumed aligned, divisible (by as many elements) or 1 */
Assume axis_at_bytes(const Assume *as, int64_t bytes);
/* as, keeping only the assumptions of the parameters in d (bits) */
Assume axis_restrict(const Assume *as, uint64_t d);
/* Do two facts say the same (whatever assumptions they used)? */
bool ax_same(const Axis *a, const Axis *b);

/* ---- layout.c: the layouts of ops ---------------------------------------- */

/* The layout of a shape op's operand (broadcast, expand_dims, reshape,
 * trans) whose result is in `res`: the op then moves no data. */
const Layout *ly_shape_operand(LayoutTab *t, Func *f, Op *op,
			       const Layout *res);
typedef struct Target Target;
/* Whether dot op runs on mma.sync for target t (operand and accumulator
 * types it has, shapes multiples of the instruction's), and whether its
 * B is then stored N x K (8-bit operands). */
bool ly_dot_is_mma(const Target *t, Func *f, Op *op, bool *trans_b);
/* The layout of dot op's result: mma's accumulator, else blocked. */
const Layout *ly_dot(LayoutTab *t, const Target *tg, Func *f, Op *op,
		     int nwarps);
/* Elements per vector access of pointer tile ptr in layout ly: the
 * registers contiguous along a dim, as far as the axis facts ax (one per
 * value) show the addresses contiguous and aligned, up to 16 bytes. */
int ly_mem_vec(Func *f, Value ptr, const Layout *ly, const Axis *ax);

/* ---- smemview.c: where a view's elements lie in shared memory -------------- */

/* A buffer's swizzle (its encoding, LY_SWIZZLE), a function of the byte
 * address in the kernel's shared memory:
 *   phys = addr ^ (((addr >> shift) & mask) << 4)
 * it permutes the 16-byte chunks of each span; mask 0: none. */
typedef struct Swizzle {
	int shift, mask;
} Swizzle;

/* The geometry of a view of a shared buffer (smem_alloc, then smem_index,
 * smem_slice and smem_trans): element [i...] lies sum over d of
 * sv_dim_bytes(g, d, i[d]) bytes past the view's start, before the
 * buffer's swizzle (the dims' parts have distinct bits, along a tiled
 * buffer's strips too).  Code generation and the simulator both place
 * elements with it. */
typedef struct SmemGeom {
	int rank;
	int64_t shape[TY_MAX_RANK];
	int64_t stride[TY_MAX_RANK];  /* elements */
	int ebytes;
	Swizzle swz;       /* of the buffer the view is in */
	/* A tiled swizzle (ly_swizzle_tiled): the buffer's rows are strips
	 * of tw bytes, each strip its trows rows tw bytes apart; tr and tc
	 * are the view's dims along the buffer's rows and columns (-1: not
	 * in the view).  tw 0: row-major. */
	int tw, tr, tc;
	int64_t trows;
} SmemGeom;

Swizzle sv_swizzle_of(const Layout *enc);
int64_t sv_swizzle(Swizzle s, int64_t addr);
/* A whole buffer of smem type t (row-major, or in its tiled encoding). */
void sv_buffer(SmemGeom *g, Type *t);
/* Bytes from element 0 to c along dim d. */
int64_t sv_dim_bytes(const SmemGeom *g, int d, int64_t c);
/* Bytes per unit of an index's or a slice's start along dim d: along a
 * tiled view's columns the start is a whole number of strips
 * (sv_start_ok), c columns then c * ebytes / tw strips of trows * tw
 * bytes each. */
int64_t sv_start_bytes(const SmemGeom *g, int d);
/* Does a start along dim d that is a multiple of div move by whole
 * strips (the strips' offsets add then)? */
bool sv_start_ok(const SmemGeom *g, int d, int64_t div);
/* The view without its dim 0 (smem_index), with a new shape
 * (smem_slice), its dims permuted (smem_trans). */
void sv_index(SmemGeom *g);
void sv_slice(SmemGeom *g, const int64_t *shape);
void sv_trans(SmemGeom *g, const int64_t *perm, int n);

/* TMA (tensor-core-layouts.md 4): the box one copy through a descriptor
 * of tma type t moves, outermost first as the view's dims (box[0] 0: t
 * has no box), and the swizzle span the descriptor is encoded with (0:
 * none), which is returned.  A tiled swizzle of W bytes copies strips of
 * W bytes: the box's inner dim is at most W / ebytes. */
int sv_tma_box(const Type *t, int64_t *box);
/* The copies that move view g (its start aligned to align bytes) through
 * a descriptor of swizzle span swz: *n boxes, box i written at the
 * view's start + i * *step bytes from the inner coordinate + i * *cstep.
 * NULL, or why the view is not that (in words for a diagnostic). */
const char *sv_tma_strips(const SmemGeom *g, int64_t align, int swz, int *n,
			  int64_t *step, int64_t *cstep);

/* wgmma (tensor-core-layouts.md 3.4-3.6): why view g (its start aligned
 * to align bytes) cannot be operand opnd (0: A, M x K; 1: B, K x N) read
 * through a matrix descriptor (NULL: it can), in words for a diagnostic;
 * and its descriptor but for the start address: LBO and SBO in bytes,
 * the swizzle span (32, 64 or 128 bytes), MN-major or K-major. */
typedef struct WgDesc {
	int64_t lbo, sbo;
	int swz;
	bool mn;
} WgDesc;
const char *sv_wgmma_problem(const SmemGeom *g, int64_t align, int opnd);
void sv_wgmma_desc(const SmemGeom *g, int opnd, WgDesc *d);
/* Bits 16..63 of the descriptor (LBO, SBO, the swizzle's code). */
uint64_t sv_wgmma_desc_bits(const WgDesc *d);

/* ---- smemplan.c: scratch and the shared-memory plan ---------------------- */

/* Bytes of the buffer an smem_alloc or mbar_alloc op makes (type t). */
int64_t ir_smem_bytes(const Op *op, Type *t);

/* The dim of a shared-memory view that is contiguous in memory: the
 * buffer's last, moved by the smem_trans ops on the way. */
int ir_view_contig(Func *f, Value v);
/* The smem_alloc a shared-memory view is in (NULL: none). */
Op *ir_view_buffer(Func *f, Value v);
/* The view dot operand i (0: a, 1: b) is read from directly on the
 * tensor cores (a smem_load of a rank-2 view, not of a tiled buffer; 0:
 * the operand is staged). */
Value ir_dot_view(const Target *t, Func *f, Op *op, int i);
/* Bytes of shared memory op needs for itself (laid-out IR). */
int64_t ir_op_scratch(const Target *t, Func *f, Op *op);

typedef struct SmemEntry {
	Op *op;                 /* a buffer's alloc, or an op's scratch */
	int64_t size, off, align;
	uint32_t first, last;   /* live from op position first to last */
	uint32_t group;         /* made inside one task (0: not): the task's */
	uint32_t span;          /* ... and its `tasks` op's position */
} SmemEntry;

typedef struct SmemPlan {
	Vec(SmemEntry) e;
	int64_t total;
} SmemPlan;

/* Elements per vector access of a smem_load, smem_store or cp_async
 * (its destination) of a laid-out, planned kernel: registers contiguous
 * along the view's contiguous dim, up to 16 bytes, aligned as the plan
 * and the view's strides guarantee (a row pitch that is not a multiple of
 * the vector's bytes takes it down).  ax: divisibility of indices (axis
 * analysis), or NULL. */
int ir_smem_vec(Func *f, Op *op, const Axis *ax);
/* The byte alignment the plan gives a buffer of type t: 128, or a tiled
 * swizzle's 8-row atom (1024 for 128 bytes). */
int64_t ir_smem_align(Type *t);
/* Places f's buffers and scratch (storage from a). */
void ir_smem_plan(const Target *t, Func *f, SmemPlan *p, Arena *a);

/* ---- target.c: the target table ---------------------------------------------- */

/* One GPU target (QBE's Target): what --target= names, what code
 * generation asks of it, and the features its ops may use. */
struct Target {
	int sm;                 /* 80, 90, 100: CgOpts.sm, FrontOpts.sm */
	const char *name;       /* "sm_90a": LLVM's CPU and ptxas's -arch */
	int ptx;                /* PTX ISA version x10 (LLVM feature +ptxNN) */
	int64_t smem;           /* shared memory per program, in bytes */
	int64_t params;         /* bytes of a kernel's parameters (ptxas) */
	int64_t smem_pipeline;  /* what software pipelining may take of it */
	uint64_t features;      /* bit TF_x: the target has feature x */
};

const Target *target_get(int sm);                /* NULL if unknown */
const Target *target_lookup(const char *name);   /* "sm_90a"; NULL */
static inline bool target_has(const Target *t, TargetFeature f) { return f == TF_NONE || (t->features >> f & 1); }
const char *target_feature_name(TargetFeature f);  /* "wgmma" */
/* The feature op needs on any target: its ops.def row, refined by its
 * operands (fp8 dot, remote arrive, multicast tma_load). */
TargetFeature target_op_feature(Func *f, Op *op);
/* Why target t cannot run op, in the user's words (in arena a; what the
 * source src wrote at the op), or NULL when it can. */
const char *target_lacks(const Target *t, Func *f, Op *op, const Source *src,
			 Arena *a);
/* Bytes of kernel f's parameters as PTX lays them out (each aligned to
 * its size; a tensor descriptor 128 bytes aligned to 64). */
int64_t target_param_bytes(Func *f);
/* Whether kernel f's parameters fit target t's parameter space; if not,
 * reports it at the kernel. */
bool target_check_params(Func *f, Diag *d, const Target *t);
/* Reports every op the target lacks, shared memory and parameters over
 * their limits; false if there was one. */
bool target_check_module(Module *m, Diag *d, const Target *t);

#endif
