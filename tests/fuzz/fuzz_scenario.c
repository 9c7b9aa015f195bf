/* libFuzzer target: the scenario parser on arbitrary bytes (a list, a sweep, replays, every
 * key). It must never crash, leak, read out of bounds or hit undefined behaviour, whatever
 * it is fed; rejecting input is fine. Run long: see tests/fuzz/README.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (!freopen("/dev/null", "w", stderr)) /* one line per rejected input: too much to keep */
        return 0;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    vb_scenario_list list = {0};
    vb_scenario_load_text("fuzz.json", text, &list);
    vb_scenario_list_free(&list);
    free(text);
    return 0;
}
