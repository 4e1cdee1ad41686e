/* SPDX-License-Identifier: ISC */
/*
 * empty: a program that does nothing, built twice by bench/run.sh: as
 * empty-libc.bin (libc only) and as empty-libs.bin, linked with
 * --no-as-needed against cbexec's libraries (cJSON, libcrypto, libev,
 * libm).  The difference in their start-up time is what loading those
 * libraries costs every cbexec invocation before main() runs.
 */
int
main(void)
{
	return 0;
}
