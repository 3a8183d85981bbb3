/*
 * dra/base.h: the ground every module stands on. Error codes, the pluggable
 * allocator, arenas, a growable byte buffer, a string-keyed hash map and the
 * diagnostics list that carries Kubernetes field paths.
 *
 * Ownership: everything here is caller-owned; the init and fini functions pair for structs
 * the caller allocates, and every *_fini accepts a zeroed or already-finished
 * struct.
 */
#ifndef DRA_BASE_H
#define DRA_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DRA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define DRA_HIDDEN __attribute__((visibility("hidden")))
#else
#define DRA_PRINTF(f, a)
#define DRA_HIDDEN
#endif

/* ---- error codes ------------------------------------------------------
 * X(name, value, message). Append-only: codes are part of the ABI.
 * Codes at or below DRA_EFATAL mean the object that returned them is
 * unusable afterwards. */
#define DRA_ERRORS(X)                                                   \
    X(DRA_OK, 0, "success")                                             \
    X(DRA_ENOMEM, -1, "out of memory")                                  \
    X(DRA_EINVAL, -2, "invalid argument")                               \
    X(DRA_EPARSE, -3, "syntax error")                                   \
    X(DRA_EINVALID, -4, "invalid object")                               \
    X(DRA_ETYPE, -5, "type error")                                      \
    X(DRA_EEVAL, -6, "evaluation error")                                \
    X(DRA_ECOST, -7, "cost limit exceeded")                             \
    X(DRA_ENOTFOUND, -8, "not found")                                   \
    X(DRA_EUNSAT, -9, "cannot allocate")                                \
    X(DRA_ELIMIT, -10, "limit exceeded")                                \
    X(DRA_ETIMEOUT, -11, "deadline exceeded")                           \
    X(DRA_EIO, -12, "input/output error")                               \
    X(DRA_ERANGE, -13, "value out of range")                            \
    X(DRA_EUNSUPPORTED, -14, "not supported")                           \
    X(DRA_ECONFLICT, -15, "conflict")                                   \
    X(DRA_EEXIST, -16, "already exists")                                \
    X(DRA_ECANCELED, -17, "canceled")                                   \
    X(DRA_EGONE, -18, "resource version too old")                       \
    X(DRA_EUNAUTHORIZED, -19, "unauthorized")                           \
    X(DRA_EFORBIDDEN, -20, "forbidden")                                 \
    X(DRA_EUNAVAILABLE, -21, "service unavailable")                     \
    X(DRA_ETOOLARGE, -22, "request entity too large")

typedef enum dra_err {
#define DRA_X_ENUM(name, value, msg) name = value,
    DRA_ERRORS(DRA_X_ENUM)
#undef DRA_X_ENUM
    DRA_EFATAL = -1000 /* codes at or below this leave the object unusable */
} dra_err;

/* Static strings; unknown codes give "unknown error" / "DRA_E?". */
const char *dra_strerror(int err);
const char *dra_errname(int err);

/* ---- memory -----------------------------------------------------------
 * Every component allocates through a dra_mem. A NULL dra_mem pointer
 * anywhere in the API means libc. realloc(ud, NULL, n) allocates;
 * free(ud, NULL) is a no-op. Tests plug in failing allocators here. */
typedef struct dra_mem {
    void *(*realloc)(void *ud, void *ptr, size_t size);
    void (*free)(void *ud, void *ptr);
    void *ud;
} dra_mem;

void *dra_malloc(const dra_mem *mem, size_t size);
void *dra_calloc(const dra_mem *mem, size_t n, size_t size); /* checks n*size */
void *dra_realloc(const dra_mem *mem, void *ptr, size_t size);
void dra_free(const dra_mem *mem, void *ptr);
char *dra_strdup(const dra_mem *mem, const char *s); /* NULL in, NULL out */
/* The same four with the (size..., user data) shape of the allocator hooks
 * C libraries take (nghttp2's nghttp2_mem, say): |mem| is the dra_mem. */
