/* The allocator scenario runner (alloc_table.c): runs every scenario of
 * one YAML file, prints each failure, returns the number failed (a file
 * that does not parse counts as one) and adds the scenarios run to
 * *|count|. */
#ifndef ALLOC_TABLE_H
#define ALLOC_TABLE_H

#include <stddef.h>

int alloc_table_run_file(const char *path, size_t *count);

#endif
