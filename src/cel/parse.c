/*
 * parse.c: tokens -> AST (in an arena), by recursive descent over cel-spec's
 * grammar. Macros (has, all, exists, exists_one, map, filter, cel.bind and
 * the two-variable forms) expand here into comprehension nodes the way
 * cel-go expands them, so runtime costs match. The first error is
 * recorded and parsing winds down returning a dummy node; no longjmp.
 */
#include <stdio.h>

#include "ast.h"

typedef struct parser {
    cel_lexer lx;
    cel_token tok;      /* current */
    dra_arena *a;
    const char *src;
    size_t len;
    dra_diag *d;
    int nerr;
    int oom;
    int depth;
    const cel_parse_opts *po;
    cel_ast dummy;
    int accu_n;         /* unique accumulator names for nested macros */
} parser;

static cel_ast *parse_expr(parser *p);

static void advance(parser *p)
{
    if (cel_lex_next(&p->lx, &p->tok) == TK_ERROR && !p->nerr) {
        if (!strcmp(p->lx.err, "out of memory"))
            p->oom = 1;
        p->nerr++;
        cel_report(p->d, p->src, p->len, p->lx.err_off, "Syntax error: %s", p->lx.err);
    }
}

static cel_ast *perr(parser *p, size_t off, const char *msg)
{
    if (!p->nerr)
        cel_report(p->d, p->src, p->len, off, "Syntax error: %s", msg);
    p->nerr++;
    return &p->dummy;
}

static cel_ast *unexpected(parser *p)
{
    char msg[96];
    if (p->tok.kind == TK_ERROR)
        return &p->dummy;
    if (p->tok.kind == TK_EOF)
        return perr(p, p->tok.off, "unexpected end of input");
    snprintf(msg, sizeof msg, "unexpected token '%.*s'", (int)(p->tok.len > 40 ? 40 : p->tok.len),
             p->src + p->tok.off);
    return perr(p, p->tok.off, msg);
}

static int expect(parser *p, cel_tok k)
{
    if (p->tok.kind != k) {
        unexpected(p);
        return 0;
    }
    advance(p);
    return 1;
}

static cel_ast *node(parser *p, cel_ast_kind k, size_t off)
{
    cel_ast *n = dra_arena_zalloc(p->a, sizeof *n);
    if (!n) {
        p->oom = 1;
        p->nerr++;
        return &p->dummy;
    }
    n->kind = (uint8_t)k;
    n->off = off;
    return n;
}

static cel_ast **args_alloc(parser *p, size_t n)
{
    cel_ast **v = dra_arena_array(p->a, n ? n : 1, sizeof *v);
    if (!v) {
        p->oom = 1;
        p->nerr++;
    }
    return v;
}

static cel_ast *call(parser *p, size_t off, const char *name, cel_ast *target,
                     size_t nargs, cel_ast *a0, cel_ast *a1, cel_ast *a2)
{
    cel_ast *n = node(p, AST_CALL, off);
    if (n == &p->dummy)
        return n;
    n->name = name;
    n->namelen = strlen(name);
    n->target = target;
    n->nargs = nargs;
    n->args = args_alloc(p, nargs);
    if (!n->args)
        return &p->dummy;
    if (nargs > 0) n->args[0] = a0;
    if (nargs > 1) n->args[1] = a1;
    if (nargs > 2) n->args[2] = a2;
    return n;
}

static cel_ast *ident(parser *p, size_t off, const char *name)
{
    cel_ast *n = node(p, AST_IDENT, off);
    n->name = name;
    n->namelen = strlen(name);
    return n;
}

static cel_ast *constant(parser *p, size_t off, cel_value v)
{
    cel_ast *n = node(p, AST_CONST, off);
    n->cval = v;
    return n;
}

/* ---- macros ------------------------------------------------------------ */

static int is_cel_call(const cel_ast *e, const char *fn, size_t nargs)
{
    return e->kind == AST_CALL && e->target && e->target->kind == AST_IDENT &&
           e->target->namelen == 3 && !memcmp(e->target->name, "cel", 3) &&
           e->namelen == strlen(fn) && !memcmp(e->name, fn, e->namelen) && e->nargs == nargs;
}

