#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_util.h"
#include "version.h"

static const char usage_text[] =
    "usage: verifybench [options] FILE...             run scenarios (the main job)\n"
    "       verifybench validate FILE...              parse and validate only\n"
    "       verifybench list-kernels [--all]          print the kernel registry\n"
    "       verifybench export --out DIR FILE...      write input bundles for scripts/triton_baseline.py\n"
    "       verifybench report RESULTS.json [--baseline DUMP]...  print a results file again\n"
    "       verifybench compare OLD.json NEW.json [--threshold PCT]  is NEW slower, broken or different?\n"
    "       verifybench merge --json OUT.json RUN.json...  one results file from runs of one build that\n"
    "                                                split the kernels (each record keeps its run's ceilings)\n"
    "\n"
    "Runs every registered speculative-decoding verify kernel on the scenarios in FILE...,\n"
    "eagerly and through a captured CUDA graph, checks each output against a CPU oracle\n"
    "(numeric tolerance and token-exact tree verification) and times it.\n"
    "\n"
    "options:\n"
    "  -k, --kernel NAME      run this kernel (repeatable; default: every registered kernel)\n"
    "  -f, --filter TEXT      run only scenarios whose name contains TEXT (repeatable)\n"
    "      --json FILE        write the results as JSON (schema " "verifybench.results/1); a regular\n"
    "                         file is also rewritten after every scenario, marked complete: false,\n"
    "                         so that a killed run leaves what it finished\n"
    "      --csv FILE         write the results as CSV\n"
    "      --markdown FILE    write the results as a markdown table\n"
    "      --format FMT       stdout format: table (default), markdown, csv or json (validate and\n"
    "                         list-kernels: table or json)\n"
    "      --baseline DUMP    add the speedup table against a Triton baseline dump; repeatable (up to\n"
    "                         8): one speedup column per dump, named by its implementation and\n"
    "                         SGLang version (with --format csv or json only --speedup FILE gets\n"
    "                         it: stdout stays one document)\n"
    "      --speedup FILE     with --baseline, also write the speedup table (.md markdown, .csv CSV)\n"
    "      --require-gpu      exit 3 unless a usable GPU is present\n"
    "      --no-gpu           skip the GPU stages even if a GPU is present\n"
    "      --cpu-model        also run the CPU model of the split-K kernel (default: only without a GPU)\n"
    "      --no-cpu-model     never run the CPU model\n"
    "      --cpu-model-bug B  plant a bug in the CPU model to see the checks fail: mask, slot, scale,\n"
    "                         unwritten or stray (implies --cpu-model)\n"
    "      --cold-l2 on|off   override the scenarios' timing.cold_l2\n"
    "      --iterations N     override the scenarios' timing.iterations\n"
    "      --verify-generator on the GPU, also generate inputs on the host and compare the bits\n"
    "      --no-ceilings      skip measuring the GPU's bandwidth and mma ceilings (e.g. under a sanitizer)\n"
    "      --gpu-timeout S    a wait for the GPU longer than S seconds (a kernel that never finishes)\n"
    "                         is reported as an ERROR, the reports are written and the run exits 4\n"
    "                         (default 300; 0: wait for ever, e.g. under compute-sanitizer or ncu)\n"
    "  -j, --threads N        CPU threads for the oracle and the checks (default: all CPUs)\n"
    "  -o, --out DIR          export: where the bundles go\n"
    "      --threshold PCT    compare: a timing change counts above PCT percent (default 5) and\n"
    "                         above the noise both runs measured\n"
    "      --allow-different-gpu  compare: compare runs from different GPUs or drivers anyway\n"
    "      --kernel-pair OLD=NEW  compare: kernel NEW's records against kernel OLD's (OLD.json and\n"
    "                         NEW.json may be one run): is NEW slower anywhere, beyond the noise?\n"
    "  -q, --quiet            no progress on stderr (also off when stderr is not a terminal)\n"
    "  -h, --help             this help\n"
    "  -V, --version          version and git commit\n"
    "\n"
    "exit codes:\n"
    "  0  every check passed\n"
    "  1  a correctness, capture or token-exact check failed\n"
    "  2  bad input or usage (bad scenarios are reported and skipped; the rest still run)\n"
    "  3  --require-gpu was given and no GPU is usable\n"
    "  4  a CUDA runtime error, or a GPU wait past --gpu-timeout\n"
    "  128+N  stopped by signal N (SIGINT 130, SIGTERM 143) after the stage under way: the rest is\n"
    "     reported as not run and the reports say complete: false (a second signal ends at once)\n"
    "compare exits 0 when nothing regressed, 1 on a regression (slower beyond the threshold and\n"
    "the noise, a pass that fails now, a changed token verdict), 2 on bad input (an incomplete\n"
    "run included).\n"
    "merge exits 0, or 2 when the files cannot be one result (another build, GPU or set of\n"
    "scenarios, a record in two of them, an incomplete run).\n"
    "When several apply, 128+N wins, then the highest of 4, 1, 2 in that order.\n";

