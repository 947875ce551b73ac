/*
 * tokmut.h: a mutator of tokens for the harnesses whose input is text (a
 * program or IR), with the words of a libFuzzer dictionary (tokmut.c).
 */
#ifndef TLX_FUZZ_TOKMUT_H
#define TLX_FUZZ_TOKMUT_H

#include <stddef.h>
#include <stdint.h>

/* Loads the words of the dictionary named by a "-dict=FILE" argument
 * (libFuzzer's format: one "word" a line, \\, \" and \xNN escapes); a few
 * punctuators when there is none. */
void tm_load_dict(int argc, char **argv);

/* libFuzzer's custom mutator: with seed, one mutation of tokens (split
 * as words, numbers, whitespace runs and single punctuators) half of the
 * time, libFuzzer's own mutation the other half.  Returns the new size
 * (<= max_size). */
size_t tm_mutate(uint8_t *data, size_t size, size_t max_size,
		 unsigned int seed);

#endif
