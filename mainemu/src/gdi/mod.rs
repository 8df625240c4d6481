//! GDI: the object table (pens, brushes, fonts, bitmaps, regions,
//! palettes, device contexts) behind the handles gdi32 and user32 give the
//! guest, the screen surface, and the drawing calls in logical coordinates.
//!
//! Bitmaps keep their pixels host-side in [`bits::Bits`]; a DIB section's
//! pixels live in guest memory (the guest writes them directly), so every
//! drawing call on a DC with a DIB section selected loads the guest bits
//! first and stores them after: the guest always sees what GDI drew and
//! GDI always draws over what the guest wrote. The screen is one 32 bpp
//! surface; windows draw straight into it through their visible region,
//! as Windows 98's GDI does (no per-window backing store).
//!
//! Owns: handles and objects, their creation rules and stock objects,
//! realizing pens and brushes for a target, coordinate mapping. It must
//! not: know windows (user32's desktop gives a window DC its origin and
//! visible region), read guest structures (gdi32 marshals them).

pub mod bits;
pub mod dc;
pub mod dib;
pub mod font;
pub mod raster;
pub mod region;

use crate::memory::Memory;
use bits::{rgb, Bits, Colorref};
use region::{Rect, Region};
use std::collections::BTreeMap;

/// GetObjectType values.
pub mod obj {
    pub const PEN: u32 = 1;
    pub const BRUSH: u32 = 2;
    pub const DC: u32 = 3;
    pub const PAL: u32 = 5;
    pub const FONT: u32 = 6;
    pub const BITMAP: u32 = 7;
    pub const REGION: u32 = 8;
    pub const MEMDC: u32 = 10;
    pub const EXTPEN: u32 = 11;
}

/// Stock object indexes (GetStockObject).
pub mod stock {
    pub const WHITE_BRUSH: u32 = 0;
    pub const LTGRAY_BRUSH: u32 = 1;
    pub const GRAY_BRUSH: u32 = 2;
    pub const DKGRAY_BRUSH: u32 = 3;
    pub const BLACK_BRUSH: u32 = 4;
    pub const NULL_BRUSH: u32 = 5;
    pub const WHITE_PEN: u32 = 6;
    pub const BLACK_PEN: u32 = 7;
    pub const NULL_PEN: u32 = 8;
    pub const OEM_FIXED_FONT: u32 = 10;
    pub const ANSI_FIXED_FONT: u32 = 11;
    pub const ANSI_VAR_FONT: u32 = 12;
    pub const SYSTEM_FONT: u32 = 13;
    pub const DEVICE_DEFAULT_FONT: u32 = 14;
    pub const DEFAULT_PALETTE: u32 = 15;
    pub const SYSTEM_FIXED_FONT: u32 = 16;
    pub const DEFAULT_GUI_FONT: u32 = 17;
    pub const DC_BRUSH: u32 = 18;
    pub const DC_PEN: u32 = 19;
    /// Not a Windows index: the 1x1 monochrome bitmap a new memory DC holds.
    pub const DEFAULT_BITMAP: u32 = 20;
    pub const COUNT: u32 = 21;
}

/// Pen styles (the low nibble of the style).
pub mod ps {
    pub const SOLID: u32 = 0;
    pub const DASH: u32 = 1;
    pub const DOT: u32 = 2;
    pub const DASHDOT: u32 = 3;
    pub const DASHDOTDOT: u32 = 4;
    pub const NULL: u32 = 5;
    pub const INSIDEFRAME: u32 = 6;
    pub const USERSTYLE: u32 = 7;
    pub const ALTERNATE: u32 = 8;
    /// PS_GEOMETRIC in the type bits (PS_TYPE_MASK 0xF0000).
    pub const GEOMETRIC: u32 = 0x10000;
}