/* cel.block's generated names: cel.index(N), cel.iterVar(N, M),
 * cel.accuVar(N, M) become identifiers no user can write. */
static const char *block_name(parser *p, const cel_ast *e)
{
    if (is_cel_call(e, "index", 1) && e->args[0]->kind == AST_CONST &&
        e->args[0]->cval.kind == CEL_K_INT)
        return dra_arena_sprintf(p->a, "@index%lld", (long long)e->args[0]->cval.u.i);
    if ((is_cel_call(e, "iterVar", 2) || is_cel_call(e, "accuVar", 2)) &&
        e->args[0]->kind == AST_CONST && e->args[1]->kind == AST_CONST &&
        e->args[0]->cval.kind == CEL_K_INT && e->args[1]->cval.kind == CEL_K_INT)
        return dra_arena_sprintf(p->a, "@%s%lld:%lld", e->name, (long long)e->args[0]->cval.u.i,
                                 (long long)e->args[1]->cval.u.i);
    return NULL;
}

static const char *ident_name(parser *p, cel_ast *e)
{
    const char *s;
    if (e->kind == AST_CALL && (s = block_name(p, e)) != NULL)
        return s;
    if (e->kind != AST_IDENT) {
        perr(p, e->off, "argument must be a simple name");
        return NULL;
    }
    s = dra_arena_strndup(p->a, e->name, e->namelen);
    if (!s) {
        p->oom = 1;
        perr(p, e->off, "out of memory");
    }
    return s;
}

static cel_ast *comp(parser *p, size_t off, cel_ast *range, const char *iv,
                     const char *iv2, const char *accu, cel_ast *init, cel_ast *cond,
                     cel_ast *step, cel_ast *result)
{
    cel_ast *n = node(p, AST_COMPREHENSION, off);
    if (n == &p->dummy)
        return n;
    n->range = range;
    n->iter_var = iv;
    n->iter_var2 = iv2;
    n->accu_var = accu;
    n->accu_init = init;
    n->cond = cond;
    n->step = step;
    n->result = result;
    return n;
}

static cel_ast *list_of(parser *p, size_t off, cel_ast *item)
{
    cel_ast *l = node(p, AST_LIST, off);
    l->nargs = item ? 1 : 0;
    l->args = args_alloc(p, 1);
    if (l->args && item)
        l->args[0] = item;
    return l;
}

/* opt.optMap(x, e): opt.hasValue() ? optional.of(cel.bind(x, opt.value(), e))
 * : optional.none(); optFlatMap without the optional.of. */
static cel_ast *opt_macro(parser *p, size_t off, cel_ast *tgt, int wrap, cel_ast **args)
{
    const char *v = ident_name(p, args[0]);
    cel_ast *val, *body, *has;
    if (!v)
        return &p->dummy;
    has = call(p, off, "hasValue", tgt, 0, NULL, NULL, NULL);
    val = call(p, off, "value", tgt, 0, NULL, NULL, NULL);
    body = comp(p, off, list_of(p, off, NULL), "#unused", NULL, v, val,
                constant(p, off, cel_bool(0)), ident(p, off, v), args[1]);
    if (wrap)
        body = call(p, off, "optional.of", NULL, 1, body, NULL, NULL);
    return call(p, off, "_?_:_", NULL, 3, has, body,
                call(p, off, "optional.none", NULL, 0, NULL, NULL, NULL));
}

/* cel.block([e0, e1, ...], r): nested bindings of @index0, @index1, ... */
static cel_ast *block_macro(parser *p, size_t off, cel_ast **args, size_t nargs)
{
    cel_ast *r;
    if (nargs != 2 || args[0]->kind != AST_LIST)
        return NULL;
    r = args[1];
    for (size_t i = args[0]->nargs; i-- > 0;) {
        const char *nm = dra_arena_sprintf(p->a, "@index%zu", i);
        if (!nm) {
            p->oom = 1;
            return perr(p, off, "out of memory");
        }
        r = comp(p, off, list_of(p, off, NULL), "#unused", NULL, nm, args[0]->args[i],
                 constant(p, off, cel_bool(0)), ident(p, off, nm), r);
    }
    return r;
}

/* math.greatest(a, b, c, ...) and math.least: three or more arguments
 * are passed as one list. */
