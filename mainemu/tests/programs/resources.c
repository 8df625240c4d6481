/* kernel32's resource calls (docs/mainemu.md, kernel32::resource):
 * FindResource(A/W/ExA/ExW), LoadResource, LockResource, SizeofResource,
 * FreeResource, on this program's resources.rc and testdll.dll's version
 * resource, and their error codes. Prints sizes and first bytes. */
#include <windows.h>
#include <stdio.h>

static void show(const char *what, HMODULE m, HRSRC r) {
    if (!r) {
        printf("%s: not found err=%lu\n", what, GetLastError());
        return;
    }
    HGLOBAL g = LoadResource(m, r);
    const unsigned char *p = LockResource(g);
    DWORD n = SizeofResource(m, r);
    printf("%s: size=%lu lock=%d bytes=", what, n, p == (void *)g);
    for (DWORD i = 0; i < n && i < 8; i++)
        printf("%02x", p[i]);
    printf("\n");
}

int main(void) {
    HMODULE exe = GetModuleHandleA(NULL);
    show("rcdata 101", NULL, FindResourceA(NULL, MAKEINTRESOURCE(101), RT_RCDATA));
    show("rcdata #101", exe, FindResourceA(exe, "#101", MAKEINTRESOURCE(10)));
    show("named", exe, FindResourceA(exe, "named", RT_RCDATA));
    show("named W", exe, FindResourceW(exe, L"NaMeD", (LPCWSTR)RT_RCDATA));
    show("named de", exe,
         FindResourceExA(exe, RT_RCDATA, "NAMED", MAKELANGID(LANG_GERMAN, SUBLANG_GERMAN)));
    show("named neutral", exe,
         FindResourceExW(exe, (LPCWSTR)RT_RCDATA, L"NAMED", MAKELANGID(LANG_NEUTRAL, SUBLANG_NEUTRAL)));
    show("custom", exe, FindResourceA(exe, "BLOB", "mytype"));
    SetLastError(0);
    show("no type", exe, FindResourceA(exe, "BLOB", "NOTYPE"));
    show("no name", exe, FindResourceA(exe, MAKEINTRESOURCE(102), RT_RCDATA));
    show("no lang", exe,
         FindResourceExA(exe, RT_RCDATA, "NAMED", MAKELANGID(LANG_FRENCH, SUBLANG_FRENCH)));
    HRSRC r = FindResourceA(NULL, MAKEINTRESOURCE(101), RT_RCDATA);
    printf("hrsrc in image=%d free=%d\n",
           (char *)r > (char *)exe && (char *)r < (char *)exe + 0x100000,
           FreeResource(LoadResource(NULL, r)));
    /* Not a data entry: mainemu's choice, NULL and ERROR_INVALID_HANDLE. */
    SetLastError(0);
    void *bad = LoadResource(exe, (HRSRC)exe);
    DWORD err = GetLastError();
    printf("bad handle load=%p size=%lu err=%lu\n", bad, SizeofResource(exe, (HRSRC)exe), err);
    HMODULE dll = LoadLibraryA("testdll.dll");
    HRSRC v = FindResourceA(dll, MAKEINTRESOURCE(1), RT_VERSION);
    printf("dll version size=%lu\n", SizeofResource(dll, v));
    return 0;
}
