/* compute: CPU-bound integer work for timing the engines (a sieve, CRC-32 and
 * a small matrix product, repeated ROUNDS times; argv[1] overrides ROUNDS).
 * Prints a checksum; no API calls inside the loops. */
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 20
static unsigned char sieve[20000];
static unsigned crc_table[256];
static int ma[16][16], mb[16][16], mc[16][16];

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS;
    for (unsigned i = 0; i < 256; i++) {
        unsigned c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    unsigned check = 0;
    for (int r = 0; r < rounds; r++) {
        int primes = 0;
        for (int i = 0; i < 20000; i++) sieve[i] = 1;
        for (int i = 2; i < 20000; i++) {
            if (!sieve[i]) continue;
            primes++;
            for (int j = i + i; j < 20000; j += i) sieve[j] = 0;
        }
        unsigned crc = 0xFFFFFFFFu;
        for (int i = 0; i < 20000; i++) crc = crc_table[(crc ^ (sieve[i] + i)) & 0xFF] ^ (crc >> 8);
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) { ma[i][j] = i * j + r; mb[i][j] = i - j; }
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                int s = 0;
                for (int k = 0; k < 16; k++) s += ma[i][k] * mb[k][j];
                mc[i][j] = s;
            }
        check = check * 31 + primes + ~crc + mc[r % 16][(r * 3) % 16];
    }
    printf("compute rounds=%d check=%08x\n", rounds, check);
    return 0;
}
