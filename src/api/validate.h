/*
 * validate.h: the extended entry point of api validation, for callers that
 * can compile CEL (the api module does not link the CEL engine). The plain
 * dra_api_validate* functions in dra/api.h are this with no options.
 *
 * When a CEL check hook is given, every selector expression that passes
 * the length checks is handed to it, and its verdict becomes a field error
 * at `...cel.expression` the way kube-apiserver reports compile errors.
 */
#ifndef DRA_API_VALIDATE_H
#define DRA_API_VALIDATE_H

#include <stddef.h>

#include "dra/api.h"

/* Verdicts of a CEL check hook. */
typedef enum dra_api_cel_verdict {
    DRA_API_CEL_OK = 0,
    DRA_API_CEL_INVALID = 1,  /* does not compile: |msg| says why */
    DRA_API_CEL_TOO_COSTLY = 2 /* estimated cost above the limit */
} dra_api_cel_verdict;

/* Compiles |expression| for the DRA device-selector environment. Writes
 * a NUL-terminated reason of at most |cap| bytes into |msg| when the
 * verdict is DRA_API_CEL_INVALID. Must not keep |expression|. */
typedef dra_api_cel_verdict (*dra_api_cel_check_fn)(void *ud,
                                                    const char *expression,
                                                    char *msg, size_t cap);

typedef struct dra_api_validate_opts {
    dra_api_cel_check_fn cel_check; /* NULL: only length/emptiness checks */
    void *cel_ud;
} dra_api_validate_opts;

typedef enum dra_api_validate_mode {
    DRA_API_VALIDATE_CREATE,        /* |old_obj| must be NULL */
    DRA_API_VALIDATE_UPDATE,        /* spec/metadata update */
    DRA_API_VALIDATE_STATUS_UPDATE  /* status subresource update */
} dra_api_validate_mode;

/* Validates |obj| (borrowed) in |mode| against |old_obj| (borrowed; NULL
 * for create) with optional |opts| (NULL: none). Every error found goes to
 * |d| (may be NULL) as path + message in kube-apiserver's wording.
 * Returns DRA_OK; DRA_EINVALID when anything is wrong; DRA_EINVAL when
 * |obj| is NULL, of unknown kind, or |old_obj| is missing or of another
 * kind on update; DRA_ENOMEM when an error could not be recorded (the
 * object is then invalid too, but |d| is incomplete). */
dra_err dra_api_validate_ex(const dra_object *obj, const dra_object *old_obj,
                            dra_api_validate_mode mode,
                            const dra_api_validate_opts *opts, dra_diag *d);

#endif