static cel_ast *variadic_math(parser *p, cel_ast *n)
{
    cel_ast *l;
    if (n->nargs < 3)
        return NULL;
    l = node(p, AST_LIST, n->off);
    l->args = n->args;
    l->nargs = n->nargs;
    n->args = args_alloc(p, 1);
    if (!n->args)
        return &p->dummy;
    n->args[0] = l;
    n->nargs = 1;
    return n;
}

/* list.sortBy(x, key): cel.bind(@__sortBy_input__, list,
 *   @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(x, key))),
 * as cel-go's ext.Lists expands it. */
static cel_ast *sortby_macro(parser *p, size_t off, cel_ast *tgt, cel_ast **args)
{
    static const char v[] = "@__sortBy_input__";
    const char *x = ident_name(p, args[0]);
    cel_ast *keys, *body, *acc;
    if (!x)
        return &p->dummy;
    acc = ident(p, off, "@result");
    keys = comp(p, off, ident(p, off, v), x, NULL, "@result", list_of(p, off, NULL),
                constant(p, off, cel_bool(1)),
                call(p, off, "_+_", NULL, 2, acc, list_of(p, off, args[1]), NULL),
                ident(p, off, "@result"));
    body = call(p, off, "@sortByAssociatedKeys", ident(p, off, v), 1, keys, NULL, NULL);
    return comp(p, off, list_of(p, off, NULL), "#unused", NULL, v, tgt,
                constant(p, off, cel_bool(0)), ident(p, off, v), body);
}

/* Expands a member macro; NULL when |name| with |nargs| is not one. */
static cel_ast *expand_macro(parser *p, size_t off, cel_ast *tgt, const char *name,
                             size_t nlen, cel_ast **args, size_t nargs)
{
    const char *accu = "@result", *iv, *iv2 = NULL;
    cel_ast *init, *cond, *step, *res;
#define IS(s) (nlen == sizeof(s) - 1 && !memcmp(name, s, nlen))
    int all = IS("all"), ex = IS("exists"), ex1 = IS("exists_one") || IS("existsOne");
    int map = IS("map"), filt = IS("filter");
    int tl = IS("transformList"), tm = IS("transformMap");
#undef IS
    if (p->po && p->po->disable_macros)
        return NULL;
    if ((nlen == 6 && !memcmp(name, "optMap", 6)) || (nlen == 10 && !memcmp(name, "optFlatMap", 10)))
        return nargs == 2 ? opt_macro(p, off, tgt, nlen == 6, args) : NULL;
    if (nlen == 6 && !memcmp(name, "sortBy", 6))
        return nargs == 2 ? sortby_macro(p, off, tgt, args) : NULL;
    if (!((all || ex || ex1 || filt) && (nargs == 2 || nargs == 3)) &&
        !(map && (nargs == 2 || nargs == 3)) && !((tl || tm) && (nargs == 3 || nargs == 4)))
        return NULL;
    iv = ident_name(p, args[0]);
    if (!iv)
        return &p->dummy;
    if (((all || ex || ex1) && nargs == 3) || tl || tm) {
        iv2 = ident_name(p, args[1]);
        if (!iv2)
            return &p->dummy;
        args++;
        nargs--;
    }
    if (!strcmp(iv, accu) || (iv2 && !strcmp(iv2, accu)))
        return perr(p, off, "iteration variable overwrites accumulator variable");
    if (iv2 && !strcmp(iv, iv2))
        return perr(p, off, "duplicate variable name");
    cel_ast *pred = args[1];
    cel_ast *acc = ident(p, off, accu);
    if (all) {
        init = constant(p, off, cel_bool(1));
        cond = call(p, off, "@not_strictly_false", NULL, 1, ident(p, off, accu), NULL, NULL);
        step = call(p, off, "_&&_", NULL, 2, acc, pred, NULL);
    } else if (ex) {
        init = constant(p, off, cel_bool(0));
        cond = call(p, off, "@not_strictly_false", NULL, 1,
                    call(p, off, "!_", NULL, 1, ident(p, off, accu), NULL, NULL), NULL, NULL);
        step = call(p, off, "_||_", NULL, 2, acc, pred, NULL);
    } else if (ex1) {
        init = constant(p, off, cel_int(0));
        cond = constant(p, off, cel_bool(1));
        step = call(p, off, "_?_:_", NULL, 3, pred,
                    call(p, off, "_+_", NULL, 2, acc, constant(p, off, cel_int(1)), NULL),
                    ident(p, off, accu));
        res = call(p, off, "_==_", NULL, 2, ident(p, off, accu), constant(p, off, cel_int(1)),
                   NULL);
        return comp(p, off, tgt, iv, iv2, accu, init, cond, step, res);
    } else if (tm) {
        cel_ast *m = node(p, AST_MAP, off);
        cel_ast *val = nargs == 3 ? args[2] : args[1];
        m->nargs = 0;
        init = m;
        cond = constant(p, off, cel_bool(1));
        step = call(p, off, "cel.@mapInsert", NULL, 3, acc, ident(p, off, iv), val);
        if (nargs == 3)
            step = call(p, off, "_?_:_", NULL, 3, args[1], step, ident(p, off, accu));
    } else {
        cel_ast *val = (map || tl) ? (nargs == 3 ? args[2] : args[1]) : ident(p, off, iv);
        init = list_of(p, off, NULL);
        cond = constant(p, off, cel_bool(1));
        step = call(p, off, "_+_", NULL, 2, acc, list_of(p, off, val), NULL);
        if (filt || nargs == 3)
            step = call(p, off, "_?_:_", NULL, 3, args[1], step, ident(p, off, accu));
    }
    res = ident(p, off, accu);
    return comp(p, off, tgt, iv, iv2, accu, init, cond, step, res);
}

