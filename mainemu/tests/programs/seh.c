/* seh: structured exception handling through the FS:[0] chain: an access
   violation and a RaiseException handled and continued, setjmp/longjmp out
   of a handler, a stack overflow (the guard page: STATUS_STACK_OVERFLOW,
   handled on the guard page itself), and the unhandled-exception filter. */
#include <stdio.h>
#include <setjmp.h>
#include <windows.h>

static jmp_buf jb;
static DWORD seen_code, seen_info0, seen_info1;
static int mode;

static EXCEPTION_DISPOSITION __cdecl handler(EXCEPTION_RECORD *rec, void *frame, CONTEXT *ctx, void *dc) {
    (void)frame; (void)dc;
    if (rec->ExceptionFlags & 6) return ExceptionContinueSearch; /* unwinding */
    seen_code = rec->ExceptionCode;
    seen_info0 = rec->NumberParameters > 0 ? rec->ExceptionInformation[0] : 0;
    seen_info1 = rec->NumberParameters > 1 ? rec->ExceptionInformation[1] : 0;
    if (mode == 0) {
        ctx->Eip += 2;      /* skip "mov eax, [eax]" */
        ctx->Eax = 1234;
        return ExceptionContinueExecution;
    }
    if (mode == 1) return ExceptionContinueExecution; /* RaiseException returns */
    longjmp(jb, mode == 3 ? 9 : 7);
}

static volatile int depth, stop_recursing;

/* Recurses until the stack runs out (about 300 bytes a frame). */
static __attribute__((noinline)) int deep(int n) {
    volatile char frame[256];
    frame[0] = (char)n;
    depth = n;
    if (stop_recursing) return 0;
    return deep(n + 1) + frame[0];
}

struct reg { struct reg *next; void *handler; };

static int guarded(int m) {
    struct reg r;
    int v = 0;
    mode = m;
    __asm__ volatile("movl %%fs:0, %0" : "=r"(r.next));
    r.handler = (void *)handler;
    __asm__ volatile("movl %0, %%fs:0" : : "r"(&r) : "memory");
    if (m == 0) {
        __asm__ volatile("xorl %%eax, %%eax\n\t.byte 0x8b, 0x00\n\tmovl %%eax, %0" : "=r"(v) : : "eax", "memory");
    } else if (m == 1) {
        ULONG_PTR args[2] = {11, 22};
        RaiseException(0xE0001234, 0, 2, args);
        v = 5;
    } else {
        int j = setjmp(jb);
        if (j == 0 && m == 2) {
            volatile int *p = (int *)16;
            *p = 1;
        } else if (j == 0) {
            deep(0);
        }
        v = j;
    }
    __asm__ volatile("movl %0, %%fs:0" : : "r"(r.next) : "memory");
    return v;
}

static LONG WINAPI filter(EXCEPTION_POINTERS *ep) {
    printf("filter code=%08lx\n", ep->ExceptionRecord->ExceptionCode);
    fflush(stdout);
    return EXCEPTION_EXECUTE_HANDLER;
}

int main(void) {
    int v = guarded(0);
    printf("av: v=%d code=%08lx read=%lu addr=%lx\n", v, seen_code, seen_info0, seen_info1);
    v = guarded(1);
    printf("raise: v=%d code=%08lx args=%lu,%lu\n", v, seen_code, seen_info0, seen_info1);
    v = guarded(2);
    printf("longjmp: v=%d code=%08lx write=%lu addr=%lx\n", v, seen_code, seen_info0, seen_info1);
    v = guarded(3);
    printf("overflow: v=%d code=%08lx write=%lu deep=%s\n", v, seen_code, seen_info0,
           depth > 1000 ? "yes" : "no");
    SetUnhandledExceptionFilter(filter);
    volatile int *p = NULL;
    return *p;
}
