/* threads: CreateThread, critical sections, events, semaphores, waits,
   TLS, interlocked counters, Sleep on the guest clock. */
#include <stdio.h>
#include <windows.h>
#include <process.h>

static CRITICAL_SECTION cs;
static LONG counter, shared;
static DWORD tls;
static HANDLE ready, sem;

static DWORD WINAPI worker(LPVOID arg) {
    int id = (int)(INT_PTR)arg;
    TlsSetValue(tls, (LPVOID)(INT_PTR)(id * 100));
    for (int i = 0; i < 1000; i++) {
        EnterCriticalSection(&cs);
        shared++;
        LeaveCriticalSection(&cs);
        InterlockedIncrement(&counter);
        if (i % 250 == 0) Sleep(1);
    }
    WaitForSingleObject(ready, INFINITE);
    ReleaseSemaphore(sem, 1, NULL);
    return id + (int)(INT_PTR)TlsGetValue(tls);
}

static unsigned __stdcall crt_worker(void *arg) {
    *(int *)arg = 77;
    return 5;
}

int main(void) {
    InitializeCriticalSection(&cs);
    tls = TlsAlloc();
    TlsSetValue(tls, (LPVOID)1);
    ready = CreateEventA(NULL, TRUE, FALSE, NULL);
    sem = CreateSemaphoreA(NULL, 0, 3, NULL);
    HANDLE t[3];
    for (int i = 0; i < 3; i++) t[i] = CreateThread(NULL, 0, worker, (LPVOID)(INT_PTR)(i + 1), 0, NULL);
    printf("wait early=%lu\n", WaitForSingleObject(t[0], 0));
    DWORD start = GetTickCount();
    Sleep(50);
    printf("slept>=50: %d\n", GetTickCount() - start >= 50);
    SetEvent(ready);
    printf("waitall=%lu\n", WaitForMultipleObjects(3, t, TRUE, INFINITE));
    for (int i = 0; i < 3; i++) {
        DWORD code;
        GetExitCodeThread(t[i], &code);
        printf("thread %d exit=%lu\n", i, code);
        CloseHandle(t[i]);
    }
    printf("counter=%ld shared=%ld tls=%d\n", counter, shared, (int)(INT_PTR)TlsGetValue(tls));
    int sems = 0;
    while (WaitForSingleObject(sem, 0) == WAIT_OBJECT_0) sems++;
    printf("sems=%d timeout=%lu\n", sems, WaitForSingleObject(sem, 10));
    int x = 0;
    HANDLE h = (HANDLE)_beginthreadex(NULL, 0, crt_worker, &x, 0, NULL);
    WaitForSingleObject(h, INFINITE);
    DWORD code;
    GetExitCodeThread(h, &code);
    printf("crt thread x=%d exit=%lu\n", x, code);
    HANDLE m = CreateMutexA(NULL, TRUE, "m1");
    HANDLE m2 = CreateMutexA(NULL, FALSE, "m1");
    printf("named mutex same=%d err=%lu release=%d\n", m2 != NULL, GetLastError(), ReleaseMutex(m));
    DeleteCriticalSection(&cs);
    return 0;
}
