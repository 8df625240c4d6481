/* usedll: imports testdll by name (td_add) and by ordinal (7), and delay-loads it too. */
#include <stdio.h>
__declspec(dllimport) int __stdcall td_add(int a, int b);
__declspec(dllimport) int __stdcall td_secret(void);
int main(void) {
    printf("%d %x\n", td_add(2, 3), td_secret());
    return 0;
}
