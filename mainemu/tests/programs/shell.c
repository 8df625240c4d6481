/* The built-in cmd.exe: CreateProcess of `cmd /c ...` with the child's
   output in a pipe, system() and _popen(). Prints what it saw. */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs `line` with stdout and stderr in one pipe; prints the bytes (escaped) and the exit code. */
static void run(const char *line) {
    HANDLE r, w;
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    char cmd[512], buf[4096];
    DWORD n = 0, got, code = 12345;
    CreatePipe(&r, &w, &sa, 0);
    ZeroMemory(&si, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = w;
    si.hStdError = w;
    lstrcpyA(cmd, line);
    if (!CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        printf("[%s] CreateProcess failed %lu\n", line, GetLastError());
        return;
    }
    CloseHandle(w);
    WaitForSingleObject(pi.hProcess, INFINITE);
    GetExitCodeProcess(pi.hProcess, &code);
    while (n < sizeof buf - 1 && ReadFile(r, buf + n, sizeof buf - 1 - n, &got, NULL) && got)
        n += got;
    buf[n] = 0;
    printf("[%s] exit %lu: \"", line, code);
    for (DWORD i = 0; i < n; i++) {
        if (buf[i] == '\r') printf("\\r");
        else if (buf[i] == '\n') printf("\\n");
        else putchar(buf[i]);
    }
    printf("\"\n");
    CloseHandle(r);
    CloseHandle(pi.hProcess);
    CloseHandle(pi.hThread);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        run(argv[i]);
    if (argc == 1) {
        FILE *f;
        char b[256];
        int k;
        printf("system: %d\n", system("echo sys> s.txt && type s.txt"));
        printf("system missing: %d\n", system("nosuch"));
        f = _popen("type s.txt", "r");
        k = f ? (int)fread(b, 1, sizeof b - 1, f) : -1;
        b[k > 0 ? k : 0] = 0;
        printf("popen read %d: %s", k, b);
        printf("pclose: %d\n", f ? _pclose(f) : -1);
    }
    return 0;
}
