//! The VGA BIOS ROM fonts (code page 437): 8x16 for the 400-line text modes
//! and 8x8 for 50-line text (and INT 10h AX=1130h).
//!
//! Owns the font bytes only (data and licence in `font/`). It must not
//! render: the VGA reads glyphs from plane 2 like the hardware does, after
//! [`super::Vga::load_font`] copied them there.

static FONT_8X16: &[u8; 4096] = include_bytes!("font/vga_8x16.bin");
static FONT_8X8: &[u8; 2048] = include_bytes!("font/vga_8x8.bin");

/// The 8x16 font: 256 glyphs × 16 rows, MSB leftmost.
pub fn font_8x16() -> &'static [u8; 4096] {
    FONT_8X16
}

/// The 8x8 font: 256 glyphs × 8 rows, MSB leftmost.
pub fn font_8x8() -> &'static [u8; 2048] {
    FONT_8X8
}
