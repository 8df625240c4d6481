//! Windows 98's classic look as numbers: the system colours
//! (GetSysColor), the system metrics (GetSystemMetrics), and the
//! non-client geometry a window style implies (AdjustWindowRect).
//!
//! Owns these tables. It must not draw (see [`super::nc`]).

use crate::gdi::bits::{rgb, Colorref};
use crate::gdi::region::Rect;

/// COLOR_* indexes used here by name.
pub mod color {
    pub const BACKGROUND: u32 = 1;
    pub const ACTIVECAPTION: u32 = 2;
    pub const INACTIVECAPTION: u32 = 3;
    pub const MENU: u32 = 4;
    pub const WINDOW: u32 = 5;
    pub const WINDOWFRAME: u32 = 6;
    pub const MENUTEXT: u32 = 7;
    pub const WINDOWTEXT: u32 = 8;
    pub const CAPTIONTEXT: u32 = 9;
    pub const ACTIVEBORDER: u32 = 10;
    pub const HIGHLIGHT: u32 = 13;
    pub const HIGHLIGHTTEXT: u32 = 14;
    pub const BTNFACE: u32 = 15;
    pub const BTNSHADOW: u32 = 16;
    pub const GRAYTEXT: u32 = 17;
    pub const BTNTEXT: u32 = 18;
    pub const INACTIVECAPTIONTEXT: u32 = 19;
    pub const BTNHIGHLIGHT: u32 = 20;
    pub const DKSHADOW3D: u32 = 21;
    pub const LIGHT3D: u32 = 22;
    pub const GRADIENTACTIVECAPTION: u32 = 27;
    pub const GRADIENTINACTIVECAPTION: u32 = 28;
}

/// The Windows 98 "Windows Standard" scheme, COLOR_SCROLLBAR (0) to COLOR_MENUBAR (30).
pub const SYS_COLORS: [Colorref; 31] = [
    rgb(192, 192, 192), // SCROLLBAR
    rgb(0, 128, 128),   // BACKGROUND
    rgb(0, 0, 128),     // ACTIVECAPTION
    rgb(128, 128, 128), // INACTIVECAPTION
    rgb(192, 192, 192), // MENU
    rgb(255, 255, 255), // WINDOW
    rgb(0, 0, 0),       // WINDOWFRAME
    rgb(0, 0, 0),       // MENUTEXT
    rgb(0, 0, 0),       // WINDOWTEXT
    rgb(255, 255, 255), // CAPTIONTEXT
    rgb(192, 192, 192), // ACTIVEBORDER
    rgb(192, 192, 192), // INACTIVEBORDER
    rgb(128, 128, 128), // APPWORKSPACE
    rgb(0, 0, 128),     // HIGHLIGHT
    rgb(255, 255, 255), // HIGHLIGHTTEXT
    rgb(192, 192, 192), // BTNFACE
    rgb(128, 128, 128), // BTNSHADOW
    rgb(128, 128, 128), // GRAYTEXT
    rgb(0, 0, 0),       // BTNTEXT
    rgb(192, 192, 192), // INACTIVECAPTIONTEXT
    rgb(255, 255, 255), // BTNHIGHLIGHT
    rgb(0, 0, 0),       // 3DDKSHADOW
    rgb(192, 192, 192), // 3DLIGHT
    rgb(0, 0, 0),       // INFOTEXT
    rgb(255, 255, 225), // INFOBK
    rgb(180, 180, 180), // (unused 25)
    rgb(0, 0, 255),     // HOTLIGHT
    rgb(16, 132, 208),  // GRADIENTACTIVECAPTION
    rgb(181, 181, 181), // GRADIENTINACTIVECAPTION
    rgb(0, 0, 128),     // MENUHILIGHT
    rgb(192, 192, 192), // MENUBAR
];

pub fn sys_color(i: u32) -> Colorref {
    SYS_COLORS.get(i as usize).copied().unwrap_or(0)
}

/// Caption bar height including its bottom line (SM_CYCAPTION).
pub const CAPTION: i32 = 19;
/// Menu bar height (SM_CYMENU).
pub const MENU_BAR: i32 = 19;
/// Sizing frame width (SM_CXFRAME) and dialog frame width (SM_CXDLGFRAME).
pub const FRAME: i32 = 4;
pub const DLG_FRAME: i32 = 3;

/// GetSystemMetrics for a `w x h` screen.
pub fn system_metric(i: i32, w: i32, h: i32) -> i32 {
    match i {
        0 | 16 | 78 => w,
        1 | 79 => h,
        17 => h - CAPTION,
        2 | 3 | 9 | 10 | 20 | 21 => 16,
        4 => CAPTION,
        5 | 6 => 1,
        7 | 8 => DLG_FRAME,
        11..=14 => 32,
        15 => MENU_BAR,
        19 => 1,
        28 => 112,
        29 => 27,
        30 | 31 | 54 | 55 => 18,
        32 | 33 => FRAME,
        34 => 112,
        35 => 27,
        36 | 37 => 4,
        38 | 39 => 75,
        45 | 46 => 2,
        49 | 50 => 16,
        51 => 15,
        52 => 12,
        53 => 14,
        57 | 58 => 160,
        59 | 60 => w + 8,
        61 => w + 8,
        62 => h + 8,
        71 | 72 => 13,
        80 => 1,
        81 => 1,
        _ => 0,
    }
}

