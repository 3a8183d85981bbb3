/* A tiny selector language for allocator tests that must not depend on
 * the CEL engine: clauses joined by " && ", each one of
 *   true | false | error | driver=NAME | attr:NAME=VALUE | has:NAME
 * (attribute names as dra_alloc_attr_lookup takes them; values compared
 * in their text form: ints in decimal, bools as true/false). Programs
 * made only of driver=, true, false and attr:/has: clauses with qualified
 * names report their reads, so the allocator caches them per footprint.
 * With a non-NULL ud (a long *), every evaluation increments it. */
#ifndef TEST_SELECTORS_H
#define TEST_SELECTORS_H

#include "dra/alloc.h"

extern const dra_alloc_selector_ops test_selector_ops;

#endif