/* has(e.f) and cel.bind(x, init, e). */
static cel_ast *global_macro(parser *p, size_t off, const char *name, size_t nlen,
                             cel_ast **args, size_t nargs)
{
    if (p->po && p->po->disable_macros)
        return NULL;
    if (nlen == 3 && !memcmp(name, "has", 3) && nargs == 1) {
        cel_ast *e = args[0];
        if (e->kind != AST_SELECT || e->optional)
            return perr(p, off, "invalid argument to has() macro");
        e->test_only = 1;
        return e;
    }
    return NULL;
}

static cel_ast *bind_macro(parser *p, size_t off, cel_ast **args, size_t nargs)
{
    const char *v;
    if (nargs != 3)
        return NULL;
    v = ident_name(p, args[0]);
    if (!v)
        return &p->dummy;
    return comp(p, off, list_of(p, off, NULL), "#unused", NULL, v, args[1],
                constant(p, off, cel_bool(0)), ident(p, off, v), args[2]);
}

/* ---- expressions ------------------------------------------------------- */

static int enter(parser *p)
{
    if (++p->depth > CEL_MAX_DEPTH) {
        perr(p, p->tok.off, "expression recursion limit exceeded");
        return 0;
    }
    return 1;
}

/* Parses a comma list up to |close|; items in a temporary array copied
 * into the arena. |opt| records a leading '?' per item when non-NULL. */
static size_t parse_list(parser *p, cel_tok close, cel_ast ***out, uint8_t **opt,
                         int allow_opt)
{
    cel_ast *tmp[64], **v = tmp, **nv;
    uint8_t otmp[64], *ov = otmp, *nov;
    size_t n = 0, cap = 64;
    int heap = 0;
    while (p->tok.kind != close && !p->nerr) {
        if (n == cap) {
            nv = dra_arena_array(p->a, cap * 2, sizeof *nv);
            nov = dra_arena_alloc(p->a, cap * 2);
            if (!nv || !nov) {
                p->oom = 1;
                p->nerr++;
                break;
            }
            memcpy(nv, v, n * sizeof *v);
            memcpy(nov, ov, n);
            v = nv;
            ov = nov;
            cap *= 2;
            heap = 1;
        }
        ov[n] = 0;
        if (allow_opt && p->tok.kind == TK_QUESTION) {
            ov[n] = 1;
            advance(p);
        }
        v[n++] = parse_expr(p);
        if (p->tok.kind != TK_COMMA)
            break;
        advance(p);
    }
    expect(p, close);
    (void)heap;
    *out = args_alloc(p, n);
    if (*out)
        memcpy(*out, v, n * sizeof *v);
    if (opt) {
        *opt = dra_arena_alloc(p->a, n ? n : 1);
        if (*opt)
            memcpy(*opt, ov, n);
    }
    return n;
}