/// Window styles used here.
pub mod ws {
    pub const OVERLAPPED: u32 = 0;
    pub const POPUP: u32 = 0x8000_0000;
    pub const CHILD: u32 = 0x4000_0000;
    pub const MINIMIZE: u32 = 0x2000_0000;
    pub const VISIBLE: u32 = 0x1000_0000;
    pub const DISABLED: u32 = 0x0800_0000;
    pub const CLIPSIBLINGS: u32 = 0x0400_0000;
    pub const CLIPCHILDREN: u32 = 0x0200_0000;
    pub const MAXIMIZE: u32 = 0x0100_0000;
    pub const CAPTION: u32 = 0x00C0_0000;
    pub const BORDER: u32 = 0x0080_0000;
    pub const DLGFRAME: u32 = 0x0040_0000;
    pub const VSCROLL: u32 = 0x0020_0000;
    pub const HSCROLL: u32 = 0x0010_0000;
    pub const SYSMENU: u32 = 0x0008_0000;
    pub const THICKFRAME: u32 = 0x0004_0000;
    pub const MINIMIZEBOX: u32 = 0x0002_0000;
    pub const MAXIMIZEBOX: u32 = 0x0001_0000;
    /// WS_GROUP and WS_TABSTOP share bits with WS_MINIMIZEBOX/MAXIMIZEBOX (child windows).
    pub const GROUP: u32 = 0x0002_0000;
    pub const TABSTOP: u32 = 0x0001_0000;
    pub const EX_DLGMODALFRAME: u32 = 0x0001;
    pub const EX_CLIENTEDGE: u32 = 0x0200;
    pub const EX_WINDOWEDGE: u32 = 0x0100;
    pub const EX_STATICEDGE: u32 = 0x2_0000;
    pub const EX_TOOLWINDOW: u32 = 0x80;
}

/// Frame thickness of a style (each side).
pub fn frame_width(style: u32, ex: u32) -> i32 {
    let mut w = if style & ws::THICKFRAME != 0 {
        FRAME
    } else if style & ws::DLGFRAME != 0 || ex & ws::EX_DLGMODALFRAME != 0 {
        DLG_FRAME
    } else if style & ws::BORDER != 0 {
        1
    } else {
        0
    };
    if ex & ws::EX_CLIENTEDGE != 0 {
        w += 2;
    }
    if ex & ws::EX_STATICEDGE != 0 {
        w += 1;
    }
    w
}

/// Whether a style has a caption bar (WS_CAPTION = WS_BORDER | WS_DLGFRAME, both bits).
pub fn has_caption(style: u32) -> bool {
    style & ws::CAPTION == ws::CAPTION
}

/// The client rectangle inside window rectangle `r` (AdjustWindowRect's inverse).
pub fn client_of(r: Rect, style: u32, ex: u32, menu: bool) -> Rect {
    let f = frame_width(style, ex);
    let mut top = r.top + f;
    if has_caption(style) {
        top += CAPTION;
    }
    if menu {
        top += MENU_BAR;
    }
    let sb = |on: bool| if on { 16 } else { 0 };
    let c = Rect::new(
        r.left + f,
        top,
        r.right - f - sb(style & ws::VSCROLL != 0),
        r.bottom - f - sb(style & ws::HSCROLL != 0),
    );
    if c.right < c.left || c.bottom < c.top {
        Rect::new(c.left, c.top, c.left.max(c.right), c.top.max(c.bottom))
    } else {
        c
    }
}

/// AdjustWindowRectEx: the window rectangle that has client `r`.
pub fn adjust(r: Rect, style: u32, ex: u32, menu: bool) -> Rect {
    let f = frame_width(style, ex);
    let mut top = r.top - f;
    if has_caption(style) {
        top -= CAPTION;
    }
    if menu {
        top -= MENU_BAR;
    }
    Rect::new(r.left - f, top, r.right + f, r.bottom + f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_geometry() {
        let ov = ws::CAPTION | ws::SYSMENU | ws::THICKFRAME | ws::MINIMIZEBOX | ws::MAXIMIZEBOX;
        let c = Rect::new(0, 0, 100, 50);
        assert_eq!(adjust(c, ov, 0, false), Rect::new(-4, -23, 104, 54));
        assert_eq!(adjust(c, ov, 0, true), Rect::new(-4, -42, 104, 54));
        let mine = ws::CAPTION | ws::SYSMENU | ws::MINIMIZEBOX;
        assert_eq!(adjust(c, mine, 0, true), Rect::new(-3, -41, 103, 53));
        assert_eq!(client_of(adjust(c, mine, 0, true), mine, 0, true), c);
    }
}
