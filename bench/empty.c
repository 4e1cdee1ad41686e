/* SPDX-License-Identifier: ISC */
/*
 * empty: a program that does nothing, built three times by bench/run.sh:
 * as empty-libc.bin (libc only), as empty-libs.bin, linked with
 * --no-as-needed against the shared libraries cbexec loads at start-up
 * (cJSON), and as empty-crypto.bin, with libcrypto as well.  The
 * differences in their start-up time are what loading those libraries
 * costs every invocation before main() runs, and what linking libcrypto
 * would add.
 */
int
main(void)
{
	return 0;
}
