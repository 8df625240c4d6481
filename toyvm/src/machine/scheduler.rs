//! The guest clock: the one time base every device derives from, and the
//! exact integer conversions between dispatches and device clocks.
//!
//! Owns [`DISPATCHES_PER_SECOND`] and the other time constants, the rational
//! "ticks since" / "dispatch of tick" conversions, and a small deterministic
//! queue for scripted events (keys). It must not read wall time, use floats
//! for timing, or iterate anything whose order depends on hashing: every
//! answer here is a pure function of integers.
//!
//! Convention used by every device: a device clock of `hz` ticks per second
//! that starts at dispatch `origin` has counted
//! `floor((now - origin) * hz / DISPATCHES_PER_SECOND)` ticks at dispatch
//! `now`, and its tick number `k` happens at the first dispatch where that
//! count reaches `k`, i.e. `origin + ceil(k * DISPATCHES_PER_SECOND / hz)`.
//! Both are computed in `u128`, so there is no drift however long the run.

/// Guest time unit: one dispatch is one retired guest instruction (one REP
/// element). A ~4 MIPS 386-class machine: everything else derives from this.
pub const DISPATCHES_PER_SECOND: u64 = 4_000_000;

/// Dispatches per microsecond (exact: 4).
pub const DISPATCHES_PER_US: u64 = DISPATCHES_PER_SECOND / 1_000_000;

/// The 8254 PIT input clock, Hz (the NTSC colour burst ×4 / 12).
pub const PIT_HZ: u64 = 1_193_182;

/// VGA dot clocks selected by the misc output register bits 3:2.
pub const VGA_CLOCK_25_HZ: u64 = 25_175_000;
/// The 28 MHz dot clock used by the 9-dot (720-pixel) text modes.
pub const VGA_CLOCK_28_HZ: u64 = 28_322_000;

/// OPL2 timer 1 resolution: 80 µs per count.
pub const OPL_TIMER1_DISPATCHES: u64 = 80 * DISPATCHES_PER_US;
/// OPL2 timer 2 resolution: 320 µs per count.
pub const OPL_TIMER2_DISPATCHES: u64 = 320 * DISPATCHES_PER_US;

/// The RTC's 32.768 kHz time base (periodic interrupt rates divide it).
pub const RTC_HZ: u64 = 32_768;

/// A keyboard byte takes about a millisecond to arrive over the serial line:
/// after the guest reads port 60h, the next queued byte is delivered this
/// many dispatches later (so a handler that reads 60h twice sees one byte).
pub const KBD_BYTE_DISPATCHES: u64 = 1_000 * DISPATCHES_PER_US;

/// How long a named key in a key script is held: the break code follows the
/// make code by 50 ms.
pub const KEY_HOLD_DISPATCHES: u64 = 50_000 * DISPATCHES_PER_US;

/// Ticks of a `hz` clock counted between `origin` and `now`
/// (0 if `now < origin`): `floor((now - origin) * hz / DISPATCHES_PER_SECOND)`.
#[inline]
pub fn ticks_since(origin: u64, now: u64, hz: u64) -> u64 {
    if now <= origin {
        return 0;
    }
    (((now - origin) as u128 * hz as u128) / DISPATCHES_PER_SECOND as u128) as u64
}

/// The first dispatch at which a `hz` clock started at `origin` has counted
/// `k` ticks: `origin + ceil(k * DISPATCHES_PER_SECOND / hz)`. Saturates at
/// `u64::MAX` (never) for absurd inputs; `hz == 0` means never.
#[inline]
pub fn dispatch_of_tick(origin: u64, k: u64, hz: u64) -> u64 {
    if hz == 0 {
        return u64::MAX;
    }
    let num = k as u128 * DISPATCHES_PER_SECOND as u128;
    let d = num.div_ceil(hz as u128);
    let t = origin as u128 + d;
    if t >= u64::MAX as u128 {
        u64::MAX
    } else {
        t as u64
    }
}

/// The same conversion for a clock given as a rational rate `num / den`
/// ticks per second: the first dispatch at which `k` ticks have elapsed.
#[inline]
pub fn dispatch_of_tick_rational(origin: u64, k: u64, num: u64, den: u64) -> u64 {
    if num == 0 {
        return u64::MAX;
    }
    let n = k as u128 * DISPATCHES_PER_SECOND as u128 * den as u128;
    let t = origin as u128 + n.div_ceil(num as u128);
    if t >= u64::MAX as u128 {
        u64::MAX
    } else {
        t as u64
    }
}

