/* The command line as a user runs it: help, version, sub-commands, and every exit code
 * that can happen without a GPU (4, a CUDA runtime error, needs one). */
#include "vbtest.h"

#include <cjson/cJSON.h>
#include <sys/wait.h>

/* An address-space limit cannot be combined with AddressSanitizer's shadow memory. */
#if defined(__SANITIZE_ADDRESS__)
#define VB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VB_ASAN 1
#endif
#endif

static const char *exe, *data;
static char out[1 << 16], err[1 << 16];

/* This run's own directory for the files it writes (the commands name it $VB_T), so that two
 * runs of the suite at once, e.g. two builds' tests, do not read each other's files. */
static char tmp_dir[] = "/tmp/vb_cli_XXXXXX";

/* The path of file name in tmp_dir (a static buffer: use it before the next call). */
static const char *tmp(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    return path;
}

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = 0;
    if (f)
        fclose(f);
}

/* A strict CSV check: every record has the header's number of fields; quotes open and close
 * around whole fields and double inside them. Returns the number of data rows, -1 if broken. */
static int csv_rows(const char *s)
{
    int fields = 1, header = -1, rows = 0, quoted = 0;
    for (; *s; s++) {
        if (quoted) {
            if (*s == '"' && s[1] == '"')
                s++;
            else if (*s == '"') {
                quoted = 0;
                if (s[1] && s[1] != ',' && s[1] != '\n')
                    return -1;
            }
        } else if (*s == '"') {
            if (s[-1] != ',' && s[-1] != '\n')
                return -1;
            quoted = 1;
        } else if (*s == ',') {
            fields++;
        } else if (*s == '\n') {
            if (header < 0)
                header = fields;
            else if (fields != header)
                return -1;
            else
                rows++;
            fields = 1;
        }
    }
    return quoted || fields != 1 ? -1 : rows;
}

/* Records in a results JSON document. */
static int count_records(const char *s)
{
    cJSON *doc = cJSON_Parse(s);
    int n = 0;
    const cJSON *sc = cJSON_GetObjectItem(doc, "scenarios");
    for (const cJSON *x = sc ? sc->child : NULL; x; x = x->next)
        n += cJSON_GetArraySize(cJSON_GetObjectItem(x, "records"));
    cJSON_Delete(doc);
    return n;
}

static int is_json(const char *s)
{
    cJSON *doc = cJSON_Parse(s);
    cJSON_Delete(doc);
    return doc != NULL;
}

/* Runs verifybench with args (a shell fragment); returns its exit code. */
static int vb(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >$VB_T/vb_cli_out 2>$VB_T/vb_cli_err", data, exe, args);
    int rc = system(cmd);
    slurp(tmp("vb_cli_out"), out, sizeof out);
    slurp(tmp("vb_cli_err"), err, sizeof err);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(tmp(path), "w");
    fputs(text, f);
    fclose(f);
}

