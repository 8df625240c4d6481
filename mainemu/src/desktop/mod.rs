//! The desktop: the screen's GDI state and (as user32 grows) the window
//! manager, message queues, input and the frame composed from the windows.
//!
//! Owns the per-process GUI state API bodies in user32 and gdi32 work on.
//! It must not read guest structures (the DLL modules marshal) nor run
//! guest code (window procedures are called through the engine).

use crate::gdi::bits::rgb;
use crate::gdi::Gdi;

/// Default screen size (`--screen WxH` changes it).
pub const DEFAULT_SCREEN: (i32, i32) = (640, 480);

/// The Windows 98 default desktop colour (COLOR_DESKTOP).
pub const DESKTOP_COLOR: u32 = rgb(0, 128, 128);

pub struct Desktop {
    pub gdi: Gdi,
}

impl Desktop {
    pub fn new(width: i32, height: i32) -> Desktop {
        Desktop {
            gdi: Gdi::new(width, height, DESKTOP_COLOR),
        }
    }

    /// The frame: the screen as 8-bit RGB rows, with its size.
    pub fn frame(&self) -> (u32, u32, Vec<u8>) {
        let s = &self.gdi.screen;
        (s.width as u32, s.height as u32, self.gdi.screen_rgb())
    }
}

impl Default for Desktop {
    fn default() -> Desktop {
        Desktop::new(DEFAULT_SCREEN.0, DEFAULT_SCREEN.1)
    }
}
