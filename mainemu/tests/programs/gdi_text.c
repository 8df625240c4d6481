/* Text output into a DIB section: where the documented rules put the text
   (alignment, the opaque cell, ExtTextOut's rectangle and advances, the
   current position, DrawText's formats), checked against what was drawn.
   Each line prints the box the rule gives and the box drawn (the bounding
   box of the pixels of a colour), or whether two ways of drawing the same
   thing gave the same pixels. Expected output: expected/gdi_text.txt;
   sources of the rules in docs/mainemu-gui.md ("text"). */
#include "gdicommon.h"

#define RED 0xFF0000
#define BLUE 0x0000FF

static DWORD saved[64 * 32];

/* The bounding box of pixels equal to `c` (or, with c = -1, not white). */
static RECT box(long c)
{
    RECT r = {W, H, 0, 0};
    int x, y;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            DWORD p = px[y * W + x] & 0xFFFFFF;
            if (c < 0 ? p != 0xFFFFFF : p == (DWORD)c) {
                if (x < r.left) r.left = x;
                if (y < r.top) r.top = y;
                if (x + 1 > r.right) r.right = x + 1;
                if (y + 1 > r.bottom) r.bottom = y + 1;
            }
        }
    return r;
}

/* Pixels neither white, red nor blue. */
static int others(void)
{
    int i, n = 0;
    for (i = 0; i < W * H; i++) {
        DWORD p = px[i] & 0xFFFFFF;
        n += p != 0xFFFFFF && p != RED && p != BLUE;
    }
    return n;
}

static void check(const char *name, RECT want, RECT got)
{
    int ok = EqualRect(&want, &got);
    printf("%-34s rule %ld,%ld-%ld,%ld drawn %ld,%ld-%ld,%ld %s\n", name, want.left, want.top,
           want.right, want.bottom, got.left, got.top, got.right, got.bottom, ok ? "ok" : "DIFFERENT");
}

static void snap(void) { memcpy(saved, px, W * H * 4); }

static void same(const char *name)
{
    printf("%-34s %s\n", name, memcmp(saved, px, W * H * 4) ? "DIFFERENT" : "same pixels");
}

static RECT rc(int l, int t, int r, int b)
{
    RECT x;
    SetRect(&x, l, t, r, b);
    return x;
}

