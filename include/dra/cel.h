/*
 * dra/cel.h: the CEL engine. Source text -> lexer -> parser (AST) ->
 * checker (types against an environment) -> compiled program -> VM.
 * Compile once, evaluate many: a program is immutable and refcounted, so
 * threads and caches share it; evaluation state lives in a dra_cel_vm the
 * caller owns and reuses, so the hot path does not allocate.
 *
 * This header holds the part every user needs (the DRA selector
 * environment and device activation). The general value API used by the
 * conformance runner lives below it.
 */
#ifndef DRA_CEL_H
#define DRA_CEL_H

#include "dra/base.h"
#include "dra/codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kubernetes' limits for DRA selectors. */
#define DRA_CEL_MAX_EXPR_LEN 10240          /* bytes */
#define DRA_CEL_COST_LIMIT 1000000          /* runtime cost per evaluation */

typedef struct dra_cel_env dra_cel_env;
typedef struct dra_cel_program dra_cel_program;
typedef struct dra_cel_vm dra_cel_vm;

/* ---- environments ---------------------------------------------------- */

typedef struct dra_cel_options {
    /* 0 selects the default for the environment. */
    uint64_t cost_limit;        /* runtime cost limit; default 1,000,000 */
    size_t max_expr_len;        /* default 10,240 */
    int strings_version;        /* strings extension version; DRA: k8s's */
    int homogeneous_literals;   /* reject mixed-type list/map literals */
    /* Compile to plain instructions only: no fused device reads and
     * comparisons, fused exists/all loops or hoisted loop invariants.
     * Results, errors and costs are the same, only slower: the reference
     * the optimised code is tested against. */
    int plain_code;
} dra_cel_options;

/* The environment Kubernetes uses for DeviceClass and request selectors:
 * one variable `device` with fields driver, attributes, capacity and
 * allowMultipleAllocations, plus the Kubernetes libraries. |opts| may be
 * NULL. The env is caller-owned: dra_cel_env_free. */
dra_err dra_cel_env_new_dra(const dra_mem *mem, const dra_cel_options *opts,
                            dra_cel_env **out);
void dra_cel_env_free(dra_cel_env *env);

/* ---- compile ---------------------------------------------------------- */

/* Parse and check |expr| (|len| bytes) in |env|. On failure returns
 * DRA_EPARSE (syntax), DRA_ETYPE (check), DRA_ELIMIT (length),
 * DRA_EUNSUPPORTED (protobuf message literals), DRA_ENOMEM, and adds
 * cel-go style messages to |d| ("ERROR: <input>:1:8: undefined field
 * 'x'" followed by the source line and a caret line). On success *out
 * is a new program with refcount 1. The program refers to types and
 * overload tables of |env|: the env must outlive every program compiled
 * in it. Programs are immutable and may be evaluated by several threads
 * at once, each with its own dra_cel_vm. */
dra_err dra_cel_compile(dra_cel_env *env, const char *expr, size_t len,
                        dra_cel_program **out, dra_diag *d);
dra_cel_program *dra_cel_program_ref(dra_cel_program *p);
void dra_cel_program_unref(dra_cel_program *p); /* NULL ok */
/* Worst-case cost estimate from the checker, as Kubernetes computes it. */
uint64_t dra_cel_program_cost_estimate(const dra_cel_program *p);

/* ---- evaluation state ------------------------------------------------- */

/* A reusable evaluation context: stacks, scratch arena, cost counter. One
 * per thread; not shared. */
dra_err dra_cel_vm_new(const dra_mem *mem, dra_cel_vm **out);
void dra_cel_vm_free(dra_cel_vm *vm);
/* Runtime cost of the last evaluation on |vm|. */
uint64_t dra_cel_vm_last_cost(const dra_cel_vm *vm);

/* ---- the DRA device activation ----------------------------------------
 * The view of one device a selector sees. Attribute and capacity names
 * are fully qualified ("gpu.nvidia.com/productName"); a name without a
 * domain belongs to |driver|'s domain, as in a ResourceSlice, and the
 * caller may pass either form. All pointers are borrowed for the life of
 * the prepared device. */
typedef enum dra_cel_attr_kind {
    DRA_CEL_ATTR_INT,
    DRA_CEL_ATTR_BOOL,
    DRA_CEL_ATTR_STRING,
    DRA_CEL_ATTR_VERSION
} dra_cel_attr_kind;

typedef struct dra_cel_attr {
    const char *name;
    dra_cel_attr_kind kind;
    int64_t i;
    int b;
    const char *s; /* string, or the version text */
    dra_semver version; /* parsed when kind is VERSION */
} dra_cel_attr;

typedef struct dra_cel_capacity {
    const char *name;
    dra_quantity value;
} dra_cel_capacity;

typedef struct dra_cel_device {
    const char *driver;
    const dra_cel_attr *attrs;
    size_t nattrs;
    const dra_cel_capacity *caps;
    size_t ncaps;
    int allow_multiple_allocations;
} dra_cel_device;

/* A device indexed for fast selector evaluation (attributes grouped by
 * domain, names hashed). Build once per device, evaluate many programs.
 * Owned by the caller; borrows |dev| and everything it points to. */
