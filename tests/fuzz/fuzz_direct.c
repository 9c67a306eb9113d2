/* SPDX-License-Identifier: MIT */
/* A job's script read for the direct exec (wrappers/direct.c): any bytes
 * give either "needs its shell" or words of the plain set, a first word
 * that is no assignment, and a #! shell from the plain list. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gded.h"

#define MAX_WORDS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *argv[MAX_WORDS], *interp, *arg;
	int argc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	argc = gded_script_simple(text, size, &interp, &arg, argv, MAX_WORDS);
	FUZZ_ASSERT(argc >= 0 && argc < MAX_WORDS);
	if (argc > 0) {
		FUZZ_ASSERT(argv[argc] == NULL);
		FUZZ_ASSERT(!memchr(data, 0, size));
		FUZZ_ASSERT(!strchr(argv[0], '='));
		for (int i = 0; i < argc; i++) {
			FUZZ_ASSERT(argv[i][0] != '\0');
			FUZZ_ASSERT(strspn(argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						    "0123456789_./,:+=@%-") == strlen(argv[i]));
			FUZZ_ASSERT(argv[i] >= text && argv[i] < text + size);
		}
		FUZZ_ASSERT(!interp || gded_shell_is_plain(interp));
		FUZZ_ASSERT(!arg);
	}
	free(text);
	return 0;
}