int main(void)
{
    TEXTMETRICA tm;
    SIZE hi, ab, cd, abcd;
    INT w[2];
    POINT cp;
    RECT r;
    int dx[2] = {10, 9}, h, cx;

    setup(64, 32);
    SetTextColor(dc, RGB(255, 0, 0));
    SetBkColor(dc, RGB(0, 0, 255));
    GetTextMetricsA(dc, &tm);
    GetTextExtentPoint32A(dc, "Hi", 2, &hi);
    GetCharWidth32A(dc, 'H', 'I', w);
    h = tm.tmHeight;

    /* TEXTMETRIC: tmHeight = tmAscent + tmDescent; the extent's height is
       the cell height and its width the sum of the character widths. */
    printf("metrics: height %ld ascent %ld descent %ld; extent for Hi %ldx%ld; widths H %d I %d\n",
           tm.tmHeight, tm.tmAscent, tm.tmDescent, hi.cx, hi.cy, w[0], w[1]);
    printf("height = ascent + descent: %s; extent height = tmHeight: %s\n",
           tm.tmHeight == tm.tmAscent + tm.tmDescent ? "yes" : "no", hi.cy == h ? "yes" : "no");

    /* OPAQUE: the character cell is filled with the background colour. */
    clear();
    TextOutA(dc, 5, 3, "Hi", 2);
    check("TA_TOP|TA_LEFT opaque cell", rc(5, 3, 5 + hi.cx, 3 + h), box(-1));
    printf("  colours other than text/background: %d\n", others());

    clear();
    SetTextAlign(dc, TA_BASELINE);
    TextOutA(dc, 5, 20, "Hi", 2);
    check("TA_BASELINE: top = y - ascent", rc(5, 20 - tm.tmAscent, 5 + hi.cx, 20 - tm.tmAscent + h), box(-1));

    clear();
    SetTextAlign(dc, TA_BOTTOM | TA_RIGHT);
    TextOutA(dc, 60, 30, "Hi", 2);
    check("TA_BOTTOM|TA_RIGHT", rc(60 - hi.cx, 30 - h, 60, 30), box(-1));

    clear();
    SetTextAlign(dc, TA_TOP | TA_CENTER);
    TextOutA(dc, 32, 2, "Hi", 2);
    check("TA_CENTER: x - width/2", rc(32 - hi.cx / 2, 2, 32 - hi.cx / 2 + hi.cx, 2 + h), box(-1));

    /* TRANSPARENT: the background is left alone. */
    clear();
    SetTextAlign(dc, TA_TOP | TA_LEFT);
    SetBkMode(dc, TRANSPARENT);
    TextOutA(dc, 5, 3, "Hi", 2);
    r = box(BLUE);
    printf("%-34s %s\n", "transparent: background pixels", IsRectEmpty(&r) || r.right == 0 ? "none" : "SOME");
    r = box(RED);
    printf("%-34s %s\n", "  text inside the cell",
           r.left >= 5 && r.top >= 3 && r.right <= 5 + hi.cx && r.bottom <= 3 + h ? "yes" : "no");
    snap();

    /* TA_UPDATECP: output at the current position, which moves by the
       extent; x and y are ignored. Same pixels as two plain TextOuts. */
    GetTextExtentPoint32A(dc, "Ab", 2, &ab);
    GetTextExtentPoint32A(dc, "cd", 2, &cd);
    GetTextExtentPoint32A(dc, "Abcd", 4, &abcd);
    clear();
    TextOutA(dc, 5, 3, "Ab", 2);
    TextOutA(dc, 5 + ab.cx, 3, "cd", 2);
    snap();
    clear();
    SetTextAlign(dc, TA_UPDATECP);
    MoveToEx(dc, 5, 3, NULL);
    TextOutA(dc, 40, 20, "Ab", 2);
    TextOutA(dc, 40, 20, "cd", 2);
    GetCurrentPositionEx(dc, &cp);
    SetTextAlign(dc, TA_TOP | TA_LEFT);
    same("TA_UPDATECP = TextOut at x, x+cx");
    printf("%-34s %ld,%ld (rule %ld,3); extent Abcd = Ab + cd: %s\n", "  current position after", cp.x, cp.y,
           5 + ab.cx + cd.cx, abcd.cx == ab.cx + cd.cx ? "yes" : "no");

    /* ExtTextOut's lpDx: the distances between character origins. */
    clear();
    TextOutA(dc, 5, 3, "H", 1);
    TextOutA(dc, 15, 3, "i", 1);
    snap();
    clear();
    ExtTextOutA(dc, 5, 3, 0, NULL, "Hi", 2, dx);
    same("ExtTextOut lpDx {10,9}");

    /* SetTextCharacterExtra: that much space after every character, and
       the extent counts it. */
    clear();
    TextOutA(dc, 5, 3, "H", 1);
    TextOutA(dc, 5 + w[0] + 3, 3, "i", 1);
    snap();
    clear();
    SetTextCharacterExtra(dc, 3);
    TextOutA(dc, 5, 3, "Hi", 2);
    GetTextExtentPoint32A(dc, "Hi", 2, &ab);
    SetTextCharacterExtra(dc, 0);
    same("SetTextCharacterExtra 3");
    printf("%-34s %ld (rule %ld)\n", "  extent with extra", ab.cx, hi.cx + 6);

    /* ETO_OPAQUE fills the rectangle; ETO_CLIPPED clips the text to it. */
    SetBkMode(dc, OPAQUE);
    clear();
    r = rc(2, 2, 40, 24);
    ExtTextOutA(dc, 10, 5, ETO_OPAQUE, &r, "Hi", 2, NULL);
    check("ETO_OPAQUE rectangle", r, box(-1));
    clear();
    r = rc(7, 5, 12, 10);
    ExtTextOutA(dc, 5, 3, ETO_CLIPPED, &r, "Hi", 2, NULL);
    check("ETO_CLIPPED: cell AND rectangle", rc(7, 5, 12, 10), box(-1));

    /* DrawText (user32): DT_CALCRECT measures, line height tmHeight. */
    r = rc(3, 4, 3, 4);
    cx = DrawTextA(dc, "Hi\nthere", -1, &r, DT_CALCRECT);
    GetTextExtentPoint32A(dc, "there", 5, &ab);
    check("DrawText DT_CALCRECT two lines", rc(3, 4, 3 + ab.cx, 4 + 2 * h), r);
    printf("%-34s %d (rule %d)\n", "  returns the height", cx, 2 * h);

    clear();
    r = rc(0, 0, 64, 32);
    DrawTextA(dc, "Hi", -1, &r, DT_SINGLELINE | DT_CENTER | DT_VCENTER);
    check("DT_SINGLELINE|DT_CENTER|DT_VCENTER", rc((64 - hi.cx) / 2, (32 - h) / 2, (64 - hi.cx) / 2 + hi.cx, (32 - h) / 2 + h), box(-1));
    clear();
    r = rc(10, 2, 60, 30);
    DrawTextA(dc, "Hi", -1, &r, DT_SINGLELINE | DT_RIGHT | DT_BOTTOM);
    check("DT_SINGLELINE|DT_RIGHT|DT_BOTTOM", rc(60 - hi.cx, 30 - h, 60, 30), box(-1));
    clear();
    r = rc(10, 2, 60, 30);
    DrawTextA(dc, "&Hi", -1, &r, DT_LEFT | DT_TOP);
    r = box(-1);
    printf("%-34s %ld (rule %ld: '&' is the prefix, not drawn)\n", "DT prefix: drawn width", r.right - r.left, hi.cx);

    /* The glyphs themselves are our font's (X11 6x13), not Windows'. */
    setup(14, 15);
    SetTextAlign(dc, TA_TOP | TA_LEFT);
    clear();
    TextOutA(dc, 1, 1, "Hi", 2);
    show("Hi at (1,1) in its cell, our 6x13 font (R text, B background)");
    return 0;
}