typedef struct dra_cel_prepared dra_cel_prepared;
dra_err dra_cel_device_prepare(const dra_mem *mem, const dra_cel_device *dev,
                               dra_cel_prepared **out);
void dra_cel_prepared_free(dra_cel_prepared *pd);

/* Evaluate a selector. DRA_OK with *result 0/1; DRA_ETYPE when the result
 * is not a bool; DRA_EEVAL for a runtime error (e.g. "no such key: x");
 * DRA_ECOST when the cost limit is hit ("actual cost limit exceeded").
 * The error text goes to |d| (may be NULL). No heap allocation on the
 * common path. */
dra_err dra_cel_eval_device(const dra_cel_program *p, dra_cel_vm *vm,
                            const dra_cel_prepared *dev, int *result,
                            dra_diag *d);

/* ---- what a selector reads of the device --------------------------------
 * A selector whose device reads are all fixed (the driver, the sharing
 * flag, attributes and capacities named by a constant domain and id)
 * gives the same result, cost and error on every device that has the
 * same values there (absent ones included), so a caller may evaluate it
 * once per distinct combination of those values (the allocator does). */
typedef enum dra_cel_read_field {
    DRA_CEL_READ_DRIVER,
    DRA_CEL_READ_ATTRIBUTE,      /* device.attributes[domain][id] */
    DRA_CEL_READ_CAPACITY,       /* device.capacity[domain][id] */
    DRA_CEL_READ_ALLOW_MULTIPLE  /* device.allowMultipleAllocations */
} dra_cel_read_field;

typedef struct dra_cel_read {
    dra_cel_read_field field;
    /* attribute and capacity reads (else NULL, 0): not NUL-terminated,
     * borrowed from the program */
    const char *domain, *id;
    size_t domain_len, id_len;
} dra_cel_read;

/* Writes the distinct device reads of |p| (a program compiled in the DRA
 * environment) to |out|, at most |max| of them, and returns how many
 * there are (more than |max|: ask again with room for all). Returns -1
 * when |p| reads the device in some other way (the whole `device`, a
 * whole attribute or capacity map as in size(), exists() over its keys
 * or a computed key), or was compiled with plain_code or in another
 * environment: its result may then depend on anything about the
 * device. */
long dra_cel_program_device_reads(const dra_cel_program *p, dra_cel_read *out, size_t max);


/* ---- general environments and values ---------------------------------
 * Used by the conformance runner, `dractl cel eval` and tests. */

/* The standard environment: the CEL standard library, optionals,
 * cel.bind, the extension libraries, no variables. |opts| may be NULL.
 * Caller-owned: dra_cel_env_free. */
dra_err dra_cel_env_new_std(const dra_mem *mem, const dra_cel_options *opts,
                            dra_cel_env **out);
/* Declares variable |name| (copied) of CEL type |type|, written as CEL
 * prints types: "int", "list(string)", "map(string, dyn)",
 * "google.protobuf.Timestamp". DRA_EINVAL for a malformed type,
 * DRA_EEXIST when declared already, DRA_ENOMEM. */
dra_err dra_cel_env_declare(dra_cel_env *env, const char *name, const char *type);
/* Sets the container (namespace) names resolve against ("" for none). */
dra_err dra_cel_env_set_container(dra_cel_env *env, const char *container);

enum {
    DRA_CEL_DISABLE_CHECK = 1,  /* parse only; names resolve at run time */
    DRA_CEL_DISABLE_MACROS = 2  /* has(), all() ... are plain calls */
};
/* dra_cel_compile with |flags| (DRA_CEL_DISABLE_*). Same errors. */
dra_err dra_cel_compile_ex(dra_cel_env *env, const char *expr, size_t len,
                           unsigned flags, dra_cel_program **out, dra_diag *d);
/* The checked result type as CEL prints it ("bool", "dyn"); borrowed
 * from the program. */
const char *dra_cel_program_type(const dra_cel_program *p);

/* Evaluates |p| with variables bound from |bindings|, a map from
 * variable name to a JSON value (dra_doc: null, bool, int, float, string,
 * list, map with string keys), and appends the result as a CEL literal
 * ("1", "\"a\"", "[1, 2]") to |out|. Returns DRA_OK for a value,
 * DRA_EEVAL for an evaluation error (its message appended to |out| and
 * |d|), DRA_ECOST, DRA_ENOMEM. |bindings| may be NULL. */
dra_err dra_cel_eval_json(const dra_cel_program *p, dra_cel_vm *vm,
                          const dra_doc *bindings, dra_buf *out, dra_diag *d);

/* Runs one cel-spec conformance case, given as the protobuf-JSON form of
 * cel.expr.conformance.test.SimpleTest (as @bufbuild/cel-spec ships it).
 * *status: 0 passed, 1 failed, 2 skipped (needs protobuf messages or a
 * feature the engine does not have); |detail| (may be NULL) gets a short
 * reason for failures and skips. DRA_OK unless out of memory. */
dra_err dra_cel_conformance_case(const dra_mem *mem, const dra_doc *test,
                                 int *status, dra_buf *detail);

#ifdef __cplusplus
}
#endif
#endif
