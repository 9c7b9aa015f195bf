/* Small helpers shared by every module that reads or writes a file or a parsed JSON document. */
#ifndef VB_FILEUTIL_H
#define VB_FILEUTIL_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* The whole file, NUL-terminated (malloc'd; the caller frees), or NULL with errno set: EISDIR
 * for a directory, EFBIG past max_bytes, else the failing call's. Pipes and devices are read
 * to their end. len may be NULL. */
char *vb_read_file(const char *path, size_t max_bytes, size_t *len);
/* The file's text, refused when it holds a NUL byte (JSON never does; one can hide a tail
 * from the parser): NULL with the reason in why ("cannot read: ...", "larger than N MiB", "a
 * NUL byte at offset N"). */
char *vb_read_text(const char *path, size_t max_bytes, char *why, size_t why_len);

/* obj[key] as a number (NaN when absent or not a number) and as a string ("" likewise). */
double vb_json_num(const cJSON *obj, const char *key);
void vb_json_str(const cJSON *obj, const char *key, char *out, size_t n);

/* A whole document written to path so that a reader never sees half of it: a regular file (or
 * a new one) is written beside it under a temporary name and renamed over it when closed
 * without error; anything else (/dev/stdout, a pipe, /dev/full) is written in place. */
typedef struct vb_output {
    FILE *f;
    char path[1024], tmp[1100]; /* tmp empty: written in place */
} vb_output;
/* 1 when path would be written under a temporary name and renamed (a regular file, or none). */
int vb_path_replaceable(const char *path);
/* 0, or -1 with "path: cannot write: reason" in why. */
int vb_output_open(vb_output *o, const char *path, char *why, size_t why_len);
/* Whether path can be written as vb_output_open would, tried now (its temporary file made and
 * removed; a device or pipe is left alone, since opening one may block or consume): 0, or -1
 * with open's reason in why. So that a run told to write where it cannot stops before it
 * starts, not after an hour on the GPU. */
int vb_output_probe(const char *path, char *why, size_t why_len);
/* Flushes, checks every write, closes and renames; 0, or -1 with "path: reason" in why (the
 * temporary file is removed and path left as it was). */
int vb_output_close(vb_output *o, char *why, size_t why_len);

/* s with every byte outside printable ASCII written as \xNN, for one-line messages. */
void vb_printable(const char *s, char *out, size_t n);

#endif