static cel_ast *parse_map(parser *p, size_t off, int is_struct, cel_ast *type)
{
    cel_ast *m = node(p, is_struct ? AST_STRUCT : AST_MAP, off);
    cel_ast **kv = NULL;
    uint8_t *opt = NULL;
    size_t n = 0, cap = 0;
    if (type) {
        m->name = type->name;
        m->namelen = type->namelen;
    }
    while (p->tok.kind != TK_RBRACE && !p->nerr) {
        int o = 0;
        cel_ast *k;
        if (p->tok.kind == TK_QUESTION) {
            o = 1;
            advance(p);
        }
        if (is_struct) {
            if (p->tok.kind != TK_IDENT && p->tok.kind != TK_BACKTICK_IDENT)
                return unexpected(p);
            const char *fname = dra_arena_strndup(p->a, p->tok.s, p->tok.slen);
            if (!fname) {
                p->oom = 1;
                return perr(p, p->tok.off, "out of memory");
            }
            k = constant(p, p->tok.off, cel_str(fname, p->tok.slen));
            advance(p);
        } else {
            k = parse_expr(p);
        }
        if (!expect(p, TK_COLON))
            break;
        if (n + 2 > cap) {
            size_t ncap = cap ? cap * 2 : 16;
            cel_ast **nkv = dra_arena_array(p->a, ncap, sizeof *nkv);
            uint8_t *nopt = dra_arena_alloc(p->a, ncap / 2);
            if (!nkv || !nopt) {
                p->oom = 1;
                p->nerr++;
                break;
            }
            if (n) {
                memcpy(nkv, kv, n * sizeof *kv);
                memcpy(nopt, opt, n / 2);
            }
            kv = nkv;
            opt = nopt;
            cap = ncap;
        }
        opt[n / 2] = (uint8_t)o;
        kv[n++] = k;
        kv[n++] = parse_expr(p);
        if (p->tok.kind != TK_COMMA)
            break;
        advance(p);
    }
    expect(p, TK_RBRACE);
    m->args = kv;
    m->opt = opt;
    m->nargs = n;
    return m;
}

static int reserved(const char *s, size_t n)
{
    static const char *const words[] = {
        "as", "break", "const", "continue", "else", "for", "function", "if",
        "import", "let", "loop", "package", "namespace", "return", "var", "void",
        "while"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && !memcmp(words[i], s, n))
            return 1;
    return 0;
}

static cel_ast *parse_call_args(parser *p, cel_ast *n)
{
    advance(p); /* ( */
    n->nargs = parse_list(p, TK_RPAREN, &n->args, NULL, 0);
    return n;
}

static cel_ast *parse_ident_primary(parser *p, int leading_dot)
{
    size_t off = p->tok.off;
    cel_ast *n;
    const char *name;
    size_t nlen = p->tok.slen;
    if (reserved(p->tok.s, p->tok.slen))
        return perr(p, off, "reserved identifier");
    if (leading_dot) {
        char *q = dra_arena_alloc(p->a, nlen + 2);
        if (!q) {
            p->oom = 1;
            return perr(p, off, "out of memory");
        }
        q[0] = '.';
        memcpy(q + 1, p->tok.s, nlen);
        q[nlen + 1] = 0;
        name = q;
        nlen++;
    } else {
        name = dra_arena_strndup(p->a, p->tok.s, nlen);
    }
    if (!name) {
        p->oom = 1;
        return perr(p, off, "out of memory");
    }
    advance(p);
    if (p->tok.kind == TK_LPAREN) {
        cel_ast *m;
        n = node(p, AST_CALL, off);
        n->name = name;
        n->namelen = nlen;
        parse_call_args(p, n);
        m = global_macro(p, off, name, nlen, n->args, n->nargs);
        return m ? m : n;
    }
    n = node(p, AST_IDENT, off);
    n->name = name;
    n->namelen = nlen;
    return n;
}

