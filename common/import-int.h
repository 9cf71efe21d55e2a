/* SPDX-License-Identifier: ISC */
/* What import.c and import-vars.c share; nothing else includes it. */
#ifndef MCPD_IMPORT_INT_H
#define MCPD_IMPORT_INT_H

#include <jansson.h>

/*
 * Translates the editors' variables in v (a string, or an array or object
 * of strings) in place: ${env:X}, ${input:X}, ${userHome},
 * ${workspaceFolder} (workspace, or NULL when the file is in none)...
 * -EINVAL with a reason that starts with key for one it cannot translate.
 */
int import_translate(json_t *v, const char *key, const char *workspace,
    char **reason);
/* Sets "secrets" on a built entry to the secrets its values refer to. */
int import_entry_secrets(json_t *e);

#endif
