/* files: kernel32's file, directory and path calls inside the C: drive, and
   the confinement rules (paths that leave the drive are refused). */
#include <stdio.h>
#include <string.h>
#include <windows.h>

static void put(const char *name, const char *text) {
    HANDLE h = CreateFileA(name, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    DWORD n = 0;
    WriteFile(h, text, (DWORD)strlen(text), &n, NULL);
    CloseHandle(h);
}

static void try_open(const char *name) {
    HANDLE h = CreateFileA(name, GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
    printf("open %s -> %s err=%lu\n", name, h == INVALID_HANDLE_VALUE ? "fail" : "ok", GetLastError());
    if (h != INVALID_HANDLE_VALUE) CloseHandle(h);
}

int main(void) {
    char buf[MAX_PATH], *part;
    BOOL ok1 = CreateDirectoryA("work", NULL);
    BOOL ok2 = CreateDirectoryA("work", NULL);
    printf("mkdir=%d again=%d err=%lu\n", ok1, ok2, GetLastError());
    put("work\\b.txt", "bravo");
    put("work\\a.txt", "alpha!");
    put("work\\C.dat", "charlie-data");
    CreateDirectoryA("work\\sub", NULL);

    HANDLE h = CreateFileA("work\\a.txt", GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    DWORD hi = 7, n = 0;
    printf("size=%lu hi=%lu\n", GetFileSize(h, &hi), hi);
    printf("seek=%lu\n", SetFilePointer(h, 2, NULL, FILE_BEGIN));
    memset(buf, 0, sizeof buf);
    ReadFile(h, buf, 100, &n, NULL);
    printf("read n=%lu [%s]\n", n, buf);
    SetFilePointer(h, -1, NULL, FILE_END);
    WriteFile(h, "?", 1, &n, NULL);
    SetFilePointer(h, 3, NULL, FILE_BEGIN);
    SetEndOfFile(h);
    printf("truncated size=%lu type=%lu\n", GetFileSize(h, NULL), GetFileType(h));
    CloseHandle(h);

    WIN32_FIND_DATAA fd;
    HANDLE f = FindFirstFileA("work\\*", &fd);
    do {
        printf("find %-6s attr=%02lx size=%lu\n", fd.cFileName, fd.dwFileAttributes, fd.nFileSizeLow);
    } while (FindNextFileA(f, &fd));
    printf("end err=%lu\n", GetLastError());
    FindClose(f);
    f = FindFirstFileA("work\\*.txt", &fd);
    int txt = 0;
    do txt++; while (FindNextFileA(f, &fd));
    FindClose(f);
    f = FindFirstFileA("work\\*.none", &fd);
    printf("txt=%d missing=%d err=%lu\n", txt, f == INVALID_HANDLE_VALUE, GetLastError());

    DWORD a1 = GetFileAttributesA("work\\sub"), a2 = GetFileAttributesA("work\\b.txt");
    DWORD a3 = GetFileAttributesA("work\\none");
    printf("attr dir=%lx file=%lx none=%lx err=%lu\n", a1, a2, a3, GetLastError());
    ok1 = MoveFileA("work\\b.txt", "work\\sub\\b2.txt");
    ok2 = CopyFileA("work\\sub\\b2.txt", "work\\copy.txt", TRUE);
    BOOL ok3 = CopyFileA("work\\sub\\b2.txt", "work\\copy.txt", TRUE);
    printf("move=%d copy=%d copyfail=%d err=%lu\n", ok1, ok2, ok3, GetLastError());
    n = GetFullPathNameA("work\\sub\\..\\a.txt", sizeof buf, buf, &part);
    printf("full=%s n=%lu part=%s\n", buf, n, part);
    SetCurrentDirectoryA("work\\sub");
    GetCurrentDirectoryA(sizeof buf, buf);
    printf("cwd=%s\n", buf);
    try_open("b2.txt");
    SetCurrentDirectoryA("\\");
    GetCurrentDirectoryA(sizeof buf, buf);
    printf("cwd=%s\n", buf);

    /* Confinement: nothing outside the drive is reachable. */
    try_open("..\\outside.txt");
    try_open("C:\\..\\..\\etc\\passwd");
    try_open("\\\\server\\share\\x");
    try_open("\\\\?\\C:\\work\\a.txt");
    try_open("work\\a.txt:stream");
    try_open("work\\com1.txt");
    try_open("Q:\\x");
    h = CreateFileA("NUL", GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
    ok1 = WriteFile(h, "abc", 3, &n, NULL);
    printf("nul write=%d n=%lu\n", ok1, n);
    CloseHandle(h);

    ok1 = DeleteFileA("work\\sub\\b2.txt");
    ok2 = RemoveDirectoryA("work");
    printf("del=%d deldir=%d err=%lu\n", ok1, ok2, GetLastError());
    DeleteFileA("work\\a.txt");
    DeleteFileA("work\\C.dat");
    DeleteFileA("work\\copy.txt");
    ok1 = RemoveDirectoryA("work\\sub");
    ok2 = RemoveDirectoryA("work");
    printf("rmdir=%d %d\n", ok1, ok2);
    printf("drives=%lx type=%u\n", GetLogicalDrives(), GetDriveTypeA("C:\\"));
    return 0;
}
