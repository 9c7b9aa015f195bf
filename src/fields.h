/* The result model's schema, once: each struct the reports carry has one field table (JSON key,
 * kind, where the member is), and the JSON writer, the JSON reader and the CSV header and rows
 * all walk those tables. A new field is one line in fields.c. */
#ifndef VB_FIELDS_H
#define VB_FIELDS_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

typedef enum vb_field_kind {
    VB_FIELD_INT,     /* int */
    VB_FIELD_I64,     /* int64_t */
    VB_FIELD_DOUBLE,
    VB_FIELD_STRING,  /* char[size] */
    VB_FIELD_BOOL,    /* int, 0 or 1 */
    VB_FIELD_I64X4    /* int64_t[4], a JSON array; not a CSV column */
} vb_field_kind;

enum {
    VB_FIELD_POSITIVE = 1, /* written as null unless > 0 (shares and floors that were not measured) */
    VB_FIELD_NAN_NULL = 2, /* a null reads back as NaN, not 0 (a kernel that writes no lse) */
    VB_FIELD_ALWAYS = 4    /* written even when the struct's gate is off (the gate itself) */
};

typedef struct vb_field {
    const char *key;   /* JSON key; CSV column after the table's prefix */
    vb_field_kind kind;
    size_t offset, size;
    unsigned flags;
} vb_field;

typedef struct vb_field_table {
    const vb_field *fields;
    int count;
} vb_field_table;

extern const vb_field_table vb_timing_table;   /* vb_timing: gated by samples > 0 */
extern const vb_field_table vb_checks_table;   /* vb_checks: gated by ran */
extern const vb_field_table vb_shape_table;    /* vb_scenario_info's "shape" block */
extern const vb_field_table vb_scenario_table; /* vb_scenario_info's other scalars: gated by valid */
extern const vb_field_table vb_results_int_table; /* vb_results' header integers (host_cpus, ...); read only */
extern const vb_field_table vb_gpu_int_table;     /* vb_gpu_info's integers (sms, l2_bytes, ...); read only */

/* Adds every field of obj to the JSON object o; with gate 0 only VB_FIELD_ALWAYS fields
 * carry values, the rest are null. */
void vb_fields_to_json(cJSON *o, const vb_field_table *t, const void *obj, int gate);
/* Reads the fields present in o into obj (missing or null: 0, or NaN with VB_FIELD_NAN_NULL).
 * A value of the wrong JSON type, or a number its member cannot hold, is an error: returns
 * -1 with "path.key: reason" in why. o itself may be NULL (nothing read). */
int vb_fields_from_json(const cJSON *o, const vb_field_table *t, void *obj, const char *path, char *why,
                        size_t why_len);
/* A CSV cell holding s: quoted, inner quotes doubled (RFC 4180). */
void vb_csv_string(FILE *f, const char *s);
/* The CSV columns of a table (',' before each), with prefix before every key. */
void vb_fields_csv_header(FILE *f, const vb_field_table *t, const char *prefix);
/* One row's cells for a table (',' before each); empty cells where the JSON would have null. */
void vb_fields_csv_row(FILE *f, const vb_field_table *t, const void *obj, int gate);

#endif
