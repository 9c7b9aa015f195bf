#define _POSIX_C_SOURCE 200809L
#include "fileutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *vb_read_file(const char *path, size_t max_bytes, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
        return NULL;
    }
    /* Read to the end in growing chunks: a pipe or a device has no size to ask for. */
    size_t cap = S_ISREG(st.st_mode) && (size_t)st.st_size < max_bytes ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
    char *buf = malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (!err) {
        if (n + 1 == cap) {
            if (n > max_bytes) {
                err = EFBIG;
                break;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                err = ENOMEM;
                break;
            }
            buf = grown, cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) {
            err = ferror(f) ? (errno ? errno : EIO) : 0;
            break;
        }
    }
    if (!err && n > max_bytes)
        err = EFBIG;
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

char *vb_read_text(const char *path, size_t max_bytes, char *why, size_t why_len)
{
    size_t len = 0;
    char *text = vb_read_file(path, max_bytes, &len);
    if (!text) {
        const int e = errno;
        if (e == EFBIG)
            snprintf(why, why_len, "larger than %zu MiB", max_bytes >> 20);
        else
            snprintf(why, why_len, "%s: %s", e == ENOENT || e == EACCES || e == ENOTDIR ? "cannot open" : "cannot read",
                     strerror(e));
        return NULL;
    }
    const char *nul = memchr(text, 0, len);
    if (nul) {
        snprintf(why, why_len, "a NUL byte at offset %zu (not a text file)", (size_t)(nul - text));
        free(text);
        return NULL;
    }
    return text;
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

static int vb_is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int vb_path_replaceable(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

int vb_output_open(vb_output *o, const char *path, char *why, size_t why_len)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path);
    if (vb_is_directory(path)) {
        snprintf(why, why_len, "%s: cannot write: %s", path, strerror(EISDIR));
        return -1;
    }
    if (vb_path_replaceable(path)) {
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", path, (long)getpid());
        o->f = fopen(o->tmp, "w");
    } else {
        o->f = fopen(path, "w");
    }
    if (!o->f) {
        snprintf(why, why_len, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int vb_output_probe(const char *path, char *why, size_t why_len)
{
    if (!vb_path_replaceable(path) && !vb_is_directory(path))
        return 0;
    vb_output o;
    if (vb_output_open(&o, path, why, why_len))
        return -1;
    fclose(o.f);
    remove(o.tmp);
    return 0;
}

int vb_output_close(vb_output *o, char *why, size_t why_len)
{
    if (!o->f)
        return -1;
    /* errno is not cleared first: when a write failed earlier the stream keeps the error
     * flag, fflush may then succeed, and errno still says why the write failed. */
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !bad)
        bad = 1, err = errno;
    o->f = NULL;
    if (!bad && o->tmp[0] && rename(o->tmp, o->path) != 0)
        bad = 1, err = errno;
    if (bad) {
        if (o->tmp[0])
            remove(o->tmp);
        snprintf(why, why_len, "%s: writing failed: %s", o->path, strerror(err));
        return -1;
    }
    return 0;
}

void vb_printable(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 5 < n; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f)
            out[k++] = (char)c;
        else
            k += (size_t)snprintf(out + k, n - k, "\\x%02x", c);
    }
    if (n)
        out[k < n ? k : n - 1] = 0;
}
