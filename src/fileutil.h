/* Small helpers shared by every module that reads a file or a parsed JSON document. */
#ifndef VB_FILEUTIL_H
#define VB_FILEUTIL_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The whole file, NUL-terminated (malloc'd; the caller frees), or NULL with errno set.
 * Files larger than max_bytes are refused (errno EFBIG). len may be NULL. */
char *vb_read_file(const char *path, size_t max_bytes, size_t *len);

/* obj[key] as a number (NaN when absent or not a number) and as a string ("" likewise). */
double vb_json_num(const cJSON *obj, const char *key);
void vb_json_str(const cJSON *obj, const char *key, char *out, size_t n);

#endif
