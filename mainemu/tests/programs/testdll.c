/* testdll: a DLL with named, ordinal-only and forwarded exports (testdll.def),
   resources (testdll.rc) and a TLS callback, for the loader tests. */
#include <windows.h>
__declspec(dllexport) int __stdcall td_add(int a, int b) { return a + b; }
int __stdcall td_secret(void) { return 0x5EC2E7; }
static void NTAPI tls_cb(PVOID h, DWORD reason, PVOID r) { (void)h; (void)reason; (void)r; }
__attribute__((section(".CRT$XLB"))) PIMAGE_TLS_CALLBACK td_tls_callback = tls_cb;
BOOL WINAPI DllMain(HINSTANCE h, DWORD reason, LPVOID r) { (void)h; (void)reason; (void)r; return TRUE; }
