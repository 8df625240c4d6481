/* smc: self-modifying code, the code cache's test cases (docs/mainemu.md, L1).
 * Each phase writes x86 code into its own VirtualAlloc'd RWX region and runs it:
 *   loop:   a loop that patches the immediate of its own ADD every iteration
 *           (a store into the running block);
 *   inline: code whose first instruction patches the immediate of the next one
 *           (written then executed in the same block), rewritten from C 50 times;
 *   window: a function rewritten with memcpy and called again, 10 times
 *           (a store window onto a code page);
 *   data:   two functions and a data area on one page: 1000 stores to the data
 *           area retire nothing, a patch of one function retires only it.
 *   noaccess (only with the argument "noaccess"): after the phases, the data
 *           page is made PAGE_NOACCESS and f2 called again: its cached block
 *           must not run, the fetch faults (an unhandled access violation).
 * Prints each phase's results; L1's retirement count is checked by the tests. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

typedef int (*fn)(void);

static unsigned char *rwx(void) {
    return VirtualAlloc(NULL, 4096, MEM_RESERVE | MEM_COMMIT, PAGE_EXECUTE_READWRITE);
}

static void put32(unsigned char *p, unsigned v) { memcpy(p, &v, 4); }

int main(int argc, char **argv) {
    /* loop: mov ecx,1000 / xor eax,eax / L: add eax,1 / inc dword [L+1] / dec ecx / jnz L / ret */
    unsigned char *a = rwx();
    unsigned char loop[] = {0xB9, 0xE8, 0x03, 0, 0, 0x31, 0xC0, 0x05, 1, 0, 0, 0,
                            0xFF, 0x05, 0, 0, 0, 0, 0x49, 0x75, 0xF2, 0xC3};
    memcpy(a, loop, sizeof loop);
    put32(a + 14, (unsigned)(a + 8));
    int s = ((fn)a)();
    printf("loop sum=%d imm=%u\n", s, *(unsigned *)(a + 8));

    /* inline: mov byte [b+8], k / mov eax, 1 / ret */
    unsigned char *b = rwx();
    unsigned char in[] = {0xC6, 0x05, 0, 0, 0, 0, 0, 0xB8, 1, 0, 0, 0, 0xC3};
    memcpy(b, in, sizeof in);
    put32(b + 2, (unsigned)(b + 8));
    int sum = 0;
    for (int k = 1; k <= 50; k++) {
        b[6] = (unsigned char)k;
        sum += ((fn)b)();
    }
    printf("inline sum=%d\n", sum);

    /* window: mov eax, v / ret, rewritten with memcpy */
    unsigned char *w = rwx();
    unsigned char ret[] = {0xB8, 0, 0, 0, 0, 0xC3};
    unsigned acc = 0;
    for (unsigned i = 0; i < 10; i++) {
        put32(ret + 1, 111 * (i + 1));
        memcpy(w, ret, sizeof ret);
        acc = acc * 7 + ((fn)w)();
    }
    printf("window acc=%u\n", acc);

    /* data: f1 at +0, f2 at +0x100, data at +0x800, all on one page */
    unsigned char *d = rwx();
    unsigned char f1[] = {0xB8, 7, 0, 0, 0, 0xC3}, f2[] = {0xB8, 9, 0, 0, 0, 0xC3};
    memcpy(d, f1, sizeof f1);
    memcpy(d + 0x100, f2, sizeof f2);
    volatile unsigned *data = (volatile unsigned *)(d + 0x800);
    unsigned t = 0;
    for (unsigned i = 0; i < 1000; i++) {
        data[i % 64] = i;
        t += ((fn)d)() + ((fn)(d + 0x100))() + data[(i * 5) % 64];
    }
    d[1] = 8;
    printf("data t=%u f1=%d f2=%d\n", t, ((fn)d)(), ((fn)(d + 0x100))());
    if (argc > 1 && strcmp(argv[1], "noaccess") == 0) {
        DWORD old;
        VirtualProtect(d, 4096, PAGE_NOACCESS, &old);
        printf("protect old=%lx\n", old);
        fflush(stdout);
        printf("f2=%d\n", ((fn)(d + 0x100))());
    }
    return 0;
}
