/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A main() for a fuzz target without libFuzzer: runs every file named (or
 * in a directory named) through LLVMFuzzerTestOneInput once, each from an
 * exact-size allocation, so any compiler and any sanitizer build replays
 * the corpus: the seeds and every crash once found.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned files = 0, errors = 0;

	for (int i = 1; i < argc; i++) {
		struct stat sb;
		struct dirent *de;
		DIR *d;

		if (stat(argv[i], &sb) < 0 || !S_ISDIR(sb.st_mode)) {
			errors += run_file(argv[i]) < 0;
			files++;
			continue;
		}
		if (!(d = opendir(argv[i]))) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			errors++;
			continue;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			errors += run_file(path) < 0;
			files++;
		}
		closedir(d);
	}
	printf("%u inputs run, %u unreadable\n", files, errors);
	return errors || !files;
}
