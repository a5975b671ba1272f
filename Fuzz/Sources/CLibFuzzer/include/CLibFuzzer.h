// libFuzzer's entry point for programs that keep their own main (compiler-rt, FuzzerInterface.h): parses the
// libFuzzer flags in argc/argv and runs `callback` on every input until a limit or a finding.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