static cel_ast *parse_primary(parser *p)
{
    size_t off = p->tok.off;
    cel_ast *n;
    cel_token t = p->tok;
    switch (t.kind) {
    case TK_INT:
        if (t.u > (uint64_t)INT64_MAX)
            return perr(p, off, "integer literal out of range");
        advance(p);
        return constant(p, off, cel_int((int64_t)t.u));
    case TK_UINT: advance(p); return constant(p, off, cel_uint(t.u));
    case TK_DOUBLE: advance(p); return constant(p, off, cel_double(t.d));
    case TK_STRING: advance(p); return constant(p, off, cel_str(t.s, t.slen));
    case TK_BYTES: advance(p); return constant(p, off, cel_bytes(t.s, t.slen));
    case TK_TRUE: advance(p); return constant(p, off, cel_bool(1));
    case TK_FALSE: advance(p); return constant(p, off, cel_bool(0));
    case TK_NULL: advance(p); return constant(p, off, cel_null());
    case TK_IDENT: return parse_ident_primary(p, 0);
    case TK_DOT:
        advance(p);
        if (p->tok.kind != TK_IDENT)
            return unexpected(p);
        return parse_ident_primary(p, 1);
    case TK_LPAREN:
        advance(p);
        n = parse_expr(p);
        expect(p, TK_RPAREN);
        return n;
    case TK_LBRACKET:
        advance(p);
        n = node(p, AST_LIST, off);
        n->nargs = parse_list(p, TK_RBRACKET, &n->args, &n->opt, 1);
        return n;
    case TK_LBRACE:
        advance(p);
        return parse_map(p, off, 0, NULL);
    default:
        return unexpected(p);
    }
}

/* The qualified name of an ident/select chain, or NULL. */
static int qualified_name(parser *p, cel_ast *e, dra_buf *b)
{
    if (e->kind == AST_IDENT)
        return dra_buf_append(b, e->name, e->namelen) == DRA_OK;
    if (e->kind == AST_SELECT && !e->optional && !e->test_only) {
        if (!qualified_name(p, e->target, b))
            return 0;
        return dra_buf_putc(b, '.') == DRA_OK && dra_buf_append(b, e->name, e->namelen) == DRA_OK;
    }
    return 0;
}

static cel_ast *parse_member_suffix(parser *p, cel_ast *e)
{
    size_t off = p->tok.off;
    if (p->tok.kind == TK_DOT) {
        int opt = 0;
        advance(p);
        if (p->tok.kind == TK_QUESTION) {
            opt = 1;
            advance(p);
        }
        if (p->tok.kind != TK_IDENT && p->tok.kind != TK_BACKTICK_IDENT)
            return unexpected(p);
        cel_token t = p->tok;
        const char *name = dra_arena_strndup(p->a, t.s, t.slen);
        advance(p);
        if (!name) {
            p->oom = 1;
            return perr(p, off, "out of memory");
        }
        if (!opt && t.kind == TK_IDENT && p->tok.kind == TK_LPAREN) {
            cel_ast *n = node(p, AST_CALL, t.off), *m;
            n->name = name;
            n->namelen = t.slen;
            n->target = e;
            parse_call_args(p, n);
            m = expand_macro(p, t.off, e, name, t.slen, n->args, n->nargs);
            if (!m && e->kind == AST_IDENT && e->namelen == 3 && !memcmp(e->name, "cel", 3) &&
                !(p->po && p->po->disable_macros)) {
                const char *bn;
                if (t.slen == 4 && !memcmp(name, "bind", 4))
                    m = bind_macro(p, t.off, n->args, n->nargs);
                else if (t.slen == 5 && !memcmp(name, "block", 5))
                    m = block_macro(p, t.off, n->args, n->nargs);
                else if ((bn = block_name(p, n)) != NULL)
                    m = ident(p, t.off, bn);
            }
            if (!m && e->kind == AST_IDENT && e->namelen == 4 && !memcmp(e->name, "math", 4) &&
                ((t.slen == 8 && !memcmp(name, "greatest", 8)) ||
                 (t.slen == 5 && !memcmp(name, "least", 5))))
                m = variadic_math(p, n);
            return m ? m : n;
        }
        if (opt)
            return call(p, off, "_?._", NULL, 2, e,
                        constant(p, t.off, cel_str(name, t.slen)), NULL);
        cel_ast *s = node(p, AST_SELECT, off);
        s->target = e;
        s->name = name;
        s->namelen = t.slen;
        return s;
    }
    if (p->tok.kind == TK_LBRACKET) {
        int opt = 0;
        cel_ast *idx;
        advance(p);
        if (p->tok.kind == TK_QUESTION) {
            opt = 1;
            advance(p);
        }
        idx = parse_expr(p);
        expect(p, TK_RBRACKET);
        return call(p, off, opt ? "_[?_]" : "_[_]", NULL, 2, e, idx, NULL);
    }
    /* TK_LBRACE: a message literal after a qualified name. */
    {
        dra_buf b;
        cel_ast *tn = node(p, AST_IDENT, off), *r;
        dra_buf_init(&b, NULL);
        if (!qualified_name(p, e, &b)) {
            dra_buf_fini(&b);
            return unexpected(p);
        }
        tn->name = dra_arena_strndup(p->a, b.p, b.len);
        tn->namelen = b.len;
        dra_buf_fini(&b);
        advance(p);
        r = parse_map(p, e->off, 1, tn);
        return r;
    }
}

