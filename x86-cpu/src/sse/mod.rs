//! The SSE/SSE2 register file (XMM0-7, MXCSR) and the IEEE single/double
//! arithmetic the SIMD instructions perform under MXCSR.
//!
//! Owns the state layout, the MXCSR fields (rounding control, DAZ, FTZ,
//! masks, sticky flags) and [`ieee`], the exactly rounded scalar operations
//! (built on the x87 soft-float's significand arithmetic and its one
//! rounding routine, so both FPUs round the same way). It must not decode,
//! address memory or know about lanes: `exec::sse*` apply these per element.

pub mod ieee;

/// MXCSR after reset / as Windows starts a thread: all exceptions masked,
/// round to nearest, DAZ and FTZ off.
pub const MXCSR_INIT: u32 = 0x1F80;
/// The MXCSR bits that can be set (MXCSR_MASK as FXSAVE reports it: DAZ is
/// supported). Loading a 1 anywhere else is #GP.
pub const MXCSR_MASK: u32 = 0xFFFF;

/// MXCSR fields.
pub mod mxcsr {
    /// Sticky exception flags IE DE ZE OE UE PE (bits 0-5, the x87 order).
    pub const FLAGS: u32 = 0x3F;
    /// Denormals are zeros (inputs).
    pub const DAZ: u32 = 1 << 6;
    /// Exception masks IM DM ZM OM UM PM (bits 7-12).
    pub const MASK_SHIFT: u32 = 7;
    /// Rounding control (bits 13-14, the x87 encoding).
    pub const RC_SHIFT: u32 = 13;
    /// Flush to zero (tiny results, underflow masked).
    pub const FTZ: u32 = 1 << 15;
}

/// XMM0-7 and MXCSR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SseState {
    /// XMM registers, lane 0 in the low bits (the little-endian memory image).
    pub xmm: [u128; 8],
    pub mxcsr: u32,
}

impl Default for SseState {
    fn default() -> SseState {
        SseState {
            xmm: [0; 8],
            mxcsr: MXCSR_INIT,
        }
    }
}

impl SseState {
    /// Every architectural bit as bytes (XMM0-7 little-endian, then MXCSR),
    /// for hashing and comparing states.
    pub fn state_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 * 16 + 4);
        for x in &self.xmm {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&self.mxcsr.to_le_bytes());
        b
    }
}
