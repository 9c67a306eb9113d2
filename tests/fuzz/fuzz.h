/* SPDX-License-Identifier: MIT */
/* The libFuzzer entry points every harness defines (and driver.c calls). */
#ifndef QPOOL_FUZZ_H
#define QPOOL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional; weak so harnesses without set-up need not define it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* A NUL-terminated copy of the input (the parsers take C strings). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* Aborts with a message: a failed oracle is a crash to the fuzzer. */
#define FUZZ_ASSERT(cond) do { if (!(cond)) fuzz_fail(#cond, __FILE__, __LINE__); } while (0)
void fuzz_fail(const char *what, const char *file, int line) __attribute__((noreturn));

#endif