int vb_exit_worst(int a, int b)
{
    static const int rank[] = {0, 3, 2, 1, 4}; /* by exit code 0..4: 0 < 3 < 2 < 1 < 4 */
    const int ra = a >= 0 && a <= 4 ? rank[a] : 0, rb = b >= 0 && b <= 4 ? rank[b] : 0;
    return ra >= rb ? a : b;
}

static int parse_count(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

_Static_assert(VB_MAX_BASELINES == 8, "the too-many --baseline message says 8");

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "verifybench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'verifybench --help'.\n");
    return VB_EXIT_INPUT;
}

enum {
    OPT_JSON = 256, OPT_CSV, OPT_MD, OPT_FORMAT, OPT_BASELINE, OPT_REQUIRE_GPU, OPT_NO_GPU,
    OPT_CPU_MODEL, OPT_NO_CPU_MODEL, OPT_COLD, OPT_ITER, OPT_VERIFY_GEN, OPT_ALL, OPT_NO_CEIL, OPT_BUG, OPT_SPEEDUP,
    OPT_THRESHOLD, OPT_ALLOW_GPU, OPT_GPU_TIMEOUT, OPT_KERNEL_PAIR
};

static int parse_percent(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v >= 0 && v <= 1000))
        return -1;
    *out = v / 100;
    return 0;
}

