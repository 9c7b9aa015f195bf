#include "fileutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

char *vb_read_file(const char *path, size_t max_bytes, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n < 0 || (size_t)n > max_bytes || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        errno = n < 0 ? EIO : EFBIG;
        return NULL;
    }
    char *buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)n) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = (size_t)n;
    return buf;
}

double vb_json_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void vb_json_str(const cJSON *obj, const char *key, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}
