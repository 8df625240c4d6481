/* Every brush and pen style and every raster operation, checked pixel by
   pixel against the documented rules, which this program computes itself:
   the six hatch patterns (8x8, brush origin), monochrome pattern brushes
   (0 bits text colour, 1 bits background), PS_NULL and PS_INSIDEFRAME, the
   16 ROP2 codes (SetROP2's table) and all 256 ROP3 codes (the operation
   index is the function's value for P=F0, S=CC, D=AA). Each line prints
   how many pixels match the rule. Expected output: expected/gdi_styles.txt;
   sources in docs/mainemu-gui.md ("Where each expectation comes from"). */
#include "gdicommon.h"

#define RED 0xFF0000
#define BLUE 0x0000FF

/* The hatch patterns, one byte per row, MSB = leftmost pixel (HS_HORIZONTAL
   .. HS_DIAGCROSS): Windows' 8x8 hatch bitmaps. */
static const BYTE hatch[6][8] = {
    {0x00, 0x00, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00},
    {0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08},
    {0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01},
    {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80},
    {0x08, 0x08, 0x08, 0xFF, 0x08, 0x08, 0x08, 0x08},
    {0x81, 0x42, 0x24, 0x18, 0x18, 0x24, 0x42, 0x81},
};
static const char *hatch_names[6] = {"HS_HORIZONTAL", "HS_VERTICAL", "HS_FDIAGONAL",
                                     "HS_BDIAGONAL", "HS_CROSS", "HS_DIAGCROSS"};

static DWORD at(int x, int y) { return px[y * W + x] & 0xFFFFFF; }

/* Pixels of [x0,x0+w) x [y0,y0+h) that follow the 8x8 pattern `rows` with
   the brush origin (ox,oy): set bits `on`, clear bits `off`. */
static int pattern_matches(const BYTE *rows, int x0, int y0, int w, int h, int ox, int oy, DWORD on, DWORD off)
{
    int x, y, n = 0;
    for (y = y0; y < y0 + h; y++)
        for (x = x0; x < x0 + w; x++) {
            int bit = rows[(y - oy) & 7] & (0x80 >> ((x - ox) & 7));
            n += at(x, y) == (bit ? on : off);
        }
    return n;
}