static int take_option(vb_cli *cli, int c, const char *arg)
{
    switch (c) {
    case 'k':
        if (cli->n_kernels == VB_CLI_MAX) return usage_error("too many --kernel options%s", "");
        cli->kernels[cli->n_kernels++] = arg;
        return -1;
    case 'f':
        if (cli->n_filters == VB_CLI_MAX) return usage_error("too many --filter options%s", "");
        cli->filters[cli->n_filters++] = arg;
        return -1;
    case 'j':
        return parse_count(arg, 1, 4096, &cli->threads) ? usage_error("--threads wants 1 to 4096, got '%s'", arg) : -1;
    case 'o': cli->out_dir = arg; return -1;
    case 'q': cli->quiet = 1; return -1;
    case OPT_JSON: cli->json_path = arg; return -1;
    case OPT_CSV: cli->csv_path = arg; return -1;
    case OPT_MD: cli->markdown_path = arg; return -1;
    case OPT_BASELINE:
        if (cli->n_baselines == VB_MAX_BASELINES)
            return usage_error("too many --baseline dumps (at most 8 in one table)%s", "");
        cli->baselines[cli->n_baselines++] = arg;
        return -1;
    case OPT_SPEEDUP: cli->speedup_path = arg; return -1;
    case OPT_THRESHOLD:
        return parse_percent(arg, &cli->threshold) ? usage_error("--threshold wants a percentage 0 to 1000, got '%s'", arg)
                                                   : -1;
    case OPT_ALLOW_GPU: cli->allow_different_gpu = 1; return -1;
    case OPT_KERNEL_PAIR: {
        const char *eq = strchr(arg, '=');
        const size_t n = eq ? (size_t)(eq - arg) : 0;
        if (!eq || !n || !eq[1] || n >= sizeof cli->pair_old || strlen(eq + 1) >= sizeof cli->pair_new)
            return usage_error("--kernel-pair wants OLD=NEW, two kernel names, got '%s'", arg);
        memcpy(cli->pair_old, arg, n);
        cli->pair_old[n] = '\0';
        snprintf(cli->pair_new, sizeof cli->pair_new, "%s", eq + 1);
        return -1;
    }
    case OPT_REQUIRE_GPU: cli->require_gpu = 1; return -1;
    case OPT_NO_GPU: cli->no_gpu = 1; return -1;
    case OPT_CPU_MODEL: cli->cpu_model = 1; return -1;
    case OPT_NO_CPU_MODEL: cli->cpu_model = 0; return -1;
    case OPT_VERIFY_GEN: cli->verify_generator = 1; return -1;
    case OPT_ALL: cli->all_kernels = 1; return -1;
    case OPT_NO_CEIL: cli->no_ceilings = 1; return -1;
    case OPT_BUG: {
        static const char *const bugs[] = {"none", "mask", "slot", "scale", "unwritten", "stray"};
        for (int i = 1; i < 6; i++)
            if (!strcmp(arg, bugs[i]))
                return cli->cpu_model_bug = i, cli->cpu_model = 1, -1;
        return usage_error("--cpu-model-bug wants mask, slot, scale, unwritten or stray, got '%s'", arg);
    }
    case OPT_ITER:
        return parse_count(arg, 1, 100000, &cli->iterations) ? usage_error("--iterations wants 1 to 100000, got '%s'", arg) : -1;
    case OPT_GPU_TIMEOUT:
        return parse_count(arg, 0, 86400, &cli->gpu_timeout_s) ? usage_error("--gpu-timeout wants 0 to 86400 seconds, got '%s'", arg)
                                                               : -1;
    case OPT_COLD:
        if (strcmp(arg, "on") && strcmp(arg, "off"))
            return usage_error("--cold-l2 wants on or off, got '%s'", arg);
        cli->cold_l2 = !strcmp(arg, "on");
        return -1;
    case OPT_FORMAT: {
        static const char *const names[] = {"table", "markdown", "csv", "json"};
        for (int i = 0; i < 4; i++)
            if (!strcmp(arg, names[i]))
                return cli->format = (vb_format)i, cli->format_given = 1, -1;
        return usage_error("--format wants table, markdown, csv or json, got '%s'", arg);
    }
    default: return usage_error("unknown option%s", "");
    }
}

