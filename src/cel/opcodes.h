/*
 * opcodes.h: the VM's instruction set as one X-macro list:
 * X(name, base cost). The base cost is charged when the instruction runs
 * (cel-go's unit costs: identifiers and selections 1, constants 0, calls
 * 1 plus size-dependent extras charged by the instruction itself). ORDER:
 * vm.c's dispatch switch documents each opcode next to its case;
 * cel_cterm_fast (vm.h) relies on DEV_QCMP and DEV_MATCH coming after
 * DEV_ATTR_EQ.
 */
#ifndef DRA_CEL_OPCODES_H
#define DRA_CEL_OPCODES_H

#define CEL_OPCODES(X)   \
    X(CONST, 0)          \
    X(VAR, 1)            \
    X(LOCAL, 1)          \
    X(LOCAL_RAW, 0)      \
    X(STORE, 0)          \
    X(POP, 0)            \
    X(DEV_FIELD, 2)      \
    X(DEV_DOMAIN, 3)     \
    X(DEV_ATTR, 4)       \
    X(DEV_FIELD_EQ, 2)   \
    X(DEV_ATTR_EQ, 4)    \
    X(DEV_QCMP, 4)       \
    X(DEV_MATCH, 4)      \
    X(SELECT, 1)         \
    X(HAS, 0)            \
    X(OPT_SELECT, 1)     \
    X(INDEX, 1)          \
    X(INDEX_CONST, 1)    \
    X(OPT_INDEX, 1)      \
    X(EQ, 0)             \
    X(NE, 0)             \
    X(EQ_CONST, 0)       \
    X(NE_CONST, 0)       \
    X(LT, 0)             \
    X(LE, 0)             \
    X(GT, 0)             \
    X(GE, 0)             \
    X(ADD, 0)            \
    X(SUB, 1)            \
    X(MUL, 1)            \
    X(DIV, 1)            \
    X(MOD, 1)            \
    X(NEG, 1)            \
    X(NOT, 1)            \
    X(IN, 0)             \
    X(JMP, 0)            \
    X(JF_KEEP, 0)        \
    X(JT_KEEP, 0)        \
    X(AND, 0)            \
    X(OR, 0)             \
    X(COND, 0)           \
    X(NOT_STRICTLY_FALSE, 1) \
    X(CALL, 0)           \
    X(LIST, 10)          \
    X(MAP, 30)           \
    X(ITER_INIT, 0)      \
    X(ITER_NEXT, 0)      \
    X(LOOP_COND, 0)      \
    X(ANY_NEXT, 0)       \
    X(ANY_STEP, 0)       \
    X(ANY_CALL, 1)       \
    X(ANY_DEV, 0)        \
    X(EXT, 0)            \
    X(LIST_BUILDER, 0)   \
    X(APPEND, 11)        \
    X(MAP_BUILDER, 0)    \
    X(MAP_INSERT, 1)     \
    X(HOIST_RESET, 0)    \
    X(HOIST_GET, 0)      \
    X(HOIST_SET, 0)      \
    X(RET, 0)

typedef enum cel_op {
#define CEL_X_OP(name, cost) CEL_OP_##name,
    CEL_OPCODES(CEL_X_OP)
#undef CEL_X_OP
    CEL_OP__COUNT
} cel_op;

/* Each instruction's base cost by name, for code outside the VM that
 * charges as an instruction would (CEL_COST_ANY_CALL). */
enum {
#define CEL_X_COST(name, cost) CEL_COST_##name = cost,
    CEL_OPCODES(CEL_X_COST)
#undef CEL_X_COST
};

#endif
