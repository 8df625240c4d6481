/* crtio: the C runtime's streams and descriptors: text and binary modes,
   positions, ungetc, scanf, stat, _findfirst, rename and remove. */
#include <stdio.h>
#include <string.h>
#include <io.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <errno.h>

int main(void) {
    FILE *f = fopen("t.txt", "w");
    fprintf(f, "one 1\ntwo 22\nthree 333\n");
    fclose(f);
    f = fopen("t.txt", "rb");
    char raw[64] = {0};
    size_t n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    printf("binary size=%u crlf=%d\n", (unsigned)n, strstr(raw, "\r\n") != NULL);
    f = fopen("t.txt", "r");
    char w[16];
    int v, total = 0, lines = 0;
    while (fscanf(f, "%15s %d", w, &v) == 2) { total += v; lines++; }
    printf("scanf lines=%d total=%d eof=%d\n", lines, total, feof(f) != 0);
    rewind(f);
    int c = fgetc(f);
    ungetc('X', f);
    char line[32];
    fgets(line, sizeof line, f);
    printf("first=%c line=[%s] pos=%ld\n", c, strtok(line, "\n"), ftell(f));
    fseek(f, -5, SEEK_END);
    fgets(line, sizeof line, f);
    printf("tail=[%s]\n", strtok(line, "\n"));
    fclose(f);

    int fd = _open("d.bin", _O_CREAT | _O_TRUNC | _O_RDWR | _O_BINARY, _S_IREAD | _S_IWRITE);
    _write(fd, "0123456789", 10);
    long pos = _lseek(fd, 3, SEEK_SET);
    printf("lseek=%ld tell=%ld\n", pos, _tell(fd));
    char b4[5] = {0};
    _read(fd, b4, 4);
    printf("read=[%s] len=%ld\n", b4, _filelength(fd));
    _close(fd);
    int r = _close(fd);
    printf("close twice=%d errno=%d\n", r, errno);

    struct _stat st;
    r = _stat("d.bin", &st);
    printf("stat=%d size=%ld dir=%d\n", r, (long)st.st_size, (st.st_mode & _S_IFDIR) != 0);
    r = _stat(".", &st);
    printf("stat .=%d dir=%d\n", r, (st.st_mode & _S_IFDIR) != 0);
    r = _stat("missing.bin", &st);
    printf("stat missing=%d errno=%d\n", r, errno);
    struct _finddata_t fdata;
    intptr_t h = _findfirst("*.bin", &fdata);
    printf("findfirst=%s size=%lu\n", h == -1 ? "none" : fdata.name, (unsigned long)fdata.size);
    _findclose(h);
    int r1 = rename("d.bin", "e.bin");
    int r2 = remove("e.bin");
    int r3 = remove("e.bin");
    printf("rename=%d remove=%d again=%d errno=%d\n", r1, r2, r3, errno);
    remove("t.txt");

    int a, b;
    char word[8];
    r = sscanf("  42 ff hello", "%d %x %7s", &a, &b, word);
    printf("sscanf=%d a=%d b=%x word=%s\n", r, a, b, word);
    double d;
    r = sscanf("3.25e1", "%lf", &d);
    printf("sscanf=%d d=%.3f\n", r, d);
    fprintf(stderr, "to stderr\n");
    return 0;
}
