/* Field paths in kube-apiserver's notation. Overlong paths are truncated
 * with "..." rather than failing: a path is diagnostic text, and losing
 * its tail must never lose the error itself. */
#include <stdio.h>
#include <string.h>

#include "dra/base.h"

void dra_path_init(dra_path *p, const char *root)
{
    p->len = 0;
    p->depth = 0;
    p->s[0] = '\0';
    if (root)
        dra_path_field(p, root);
    p->depth = 0;
}

static void push_mark(dra_path *p)
{
    if (p->depth < sizeof p->marks / sizeof p->marks[0])
        p->marks[p->depth] = p->len;
    p->depth++;
}

static void append(dra_path *p, const char *s, size_t n)
{
    size_t room = DRA_PATH_MAX - 1 - p->len;
    if (n > room) {
        n = room;
        if (room >= 3) {
            memcpy(p->s + p->len, s, n - 3);
            memcpy(p->s + p->len + n - 3, "...", 3);
            p->len += n;
            p->s[p->len] = '\0';
            return;
        }
    }
    memcpy(p->s + p->len, s, n);
    p->len += n;
    p->s[p->len] = '\0';
}

void dra_path_field(dra_path *p, const char *name)
{
    push_mark(p);
    if (p->len)
        append(p, ".", 1);
    append(p, name, strlen(name));
}

/* Decoding and validation index every list element they walk, so this
 * is on every write's path: digits by hand, not snprintf (measured: a
 * few percent of a write's CPU). */
void dra_path_index(dra_path *p, size_t i)
{
    char tmp[32];
    size_t n = sizeof tmp;
    tmp[--n] = ']';
    do
        tmp[--n] = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    tmp[--n] = '[';
    push_mark(p);
    append(p, tmp + n, sizeof tmp - n);
}

void dra_path_key(dra_path *p, const char *key)
{
    push_mark(p);
    append(p, "[", 1);
    append(p, key, strlen(key));
    append(p, "]", 1);
}

void dra_path_pop(dra_path *p)
{
    if (!p->depth)
        return;
    p->depth--;
    if (p->depth < sizeof p->marks / sizeof p->marks[0]) {
        p->len = p->marks[p->depth];
        p->s[p->len] = '\0';
    }
}

const char *dra_path_str(const dra_path *p)
{
    return p->s;
}
