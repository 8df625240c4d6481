//! The desktop frame as the lab sees it: the screen's pixels as 8-bit RGB,
//! its stable hash and its PNG encoding (`mainemu run --png`,
//! `--frames-every`, the oracle's win32 observation).
//!
//! Owns the frame's identity (the hash has the same definition as toyvm's
//! frames: XXH3-64 over width and height as little-endian u32, then the
//! RGB bytes, so equal pictures hash equal on every host) and the file
//! format. It must not compose the screen (desktop and gdi do) nor know
//! about windows. (toyvm's `frame::Frame` is the same shape; mainemu does
//! not depend on toyvm, so sharing it needs a small common crate.)

use crate::desktop::Desktop;
use std::io;
use std::path::Path;

/// A picture of the screen: `width * height` pixels, row-major, R, G, B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Frame {
    /// What the desktop shows now.
    pub fn of(d: &Desktop) -> Frame {
        let (width, height, rgb) = d.frame();
        Frame { width, height, rgb }
    }

    /// The stable frame hash (see the module header).
    pub fn hash(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for part in [
            &self.width.to_le_bytes()[..],
            &self.height.to_le_bytes(),
            &self.rgb,
        ] {
            h.update(part);
        }
        h.digest()
    }

    /// The frame as PNG bytes (8-bit RGB; same frame, same bytes).
    pub fn png(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(io::Error::other)?;
        w.write_image_data(&self.rgb).map_err(io::Error::other)?;
        w.finish().map_err(io::Error::other)?;
        Ok(out)
    }

    /// Writes the PNG to `path`.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.png()?)
    }
}

/// `WxH` (e.g. `800x600`) as a screen size: 64..=4096 each way.
pub fn parse_screen(s: &str) -> Result<(i32, i32), String> {
    let bad = || format!("--screen wants WxH (64..4096 each, e.g. 800x600), got {s:?}");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: i32 = w.trim().parse().map_err(|_| bad())?;
    let h: i32 = h.trim().parse().map_err(|_| bad())?;
    if !(64..=4096).contains(&w) || !(64..=4096).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_the_labs_frame_hash() {
        let f = Frame {
            width: 2,
            height: 1,
            rgb: vec![1, 2, 3, 4, 5, 6],
        };
        let mut raw = Vec::new();
        raw.extend(2u32.to_le_bytes());
        raw.extend(1u32.to_le_bytes());
        raw.extend([1, 2, 3, 4, 5, 6]);
        assert_eq!(f.hash(), xxhash_rust::xxh3::xxh3_64(&raw));
        let png = f.png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(png, f.png().unwrap());
    }

    #[test]
    fn screen_sizes() {
        assert_eq!(parse_screen("800x600"), Ok((800, 600)));
        assert!(parse_screen("800").is_err());
        assert!(parse_screen("10x10").is_err());
        assert!(parse_screen("axb").is_err());
    }
}
