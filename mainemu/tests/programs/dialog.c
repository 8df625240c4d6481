/* The dialog manager from an in-memory DLGTEMPLATE (DS_SETFONT, 8 points):
   where the controls land in pixels, the dialog item helpers, the tab
   order, and a modal dialog driven by scripted keys (the Rust test gives
   them: tests/gui.rs, dialog_answers_keys_under_l0_and_l1).

   Each position is checked against two rules: MapDialogRect on the
   template's dialog units, and the documented computation from the
   dialog's font (the average width of "A".."Z" "a".."z" as
   GetTextExtentPoint32 gives it, (cx / 26 + 1) / 2, and tmHeight;
   x * cx / 4, y * cy / 8). Lines with "(rule V)" must show V just before.
   The modal part prints the focused control whenever it changes (a
   timer on the guest clock looks every 50 ms), each BN_CLICKED, and what
   DialogBoxIndirectParam returned (EndDialog's value). */
#include <windows.h>
#include <stdio.h>

#define ID_EDIT 100
#define ID_CHECK 101
#define ID_ONE 102
#define ID_TWO 103
#define ID_LIST 104
#define ID_LABEL 105

static WORD tpl[512];
static int n;

static void w16(WORD v) { tpl[n++] = v; }
static void w32(DWORD v) { w16(LOWORD(v)); w16(HIWORD(v)); }
static void str(const char *s) { while (*s) w16((WORD)*s++); w16(0); }
static void align(void) { if (n & 1) w16(0); }

struct item { DWORD style; short x, y, cx, cy; WORD id; WORD cls; const char *text; };

static const struct item items[] = {
    {SS_LEFT, 7, 7, 40, 8, ID_LABEL, 0x82, "&Name:"},
    {WS_TABSTOP | WS_BORDER | ES_AUTOHSCROLL, 50, 5, 80, 12, ID_EDIT, 0x81, "7"},
    {WS_TABSTOP | BS_AUTOCHECKBOX, 7, 22, 60, 10, ID_CHECK, 0x80, "&Check"},
    {WS_TABSTOP | WS_GROUP | BS_AUTORADIOBUTTON, 7, 36, 40, 10, ID_ONE, 0x80, "One"},
    {BS_AUTORADIOBUTTON, 50, 36, 40, 10, ID_TWO, 0x80, "Two"},
    {WS_GROUP | WS_BORDER | LBS_NOTIFY, 7, 50, 60, 30, ID_LIST, 0x83, ""},
    {WS_TABSTOP | WS_GROUP | BS_DEFPUSHBUTTON, 80, 50, 50, 14, IDOK, 0x80, "OK"},
    {WS_TABSTOP | BS_PUSHBUTTON, 80, 68, 50, 14, IDCANCEL, 0x80, "Cancel"},
};
#define NITEMS (sizeof items / sizeof items[0])

static void build(void)
{
    unsigned i;
    n = 0;
    w32(DS_SETFONT | DS_MODALFRAME | WS_POPUP | WS_CAPTION | WS_SYSMENU);
    w32(0);
    w16(NITEMS);
    w16(20); w16(20); w16(140); w16(90);
    w16(0); w16(0); str("Dialog test");
    w16(8); str("MS Sans Serif");
    for (i = 0; i < NITEMS; i++) {
        align();
        w32(items[i].style | WS_CHILD | WS_VISIBLE);
        w32(0);
        w16(items[i].x); w16(items[i].y); w16(items[i].cx); w16(items[i].cy);
        w16(items[i].id);
        w16(0xFFFF); w16(items[i].cls);
        str(items[i].text);
        w16(0);
    }
}

static int last_focus = -1;

static void show_focus(HWND dlg)
{
    int id = GetDlgCtrlID(GetFocus());
    if (id != last_focus) {
        printf("focus %d\n", id);
        last_focus = id;
    }
    (void)dlg;
}

static INT_PTR CALLBACK modeless_proc(HWND dlg, UINT msg, WPARAM wp, LPARAM lp)
{
    if (msg == WM_INITDIALOG) {
        printf("WM_INITDIALOG first tab stop %d, param %ld\n", GetDlgCtrlID((HWND)wp), (long)lp);
        return TRUE;
    }
    return FALSE;
}

