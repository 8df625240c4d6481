/* fileio: write a file with stdio, read it back with stdio and kernel32, delete it. */
#include <stdio.h>
#include <string.h>
#include <windows.h>
int main(void) {
    FILE *f = fopen("fileio.tmp", "wb");
    if (!f) { printf("fopen write failed\n"); return 1; }
    for (int i = 0; i < 100; i++) fprintf(f, "line %d\n", i);
    fclose(f);
    f = fopen("fileio.tmp", "rb");
    char buf[64]; int lines = 0; long total = 0;
    while (fgets(buf, sizeof buf, f)) { lines++; total += (long)strlen(buf); }
    fclose(f);
    printf("lines=%d bytes=%ld\n", lines, total);
    HANDLE h = CreateFileA("fileio.tmp", GENERIC_READ, 0, NULL, OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) { printf("CreateFileA failed %lu\n", GetLastError()); return 2; }
    DWORD got = 0; char first[8] = {0};
    ReadFile(h, first, 7, &got, NULL);
    printf("size=%lu first=[%.*s] got=%lu\n", GetFileSize(h, NULL), 6, first, got);
    CloseHandle(h);
    printf("delete=%d\n", DeleteFileA("fileio.tmp") ? 1 : 0);
    printf("again=%d err=%lu\n", fopen("fileio.tmp", "rb") == NULL, GetLastError());
    return 0;
}