int main(void)
{
    static const char *rop2_names[16] = {"R2_BLACK", "R2_NOTMERGEPEN", "R2_MASKNOTPEN", "R2_NOTCOPYPEN",
                                         "R2_MASKPENNOT", "R2_NOT", "R2_XORPEN", "R2_NOTMASKPEN",
                                         "R2_MASKPEN", "R2_NOTXORPEN", "R2_NOP", "R2_MERGENOTPEN",
                                         "R2_COPYPEN", "R2_MERGEPENNOT", "R2_MERGEPEN", "R2_WHITE"};
    int s, i, n, x, y;

    /* Hatched brushes, OPAQUE: hatch lines in the brush colour, the rest
       the background colour; the pattern is aligned to the brush origin. */
    setup(48, 16);
    clear();
    SetBkMode(dc, OPAQUE);
    SetBkColor(dc, RGB(0, 0, 255));
    for (s = 0; s < 6; s++) {
        HBRUSH b = CreateHatchBrush(s, RGB(255, 0, 0));
        HGDIOBJ old = SelectObject(dc, b);
        PatBlt(dc, 8 * s, 0, 8, 8, PATCOPY);
        SetBrushOrgEx(dc, 3, 2, NULL);
        PatBlt(dc, 8 * s, 8, 8, 8, PATCOPY);
        SetBrushOrgEx(dc, 0, 0, NULL);
        SelectObject(dc, old);
        DeleteObject(b);
        printf("%-14s origin 0,0: %2d of 64 pixels; origin 3,2: %2d of 64\n", hatch_names[s],
               pattern_matches(hatch[s], 8 * s, 0, 8, 8, 0, 0, RED, BLUE),
               pattern_matches(hatch[s], 8 * s, 8, 8, 8, 3, 2, RED, BLUE));
    }
    show("hatches at origin 0,0 (top) and 3,2 (bottom), R hatch, B background");

    /* TRANSPARENT: the background pixels of a hatch are left alone. */
    clear();
    SetBkMode(dc, TRANSPARENT);
    {
        HBRUSH b = CreateHatchBrush(HS_DIAGCROSS, RGB(255, 0, 0));
        HGDIOBJ old = SelectObject(dc, b);
        PatBlt(dc, 0, 0, 16, 16, PATCOPY);
        DeleteObject(SelectObject(dc, old));
    }
    printf("%-14s transparent: %d of 256 pixels (white where clear)\n", "HS_DIAGCROSS",
           pattern_matches(hatch[5], 0, 0, 16, 16, 0, 0, RED, 0xFFFFFF));
    SetBkMode(dc, OPAQUE);

    /* A monochrome pattern brush: 0 bits in the text colour, 1 bits in
       the background colour. Rows are WORD-aligned in CreateBitmap. */
    clear();
    {
        static const BYTE rows[8] = {0xF0, 0x0F, 0xAA, 0x55, 0xC3, 0x3C, 0x81, 0x7E};
        WORD bits[8];
        HBITMAP bm;
        HBRUSH b;
        HGDIOBJ old;
        for (i = 0; i < 8; i++) bits[i] = rows[i];
        bm = CreateBitmap(8, 8, 1, 1, bits);
        b = CreatePatternBrush(bm);
        SetTextColor(dc, RGB(255, 0, 0));
        SetBkColor(dc, RGB(0, 0, 255));
        old = SelectObject(dc, b);
        PatBlt(dc, 0, 0, 16, 16, PATCOPY);
        DeleteObject(SelectObject(dc, old));
        DeleteObject(bm);
        printf("%-14s %d of 256 pixels (1 bits background blue, 0 bits text red)\n", "pattern brush",
               pattern_matches(rows, 0, 0, 16, 16, 0, 0, BLUE, RED));
    }

    /* PS_NULL draws no outline: Rectangle with a null pen is the brush
       alone over [l, r-1) x [t, b-1). PS_INSIDEFRAME keeps a wide pen
       inside the bounding box. */
    setup(16, 12);
    clear();
    SelectObject(dc, GetStockObject(NULL_PEN));
    SelectObject(dc, CreateSolidBrush(RGB(0, 0, 255)));
    Rectangle(dc, 2, 2, 12, 10);
    n = 0;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            n += at(x, y) == ((x >= 2 && x < 11 && y >= 2 && y < 9) ? BLUE : 0xFFFFFF);
    printf("%-14s %d of 192 pixels (brush on 2,2-11,9, nothing else)\n", "PS_NULL", n);
    clear();
    {
        HPEN p = CreatePen(PS_INSIDEFRAME, 3, RGB(255, 0, 0));
        HGDIOBJ old = SelectObject(dc, p);
        Rectangle(dc, 2, 2, 12, 10);
        DeleteObject(SelectObject(dc, old));
    }
    n = 0;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            int in_box = x >= 2 && x < 12 && y >= 2 && y < 10;
            int in_hole = x >= 5 && x < 9 && y >= 5 && y < 7;
            n += at(x, y) == (!in_box ? 0xFFFFFF : in_hole ? BLUE : RED);
        }
    printf("%-14s %d of 192 pixels (pen 3 wide on 2,2-12,10, brush on 5,5-9,7)\n", "PS_INSIDEFRAME", n);
    show("PS_INSIDEFRAME width 3, Rectangle(2,2,12,10)");

    /* ROP2: a line in pen colour P over destination pixels D; every mode's
       result is its formula's (SetROP2 table; on a 32 bpp DIB the formula
       applies to the 24 colour bits). */
    setup(4, 1);
    for (i = 0; i < 16; i++) {
        static const DWORD dst[4] = {0x000000, 0xFFFFFF, 0xAAAAAA, 0x123456};
        const DWORD P = 0xF0F00F;
        HPEN p = CreatePen(PS_SOLID, 1, RGB(0xF0, 0xF0, 0x0F));
        HGDIOBJ old = SelectObject(dc, p);
        n = 0;
        for (x = 0; x < 4; x++) px[x] = dst[x];
        SetROP2(dc, i + 1);
        MoveToEx(dc, 0, 0, NULL);
        LineTo(dc, 4, 0);
        SetROP2(dc, R2_COPYPEN);
        DeleteObject(SelectObject(dc, old));
        for (x = 0; x < 4; x++) {
            DWORD D = dst[x], want;
            switch (i + 1) {
            case R2_BLACK: want = 0; break;
            case R2_NOTMERGEPEN: want = ~(P | D); break;
            case R2_MASKNOTPEN: want = ~P & D; break;
            case R2_NOTCOPYPEN: want = ~P; break;
            case R2_MASKPENNOT: want = P & ~D; break;
            case R2_NOT: want = ~D; break;
            case R2_XORPEN: want = P ^ D; break;
            case R2_NOTMASKPEN: want = ~(P & D); break;
            case R2_MASKPEN: want = P & D; break;
            case R2_NOTXORPEN: want = ~(P ^ D); break;
            case R2_NOP: want = D; break;
            case R2_MERGENOTPEN: want = ~P | D; break;
            case R2_COPYPEN: want = P; break;
            case R2_MERGEPENNOT: want = P | ~D; break;
            case R2_MERGEPEN: want = P | D; break;
            default: want = 0xFFFFFF; break;
            }
            n += at(x, 0) == (want & 0xFFFFFF);
        }
        printf("%-14s %d of 4 pixels: %06lx %06lx %06lx %06lx\n", rop2_names[i], n, at(0, 0), at(1, 0), at(2, 0), at(3, 0));
    }

    /* ROP3: with pattern F0, source CC and destination AA in every colour
       byte, the result byte is the ROP3 index itself (the Ternary Raster
       Operations table defines the index that way). All 256 codes. */
    {
        HDC src = CreateCompatibleDC(NULL);
        HBITMAP sb = CreateCompatibleBitmap(dc, 1, 1);
        HBRUSH b = CreateSolidBrush(RGB(0xF0, 0xF0, 0xF0));
        int bad = -1;
        SelectObject(src, sb);
        SetPixel(src, 0, 0, RGB(0xCC, 0xCC, 0xCC));
        SelectObject(dc, b);
        n = 0;
        for (i = 0; i < 256; i++) {
            px[0] = 0xAAAAAA;
            BitBlt(dc, 0, 0, 1, 1, src, 0, 0, (DWORD)i << 16);
            if (at(0, 0) == (DWORD)i * 0x010101) n++;
            else if (bad < 0) bad = i;
        }
        printf("%-14s %d of 256 codes give their index (first other: %d)\n", "ROP3", n, bad);
    }
    return 0;
}
