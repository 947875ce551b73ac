" Vim syntax file
" Language:	tlx, the tile-kernel language (docs/language.md)
" Filenames:	*.tlx
"
" Keywords, type names, literals and operators follow lexer/lex.re;
" builtins parser/builtins.c; kernel attributes parser/sema.c.
" testsuite/driver/syntax.test checks that they agree.

if exists("b:current_syntax")
	finish
endif
let s:cpo_save = &cpo
set cpo&vim

syn case match

" ---- keywords (lexer/lex.re) ------------------------------------------------
syn keyword tlxConditional	if else
syn keyword tlxRepeat		for in step while
syn keyword tlxStatement	return break continue
syn keyword tlxStructure	kernel fn nextgroup=tlxFuncName skipwhite
syn keyword tlxStorageClass	const nextgroup=tlxConstName skipwhite
syn keyword tlxDecl		let var shared pipe
" a keyword in label position, as in tma_load(..., barrier: b), is a name
syn match   tlxDecl		"\<barrier\>\%([ \t]*:\)\@!"
syn keyword tlxKeyword		tasks static_assert
syn keyword tlxKeyword		task nextgroup=tlxFuncName skipwhite
syn keyword tlxBoolean		true false
syn keyword tlxConstant		None

syn match   tlxFuncName		"\<\h\w*" contained
syn match   tlxConstName	"\<\h\w*" contained

" ---- types -------------------------------------------------------------------
syn keyword tlxType		i1 i8 i16 i32 i64 u8 u16 u32 u64
syn keyword tlxType		f16 bf16 f32 f64 f8e4m3 f8e5m2
syn keyword tlxType		tma

" ---- kernel attributes, builtins and methods ----------------------------------
syn match   tlxAttribute	"\<\%(warps\|grid\|cluster\|stages\|tune\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(program_id\|num_programs\|range\|zeros\|full\|load\|store\|where\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(exp\|exp2\|log\|log2\|sqrt\|rsqrt\|sin\|cos\|tanh\|erf\|sigmoid\|floor\|ceil\|abs\|fma\|cdiv\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(min\|max\|sum\|prod\|argmax\|argmin\|dot\|trans\|reshape\|expand_dims\|broadcast_to\|bitcast\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(atomic_add\|atomic_max\|atomic_min\|atomic_xchg\|atomic_and\|atomic_or\|atomic_xor\|atomic_cas\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(swizzle2d\|assert\|wait\|arrive\|expect_bytes\|fence_async_shared\|sync_threads\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(tma_load\|tma_store\|tma_store_wait\|cp_async\|cp_async_commit\|cp_async_wait\)\>\ze[ \t]*("
syn match   tlxBuiltin		"\<\%(dot_async\|dot_wait\|cluster_rank\|cluster_sync\|replica\|tiles\)\>\ze[ \t]*("
syn match   tlxMethod		"\.\@1<=\<\%(to\|acquire\|commit\|consume\|release\)\>\ze[ \t]*("

" ---- operators -----------------------------------------------------------------
syn match   tlxOperator		"[-+*/%&|^~!<>=]"
syn match   tlxOperator		"\.\."
" the '*' of a pointer type *T (after tlxOperator, so that it wins)
syn match   tlxPointer		"\*\ze[ \t]*\%(\*\|\<\%(i1\|i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\|f16\|bf16\|f32\|f64\|f8e4m3\|f8e5m2\|tma\)\>\)"

" ---- literals ----------------------------------------------------------------
" Of several matches at one place the last defined wins: a bad number first.
syn match   tlxNumberError	"\<\d\w*"
syn match   tlxNumber		"\<\d\%(_\=\d\)*\%(i1\|i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\)\=\>"
syn match   tlxNumber		"\<0x\x\%(_\=\x\)*\%(i1\|i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\)\=\>"
syn match   tlxNumber		"\<0o\o\%(_\=\o\)*\%(i1\|i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\)\=\>"
syn match   tlxNumber		"\<0b[01]\%(_\=[01]\)*\%(i1\|i8\|i16\|i32\|i64\|u8\|u16\|u32\|u64\)\=\>"
syn match   tlxFloat		"\<\d\%(_\=\d\)*\%(f16\|bf16\|f32\|f64\|f8e4m3\|f8e5m2\)\>"
syn match   tlxFloat		"\<\d\%(_\=\d\)*\%(\.\d\%(_\=\d\)*\%([eE][+-]\=\d\%(_\=\d\)*\)\=\|[eE][+-]\=\d\%(_\=\d\)*\)\%(f16\|bf16\|f32\|f64\|f8e4m3\|f8e5m2\)\=\>"

" A string ends on the line where it starts.
syn match   tlxEscapeError	"\\." contained
syn match   tlxEscape		+\\[nt\\"]+ contained
syn region  tlxString		start=+"+ skip=+\\\\\|\\"+ end=+"+ end=+$+ contains=tlxEscape,tlxEscapeError,@Spell

" ---- comments (block comments nest) --------------------------------------------
syn keyword tlxTodo		TODO FIXME XXX NOTE contained
syn region  tlxLineComment	start="//" end="$" contains=tlxTodo,@Spell
syn region  tlxBlockComment	start="/\*" end="\*/" contains=tlxBlockComment,tlxTodo,@Spell fold extend
syn sync ccomment tlxBlockComment minlines=50

hi def link tlxConditional	Conditional
hi def link tlxRepeat		Repeat
hi def link tlxStatement	Statement
hi def link tlxStructure	Structure
hi def link tlxStorageClass	StorageClass
hi def link tlxDecl		Keyword
hi def link tlxKeyword		Keyword
hi def link tlxBoolean		Boolean
hi def link tlxConstant		Constant
hi def link tlxFuncName		Function
hi def link tlxConstName	Constant
hi def link tlxType		Type
hi def link tlxPointer		Type
hi def link tlxAttribute	PreProc
hi def link tlxBuiltin		Function
hi def link tlxMethod		Function
hi def link tlxOperator		Operator
hi def link tlxNumberError	Error
hi def link tlxNumber		Number
hi def link tlxFloat		Float
hi def link tlxEscapeError	Error
hi def link tlxEscape		SpecialChar
hi def link tlxString		String
hi def link tlxTodo		Todo
hi def link tlxLineComment	Comment
hi def link tlxBlockComment	Comment

let b:current_syntax = "tlx"
let &cpo = s:cpo_save
unlet s:cpo_save
