/*
 * ast.h: tokens, the syntax tree and the environment as the compiler
 * stages share them. lex.c produces tokens, parse.c the tree (in an
 * arena), check.c annotates types and resolutions, compile.c emits code.
 */
#ifndef DRA_CEL_AST_H
#define DRA_CEL_AST_H

#include "cel_int.h"

/* ---- tokens ---------------------------------------------------------- */

typedef enum cel_tok {
    TK_EOF, TK_ERROR, TK_IDENT, TK_INT, TK_UINT, TK_DOUBLE, TK_STRING, TK_BYTES,
    TK_TRUE, TK_FALSE, TK_NULL, TK_IN,
    TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
    TK_DOT, TK_COMMA, TK_COLON, TK_QUESTION, TK_PLUS, TK_MINUS, TK_STAR,
    TK_SLASH, TK_PERCENT, TK_BANG, TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE,
    TK_AND, TK_OR, TK_BACKTICK_IDENT
} cel_tok;

typedef struct cel_token {
    cel_tok kind;
    size_t off, len; /* source span */
    /* literal payload */
    int64_t i;
    uint64_t u;
    double d;
    const char *s; /* decoded string/bytes/ident (arena), NUL-terminated */
    size_t slen;
} cel_token;

typedef struct cel_lexer {
    const char *src;
    size_t len, pos;
    dra_arena *arena;
    const char *err; /* first error message (static or arena) */
    size_t err_off;
} cel_lexer;

CEL_FUNC void cel_lex_init(cel_lexer *lx, const char *src, size_t len, dra_arena *a);
/* Scans the next token. On a bad token returns TK_ERROR with lx->err set. */
CEL_FUNC cel_tok cel_lex_next(cel_lexer *lx, cel_token *t);

/* ---- AST ------------------------------------------------------------- */

typedef enum cel_ast_kind {
    AST_CONST, AST_IDENT, AST_SELECT, AST_CALL, AST_LIST, AST_MAP,
    AST_STRUCT, AST_COMPREHENSION
} cel_ast_kind;

typedef struct cel_ast cel_ast;

/* Where a name resolved to (filled by the checker, or by the compiler's
 * own resolution when checking is off). */
typedef enum cel_ref_kind {
    REF_NONE, REF_VAR, REF_LOCAL, REF_TYPE, REF_CONST
} cel_ref_kind;

struct cel_ast {
    uint8_t kind;      /* cel_ast_kind */
    uint8_t test_only; /* SELECT: has() presence test */
    uint8_t optional;  /* SELECT: .?f */
    uint8_t ref_kind;  /* cel_ref_kind */
    int32_t ref;       /* var index / local slot */
    size_t off;        /* source offset for messages */
    cel_value cval;    /* AST_CONST (also REF_CONST: resolved type value) */
    const char *name;  /* ident, select field, call function, struct type */
    size_t namelen;
    cel_ast *target;   /* select operand; receiver of a member call */
    cel_ast **args;    /* call args; list items; map keys and values
                          interleaved (k0, v0, k1, v1 ...) */
    size_t nargs;
    uint8_t *opt;      /* list: optional element flags; map: optional entry */
    /* comprehension */
    const char *iter_var, *iter_var2, *accu_var;
    cel_ast *range, *accu_init, *cond, *step, *result;
    int32_t iter_slot, iter2_slot, accu_slot;
    /* checker output */
    const cel_type *type;
    const cel_overload **cands; /* call: candidate overloads */
    size_t ncands;
};

#define CEL_MAX_DEPTH 250   /* parser recursion, like cel-go */
#define CEL_MAX_CODEPOINTS 100000

typedef struct cel_parse_opts {
    int disable_macros;
} cel_parse_opts;

/* Parses |src| into an AST in |a|. Returns NULL and adds an error with
 * line:col and a caret line to |d| on failure (DRA_EPARSE in *err, or
 * DRA_ENOMEM). */
CEL_FUNC cel_ast *cel_parse(dra_arena *a, const char *src, size_t len,
                            const cel_parse_opts *po, dra_diag *d, dra_err *err);