/// Ticks of a `num / den` Hz clock counted between `origin` and `now`.
#[inline]
pub fn ticks_since_rational(origin: u64, now: u64, num: u64, den: u64) -> u64 {
    if now <= origin || den == 0 {
        return 0;
    }
    let v = ((now - origin) as u128 * num as u128) / (DISPATCHES_PER_SECOND as u128 * den as u128);
    v.min(u64::MAX as u128) as u64
}

/// A deterministic queue of payloads due at absolute dispatches. Ties keep
/// insertion order (a sequence number breaks them), so two runs that schedule
/// the same things in the same order fire them identically.
#[derive(Clone, Debug, Default)]
pub struct EventQueue<T> {
    /// Sorted by (dispatch, seq).
    items: Vec<(u64, u64, T)>,
    seq: u64,
}

impl<T> EventQueue<T> {
    pub fn new() -> Self {
        EventQueue {
            items: Vec::new(),
            seq: 0,
        }
    }

    /// Schedules `payload` at `dispatch`.
    pub fn push(&mut self, dispatch: u64, payload: T) {
        let seq = self.seq;
        self.seq += 1;
        // Insert after every item due at or before `dispatch` (stable).
        let pos = self.items.partition_point(|(d, _, _)| *d <= dispatch);
        self.items.insert(pos, (dispatch, seq, payload));
    }

    /// Dispatch of the earliest item, `u64::MAX` if empty.
    pub fn next_due(&self) -> u64 {
        self.items.first().map_or(u64::MAX, |(d, _, _)| *d)
    }