void *dra_mem_hook_malloc(size_t size, void *mem);
void dra_mem_hook_free(void *ptr, void *mem);
void *dra_mem_hook_calloc(size_t n, size_t size, void *mem);
void *dra_mem_hook_realloc(void *ptr, size_t size, void *mem);

/* Grow |*ptr| (an array of |elem|-byte items with capacity |*cap|) so it can
 * hold |need| items. Doubles; checks for overflow. DRA_OK or DRA_ENOMEM
 * (then *ptr and *cap are unchanged). */
dra_err dra_grow(const dra_mem *mem, void **ptr, size_t *cap, size_t need,
                 size_t elem);

/* A test allocator: fails every allocation once |fail_after| allocations
 * have succeeded (fail_after < 0: never fails). Counts live blocks so a
 * test can assert there is no leak. */
typedef struct dra_failmem {
    dra_mem mem;
    long fail_after;
    long allocs;  /* successful allocations and reallocs of NULL */
    long live;    /* blocks currently allocated */
    int failed;   /* set once an allocation was refused */
} dra_failmem;
void dra_failmem_init(dra_failmem *fm, long fail_after);

/* ---- arena ------------------------------------------------------------
 * Bump allocator for things that die together (a document, an AST, a
 * request). Memory is 16-byte aligned and freed only by fini/reset.
 * Blocks start small (256 bytes) and double up to 64 KiB, so the many
 * tiny arenas (one per prepared device, say) stay tiny while big ones
 * still allocate rarely. */
typedef struct dra_arena_block dra_arena_block;
typedef struct dra_arena {
    const dra_mem *mem;
    dra_arena_block *head;
    size_t used, total; /* bytes handed out; bytes held in blocks */
    size_t next_block;  /* size of the next block; 0 before the first */
} dra_arena;

void dra_arena_init(dra_arena *a, const dra_mem *mem);
void dra_arena_fini(dra_arena *a);
void dra_arena_reset(dra_arena *a); /* frees all but the newest block */
void *dra_arena_alloc(dra_arena *a, size_t size);  /* NULL on ENOMEM */
void *dra_arena_zalloc(dra_arena *a, size_t size); /* zeroed */
void *dra_arena_array(dra_arena *a, size_t n, size_t size); /* zeroed, checked */
char *dra_arena_strdup(dra_arena *a, const char *s);
char *dra_arena_strndup(dra_arena *a, const char *s, size_t len); /* NUL-ends */
char *dra_arena_sprintf(dra_arena *a, const char *fmt, ...) DRA_PRINTF(2, 3);

/* ---- buffer -----------------------------------------------------------
 * Growable byte string, always NUL-terminated when p != NULL. Appends that
 * fail leave the buffer unchanged, set |oom| and return DRA_ENOMEM, so a
 * sequence of appends can be checked once at the end. */
typedef struct dra_buf {
    const dra_mem *mem;
    char *p;
    size_t len, cap;
    int oom;
} dra_buf;

void dra_buf_init(dra_buf *b, const dra_mem *mem);
void dra_buf_fini(dra_buf *b);
void dra_buf_reset(dra_buf *b); /* len = 0, keeps memory */
dra_err dra_buf_append(dra_buf *b, const void *data, size_t len);
dra_err dra_buf_puts(dra_buf *b, const char *s);
dra_err dra_buf_putc(dra_buf *b, char c);
dra_err dra_buf_printf(dra_buf *b, const char *fmt, ...) DRA_PRINTF(2, 3);
dra_err dra_buf_vprintf(dra_buf *b, const char *fmt, va_list ap);
/* Hands the string to the caller (free with dra_free(b->mem, s)); the
 * buffer is left empty. Returns "" allocated when empty; NULL on ENOMEM. */
char *dra_buf_detach(dra_buf *b);

/* ---- UTF-8 ------------------------------------------------------------ */

/* Decodes the UTF-8 sequence at the start of |s| (|len| bytes available)
 * into *cp. Returns its length (1..4), or 0 when |len| is 0 or the bytes
 * are not valid UTF-8 (truncated, overlong, a surrogate or above
 * U+10FFFF); *cp is then left unchanged. */