static int can_struct(cel_ast *e)
{
    while (e->kind == AST_SELECT && !e->optional)
        e = e->target;
    return e->kind == AST_IDENT;
}

static cel_ast *parse_member(parser *p)
{
    cel_ast *e = parse_primary(p);
    int depth0 = p->depth;
    while (!p->nerr && (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET ||
                        (p->tok.kind == TK_LBRACE && can_struct(e)))) {
        if (!enter(p))
            break;
        e = parse_member_suffix(p, e);
    }
    p->depth = depth0;
    return e;
}

static cel_ast *parse_unary(parser *p)
{
    size_t off = p->tok.off;
    int nneg = 0, nnot = 0;
    cel_ast *e;
    if (p->tok.kind == TK_BANG) {
        while (p->tok.kind == TK_BANG) {
            if (!enter(p))
                return &p->dummy;
            nnot++;
            advance(p);
        }
        p->depth -= nnot;
        e = parse_member(p);
        while (nnot-- > 0)
            e = call(p, off, "!_", NULL, 1, e, NULL, NULL);
        return e;
    }
    if (p->tok.kind == TK_MINUS) {
        while (p->tok.kind == TK_MINUS) {
            if (!enter(p))
                return &p->dummy;
            nneg++;
            advance(p);
        }
        p->depth -= nneg;
        /* A minus directly before a number literal folds into it, so
         * -9223372036854775808 is a valid int. */
        if (p->tok.kind == TK_INT && p->tok.u <= (uint64_t)INT64_MAX + 1) {
            cel_token t = p->tok;
            advance(p);
            e = constant(p, t.off, cel_int((int64_t)(0 - t.u)));
            nneg--;
            if (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET) {
                /* -1.foo() applies the member to the literal 1 first. */
                e->cval = cel_int((int64_t)t.u);
                if (t.u > (uint64_t)INT64_MAX)
                    return perr(p, t.off, "integer literal out of range");
                nneg++;
                while (!p->nerr && (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET))
                    e = parse_member_suffix(p, e);
            }
        } else if (p->tok.kind == TK_DOUBLE) {
            cel_token t = p->tok;
            advance(p);
            e = constant(p, t.off, cel_double(-t.d));
            nneg--;
            if (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET) {
                e->cval = cel_double(t.d);
                nneg++;
                while (!p->nerr && (p->tok.kind == TK_DOT || p->tok.kind == TK_LBRACKET))
                    e = parse_member_suffix(p, e);
            }
        } else {
            e = parse_member(p);
        }
        while (nneg-- > 0)
            e = call(p, off, "-_", NULL, 1, e, NULL, NULL);
        return e;
    }
    return parse_member(p);
}

