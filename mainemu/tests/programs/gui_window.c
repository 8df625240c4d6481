/* A window the way a Win32 program makes one: class, window with a menu
   from resources, message loop with accelerators, WM_PAINT with
   BeginPaint, a timer, mouse clicks, typed text. It prints each event it
   sees (console subsystem), so tests/gui.rs checks the message sequence,
   and the frames show what it drew. */
#include <windows.h>
#include <stdio.h>

static char typed[64];
static int ntyped, ticks, clicks, lastx = -1, lasty = -1;

static LRESULT CALLBACK proc(HWND h, UINT m, WPARAM w, LPARAM l)
{
    switch (m) {
    case WM_CREATE:
        printf("WM_CREATE %s\n", ((CREATESTRUCTA *)l)->lpszName);
        return 0;
    case WM_SIZE:
        printf("WM_SIZE %d x %d\n", LOWORD(l), HIWORD(l));
        return 0;
    case WM_PAINT: {
        PAINTSTRUCT ps;
        RECT r;
        char s[80];
        HDC dc = BeginPaint(h, &ps);
        GetClientRect(h, &r);
        SelectObject(dc, GetStockObject(BLACK_PEN));
        SelectObject(dc, CreateSolidBrush(RGB(255, 255, 0)));
        Rectangle(dc, 10, 10, 60, 40);
        DeleteObject(SelectObject(dc, GetStockObject(WHITE_BRUSH)));
        SetBkMode(dc, TRANSPARENT);
        sprintf(s, "ticks %d clicks %d", ticks, clicks);
        TextOutA(dc, 70, 12, s, strlen(s));
        TextOutA(dc, 70, 30, typed, ntyped);
        if (lastx >= 0) {
            RECT c = {lastx - 3, lasty - 3, lastx + 4, lasty + 4};
            FillRect(dc, &c, (HBRUSH)(COLOR_HIGHLIGHT + 1));
        }
        EndPaint(h, &ps);
        printf("WM_PAINT %ld,%ld-%ld,%ld of %ld x %ld\n", ps.rcPaint.left, ps.rcPaint.top, ps.rcPaint.right, ps.rcPaint.bottom, r.right, r.bottom);
        return 0;
    }
    case WM_TIMER:
        ticks++;
        printf("WM_TIMER %d at %lu ms\n", (int)w, GetMessageTime());
        if (ticks == 3) KillTimer(h, 1);
        InvalidateRect(h, NULL, TRUE);
        return 0;
    case WM_LBUTTONDOWN:
        clicks++;
        lastx = (short)LOWORD(l); lasty = (short)HIWORD(l);
        printf("WM_LBUTTONDOWN %d,%d keys %d\n", lastx, lasty, (int)w);
        InvalidateRect(h, NULL, TRUE);
        return 0;
    case WM_CHAR:
        if (ntyped < 63) typed[ntyped++] = (char)w;
        printf("WM_CHAR %c\n", (char)w);
        InvalidateRect(h, NULL, TRUE);
        return 0;
    case WM_COMMAND:
        printf("WM_COMMAND %d\n", LOWORD(w));
        if (LOWORD(w) == 100) { ntyped = 0; clicks = 0; InvalidateRect(h, NULL, TRUE); }
        if (LOWORD(w) == 101) DestroyWindow(h);
        return 0;
    case WM_DESTROY:
        printf("WM_DESTROY\n");
        PostQuitMessage(7);
        return 0;
    }
    return DefWindowProcA(h, m, w, l);
}

int main(void)
{
    WNDCLASSA wc = {0};
    MSG msg;
    HWND h;
    HACCEL acc;
    char title[32];
    HINSTANCE inst = GetModuleHandleA(NULL);
    LoadStringA(inst, 1, title, sizeof(title));
    wc.lpfnWndProc = proc;
    wc.hInstance = inst;
    wc.hbrBackground = (HBRUSH)(COLOR_WINDOW + 1);
    wc.lpszMenuName = MAKEINTRESOURCEA(1);
    wc.lpszClassName = "mainemu";
    if (!RegisterClassA(&wc)) return 1;
    h = CreateWindowA("mainemu", title, WS_OVERLAPPEDWINDOW, 20, 20, 300, 150, NULL, NULL, inst, NULL);
    printf("window %s\n", h ? "created" : "failed");
    ShowWindow(h, SW_SHOW);
    UpdateWindow(h);
    acc = LoadAcceleratorsA(inst, MAKEINTRESOURCEA(1));
    SetTimer(h, 1, 100, NULL);
    while (GetMessageA(&msg, NULL, 0, 0)) {
        if (!TranslateAcceleratorA(h, acc, &msg)) TranslateMessage(&msg);
        DispatchMessageA(&msg);
    }
    printf("quit %d\n", (int)msg.wParam);
    return (int)msg.wParam;
}