/// Brush styles.
pub mod bs {
    pub const SOLID: u32 = 0;
    pub const NULL: u32 = 1;
    pub const HATCHED: u32 = 2;
    pub const PATTERN: u32 = 3;
    pub const DIBPATTERN: u32 = 5;
    pub const DIBPATTERNPT: u32 = 6;
    pub const PATTERN8X8: u32 = 7;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PenObj {
    pub style: u32,
    pub width: i32,
    pub color: Colorref,
    /// Created by ExtCreatePen: what it was given beyond a LOGPEN.
    pub ext: Option<ExtPen>,
}

/// The EXTLOGPEN fields of an ExtCreatePen pen that a LOGPEN lacks (the
/// style keeps its type, end-cap and join bits in `PenObj::style`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtPen {
    pub brush_style: u32,
    pub hatch: u32,
    /// PS_USERSTYLE dash lengths.
    pub entries: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrushObj {
    pub style: u32,
    pub color: Colorref,
    pub hatch: u32,
    /// BS_PATTERN: the bitmap's pixels and whether it is monochrome (its
    /// 0/1 pixels then take the DC's text/background colours).
    pub pattern: Option<(Bits, bool)>,
    /// DIB_PAL_COLORS: the pattern's colour table holds indexes into the
    /// palette selected in the DC it draws on, resolved at each draw
    /// (CreateDIBPatternBrushPt); the table stores the indexes.
    pub pal_colors: bool,
}

/// A LOGFONTW, kept as given (GetObject returns it).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LogFont {
    pub height: i32,
    pub width: i32,
    pub escapement: i32,
    pub orientation: i32,
    pub weight: i32,
    pub italic: u8,
    pub underline: u8,
    pub strikeout: u8,
    pub charset: u8,
    pub out_precision: u8,
    pub clip_precision: u8,
    pub quality: u8,
    pub pitch_family: u8,
    pub face: Vec<u16>,
}