static INT_PTR CALLBACK modal_proc(HWND dlg, UINT msg, WPARAM wp, LPARAM lp)
{
    switch (msg) {
    case WM_INITDIALOG:
        SetTimer(dlg, 1, 10, NULL);
        SendDlgItemMessageA(dlg, ID_LIST, LB_ADDSTRING, 0, (LPARAM)"alpha");
        SendDlgItemMessageA(dlg, ID_LIST, LB_ADDSTRING, 0, (LPARAM)"beta");
        CheckRadioButton(dlg, ID_ONE, ID_TWO, ID_ONE);
        return TRUE;
    case WM_TIMER:
        show_focus(dlg);
        return TRUE;
    case WM_COMMAND:
        if (HIWORD(wp) == BN_CLICKED && LOWORD(wp) >= ID_CHECK && LOWORD(wp) <= ID_TWO)
            printf("BN_CLICKED %d, checked %u\n", LOWORD(wp), IsDlgButtonChecked(dlg, LOWORD(wp)));
        if (LOWORD(wp) == IDOK || LOWORD(wp) == IDCANCEL) {
            BOOL ok;
            UINT v = GetDlgItemInt(dlg, ID_EDIT, &ok, FALSE);
            char text[32];
            show_focus(dlg);
            GetDlgItemTextA(dlg, ID_EDIT, text, sizeof text);
            printf("WM_COMMAND %d: edit \"%s\" = %u (translated %d), check %u, two %u\n", LOWORD(wp),
                   text, v, ok, IsDlgButtonChecked(dlg, ID_CHECK), IsDlgButtonChecked(dlg, ID_TWO));
            KillTimer(dlg, 1);
            EndDialog(dlg, LOWORD(wp) == IDOK ? v * 10 + IsDlgButtonChecked(dlg, ID_TWO) : 999);
        }
        return TRUE;
    }
    return FALSE;
}

