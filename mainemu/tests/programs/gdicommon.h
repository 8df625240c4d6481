/* Shared by the GDI test programs: a memory DC over a top-down 32 bpp DIB
   section, and ASCII art of its pixels (# black, . white, R red, G green,
   B blue, ? anything else). */
#include <windows.h>
#include <stdio.h>

static HDC dc;
static DWORD *px;
static int W, H;

static void setup(int w, int h)
{
    BITMAPINFO bi = {0};
    W = w; H = h;
    bi.bmiHeader.biSize = sizeof(bi.bmiHeader);
    bi.bmiHeader.biWidth = w;
    bi.bmiHeader.biHeight = -h; /* top-down */
    bi.bmiHeader.biPlanes = 1;
    bi.bmiHeader.biBitCount = 32;
    dc = CreateCompatibleDC(NULL);
    SelectObject(dc, CreateDIBSection(dc, &bi, DIB_RGB_COLORS, (void **)&px, NULL, 0));
}

static void clear(void)
{
    int i;
    for (i = 0; i < W * H; i++) px[i] = 0xFFFFFF;
}

static void show(const char *name)
{
    int x, y;
    printf("%s\n", name);
    for (y = 0; y < H; y++) {
        for (x = 0; x < W; x++) {
            DWORD c = px[y * W + x] & 0xFFFFFF; /* DIB: 0x00RRGGBB */
            putchar(c == 0 ? '#' : c == 0xFFFFFF ? '.' : c == 0xFF0000 ? 'R' : c == 0x00FF00 ? 'G' : c == 0x0000FF ? 'B' : '?');
        }
        putchar('\n');
    }
}
