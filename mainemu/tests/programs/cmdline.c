/* cmdline: what the C runtime and kernel32 say about the command line and environment. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>
int main(int argc, char **argv) {
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++) printf("argv[%d]=[%s]\n", i, argv[i]);
    printf("cmdline=[%s]\n", GetCommandLineA());
    const char *p = getenv("PATH");
    printf("PATH=%s\n", p ? p : "(none)");
    return argc;
}
