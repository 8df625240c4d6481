/* DIB sections at every depth, blits with the common ROPs, StretchBlt,
   monochrome conversions and StretchDIBits; prints raw DIB bytes and
   pixels (expected output: expected/gdi_bits.txt, rules in
   docs/mainemu-gui.md). */
#include "gdicommon.h"

static void dump(const char *name, const BYTE *p, int n)
{
    int i;
    printf("%s:", name);
    for (i = 0; i < n; i++) printf(" %02x", p[i]);
    printf("\n");
}

int main(void)
{
    static const int depths[] = {1, 4, 8, 16, 24, 32};
    struct { BITMAPINFOHEADER h; RGBQUAD c[256]; } bi;
    int i, k;
    BYTE *bits;
    HDC m = CreateCompatibleDC(NULL);

    for (k = 0; k < 6; k++) {
        HBITMAP hb, old;
        char name[16];
        memset(&bi, 0, sizeof(bi));
        bi.h.biSize = sizeof(bi.h);
        bi.h.biWidth = 5;
        bi.h.biHeight = 2;                       /* bottom-up */
        bi.h.biPlanes = 1;
        bi.h.biBitCount = depths[k];
        bi.c[1].rgbRed = 255;                    /* index 1: red */
        bi.c[2].rgbBlue = 255;                   /* index 2: blue */
        for (i = 3; i < 256; i++) bi.c[i].rgbGreen = 255;
        if (depths[k] == 1) bi.c[1].rgbBlue = bi.c[1].rgbGreen = 255; /* 1 bpp: black, white */
        hb = CreateDIBSection(m, (BITMAPINFO *)&bi, DIB_RGB_COLORS, (void **)&bits, NULL, 0);
        old = SelectObject(m, hb);
        SetPixel(m, 0, 0, RGB(255, 0, 0));       /* top row = second row in memory */
        SetPixel(m, 4, 1, RGB(0, 0, 255));
        SetPixel(m, 1, 1, RGB(255, 255, 255));
        sprintf(name, "%2d bpp", depths[k]);
        dump(name, bits, ((5 * depths[k] + 31) / 32) * 4 * 2);
        printf("  get %06lx %06lx %06lx\n", GetPixel(m, 0, 0), GetPixel(m, 4, 1), GetPixel(m, 1, 1));
        SelectObject(m, old);
        DeleteObject(hb);
    }

    /* ROP3 blits: source 0x00ff00ff pattern onto destination. */
    setup(4, 1);
    {
        static const DWORD rops[] = {SRCCOPY, SRCPAINT, SRCAND, SRCINVERT, SRCERASE, NOTSRCCOPY,
                                     MERGECOPY, MERGEPAINT, PATCOPY, PATPAINT, PATINVERT, DSTINVERT, BLACKNESS, WHITENESS};
        static const char *names[] = {"SRCCOPY", "SRCPAINT", "SRCAND", "SRCINVERT", "SRCERASE", "NOTSRCCOPY",
                                      "MERGECOPY", "MERGEPAINT", "PATCOPY", "PATPAINT", "PATINVERT", "DSTINVERT", "BLACKNESS", "WHITENESS"};
        HDC s = CreateCompatibleDC(NULL);
        HBITMAP sb = CreateCompatibleBitmap(dc, 4, 1);
        SelectObject(s, sb);
        SetPixel(s, 0, 0, RGB(0xFF, 0x00, 0xFF)); SetPixel(s, 1, 0, RGB(0x12, 0x34, 0x56));
        SetPixel(s, 2, 0, RGB(0, 0, 0));          SetPixel(s, 3, 0, RGB(0xFF, 0xFF, 0xFF));
        SelectObject(dc, CreateSolidBrush(RGB(0x0F, 0xF0, 0x33)));
        for (i = 0; i < 14; i++) {
            px[0] = 0x00F0F0F0; px[1] = 0x00AAAAAA; px[2] = 0x00FFFFFF; px[3] = 0;
            BitBlt(dc, 0, 0, 4, 1, s, 0, 0, rops[i]);
            printf("%-10s %06lx %06lx %06lx %06lx\n", names[i], px[0], px[1], px[2], px[3]);
        }
    }

    /* Monochrome <-> colour: mono 0 takes the text colour, 1 the background. */
    setup(8, 2);
    clear();
    {
        static const BYTE pat[4] = {0xA5, 0, 0x0F, 0}; /* rows 10100101, 00001111 (WORD-aligned) */
        HDC s = CreateCompatibleDC(NULL);
        HBITMAP mono = CreateBitmap(8, 2, 1, 1, pat);
        BYTE row[4];
        SelectObject(s, mono);
        SetTextColor(dc, RGB(255, 0, 0));
        SetBkColor(dc, RGB(0, 0, 255));
        BitBlt(dc, 0, 0, 8, 2, s, 0, 0, SRCCOPY);
        show("mono to colour (0 = text red, 1 = background blue)");
        /* Colour to mono: pixels of the source DC's background colour become 1. */
        SetBkColor(dc, RGB(255, 0, 0));
        BitBlt(s, 0, 0, 8, 2, dc, 0, 0, SRCCOPY);
        GetBitmapBits(mono, 4, row);
        printf("colour to mono: %02x %02x\n", row[0], row[2]);
    }

    /* StretchBlt: 2x up and mirrored. */
    setup(8, 4);
    clear();
    px[0] = 0; px[1] = 0xFF0000; px[8] = 0x0000FF; px[9] = 0x00FF00;
    StretchBlt(dc, 2, 0, 4, 4, dc, 0, 0, 2, 2, SRCCOPY);
    StretchBlt(dc, 7, 0, -2, 2, dc, 0, 0, 2, 2, SRCCOPY);
    show("stretch 2x at (2,0), mirrored at (5,0)");

    /* StretchDIBits from a bottom-up 8 bpp DIB. */
    clear();
    {
        static BYTE pix[2][4] = {{1, 2, 0, 0}, {2, 1, 0, 0}}; /* bottom row first */
        memset(&bi, 0, sizeof(bi));
        bi.h.biSize = sizeof(bi.h);
        bi.h.biWidth = 2; bi.h.biHeight = 2; bi.h.biPlanes = 1; bi.h.biBitCount = 8; bi.h.biClrUsed = 3;
        bi.c[1].rgbRed = 255; bi.c[2].rgbGreen = 255;
        StretchDIBits(dc, 0, 0, 4, 2, 0, 0, 2, 2, pix, (BITMAPINFO *)&bi, DIB_RGB_COLORS, SRCCOPY);
        SetDIBitsToDevice(dc, 5, 2, 2, 2, 0, 0, 0, 2, pix, (BITMAPINFO *)&bi, DIB_RGB_COLORS);
        show("StretchDIBits 2x wide at (0,0), SetDIBitsToDevice at (5,2)");
    }
    return 0;
}