int main(int argc, char **argv)
{
    exe = argc > 1 ? argv[1] : "build/verifybench";
    data = getenv("VB_TEST_DATA") ? getenv("VB_TEST_DATA") : "tests/data";
    if (!mkdtemp(tmp_dir) || setenv("VB_T", tmp_dir, 1) != 0) {
        perror("test_cli: a directory for its files");
        return 1;
    }

    CHECK(vb("--help") == 0 && strstr(out, "exit codes") && strstr(out, "list-kernels"));
    CHECK(vb("list-kernels --help") == 0 && strstr(out, "usage:"));
    CHECK(vb("--version") == 0 && !strncmp(out, "verifybench ", 12));
    CHECK(vb("list-kernels") == 0 && strstr(out, "flash_paged") && strstr(out, "naive_gpu") && !strstr(out, "sync_in_launch"));
    CHECK(vb("list-kernels --all") == 0 && strstr(out, "sync_in_launch") && strstr(out, "test only"));
    /* Machine-readable: the registry and the validated scenarios as JSON; formats they lack refused. */
    CHECK(vb("list-kernels --all --format json") == 0 && is_json(out) && strstr(out, "\"verifybench.kernels/1\"") &&
          strstr(out, "\"name\":\t\"sync_in_launch\"") && strstr(out, "\"test_only\":\ttrue"));
    CHECK(vb("validate tiny.json --format json") == 0 && is_json(out) && strstr(out, "\"valid\":\t2") &&
          strstr(out, "\"name\":\t\"tiny-eagle-int32\"") && strstr(out, "\"rejected_input\":\tfalse"));
    CHECK(vb("validate tiny.json --format csv") == 2 && strstr(err, "validate prints a table or json"));
    CHECK(vb("list-kernels --format markdown") == 2 && strstr(err, "list-kernels prints a table or json"));
    CHECK(vb("--bogus tiny.json") == 2 && strstr(err, "unknown option '--bogus'"));
    CHECK(vb("") == 2 && strstr(err, "no scenario files given"));
    CHECK(vb("--iterations abc tiny.json") == 2 && strstr(err, "--iterations wants 1 to 100000, got 'abc'"));
    CHECK(vb("--gpu-timeout -5 tiny.json") == 2 && strstr(err, "--gpu-timeout wants 0 to 86400 seconds, got '-5'"));
    CHECK(vb("-k no_such_kernel tiny.json -q") == 2 && strstr(err, "no kernel named 'no_such_kernel'"));
    CHECK(vb("missing.json") == 2 && strstr(err, "missing.json: cannot open"));
    CHECK(vb("validate tiny.json") == 0 && strstr(out, "2 scenarios valid"));
    /* More requests than one pass of the scheduled kernels' prefix covers (256-512 a pass): the
     * GPU proof's tiny stage runs it (its CPU oracle takes minutes under the sanitizers, so here
     * it is only validated). */
    CHECK(vb("validate many_requests.json") == 0 && strstr(out, "1 scenarios valid"));

    /* A bad file is reported and skipped; the good one still runs; the exit code is 2. */
    write_file("vb_cli_bad.json", "{\"batch\": {\"size\": 2, \"prefx_len\": 5}}");
    CHECK(vb("$VB_T/vb_cli_bad.json tiny.json -q --no-gpu") == 2);
    CHECK(strstr(err, "/vb_cli_bad.json: batch.prefx_len: unknown key (did you mean 'prefix_len'?)") != NULL);
    CHECK(strstr(out, "tiny-chain") && strstr(out, "cpu_splitk") && strstr(out, "pass"));

    /* Without a GPU the run still checks the CPU model, says why GPU stages are skipped,
     * and exits 0; --require-gpu makes that exit 3. On a GPU machine, 3 cannot happen. */
    int rc = vb("tiny.json -q --cpu-model --json $VB_T/vb_cli.json --csv $VB_T/vb_cli.csv");
    if (strstr(err, "no usable GPU")) {
        CHECK(rc == 0 && strstr(err, "skipping the GPU stages") && strstr(out, "skipped"));
        CHECK(vb("tiny.json -q --require-gpu") == 3);
    } else {
        CHECK(rc == 0);
    }
    CHECK(vb("--no-gpu --require-gpu tiny.json") == 2);

    /* report reads the JSON back and prints the same records. */
    CHECK(vb("report $VB_T/vb_cli.json") == 0 && strstr(out, "tiny-eagle-int32") && strstr(out, "cpu_splitk"));
    CHECK(vb("report $VB_T/vb_cli.csv") == 2 && strstr(err, "malformed JSON"));
    slurp(tmp("vb_cli.csv"), out, sizeof out);
    CHECK(!strncmp(out, "scenario,variant,kernel,mode,status", 35));

    /* Every machine format is one valid document, for every command and option that makes it. */
    cJSON *doc = NULL;
    CHECK(vb("report $VB_T/vb_cli.json --format json --baseline baseline_fixture.json") == 0 && is_json(out));
    const int records = count_records(out);
    CHECK(records > 0);
    CHECK(vb("report $VB_T/vb_cli.json --format csv --baseline baseline_fixture.json") == 0 && csv_rows(out) == records);
    CHECK(vb("tiny.json -q --no-gpu --format json --baseline baseline_fixture.json") == 0 && is_json(out));
    CHECK(vb("tiny.json -q --no-gpu --format csv --baseline baseline_fixture.json --speedup $VB_T/vb_cli_sp.csv") == 0 &&
          csv_rows(out) == records);
    slurp(tmp("vb_cli_sp.csv"), out, sizeof out);
    CHECK(csv_rows(out) > 0);
    /* --baseline repeats: a column group per dump, each named; the CSV stays rectangular. */
    CHECK(vb("report $VB_T/vb_cli.json --baseline baseline_fixture.json --baseline baseline_sglang_fixture.json "
             "--speedup $VB_T/vb_cli_sp2.csv") == 0 &&
          strstr(out, "[1] builtin:") && strstr(out, "[2] SGLang 0.5.23: sglang.kernels.ops.attention.extend_attention"));
    slurp(tmp("vb_cli_sp2.csv"), out, sizeof out);
    CHECK(csv_rows(out) > 0 && strstr(out, ",sglang-0.5.23_graph_speedup,note\n"));
    CHECK(vb("report $VB_T/vb_cli.json --baseline baseline_fixture.json --baseline nonexistent.json") == 2 &&
          strstr(err, "nonexistent.json: cannot open"));
    CHECK(vb("report $VB_T/vb_cli.json -q --baseline a --baseline a --baseline a --baseline a --baseline a --baseline a "
             "--baseline a --baseline a --baseline a") == 2 && strstr(err, "too many --baseline dumps"));
    slurp(tmp("vb_cli.csv"), out, sizeof out);
    CHECK(csv_rows(out) == records);
    CHECK(csv_rows("a,b\n\"x,\"\"y\"\"\",2\n") == 1 && csv_rows("a,b\n1,2,3\n") == -1); /* the checker can fail */

    /* compare: the same run twice is no regression; a pass that fails now is (exit 1). */
    CHECK(vb("compare $VB_T/vb_cli.json $VB_T/vb_cli.json") == 0 && strstr(out, "0 regressions"));
    CHECK(system("sed 's/\"status\":\t\"pass\"/\"status\":\t\"FAIL\"/' $VB_T/vb_cli.json > $VB_T/vb_cli_broken.json") == 0);
    CHECK(vb("compare $VB_T/vb_cli.json $VB_T/vb_cli_broken.json --markdown $VB_T/vb_cli_cmp.md") == 1 &&
          strstr(out, "BROKEN"));
    slurp(tmp("vb_cli_cmp.md"), out, sizeof out);
    CHECK(strstr(out, "| BROKEN |") && strstr(out, "regressions**"));
    CHECK(vb("compare $VB_T/vb_cli.json $VB_T/vb_cli_broken.json --format json") == 1 && is_json(out));
    (void)doc;
    CHECK(vb("compare $VB_T/vb_cli.json missing.json") == 2 && strstr(err, "missing.json"));
    CHECK(vb("compare $VB_T/vb_cli.json") == 2 && strstr(err, "compare wants two results files"));
    CHECK(vb("compare $VB_T/vb_cli.json $VB_T/vb_cli.json --threshold x") == 2 && strstr(err, "--threshold"));

    /* merge: runs of one build that split the kernels become one results file, which report and
     * compare read like any other; what cannot be one result is refused, naming the file and why,
     * and nothing is written. */
    CHECK(vb("tiny.json -q --no-gpu -k naive_gpu --json $VB_T/vb_cli_ma.json") == 0);
    CHECK(vb("tiny.json -q --no-gpu -k flash_paged --no-cpu-model --json $VB_T/vb_cli_mb.json") == 0);
    slurp(tmp("vb_cli_ma.json"), out, sizeof out);
    int parts = count_records(out);
    slurp(tmp("vb_cli_mb.json"), out, sizeof out);
    parts += count_records(out);
    CHECK(vb("merge --json $VB_T/vb_cli_m.json $VB_T/vb_cli_ma.json $VB_T/vb_cli_mb.json") == 0 &&
          strstr(out, "merged 2 runs: 2 scenarios"));
    slurp(tmp("vb_cli_m.json"), out, sizeof out);
    CHECK(count_records(out) == parts && parts > 0 && strstr(out, "\"merged_from\":"));
    CHECK(vb("report $VB_T/vb_cli_m.json") == 0 && strstr(out, "merged from 2 runs of one build") &&
          strstr(out, "naive_gpu") && strstr(out, "flash_paged"));
    CHECK(vb("compare $VB_T/vb_cli_m.json $VB_T/vb_cli_m.json") == 0);
    CHECK(vb("merge --json $VB_T/vb_cli_mx.json $VB_T/vb_cli_ma.json $VB_T/vb_cli_ma.json") == 2 &&
          strstr(err, "vb_cli_ma.json too: merge joins runs of different kernels"));
    CHECK(vb("large_values.json -q --no-gpu -k flash_paged --no-cpu-model --json $VB_T/vb_cli_mc.json") == 0);
    CHECK(vb("merge --json $VB_T/vb_cli_mx.json $VB_T/vb_cli_ma.json $VB_T/vb_cli_mc.json") == 2 &&
          strstr(err, "vb_cli_mc.json: scenarios[0]: 'values-past-fp16'") && strstr(err, "merge joins runs of the same scenarios"));
    CHECK(system("sed 's/\"complete\":\ttrue/\"complete\":\tfalse/' $VB_T/vb_cli_mb.json > $VB_T/vb_cli_mi.json") == 0);
    CHECK(vb("merge --json $VB_T/vb_cli_mx.json $VB_T/vb_cli_ma.json $VB_T/vb_cli_mi.json") == 2 &&
          strstr(err, "vb_cli_mi.json: complete: false") && strstr(err, "merge joins whole runs"));
    CHECK(system("sed 's/\"commit\":\t\"[^\"]*\"/\"commit\":\t\"0ther\"/' $VB_T/vb_cli_mb.json > $VB_T/vb_cli_mo.json") == 0);
    CHECK(vb("merge --json $VB_T/vb_cli_mx.json $VB_T/vb_cli_ma.json $VB_T/vb_cli_mo.json") == 2 &&
          strstr(err, "commit 0ther") && strstr(err, "merge joins runs of one build"));
    CHECK(system("test -e $VB_T/vb_cli_mx.json") != 0); /* refused merges wrote nothing */
    CHECK(vb("merge $VB_T/vb_cli_ma.json $VB_T/vb_cli_mb.json") == 2 && strstr(err, "merge wants --json OUT.json"));
    CHECK(vb("merge --json $VB_T/vb_cli_mx.json $VB_T/vb_cli_ma.json") == 2 && strstr(err, "two or more results files"));

    /* Nothing is lost silently: a write that fails says why and exits 2, for files and stdout. */
    CHECK(vb("--json /dev/full tiny.json -q --no-gpu") == 2 && strstr(err, "/dev/full: writing failed: No space left"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' tiny.json -q --no-gpu --format json >/dev/full 2>$VB_T/vb_cli_err", data, exe);
    int st = system(cmd);
    slurp(tmp("vb_cli_err"), err, sizeof err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, "writing to stdout failed: No space left"));
    snprintf(cmd, sizeof cmd, "'%s' report $VB_T/vb_cli.json >/dev/full 2>/dev/null", exe);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* ... and one it cannot write is said before anything runs, not at the end of the run. */
    CHECK(vb("--json /tmp/no_such_dir/x.json tiny.json -q --no-gpu") == 2 && strstr(err, "cannot write: No such file") &&
          strstr(err, "(nothing was run)") && out[0] == '\0');
    CHECK(vb("--csv /tmp --markdown $VB_T/vb_cli_probe.md tiny.json -q --no-gpu") == 2 &&
          strstr(err, "/tmp: cannot write: Is a directory (nothing was run)") && out[0] == '\0' &&
          system("ls $VB_T/vb_cli_probe.md* >/dev/null 2>&1") != 0); /* the probe left nothing behind */
    CHECK(vb("--json /dev/null tiny.json -q --no-gpu") == 0); /* a device is written, never probed */
    /* Directories, pipes and binary files get the right reason, or are read. */
    CHECK(vb("validate /tmp") == 2 && strstr(err, "/tmp: cannot read: Is a directory"));
    CHECK(vb("validate /dev/stdin < tiny.json") == 0 && strstr(out, "2 scenarios valid"));
    CHECK(system("printf '{\"batch\": {\"size\": 1}}\\0{}' > $VB_T/vb_cli_nul.json") == 0);
    CHECK(vb("validate $VB_T/vb_cli_nul.json") == 2 && strstr(err, "a NUL byte at offset 22"));

    /* validate rejects what the run would: an int32 index buffer too small for the offsets. */
    write_file("vb_cli_i32.json", "{\"batch\": {\"size\": 1024, \"prefix_len\": 200000}, \"tree\": {\"preset\": "
                                  "\"chain\", \"nodes\": 64}, \"index_dtypes\": {\"mask_indptr\": \"int32\"}}");
    CHECK(vb("validate $VB_T/vb_cli_i32.json") == 2 && strstr(err, "index_dtypes: an int32 buffer cannot hold") &&
          strstr(out, "0 scenarios valid"));

    /* Host memory running out is bad input for that scenario, not a CUDA error (exit 4): one
     * line names the file, the scenario and the field, the next scenario still runs, exit 2. */
#ifndef VB_ASAN
    write_file("vb_cli_oom.json", "[{\"name\": \"too-big\", \"batch\": {\"size\": 4, \"prefix_len\": 200000}, "
                                  "\"tree\": {\"preset\": \"chain\", \"nodes\": 4}},"
                                  " {\"name\": \"fits\", \"batch\": {\"size\": 2, \"prefix_len\": 30}}]");
    snprintf(cmd, sizeof cmd, "cd '%s' && ulimit -v 400000 && '%s' $VB_T/vb_cli_oom.json -q --no-gpu --threads 2 "
             ">$VB_T/vb_cli_out 2>$VB_T/vb_cli_err", data, exe);
    st = system(cmd);
    slurp(tmp("vb_cli_out"), out, sizeof out);
    slurp(tmp("vb_cli_err"), err, sizeof err);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2 &&
                  strstr(err, "/vb_cli_oom.json: [0]: scenario 'too-big': batch: too little host memory for the") &&
                  strstr(out, "fits") && strstr(out, "1 pass"),
              "host OOM: status %d, said '%s'", st, err);
#endif

    /* A failing check exits 1, also when a bad file is present too (1 outranks 2). */
    CHECK(vb("tiny.json -q --no-gpu --cpu-model-bug unwritten") == 1 && strstr(out, "FAIL"));
    CHECK(vb("tiny.json $VB_T/vb_cli_bad.json -q --no-gpu --cpu-model-bug scale") == 1);
    CHECK(vb("tiny.json -q --no-gpu --cpu-model-bug nonsense") == 2);
    CHECK(vb("tiny.json -q --no-gpu --format csv") == 0 && !strncmp(out, "scenario,variant", 16));
    CHECK(vb("tiny.json -q --no-gpu -f eagle") == 0 && !strstr(out, "tiny-chain") && strstr(out, "tiny-eagle"));
    CHECK(system("rm -rf \"$VB_T\"") == 0);
    TEST_MAIN_END();
}
