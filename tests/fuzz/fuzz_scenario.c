/* libFuzzer target: the scenario parser on arbitrary bytes (a list, a sweep, replays, every
 * key). It must never crash, leak, read out of bounds or hit undefined behaviour, whatever
 * it is fed; rejecting input is fine. The parser writes one line per rejected input on stderr:
 * run it with -close_fd_mask=2, which closes the target's stderr but keeps libFuzzer's output
 * and the sanitizers' reports (a target that reopened stderr itself lost both). Run long: see
 * tests/fuzz/README.md. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

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
