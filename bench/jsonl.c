/* SPDX-License-Identifier: ISC */
/*
 * jsonl BYTES: write about BYTES of Claude Code's stream-json to stdout,
 * as an agent adapter reads it: assistant lines whose text (1.5 KiB, with
 * \n escapes and a quoted status block now and then) is wanted for the
 * status scanner, user lines with tool output it passes over, usage
 * numbers, and a result line at the end.  Written in 64 KiB blocks, like
 * any program that buffers its output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char block[64 * 1024];
static size_t used;

static void
out(const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		size_t room = sizeof(block) - used, k = n < room ? n : room;

		memcpy(block + used, p, k);
		used += k;
		p += k;
		n -= k;
		if (used == sizeof(block)) {
			for (size_t off = 0; off < used; off += (size_t)w)
				if ((w = write(1, block + off, used - off)) <= 0)
					exit(1);
			used = 0;
		}
	}
}

int
main(int argc, char **argv)
{
	unsigned long long total, done = 0;
	char text[1600], line[4096];
	int i, n;

	if (argc != 2)
		return 2;
	total = strtoull(argv[1], NULL, 10);
	for (i = 0; i < (int)sizeof(text) - 1; i++)
		text[i] = i % 80 == 79 ? 'n' : i % 80 == 78 ? '\\' :
		    "the quick brown fox jumps over a lazy dog "[i % 42];
	text[sizeof(text) - 1] = '\0';
	for (i = 0; done < total; i++) {
		if (i % 2 == 0)
			n = snprintf(line, sizeof(line),
			    "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_%d\","
			    "\"content\":[{\"type\":\"text\",\"text\":\"%s%s\"}],"
			    "\"usage\":{\"input_tokens\":%d,\"output_tokens\":1}},"
			    "\"session_id\":\"0f8c2b1e-5e0a-4c5e-9a53-2f4d1b7c9e10\"}\n",
			    i, text, i % 64 == 0 ? "\\n---RALPH_STATUS---\\n"
			    "STATUS: IN_PROGRESS\\n---END_RALPH_STATUS---" : "",
			    i);
		else
			n = snprintf(line, sizeof(line),
			    "{\"type\":\"user\",\"message\":{\"role\":\"user\","
			    "\"content\":[{\"tool_use_id\":\"t_%d\",\"type\":"
			    "\"tool_result\",\"content\":\"%s\"}]},"
			    "\"session_id\":\"0f8c2b1e-5e0a-4c5e-9a53-2f4d1b7c9e10\"}\n",
			    i, text);
		out(line, (size_t)n);
		done += (unsigned long long)n;
	}
	n = snprintf(line, sizeof(line), "{\"type\":\"result\",\"subtype\":"
	    "\"success\",\"is_error\":false,\"result\":\"done\",\"num_turns\":"
	    "%d,\"total_cost_usd\":1.5,\"usage\":{\"input_tokens\":9,"
	    "\"output_tokens\":9}}\n", i);
	out(line, (size_t)n);
	if (used > 0 && write(1, block, used) != (ssize_t)used)
		return 1;
	return 0;
}
