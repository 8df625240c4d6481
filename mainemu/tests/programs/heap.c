/* heap: malloc/realloc/free, HeapAlloc and VirtualAlloc; prints a checksum of what it stored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
int main(void) {
    unsigned sum = 0;
    char *blocks[64];
    for (int i = 0; i < 64; i++) {
        blocks[i] = malloc(16 + i * 37);
        memset(blocks[i], i, 16 + i * 37);
    }
    for (int i = 0; i < 64; i += 2) { free(blocks[i]); blocks[i] = NULL; }
    for (int i = 1; i < 64; i += 2) {
        blocks[i] = realloc(blocks[i], 1000 + i);
        for (int k = 0; k < 16 + i * 37 && k < 1000 + i; k++) sum = sum * 31 + (unsigned char)blocks[i][k];
        free(blocks[i]);
    }
    HANDLE h = GetProcessHeap();
    int *a = HeapAlloc(h, HEAP_ZERO_MEMORY, 4096);
    for (int i = 0; i < 1024; i++) sum += a[i] + i;
    HeapFree(h, 0, a);
    unsigned char *v = VirtualAlloc(NULL, 65536, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    for (int i = 0; i < 65536; i++) v[i] = (unsigned char)(i * 7);
    for (int i = 0; i < 65536; i += 97) sum += v[i];
    MEMORY_BASIC_INFORMATION mbi;
    VirtualQuery(v + 5000, &mbi, sizeof mbi);
    printf("region=%lu state=%lx protect=%lx\n", (unsigned long)mbi.RegionSize, mbi.State, mbi.Protect);
    VirtualFree(v, 0, MEM_RELEASE);
    printf("sum=%08x\n", sum);
    return 0;
}