int main(void)
{
    HWND dlg, h;
    HDC dc;
    HFONT font;
    SIZE sz;
    TEXTMETRICA tm;
    int cx, cy;
    unsigned i;
    LONG units = GetDialogBaseUnits();
    char buf[64];
    BOOL ok;
    INT_PTR r;

    build();
    printf("GetDialogBaseUnits %d x %d\n", LOWORD(units), HIWORD(units));
    dlg = CreateDialogIndirectParamA(GetModuleHandleA(NULL), (LPCDLGTEMPLATEA)tpl, NULL, modeless_proc, 42);
    printf("modeless dialog %s\n", dlg ? "made" : "FAILED");
    if (!dlg)
        return 1;

    /* The base units from the dialog's font, as the documentation computes them. */
    dc = GetDC(dlg);
    font = (HFONT)SendMessageA(dlg, WM_GETFONT, 0, 0);
    SelectObject(dc, font);
    GetTextExtentPoint32A(dc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 52, &sz);
    GetTextMetricsA(dc, &tm);
    ReleaseDC(dlg, dc);
    cx = (sz.cx / 26 + 1) / 2;
    cy = tm.tmHeight;
    printf("font %s, base units %d x %d\n", font ? "set" : "none", cx, cy);

    {
        RECT c, want = {0, 0, 140, 90};
        GetClientRect(dlg, &c);
        MapDialogRect(dlg, &want);
        printf("client %ldx%ld (rule %ldx%ld)\n", c.right, c.bottom, want.right, want.bottom);
        snprintf(buf, sizeof buf, "%dx%d", MulDiv(140, cx, 4), MulDiv(90, cy, 8));
        printf("client %ldx%ld (rule %s)\n", c.right, c.bottom, buf);
    }
    for (i = 0; i < NITEMS; i++) {
        RECT w, m = {items[i].x, items[i].y, items[i].x + items[i].cx, items[i].y + items[i].cy};
        POINT p;
        h = GetDlgItem(dlg, items[i].id);
        GetWindowRect(h, &w);
        p.x = w.left; p.y = w.top;
        ScreenToClient(dlg, &p);
        /* MapDialogRect maps the edges; the control's size is its own
           cx, cy mapped (they differ by a rounding for Cancel). */
        MapDialogRect(dlg, &m);
        snprintf(buf, sizeof buf, "%ld,%ld", m.left, m.top);
        printf("control %d at %ld,%ld (rule %s), MapDialogRect %ld,%ld-%ld,%ld\n", items[i].id, p.x, p.y, buf,
               m.left, m.top, m.right, m.bottom);
        snprintf(buf, sizeof buf, "%d,%d,%dx%d", MulDiv(items[i].x, cx, 4), MulDiv(items[i].y, cy, 8),
                 MulDiv(items[i].cx, cx, 4), MulDiv(items[i].cy, cy, 8));
        printf("control %d at %ld,%ld,%ldx%ld (rule %s)\n", items[i].id, p.x, p.y, w.right - w.left,
               w.bottom - w.top, buf);
    }

    /* The item helpers. */
    GetDlgItemTextA(dlg, ID_EDIT, buf, sizeof buf);
    printf("edit text \"%s\" = %u\n", buf, GetDlgItemInt(dlg, ID_EDIT, &ok, FALSE));
    SetDlgItemInt(dlg, ID_EDIT, (UINT)-25, TRUE);
    GetDlgItemTextA(dlg, ID_EDIT, buf, sizeof buf);
    printf("SetDlgItemInt -25: \"%s\", signed %d", buf, (int)GetDlgItemInt(dlg, ID_EDIT, &ok, TRUE));
    printf(" translated %d;", ok);
    GetDlgItemInt(dlg, ID_EDIT, &ok, FALSE);
    printf(" unsigned translated %d\n", ok);
    SetDlgItemTextA(dlg, ID_EDIT, "12x");
    GetDlgItemInt(dlg, ID_EDIT, &ok, FALSE);
    printf("\"12x\" translated %d\n", ok);
    CheckDlgButton(dlg, ID_CHECK, BST_CHECKED);
    printf("CheckDlgButton: %u\n", IsDlgButtonChecked(dlg, ID_CHECK));
    CheckRadioButton(dlg, ID_ONE, ID_TWO, ID_TWO);
    printf("CheckRadioButton two: one %u two %u\n", IsDlgButtonChecked(dlg, ID_ONE), IsDlgButtonChecked(dlg, ID_TWO));
    SendDlgItemMessageA(dlg, ID_LIST, LB_ADDSTRING, 0, (LPARAM)"first");
    SendDlgItemMessageA(dlg, ID_LIST, LB_ADDSTRING, 0, (LPARAM)"second");
    SendDlgItemMessageA(dlg, ID_LIST, LB_SETCURSEL, 1, 0);
    SendDlgItemMessageA(dlg, ID_LIST, LB_GETTEXT, 1, (LPARAM)buf);
    printf("list: %ld items, selection %ld \"%s\"\n", (long)SendDlgItemMessageA(dlg, ID_LIST, LB_GETCOUNT, 0, 0),
           (long)SendDlgItemMessageA(dlg, ID_LIST, LB_GETCURSEL, 0, 0), buf);
    printf("DM_GETDEFID %lx\n", (long)SendMessageA(dlg, DM_GETDEFID, 0, 0));
    printf("tab order:");
    h = NULL;
    for (i = 0; i < 6; i++) {
        h = GetNextDlgTabItem(dlg, h, FALSE);
        printf(" %d", GetDlgCtrlID(h));
    }
    printf("; backwards from OK: %d\n", GetDlgCtrlID(GetNextDlgTabItem(dlg, GetDlgItem(dlg, IDOK), TRUE)));
    printf("next in the group after two: %d\n", GetDlgCtrlID(GetNextDlgGroupItem(dlg, GetDlgItem(dlg, ID_TWO), FALSE)));
    h = GetDlgItem(dlg, 999);
    printf("GetDlgItem(999) %s, error %lu\n", h ? "found" : "NULL", GetLastError());
    DestroyWindow(dlg);
    printf("destroyed: IsWindow %d\n", IsWindow(dlg));

    /* A malformed template (an item list past the end) fails cleanly. */
    {
        WORD bad[12] = {0};
        bad[0] = LOWORD(WS_POPUP); bad[1] = HIWORD(WS_POPUP);
        bad[4] = 5; /* five items, none there */
        SetLastError(0);
        r = DialogBoxIndirectParamA(NULL, (LPCDLGTEMPLATEA)bad, NULL, modal_proc, 0);
        i = GetLastError();
        printf("malformed template: DialogBoxIndirectParam %ld, error %u\n", (long)r, i);
    }

    /* The modal dialog: the scripted keys arrive while its loop runs. */
    r = DialogBoxIndirectParamA(GetModuleHandleA(NULL), (LPCDLGTEMPLATEA)tpl, NULL, modal_proc, 0);
    printf("DialogBoxIndirectParam returned %ld\n", (long)r);
    return 0;
}