int vb_cli_parse(int argc, char **argv, vb_cli *cli)
{
    static const struct option longs[] = {
        {"kernel", required_argument, 0, 'k'}, {"filter", required_argument, 0, 'f'},
        {"threads", required_argument, 0, 'j'}, {"out", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'},
        {"json", required_argument, 0, OPT_JSON}, {"csv", required_argument, 0, OPT_CSV},
        {"markdown", required_argument, 0, OPT_MD}, {"format", required_argument, 0, OPT_FORMAT},
        {"baseline", required_argument, 0, OPT_BASELINE}, {"require-gpu", no_argument, 0, OPT_REQUIRE_GPU},
        {"no-gpu", no_argument, 0, OPT_NO_GPU}, {"cpu-model", no_argument, 0, OPT_CPU_MODEL},
        {"no-cpu-model", no_argument, 0, OPT_NO_CPU_MODEL}, {"cold-l2", required_argument, 0, OPT_COLD},
        {"iterations", required_argument, 0, OPT_ITER}, {"verify-generator", no_argument, 0, OPT_VERIFY_GEN},
        {"all", no_argument, 0, OPT_ALL}, {"no-ceilings", no_argument, 0, OPT_NO_CEIL},
        {"cpu-model-bug", required_argument, 0, OPT_BUG}, {"speedup", required_argument, 0, OPT_SPEEDUP},
        {"threshold", required_argument, 0, OPT_THRESHOLD}, {"allow-different-gpu", no_argument, 0, OPT_ALLOW_GPU},
        {"gpu-timeout", required_argument, 0, OPT_GPU_TIMEOUT}, {"kernel-pair", required_argument, 0, OPT_KERNEL_PAIR},
        {0, 0, 0, 0}};
    static const char *const words[] = {"run", "list-kernels", "validate", "export", "report", "compare", "merge"};
    memset(cli, 0, sizeof *cli);
    cli->cpu_model = -1;
    cli->cold_l2 = -1;
    cli->threshold = 0.05;
    cli->gpu_timeout_s = 300;
    int first = 1;
    if (argc > 1)
        for (int i = 0; i < (int)(sizeof words / sizeof *words); i++)
            if (!strcmp(argv[1], words[i]))
                cli->command = (vb_command)i, first = 2;
    optind = first;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":k:f:j:o:qhV", longs, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            return VB_EXIT_OK;
        }
        if (c == 'V') {
            printf("verifybench %s (commit %s)%s\n", VB_VERSION, VB_GIT_COMMIT,
                   vb_dev_phase_stamps() ? ", built with -Dphase_stamps=true: the onepass kernels' times are not their own" : "");
            return VB_EXIT_OK;
        }
        if (c == '?')
            return usage_error("unknown option '%s'", argv[optind - 1]);
        if (c == ':')
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        int rc = take_option(cli, c, optarg);
        if (rc >= 0)
            return rc;
    }
    for (int i = optind; i < argc; i++) {
        if (cli->n_files == (int)(sizeof cli->files / sizeof *cli->files))
            return usage_error("too many files%s", "");
        cli->files[cli->n_files++] = argv[i];
    }
    if (cli->command == VB_CMD_LIST_KERNELS && cli->n_files)
        return usage_error("list-kernels takes no files (got '%s')", cli->files[0]);
    if (cli->command == VB_CMD_REPORT && cli->n_files != 1)
        return usage_error("report wants exactly one results file%s", "");
    if (cli->command == VB_CMD_COMPARE && cli->n_files != 2)
        return usage_error("compare wants two results files: OLD.json NEW.json%s", "");
    if (cli->command == VB_CMD_MERGE && (cli->n_files < 2 || !cli->json_path))
        return usage_error("merge wants --json OUT.json and two or more results files%s", "");
    if (cli->command == VB_CMD_COMPARE && cli->format == VB_FMT_CSV)
        return usage_error("compare prints table, markdown or json%s", "");
    if ((cli->command == VB_CMD_VALIDATE || cli->command == VB_CMD_LIST_KERNELS) &&
        (cli->format == VB_FMT_CSV || cli->format == VB_FMT_MARKDOWN))
        return usage_error("%s prints a table or json", cli->command == VB_CMD_VALIDATE ? "validate" : "list-kernels");
    if (cli->command == VB_CMD_EXPORT && !cli->out_dir)
        return usage_error("export wants --out DIR%s", "");
    if ((cli->command == VB_CMD_RUN || cli->command == VB_CMD_VALIDATE || cli->command == VB_CMD_EXPORT) &&
        !cli->n_files)
        return usage_error("no scenario files given (e.g. verifybench configs/*.json)%s", "");
    if (cli->speedup_path && !cli->n_baselines)
        return usage_error("--speedup needs --baseline DUMP%s", "");
    if (cli->require_gpu && cli->no_gpu)
        return usage_error("--require-gpu and --no-gpu contradict each other%s", "");
    return -1;
}