static const char *binop_name(cel_tok k, int level)
{
    switch (level) {
    case 0:
        return k == TK_STAR ? "_*_" : k == TK_SLASH ? "_/_" : k == TK_PERCENT ? "_%_" : NULL;
    case 1:
        return k == TK_PLUS ? "_+_" : k == TK_MINUS ? "_-_" : NULL;
    case 2:
        switch (k) {
        case TK_LT: return "_<_";
        case TK_LE: return "_<=_";
        case TK_GT: return "_>_";
        case TK_GE: return "_>=_";
        case TK_EQ: return "_==_";
        case TK_NE: return "_!=_";
        case TK_IN: return "@in";
        default: return NULL;
        }
    case 3: return k == TK_AND ? "_&&_" : NULL;
    case 4: return k == TK_OR ? "_||_" : NULL;
    default: return NULL;
    }
}

static cel_ast *parse_binary(parser *p, int level)
{
    cel_ast *l = level == 0 ? parse_unary(p) : parse_binary(p, level - 1);
    const char *op;
    int depth0 = p->depth;
    while (!p->nerr && (op = binop_name(p->tok.kind, level)) != NULL) {
        size_t off = p->tok.off;
        cel_ast *r;
        if (!enter(p))
            break;
        advance(p);
        r = level == 0 ? parse_unary(p) : parse_binary(p, level - 1);
        l = call(p, off, op, NULL, 2, l, r, NULL);
    }
    p->depth = depth0;
    return l;
}

static cel_ast *parse_expr(parser *p)
{
    cel_ast *c, *t, *f;
    size_t off;
    if (!enter(p))
        return &p->dummy;
    c = parse_binary(p, 4);
    if (p->tok.kind == TK_QUESTION && !p->nerr) {
        off = p->tok.off;
        advance(p);
        t = parse_binary(p, 4);
        expect(p, TK_COLON);
        f = parse_expr(p);
        c = call(p, off, "_?_:_", NULL, 3, c, t, f);
    }
    p->depth--;
    return c;
}

cel_ast *cel_parse(dra_arena *a, const char *src, size_t len, const cel_parse_opts *po,
                   dra_diag *d, dra_err *err)
{
    parser p;
    cel_ast *root;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.src = src;
    p.len = len;
    p.d = d;
    p.po = po;
    p.dummy.kind = AST_CONST;
    if (cel_utf8_len(src, len) > CEL_MAX_CODEPOINTS || !cel_utf8_valid(src, len)) {
        *err = DRA_ELIMIT;
        if (!cel_utf8_valid(src, len)) {
            *err = DRA_EPARSE;
            dra_diag_add(d, "", 1, 1, "ERROR: <input>:1:1: Syntax error: invalid UTF-8");
        } else {
            dra_diag_add(d, "", 1, 1, "expression code point size exceeds limit %d",
                         CEL_MAX_CODEPOINTS);
        }
        return NULL;
    }
    cel_lex_init(&p.lx, src, len, a);
    advance(&p);
    root = parse_expr(&p);
    if (!p.nerr && p.tok.kind != TK_EOF)
        unexpected(&p);
    if (p.nerr) {
        *err = p.oom ? DRA_ENOMEM : DRA_EPARSE;
        return NULL;
    }
    *err = DRA_OK;
    return root;
}

/* ---- error reports ----------------------------------------------------- */

void cel_report(dra_diag *d, const char *src, size_t len, size_t off, const char *fmt, ...)
{
    size_t ls = 0, le, i;
    int line = 1, col = 1;
    va_list ap;
    dra_buf b;
    if (!d)
        return;
    if (off > len)
        off = len;
    for (i = 0; i < off; i++) {
        if (src[i] == '\n') {
            line++;
            col = 1;
            ls = i + 1;
        } else if (((unsigned char)src[i] & 0xC0) != 0x80) {
            col++;
        }
    }
    for (le = ls; le < len && src[le] != '\n'; le++)
        ;
    dra_buf_init(&b, d->mem);
    dra_buf_printf(&b, "ERROR: <input>:%d:%d: ", line, col);
    va_start(ap, fmt);
    dra_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    dra_buf_puts(&b, "\n | ");
    dra_buf_append(&b, src + ls, le - ls);
    dra_buf_puts(&b, "\n | ");
    for (int k = 1; k < col; k++)
        dra_buf_putc(&b, '.');
    dra_buf_putc(&b, '^');
    if (!b.oom)
        dra_diag_add(d, "", 0, 0, "%s", b.p); /* the text carries line:col */
    dra_buf_fini(&b);
}
