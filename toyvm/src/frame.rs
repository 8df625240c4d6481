//! A rendered screen: what the monitor shows, as 8-bit RGB.
//!
//! Owns the frame type the oracle compares (by [`Frame::hash`]) and writes as
//! PNG. It must not know about VGA registers: the VGA renders into it
//! (`machine::devices::vga`), and nothing here depends on the host or on time.

use std::io;
use std::path::Path;

/// A picture of the screen: `width * height` pixels, row-major, 3 bytes
/// (R, G, B) per pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Frame {
    /// A frame filled with one colour.
    pub fn filled(width: u32, height: u32, rgb: [u8; 3]) -> Frame {
        let n = width as usize * height as usize;
        let mut v = Vec::with_capacity(n * 3);
        for _ in 0..n {
            v.extend_from_slice(&rgb);
        }
        Frame {
            width,
            height,
            rgb: v,
        }
    }

    /// The pixel at (x, y); black outside the frame.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        if x >= self.width || y >= self.height {
            return [0, 0, 0];
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// XXH3-64 of the dimensions (little-endian u32 width, height) followed by
    /// the RGB bytes: equal frames hash equal on every host.
    pub fn hash(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&self.width.to_le_bytes());
        h.update(&self.height.to_le_bytes());
        h.update(&self.rgb);
        h.digest()
    }

    /// The frame as 8-bit RGB PNG bytes (deterministic: same frame, same
    /// bytes). An empty frame is written as one black pixel; a frame whose
    /// pixel buffer does not match its size gives no bytes (a report shows a
    /// missing picture rather than the run failing).
    pub fn png_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.write_png(&mut out).is_err() {
            out.clear();
        }
        out
    }

    /// The frame as a `data:image/png;base64,...` URI for HTML reports.
    pub fn png_data_uri(&self) -> String {
        png_data_uri(&self.png_bytes())
    }

    /// Writes the frame as an 8-bit RGB PNG file.
    pub fn to_png(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let file = std::fs::File::create(path)?;
        self.write_png(io::BufWriter::new(file))
    }

    fn write_png<W: io::Write>(&self, w: W) -> io::Result<()> {
        let mut enc = png::Encoder::new(w, self.width.max(1), self.height.max(1));
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(io::Error::other)?;
        let data: &[u8] = if self.width == 0 || self.height == 0 {
            &[0, 0, 0]
        } else {
            &self.rgb
        };
        writer.write_image_data(data).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)
    }
}

/// PNG bytes (a frame's, or a screenshot read from disk) as a
/// `data:image/png;base64,...` URI, so an HTML report is one file.
pub fn png_data_uri(png: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(png);
    format!("data:image/png;base64,{b64}")
}
