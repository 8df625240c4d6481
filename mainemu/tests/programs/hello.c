/* hello: the smallest console program; printf through msvcrt, exit code 3. */
#include <stdio.h>
int main(void) {
    printf("hello, world\n");
    puts("second line");
    return 3;
}
