/* Lines and shapes with pens and brushes into a DIB section, printed as
   ASCII art (expected output: expected/gdi_shapes.txt, rules in
   docs/mainemu-gui.md). */
#include "gdicommon.h"

int main(void)
{
    HBRUSH red = CreateSolidBrush(RGB(255, 0, 0));
    POINT tri[3] = {{1, 1}, {9, 1}, {1, 7}};
    int s;
    setup(24, 9);

    clear();
    MoveToEx(dc, 1, 1, NULL); LineTo(dc, 6, 1);      /* (6,1) excluded */
    MoveToEx(dc, 1, 3, NULL); LineTo(dc, 9, 7);      /* shallow diagonal */
    MoveToEx(dc, 12, 7, NULL); LineTo(dc, 12, 2);    /* upwards, (12,2) excluded */
    show("lines");

    clear();
    SelectObject(dc, red);
    Rectangle(dc, 1, 1, 6, 5);                       /* outline 1..5 x 1..4 */
    SelectObject(dc, GetStockObject(NULL_PEN));
    Rectangle(dc, 8, 1, 13, 5);                      /* 8..11 x 1..3 */
    SelectObject(dc, GetStockObject(BLACK_PEN));
    SelectObject(dc, GetStockObject(NULL_BRUSH));
    Rectangle(dc, 15, 1, 20, 5);
    PatBlt(dc, 21, 1, 2, 3, BLACKNESS);              /* 21..22 x 1..3 */
    show("rectangles: red brush, null pen, null brush, PatBlt");

    clear();
    SelectObject(dc, red);
    Ellipse(dc, 1, 1, 10, 8);
    RoundRect(dc, 12, 1, 22, 8, 4, 4);
    show("ellipse, roundrect");

    clear();
    Polygon(dc, tri, 3);
    show("polygon");

    setup(32, 7);
    clear();
    for (s = PS_DASH; s <= PS_DASHDOTDOT; s++) {
        HPEN p = CreatePen(s, 1, RGB(0, 0, 0));
        HGDIOBJ old = SelectObject(dc, p);
        SetBkColor(dc, RGB(0, 0, 255));
        SetBkMode(dc, s == PS_DASH ? OPAQUE : TRANSPARENT);
        MoveToEx(dc, 0, s, NULL); LineTo(dc, 32, s);
        DeleteObject(SelectObject(dc, old));
    }
    show("pen styles: dash (opaque, blue gaps), dot, dashdot, dashdotdot");

    setup(24, 8);
    clear();
    SetBkMode(dc, OPAQUE);
    SetBkColor(dc, RGB(0, 0, 255));
    SelectObject(dc, GetStockObject(NULL_PEN));
    SelectObject(dc, CreateHatchBrush(HS_CROSS, RGB(255, 0, 0)));
    Rectangle(dc, 0, 0, 9, 9);
    SetBkMode(dc, TRANSPARENT);
    DeleteObject(SelectObject(dc, CreateHatchBrush(HS_FDIAGONAL, RGB(0, 0, 0))));
    Rectangle(dc, 12, 0, 21, 9);
    show("hatches: cross opaque, fdiagonal transparent");

    clear();
    SelectObject(dc, GetStockObject(BLACK_BRUSH));
    {
        HPEN wide = CreatePen(PS_SOLID, 3, RGB(255, 0, 0));
        SelectObject(dc, wide);
        MoveToEx(dc, 2, 2, NULL); LineTo(dc, 10, 2);
        SetROP2(dc, R2_NOT);
        SelectObject(dc, GetStockObject(BLACK_PEN));
        MoveToEx(dc, 0, 5, NULL); LineTo(dc, 24, 5);
    }
    show("wide pen, R2_NOT");
    printf("pixel %06lx %06lx\n", GetPixel(dc, 3, 2), GetPixel(dc, 0, 0));
    return 0;
}