    /// Removes and returns the earliest item if it is due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, T)> {
        if self.items.first().is_some_and(|(d, _, _)| *d <= now) {
            let (d, _, p) = self.items.remove(0);
            Some((d, p))
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// One scripted keyboard byte: scan code set 1, delivered at `dispatch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedKey {
    pub dispatch: u64,
    pub scancode: u8,
}

/// Set-1 make codes of the key names a script may use.
fn key_name_make(name: &str) -> Option<u8> {
    let n = name.to_ascii_lowercase();
    let code = match n.as_str() {
        "esc" | "escape" => 0x01,
        "1" => 0x02,
        "2" => 0x03,
        "3" => 0x04,
        "4" => 0x05,
        "5" => 0x06,
        "6" => 0x07,
        "7" => 0x08,
        "8" => 0x09,
        "9" => 0x0A,
        "0" => 0x0B,
        "minus" => 0x0C,
        "equals" => 0x0D,
        "backspace" | "bksp" => 0x0E,
        "tab" => 0x0F,
        "q" => 0x10,
        "w" => 0x11,
        "e" => 0x12,
        "r" => 0x13,
        "t" => 0x14,
        "y" => 0x15,
        "u" => 0x16,
        "i" => 0x17,
        "o" => 0x18,
        "p" => 0x19,
        "lbracket" => 0x1A,
        "rbracket" => 0x1B,
        "enter" | "return" => 0x1C,
        "ctrl" | "lctrl" => 0x1D,
        "a" => 0x1E,
        "s" => 0x1F,
        "d" => 0x20,
        "f" => 0x21,
        "g" => 0x22,
        "h" => 0x23,
        "j" => 0x24,
        "k" => 0x25,
        "l" => 0x26,
        "semicolon" => 0x27,
        "quote" => 0x28,
        "backquote" => 0x29,
        "lshift" | "shift" => 0x2A,
        "backslash" => 0x2B,
        "z" => 0x2C,
        "x" => 0x2D,
        "c" => 0x2E,
        "v" => 0x2F,
        "b" => 0x30,
        "n" => 0x31,
        "m" => 0x32,
        "comma" => 0x33,
        "period" => 0x34,
        "slash" => 0x35,
        "rshift" => 0x36,
        "kpstar" => 0x37,
        "alt" | "lalt" => 0x38,
        "space" => 0x39,
        "capslock" => 0x3A,
        "f1" => 0x3B,
        "f2" => 0x3C,
        "f3" => 0x3D,
        "f4" => 0x3E,
        "f5" => 0x3F,
        "f6" => 0x40,
        "f7" => 0x41,
        "f8" => 0x42,
        "f9" => 0x43,
        "f10" => 0x44,
        "numlock" => 0x45,
        "scrolllock" => 0x46,
        "home" => 0x47,
        "up" => 0x48,
        "pgup" => 0x49,
        "kpminus" => 0x4A,
        "left" => 0x4B,
        "kp5" => 0x4C,
        "right" => 0x4D,
        "kpplus" => 0x4E,
        "end" => 0x4F,
        "down" => 0x50,
        "pgdn" => 0x51,
        "ins" | "insert" => 0x52,
        "del" | "delete" => 0x53,
        "f11" => 0x57,
        "f12" => 0x58,
        _ => return None,
    };
    Some(code)
}

/// Parses a key script: entries `KEY@DISPATCH` separated by commas or
/// whitespace. `KEY` is either a raw scan-code byte in hex (`0x1C`, `9C`:
/// delivered as given, make or break) or a key name (`enter`, `a`, `space`,
/// `up`, `f1`, ...) which schedules the make code at `DISPATCH` and the break
/// code (make | 80h) [`KEY_HOLD_DISPATCHES`] later. `DISPATCH` is decimal
/// (underscores allowed). The result is sorted by dispatch, stable.
pub fn parse_key_script(script: &str) -> Result<Vec<ScriptedKey>, String> {
    let mut out = Vec::new();
    for entry in script.split(|c: char| c == ',' || c.is_whitespace()) {
        let entry = entry.trim();
        if entry.is_empty() {
            continue;
        }
        let (key, at) = entry
            .rsplit_once('@')
            .ok_or_else(|| format!("key script entry `{entry}` is not KEY@DISPATCH"))?;
        let dispatch: u64 = at
            .replace('_', "")
            .parse()
            .map_err(|_| format!("key script entry `{entry}`: bad dispatch `{at}`"))?;
        if let Some(code) = key_name_make(key) {
            out.push(ScriptedKey {
                dispatch,
                scancode: code,
            });
            out.push(ScriptedKey {
                dispatch: dispatch.saturating_add(KEY_HOLD_DISPATCHES),
                scancode: code | 0x80,
            });
        } else {
            let hex = key
                .strip_prefix("0x")
                .or_else(|| key.strip_prefix("0X"))
                .unwrap_or(key);
            let code = u8::from_str_radix(hex, 16)
                .map_err(|_| format!("key script entry `{entry}`: unknown key `{key}`"))?;
            out.push(ScriptedKey {
                dispatch,
                scancode: code,
            });
        }
    }
    out.sort_by_key(|k| k.dispatch);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_conversions_are_inverse() {
        for k in [0u64, 1, 2, 3, 65536, 1_193_182, 123_456_789] {
            let d = dispatch_of_tick(0, k, PIT_HZ);
            assert!(ticks_since(0, d, PIT_HZ) >= k);
            if d > 0 {
                assert!(ticks_since(0, d - 1, PIT_HZ) < k);
            }
        }
        // One second of PIT ticks lands exactly on one second of dispatches.
        assert_eq!(dispatch_of_tick(0, PIT_HZ, PIT_HZ), DISPATCHES_PER_SECOND);
    }

    #[test]
    fn queue_is_stable() {
        let mut q = EventQueue::new();
        q.push(10, 'b');
        q.push(5, 'a');
        q.push(10, 'c');
        assert_eq!(q.next_due(), 5);
        assert_eq!(q.pop_due(9), Some((5, 'a')));
        assert_eq!(q.pop_due(9), None);
        assert_eq!(q.pop_due(10), Some((10, 'b')));
        assert_eq!(q.pop_due(10), Some((10, 'c')));
    }

    #[test]
    fn key_script() {
        let k = parse_key_script("enter@1000, 0x2c@5").unwrap();
        assert_eq!(
            k,
            vec![
                ScriptedKey {
                    dispatch: 5,
                    scancode: 0x2C
                },
                ScriptedKey {
                    dispatch: 1000,
                    scancode: 0x1C
                },
                ScriptedKey {
                    dispatch: 1000 + KEY_HOLD_DISPATCHES,
                    scancode: 0x9C
                },
            ]
        );
        assert!(parse_key_script("nope@1").is_err());
        assert!(parse_key_script("a").is_err());
    }
}