size_t dra_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* ---- time ------------------------------------------------------------- */

/* Adds |ms| (>= 0) to |ts|, carrying nanoseconds into seconds: a deadline
 * for pthread_cond_timedwait from a clock_gettime reading. Reads no
 * clock itself. */
void dra_timespec_add_ms(struct timespec *ts, int64_t ms);

/* ---- hash map ---------------------------------------------------------
 * Open addressing, string keys (borrowed: the caller keeps them alive,
 * typically in an arena), void * values. Iteration order is insertion
 * order, so output built from a map is deterministic. */
typedef struct dra_map_entry {
    const char *key;
    size_t keylen;
    void *val;
    uint64_t hash;
} dra_map_entry;

typedef struct dra_map {
    const dra_mem *mem;
    dra_map_entry *entries; /* dense, insertion order; deleted: key NULL */
    size_t n, cap, live;
    uint32_t *slots; /* index+1 into entries; 0 empty */
    size_t nslots;
} dra_map;

void dra_map_init(dra_map *m, const dra_mem *mem);
void dra_map_fini(dra_map *m);
uint64_t dra_hash(const void *data, size_t len); /* FNV-1a 64 */
/* Insert or replace. DRA_OK or DRA_ENOMEM. */
dra_err dra_map_put(dra_map *m, const char *key, size_t keylen, void *val);
/* NULL when absent (store non-NULL values, or use dra_map_find). */
void *dra_map_get(const dra_map *m, const char *key, size_t keylen);
dra_map_entry *dra_map_find(const dra_map *m, const char *key, size_t keylen);
int dra_map_del(dra_map *m, const char *key, size_t keylen); /* 1 if removed */
/* Iterate: for (size_t i = 0; i < m->n; i++) if (m->entries[i].key) ... */

/* ---- field paths ------------------------------------------------------
 * Builds Kubernetes field paths (`spec.devices.requests[0].exactly.count`,
 * `spec.devices[2].attributes[gpu.nvidia.com/uuid]`) as a stack, so a
 * recursive validator pushes on the way down and pops on the way up. */
#define DRA_PATH_MAX 1024
typedef struct dra_path {
    char s[DRA_PATH_MAX];
    size_t len;
    size_t marks[64];
    size_t depth;
} dra_path;

void dra_path_init(dra_path *p, const char *root); /* root may be NULL */
void dra_path_field(dra_path *p, const char *name);  /* .name */
void dra_path_index(dra_path *p, size_t i);          /* [i] */
void dra_path_key(dra_path *p, const char *key);     /* [key] */
void dra_path_pop(dra_path *p);
const char *dra_path_str(const dra_path *p);

/* ---- diagnostics ------------------------------------------------------
 * An ordered list of errors. Each entry has a field path (may be ""), a
 * message, and a source position (line/col 1-based, 0 when unknown).
 * Printed as "path: message" like kube-apiserver's field errors. */
typedef struct dra_diag_entry {
    char *path;
    char *msg;
    int line, col;
} dra_diag_entry;

typedef struct dra_diag {
    const dra_mem *mem;
    dra_diag_entry *v;
    size_t n, cap;
    size_t max;   /* stop recording after this many (0: unlimited) */
    size_t dropped;
    int oom;
} dra_diag;

void dra_diag_init(dra_diag *d, const dra_mem *mem);
void dra_diag_fini(dra_diag *d);
void dra_diag_clear(dra_diag *d);
/* Append an entry. |d| may be NULL (then nothing is recorded). */
dra_err dra_diag_add(dra_diag *d, const char *path, int line, int col,
                     const char *fmt, ...) DRA_PRINTF(5, 6);
dra_err dra_diag_vadd(dra_diag *d, const char *path, int line, int col,
                      const char *fmt, va_list ap);
/* "path: msg" (or "msg" when path is empty; "line:col: msg" with a
 * position and no path), one entry per line, into |out|. */
dra_err dra_diag_format(const dra_diag *d, dra_buf *out);
const char *dra_diag_first(const dra_diag *d); /* first message or NULL */

#ifdef __cplusplus
}
#endif
#endif