impl LogFont {
    pub fn face(&self) -> font::Face {
        font::Face::new(
            self.height,
            self.weight,
            self.underline != 0,
            self.strikeout != 0,
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitmapObj {
    pub bits: Bits,
    /// Guest address of a DIB section's pixels.
    pub guest: Option<u32>,
    /// The DIB section's rows run top-down in guest memory.
    pub top_down: bool,
    /// A device-dependent monochrome bitmap (blits convert through the
    /// DCs' text and background colours).
    pub mono: bool,
    /// The DC this bitmap is selected into (at most one).
    pub selected: Option<u32>,
    /// The BITMAPINFOHEADER compression of a DIB section (0 BI_RGB, 3 BI_BITFIELDS).
    pub compression: u32,
}

impl BitmapObj {
    pub fn ddb(bits: Bits) -> BitmapObj {
        let mono = bits.bpp == 1;
        BitmapObj {
            bits,
            guest: None,
            top_down: false,
            mono,
            selected: None,
            compression: 0,
        }
    }
}

/// Every GDI object.
#[derive(Clone, Debug)]
pub enum Object {
    Pen(PenObj),
    Brush(BrushObj),
    Font(LogFont),
    Bitmap(BitmapObj),
    Region(Region),
    Palette(Vec<Colorref>),
    Dc(Box<dc::Dc>),
}

impl Object {
    pub fn kind(&self) -> u32 {
        match self {
            Object::Pen(p) if p.ext.is_some() => obj::EXTPEN,
            Object::Pen(_) => obj::PEN,
            Object::Brush(_) => obj::BRUSH,
            Object::Font(_) => obj::FONT,
            Object::Bitmap(_) => obj::BITMAP,
            Object::Region(_) => obj::REGION,
            Object::Palette(_) => obj::PAL,
            Object::Dc(d) if d.memory => obj::MEMDC,
            Object::Dc(_) => obj::DC,
        }
    }
}

/// First handle value given out; stock objects take the first slots.
pub const HANDLE_BASE: u32 = 0x0200_0010;

/// The GDI state of a process.
pub struct Gdi {
    pub objects: BTreeMap<u32, Object>,
    next: u32,
    /// The screen surface (32 bpp), what the frame shows.
    pub screen: Bits,
    /// The 16-colour palette of the system (default palette entries).
    pub system_palette: Vec<Colorref>,
}

/// Default system palette's 20 static colours (the first 10 and last 10 of
/// the 256-entry system palette, as GetStockObject(DEFAULT_PALETTE) holds them).
pub const STATIC_COLORS: [Colorref; 20] = [
    rgb(0, 0, 0),
    rgb(128, 0, 0),
    rgb(0, 128, 0),
    rgb(128, 128, 0),
    rgb(0, 0, 128),
    rgb(128, 0, 128),
    rgb(0, 128, 128),
    rgb(192, 192, 192),
    rgb(192, 220, 192),
    rgb(166, 202, 240),
    rgb(255, 251, 240),
    rgb(160, 160, 164),
    rgb(128, 128, 128),
    rgb(255, 0, 0),
    rgb(0, 255, 0),
    rgb(255, 255, 0),
    rgb(0, 0, 255),
    rgb(255, 0, 255),
    rgb(0, 255, 255),
    rgb(255, 255, 255),
];

impl Gdi {
    /// A GDI with the stock objects and a `width x height` screen filled with `desktop`.
    pub fn new(width: i32, height: i32, desktop: Colorref) -> Gdi {
        let mut screen = Bits::new(width, height, 32);
        let v = screen.from_color(desktop);
        for y in 0..height {
            for x in 0..width {
                screen.set(x, y, v);
            }
        }
        let mut g = Gdi {
            objects: BTreeMap::new(),
            next: HANDLE_BASE,
            screen,
            system_palette: STATIC_COLORS.to_vec(),
        };
        let solid = |c| {
            Object::Brush(BrushObj {
                style: bs::SOLID,
                color: c,
                hatch: 0,
                pattern: None,
                pal_colors: false,
            })
        };
        let pen = |style, c| {
            Object::Pen(PenObj {
                style,
                width: 1,
                color: c,
                ext: None,
            })
        };
        let font = |face: &str, h: i32, w: i32, weight: i32, pitch: u8| {
            Object::Font(LogFont {
                height: h,
                width: w,
                weight,
                pitch_family: pitch,
                face: face.encode_utf16().collect(),
                ..Default::default()
            })
        };
        let stocks: Vec<Object> = vec![
            solid(rgb(255, 255, 255)),
            solid(rgb(192, 192, 192)),
            solid(rgb(128, 128, 128)),
            solid(rgb(64, 64, 64)),
            solid(rgb(0, 0, 0)),
            Object::Brush(BrushObj {
                style: bs::NULL,
                color: 0,
                hatch: 0,
                pattern: None,
                pal_colors: false,
            }),
            pen(ps::SOLID, rgb(255, 255, 255)),
            pen(ps::SOLID, rgb(0, 0, 0)),
            pen(ps::NULL, 0),
            // 9 is not a stock index; a placeholder keeps the numbering.
            solid(0),
            font("Terminal", 12, 8, 400, 1),
            font("Courier", 12, 8, 400, 1),
            font("MS Sans Serif", 12, 9, 400, 2),
            font("System", 16, 7, 700, 2),
            font("System", 16, 7, 400, 2),
            Object::Palette(STATIC_COLORS.to_vec()),
            font("Fixedsys", 15, 8, 400, 1),
            font("MS Sans Serif", -11, 0, 400, 2),
            solid(rgb(255, 255, 255)),
            pen(ps::SOLID, 0),
            Object::Bitmap(BitmapObj::ddb(Bits::new(1, 1, 1))),
        ];
        for o in stocks {
            g.add(o);
        }
        g
    }

    /// The handle of stock object `i`.
    pub fn stock(&self, i: u32) -> u32 {
        HANDLE_BASE + 4 * i
    }

    pub fn is_stock(&self, h: u32) -> bool {
        (HANDLE_BASE..HANDLE_BASE + 4 * stock::COUNT).contains(&h)
    }

    /// Adds an object and returns its handle.
    pub fn add(&mut self, o: Object) -> u32 {
        let h = self.next;
        self.next += 4;
        self.objects.insert(h, o);
        h
    }

    pub fn get(&self, h: u32) -> Option<&Object> {
        self.objects.get(&h)
    }

    pub fn get_mut(&mut self, h: u32) -> Option<&mut Object> {
        self.objects.get_mut(&h)
    }

    pub fn dc(&self, h: u32) -> Option<&dc::Dc> {
        match self.objects.get(&h) {
            Some(Object::Dc(d)) => Some(d),
            _ => None,
        }
    }

    pub fn dc_mut(&mut self, h: u32) -> Option<&mut dc::Dc> {
        match self.objects.get_mut(&h) {
            Some(Object::Dc(d)) => Some(d),
            _ => None,
        }
    }

    pub fn bitmap(&self, h: u32) -> Option<&BitmapObj> {
        match self.objects.get(&h) {
            Some(Object::Bitmap(b)) => Some(b),
            _ => None,
        }
    }

    pub fn bitmap_mut(&mut self, h: u32) -> Option<&mut BitmapObj> {
        match self.objects.get_mut(&h) {
            Some(Object::Bitmap(b)) => Some(b),
            _ => None,
        }
    }

    /// Refreshes a DIB section's host copy from guest memory.
    pub fn load_dib(&mut self, mem: &Memory, h: u32) {
        if let Some(b) = self.bitmap_mut(h) {
            if let Some(a) = b.guest {
                let td = b.top_down;
                b.bits.load_guest(mem, a, td);
            }
        }
    }

    /// Writes a DIB section's host copy back to guest memory.
    pub fn store_dib(&mut self, mem: &mut Memory, h: u32) {
        if let Some(b) = self.bitmap(h) {
            if let Some(a) = b.guest {
                b.bits.store_guest(mem, a, b.top_down);
            }
        }
    }

    /// DeleteObject: false for stock objects (which stay), unknown handles
    /// and DCs; a bitmap selected into a DC is refused as Windows does.
    pub fn delete(&mut self, mem: &mut Memory, h: u32) -> bool {
        if self.is_stock(h) {
            return true;
        }
        match self.objects.get(&h) {
            None | Some(Object::Dc(_)) => false,
            Some(Object::Bitmap(b)) if b.selected.is_some() => false,
            Some(Object::Bitmap(b)) => {
                if let Some(a) = b.guest {
                    let _ = mem.virtual_free(a, 0, crate::memory::mem::RELEASE);
                }
                self.objects.remove(&h);
                true
            }
            Some(_) => {
                // Windows defers deleting an object selected into a DC; the
                // DC keeps drawing with it. We keep it until the DC lets go.
                let in_use = self.objects.values().any(|o| match o {
                    Object::Dc(d) => d.pen == h || d.brush == h || d.font == h,
                    _ => false,
                });
                if !in_use {
                    self.objects.remove(&h);
                }
                true
            }
        }
    }

    /// The pixels of the screen as 8-bit RGB rows (the frame).
    pub fn screen_rgb(&self) -> Vec<u8> {
        let s = &self.screen;
        let mut out = Vec::with_capacity((s.width * s.height * 3) as usize);
        for y in 0..s.height {
            for x in 0..s.width {
                let v = s.get(x, y);
                out.extend([(v >> 16) as u8, (v >> 8) as u8, v as u8]);
            }
        }
        out
    }

    /// Creates a DC. `window`: a window DC on the screen whose client area
    /// is at `origin` (screen coordinates) and visible through `vis`
    /// (screen coordinates); `None`: a memory DC holding the default 1x1
    /// monochrome bitmap.
    pub fn create_dc(&mut self, window: Option<(u32, (i32, i32), Region)>) -> u32 {
        let mut d = dc::Dc::new(self);
        match window {
            Some((hwnd, origin, vis)) => {
                d.hwnd = hwnd;
                d.origin = origin;
                d.vis = vis;
            }
            None => {
                d.memory = true;
                d.bitmap = self.stock(stock::DEFAULT_BITMAP);
                d.vis = Region::rect(Rect::new(0, 0, 1, 1));
            }
        }
        self.add(Object::Dc(Box::new(d)))
    }

    /// DeleteDC: the selected bitmap is released.
    pub fn delete_dc(&mut self, h: u32) -> bool {
        let Some(Object::Dc(d)) = self.objects.remove(&h) else {
            return false;
        };
        if let Some(b) = self.bitmap_mut(d.bitmap) {
            b.selected = None;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_objects_and_handles() {
        let g = Gdi::new(64, 48, rgb(0, 128, 128));
        assert_eq!(g.get(g.stock(stock::BLACK_PEN)).unwrap().kind(), obj::PEN);
        assert_eq!(
            g.get(g.stock(stock::NULL_BRUSH)).unwrap().kind(),
            obj::BRUSH
        );
        assert_eq!(
            g.get(g.stock(stock::DEFAULT_GUI_FONT)).unwrap().kind(),
            obj::FONT
        );
        assert_eq!(g.screen.color_at(10, 10), rgb(0, 128, 128));
        assert_eq!(&g.screen_rgb()[..3], &[0, 128, 128]);
    }
}