/* Adds "ERROR: <input>:L:C: msg\n | src line\n | ....^" to |d|. */
CEL_FUNC void cel_report(dra_diag *d, const char *src, size_t len, size_t off,
                         const char *fmt, ...) DRA_PRINTF(5, 6);

/* ---- environment ------------------------------------------------------ */

typedef struct cel_var {
    const char *name;
    const cel_type *type;
} cel_var;

typedef struct cel_fn_entry {
    const char *name;
    const cel_overload **ovs; /* all overloads with this name */
    const cel_type ***sig;    /* per overload: result, then args */
    size_t n, cap;
} cel_fn_entry;

struct dra_cel_env {
    const dra_mem *mem;
    dra_arena arena;          /* types, names, tables */
    dra_cel_options opts;
    cel_env_kind kind;
    cel_var *vars;
    size_t nvars, capvars;
    dra_map fns;              /* name -> cel_fn_entry* */
    dra_map types;            /* extra type names -> cel_type* */
    char *container;
    const cel_type *device_type; /* DRA */
    int oom;                  /* an allocation failed while parsing a type */
};

/* Parses a type string ("list(int)", "map(string, dyn)"), interning it in
 * the env arena. NULL when malformed. */
CEL_FUNC const cel_type *cel_env_parse_type(dra_cel_env *env, const char *s);
CEL_FUNC const cel_fn_entry *cel_env_fn(const dra_cel_env *env, const char *name,
                                        size_t len);
CEL_FUNC int cel_env_var(const dra_cel_env *env, const char *name, size_t len);
/* Registers every enabled library (stdlib + lib_*.c) in |env|. */
CEL_FUNC dra_err cel_env_register_libs(dra_cel_env *env);
CEL_FUNC dra_err cel_env_add_overloads(dra_cel_env *env, const cel_overload *ovs,
                                       size_t n);
CEL_FUNC const cel_type *cel_env_find_type(const dra_cel_env *env, const char *name,
                                           size_t len);

CEL_FUNC dra_err cel_env_new_kind(const dra_mem *mem, const dra_cel_options *opts,
                                  cel_env_kind kind, dra_cel_env **out);
CEL_FUNC dra_err cel_env_declare_type(dra_cel_env *env, const char *name, const cel_type *t);
CEL_FUNC dra_err cel_env_add_object_type(dra_cel_env *env, const cel_object_type *ot);

/* The standard library overloads (stdlib.c). */
extern const cel_lib cel_lib_std;
extern const cel_lib cel_lib_encoders; /* base64, conformance env only */

/* ---- checker ---------------------------------------------------------- */

typedef struct cel_check_opts {
    int disable_check; /* resolve names only, every type dyn */
} cel_check_opts;

typedef struct cel_check_out {
    int nlocals;          /* local slots the program needs */
    const char **vars;    /* activation variables used, by name */
    size_t nvars;
    const cel_type *type; /* the expression's type */
} cel_check_out;

/* Types the tree and resolves names and overloads. DRA_ETYPE with
 * messages in |d| on failure (DRA_ENOMEM). Locals get slots. */
CEL_FUNC dra_err cel_check(dra_cel_env *env, dra_arena *a, cel_ast *root,
                           const char *src, size_t len, const cel_check_opts *co,
                           cel_check_out *out, dra_diag *d);
CEL_FUNC const cel_type *cel_type_list_of(dra_arena *a, const cel_type *elem);
CEL_FUNC const cel_type *cel_type_map_of(dra_arena *a, const cel_type *k, const cel_type *v);
CEL_FUNC const cel_type *cel_type_wrap(dra_arena *a, cel_tkind kind, const char *name,
                                       const cel_type *p0);
CEL_FUNC int cel_type_equal(const cel_type *a, const cel_type *b);
CEL_FUNC void cel_type_format(const cel_type *t, dra_buf *b);
/* Worst-case cost of a checked tree, with DRA size bounds when |dra|. */
CEL_FUNC uint64_t cel_estimate_cost(const dra_cel_env *env, const cel_ast *root);

#endif
