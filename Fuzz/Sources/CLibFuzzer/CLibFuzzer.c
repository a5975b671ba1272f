// Nothing to compile: the target exists for its header (libFuzzer itself comes with -sanitize=fuzzer).
#include "CLibFuzzer.h"
