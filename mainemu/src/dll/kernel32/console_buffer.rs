//! The console's screen buffers and input buffer as Win32 describes them:
//! cells of (character, attribute), the cursor (position, size,
//! visibility), the window rectangle, per-buffer output mode, colour table
//! and popup attributes; several buffers (CreateConsoleScreenBuffer) with
//! one active; an input queue of INPUT_RECORDs (WriteConsoleInput,
//! Read/PeekConsoleInput, GetNumberOfConsoleInputEvents,
//! FlushConsoleInputBuffer); the Read/Write/FillConsoleOutput* calls and
//! ScrollConsoleScreenBuffer.
//!
//! Owns this state, deterministically, in Rust. It must not write to the
//! host: WriteConsole/WriteFile still stream the program's text to host
//! stdout through `io` as it writes it, and [`on_write`] only replays that
//! text into the buffer the handle names (processed output: CR, LF, BS,
//! TAB, BEL, wrapping at the edge, scrolling at the bottom).

use crate::dll::Env;
use crate::files::err;
use crate::handles::{ConsoleKind, Object};
use std::collections::{BTreeMap, VecDeque};

/// Buffer 0 is the console's own (standard output and error name it);
/// CreateConsoleScreenBuffer numbers the others from 1.
pub const MAIN: u32 = 0;
const WIDTH: u16 = 80;
const HEIGHT: u16 = 25;
/// ERROR_INVALID_ACCESS, what the console calls give for a missing buffer
/// or count pointer.
const ERROR_INVALID_ACCESS: u32 = 12;
/// ENABLE_PROCESSED_OUTPUT | ENABLE_WRAP_AT_EOL_OUTPUT.
const OUT_PROCESSED: u32 = 1;
const OUT_WRAP: u32 = 2;

/// Windows' default console colour table.
const COLORS: [u32; 16] = [
    0x000000, 0x800000, 0x008000, 0x808000, 0x000080, 0x800080, 0x008080, 0xC0C0C0, 0x808080,
    0xFF0000, 0x00FF00, 0xFFFF00, 0x0000FF, 0xFF00FF, 0x00FFFF, 0xFFFFFF,
];

#[derive(Clone, Debug)]
pub struct ScreenBuffer {
    pub width: u16,
    pub height: u16,
    pub cursor: (u16, u16),
    pub cursor_size: u32,
    pub cursor_visible: bool,
    pub attr: u16,
    pub popup_attr: u16,
    /// Left, top, right, bottom (inclusive).
    pub window: (u16, u16, u16, u16),
    pub mode: u32,
    pub colors: [u32; 16],
    /// Row-major (character, attribute).
    pub cells: Vec<(u16, u16)>,
}

impl ScreenBuffer {
    pub fn new(width: u16, height: u16, attr: u16) -> ScreenBuffer {
        ScreenBuffer {
            width,
            height,
            cursor: (0, 0),
            cursor_size: 25,
            cursor_visible: true,
            attr,
            popup_attr: 0xF5,
            window: (0, 0, width.min(WIDTH) - 1, height.min(HEIGHT) - 1),
            mode: OUT_PROCESSED | OUT_WRAP,
            colors: COLORS,
            cells: vec![(b' ' as u16, attr); width as usize * height as usize],
        }
    }

    fn index(&self, x: u16, y: u16) -> usize {
        y as usize * self.width as usize + x as usize
    }

    /// Changes the buffer's size keeping what fits; the window and cursor
    /// move inside it.
    fn resize(&mut self, w: u16, h: u16) {
        let mut cells = vec![(b' ' as u16, self.attr); w as usize * h as usize];
        for y in 0..h.min(self.height) {
            for x in 0..w.min(self.width) {
                cells[y as usize * w as usize + x as usize] = self.cells[self.index(x, y)];
            }
        }
        self.cells = cells;
        self.width = w;
        self.height = h;
        self.cursor = (self.cursor.0.min(w - 1), self.cursor.1.min(h - 1));
        let (l, t, r, b) = self.window;
        let ww = (r - l + 1).min(w);
        let wh = (b - t + 1).min(h);
        let l = l.min(w - ww);
        let t = t.min(h - wh);
        self.window = (l, t, l + ww - 1, t + wh - 1);
    }

    /// Scrolls the whole buffer up one line (the cursor reached the bottom).
    fn scroll_up(&mut self) {
        let w = self.width as usize;
        self.cells.drain(..w);
        self.cells
            .extend(std::iter::repeat_n((b' ' as u16, self.attr), w));
    }

    fn newline(&mut self) {
        self.cursor.0 = 0;
        if self.cursor.1 + 1 >= self.height {
            self.scroll_up();
        } else {
            self.cursor.1 += 1;
        }
    }

    /// Keeps the cursor inside the window, moving the window as little as
    /// possible.
    fn follow_cursor(&mut self) {
        let (l, t, r, b) = self.window;
        let (x, y) = self.cursor;
        let (ww, wh) = (r - l, b - t);
        let nl = if x < l {
            x
        } else if x > r {
            x - ww
        } else {
            l
        };
        let nt = if y < t {
            y
        } else if y > b {
            y - wh
        } else {
            t
        };
        self.window = (nl, nt, nl + ww, nt + wh);
    }

    /// WriteConsole's effect on the cells: characters at the cursor with
    /// the current attribute; control characters act when the buffer's
    /// mode has ENABLE_PROCESSED_OUTPUT.
    pub fn put_text(&mut self, text: &[u16]) {
        // Without wrapping, a line that fills up goes on from the column
        // this write started at (as conhost does), overwriting itself.
        let mut start = self.cursor.0;
        for &c in text {
            if self.mode & OUT_PROCESSED != 0 {
                match c {
                    0x0D => {
                        self.cursor.0 = 0;
                        continue;
                    }
                    0x0A => {
                        self.newline();
                        start = 0;
                        continue;
                    }
                    0x08 => {
                        self.cursor.0 = self.cursor.0.saturating_sub(1);
                        continue;
                    }
                    0x07 => continue,
                    0x09 => {
                        // Spaces to the next multiple of 8, not past the edge.
                        let x = self.cursor.0;
                        let n = ((x / 8 + 1) * 8).min(self.width) - x;
                        for _ in 0..n {
                            self.put_char(b' ' as u16, start);
                        }
                        continue;
                    }
                    _ => {}
                }
            }
            self.put_char(c, start);
        }
        self.follow_cursor();
    }

    fn put_char(&mut self, c: u16, start: u16) {
        let i = self.index(self.cursor.0, self.cursor.1);
        self.cells[i] = (c, self.attr);
        if self.cursor.0 + 1 < self.width {
            self.cursor.0 += 1;
        } else if self.mode & OUT_WRAP != 0 {
            self.newline();
        } else {
            self.cursor.0 = start.min(self.width - 1);
        }
    }
}

/// The console's buffers and input queue.
#[derive(Clone, Debug)]
pub struct Buffers {
    pub screens: BTreeMap<u32, ScreenBuffer>,
    pub active: u32,
    next: u32,
    /// INPUT_RECORDs as Windows lays them out (20 bytes), key characters
    /// kept as UTF-16.
    pub input: VecDeque<[u8; 20]>,
    /// The program has written or flushed input records: from then on its
    /// input handle is signaled only when the queue holds records. Before,
    /// input comes from the host's stdin, which a wait takes as ready (as
    /// mainemu always did), so programs that wait before reading still run.
    pub queued: bool,
}

impl Default for Buffers {
    fn default() -> Self {
        let mut screens = BTreeMap::new();
        screens.insert(MAIN, ScreenBuffer::new(WIDTH, HEIGHT, 7));
        Buffers {
            screens,
            active: MAIN,
            next: 1,
            input: VecDeque::new(),
            queued: false,
        }
    }
}

/// The screen buffer a handle names, or None for any other handle.
pub fn buffer_of(env: &Env, h: u32) -> Option<u32> {
    match env.handles.get(h) {
        Some(Object::Console(ConsoleKind::Output | ConsoleKind::Error)) => Some(MAIN),
        Some(Object::Console(ConsoleKind::Buffer(id))) => Some(*id),
        _ => None,
    }
}

/// Whether a wait on the console input handle is satisfied.
pub fn input_signaled(env: &Env) -> bool {
    let b = &env.con.buffers;
    !b.queued || !b.input.is_empty()
}

fn is_input(env: &Env, h: u32) -> bool {
    matches!(
        env.handles.get(h),
        Some(Object::Console(ConsoleKind::Input))
    )
}

fn screen(env: &mut Env, h: u32) -> Option<&mut ScreenBuffer> {
    let id = buffer_of(env, h)?;
    env.con.buffers.screens.get_mut(&id)
}

/// Text a program wrote to a console output handle, replayed into its
/// buffer (the host has already received it).
pub fn on_write(env: &mut Env, h: u32, bytes: &[u8]) {
    let text: Vec<u16> = match std::str::from_utf8(bytes) {
        Ok(s) => s.encode_utf16().collect(),
        Err(_) => bytes
            .iter()
            .map(|&b| super::codepage::ansi_to_wide(b))
            .collect(),
    };
    if let Some(s) = screen(env, h) {
        s.put_text(&text);
    }
}

fn coord(c: u32) -> (i16, i16) {
    (c as u16 as i16, (c >> 16) as u16 as i16)
}

/// CONSOLE_SCREEN_BUFFER_INFO.
fn screen_info(env: &mut Env, h: u32, out: u32) -> bool {
    let Some(s) = screen(env, h).cloned() else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let (l, t, r, b) = s.window;
    let w = [
        s.width,
        s.height,
        s.cursor.0,
        s.cursor.1,
        s.attr,
        l,
        t,
        r,
        b,
        s.width.min(WIDTH),
        s.height.min(HEIGHT),
    ];
    let bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    env.mem.poke(out, &bytes).is_some() || env.fail(ERROR_INVALID_ACCESS, false)
}

/// CONSOLE_SCREEN_BUFFER_INFOEX (cbSize 96).
fn screen_info_ex(env: &mut Env, h: u32, out: u32) -> bool {
    if out == 0 || env.mem.peek_u32(out) != Some(96) {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let Some(s) = screen(env, h).cloned() else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let (l, t, r, b) = s.window;
    let mut bytes = 96u32.to_le_bytes().to_vec();
    // Windows reports the window's right and bottom one past the last cell here.
    for v in [
        s.width,
        s.height,
        s.cursor.0,
        s.cursor.1,
        s.attr,
        l,
        t,
        r + 1,
        b + 1,
    ] {
        bytes.extend(v.to_le_bytes());
    }
    for v in [s.width.min(WIDTH), s.height.min(HEIGHT), s.popup_attr] {
        bytes.extend(v.to_le_bytes());
    }
    bytes.extend(0u32.to_le_bytes());
    for c in s.colors {
        bytes.extend(c.to_le_bytes());
    }
    env.mem.poke(out, &bytes).is_some()
}

fn set_screen_info_ex(env: &mut Env, h: u32, p: u32) -> bool {
    if p == 0 || env.mem.peek_u32(p) != Some(96) {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let b = env.read_bytes(p, 96).unwrap_or_default();
    let w = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let Some(s) = screen(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let (bw, bh) = (w(4), w(6));
    if bw == 0 || bh == 0 || bw > 0x7FFF || bh > 0x7FFF {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    s.resize(bw, bh);
    s.cursor = (w(8).min(bw - 1), w(10).min(bh - 1));
    s.attr = w(12);
    let (l, t) = (w(14), w(16));
    let (r, bo) = (
        w(18).saturating_sub(1).max(l),
        w(20).saturating_sub(1).max(t),
    );
    s.window = (l.min(bw - 1), t.min(bh - 1), r.min(bw - 1), bo.min(bh - 1));
    s.popup_attr = w(26);
    for i in 0..16 {
        s.colors[i] =
            u32::from_le_bytes([b[32 + 4 * i], b[33 + 4 * i], b[34 + 4 * i], b[35 + 4 * i]]);
    }
    true
}

fn set_size(env: &mut Env, h: u32, size: u32) -> bool {
    let (w, ht) = coord(size);
    let Some(s) = screen(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let (l, t, r, b) = s.window;
    // The buffer may not be smaller than its window.
    if w < (r - l + 1) as i16 || ht < (b - t + 1) as i16 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    s.resize(w as u16, ht as u16);
    true
}

fn set_cursor(env: &mut Env, h: u32, pos: u32) -> bool {
    let (x, y) = coord(pos);
    let Some(s) = screen(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    if x < 0 || y < 0 || x as u16 >= s.width || y as u16 >= s.height {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    s.cursor = (x as u16, y as u16);
    s.follow_cursor();
    true
}

fn set_window(env: &mut Env, h: u32, absolute: bool, rect: u32) -> bool {
    let b = env.read_bytes(rect, 8).unwrap_or_default();
    if b.len() < 8 {
        return env.fail(ERROR_INVALID_ACCESS, false);
    }
    let g = |o: usize| i16::from_le_bytes([b[o], b[o + 1]]) as i32;
    let Some(s) = screen(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let (ol, ot, or, ob) = s.window;
    let (mut l, mut t, mut r, mut bo) = (g(0), g(2), g(4), g(6));
    if !absolute {
        l += ol as i32;
        t += ot as i32;
        r += or as i32;
        bo += ob as i32;
    }
    if l < 0 || t < 0 || r < l || bo < t || r >= s.width as i32 || bo >= s.height as i32 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    s.window = (l as u16, t as u16, r as u16, bo as u16);
    true
}

/// Which cell run a Read/Write/Fill call covers: `n` cells from (x, y),
/// wrapping at the right edge and stopping at the end of the buffer.
fn run(s: &ScreenBuffer, x: i16, y: i16, n: u32) -> std::ops::Range<usize> {
    if x < 0 || y < 0 || x as u16 >= s.width || y as u16 >= s.height {
        return 0..0;
    }
    let start = s.index(x as u16, y as u16);
    start..(start + n as usize).min(s.cells.len())
}

/// The shared checks of the cell calls: a NULL count pointer or (for a
/// non-empty request) a NULL buffer is ERROR_INVALID_ACCESS, then the
/// handle must be a screen buffer.
fn checked(env: &mut Env, h: u32, buf: u32, n: u32, count: u32) -> Option<u32> {
    if count == 0 || (buf == 0 && n > 0) {
        return env.fail(ERROR_INVALID_ACCESS, None);
    }
    match buffer_of(env, h) {
        Some(id) => Some(id),
        None => {
            env.mem.poke_u32(count, 0);
            env.fail(err::INVALID_HANDLE, None)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    CharA,
    CharW,
    Attr,
}

/// Sets the characters or attributes of the run of `n` cells from `at`
/// to `value(j)` for the j-th; returns how many cells the run has.
fn store_run(
    env: &mut Env,
    id: u32,
    at: u32,
    n: u32,
    part: Part,
    value: impl Fn(usize) -> u16,
) -> u32 {
    let (x, y) = coord(at);
    let s = env
        .con
        .buffers
        .screens
        .get_mut(&id)
        .expect("buffer of a handle");
    let r = run(s, x, y, n);
    let k = r.len() as u32;
    for (j, i) in r.enumerate() {
        match part {
            Part::Attr => s.cells[i].1 = value(j),
            _ => s.cells[i].0 = value(j),
        }
    }
    k
}

fn write_cells(env: &mut Env, h: u32, buf: u32, n: u32, at: u32, count: u32, part: Part) -> bool {
    let Some(id) = checked(env, h, buf, n, count) else {
        return false;
    };
    let unit = if part == Part::CharA { 1 } else { 2 };
    let data = env.read_bytes(buf, n * unit).unwrap_or_default();
    let k = store_run(env, id, at, n, part, |j| match part {
        Part::CharA => super::codepage::ansi_to_wide(data[j]),
        _ => u16::from_le_bytes([data[2 * j], data[2 * j + 1]]),
    });
    env.mem.poke_u32(count, k);
    true
}

fn fill_cells(env: &mut Env, h: u32, v: u32, n: u32, at: u32, count: u32, part: Part) -> bool {
    if count == 0 {
        return env.fail(ERROR_INVALID_ACCESS, false);
    }
    let Some(id) = buffer_of(env, h) else {
        env.mem.poke_u32(count, 0);
        return env.fail(err::INVALID_HANDLE, false);
    };
    let v = match part {
        Part::CharA => super::codepage::ansi_to_wide(v as u8),
        _ => v as u16,
    };
    let k = store_run(env, id, at, n, part, |_| v);
    env.mem.poke_u32(count, k);
    true
}

fn read_cells(env: &mut Env, h: u32, buf: u32, n: u32, at: u32, count: u32, part: Part) -> bool {
    let Some(id) = checked(env, h, buf, n, count) else {
        return false;
    };
    let (x, y) = coord(at);
    let s = &env.con.buffers.screens[&id];
    let r = run(s, x, y, n);
    let cells: Vec<(u16, u16)> = s.cells[r].to_vec();
    let mut out = Vec::new();
    for (c, a) in &cells {
        match part {
            Part::CharA => out.push(super::codepage::wide_to_ansi(*c)),
            Part::CharW => out.extend(c.to_le_bytes()),
            Part::Attr => out.extend(a.to_le_bytes()),
        }
    }
    env.mem.poke(buf, &out);
    env.mem.poke_u32(count, cells.len() as u32);
    true
}

/// Read/WriteConsoleOutput: a rectangle of CHAR_INFO between the buffer
/// and a `size` array at `at`; `region` (in/out) is clipped to both and
/// reports what was copied.
#[allow(clippy::too_many_arguments)]
fn output_rect(
    env: &mut Env,
    h: u32,
    buf: u32,
    size: u32,
    at: u32,
    region: u32,
    wide: bool,
    write: bool,
) -> bool {
    let Some(id) = buffer_of(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let rb = env.read_bytes(region, 8).unwrap_or_default();
    if rb.len() < 8 {
        return env.fail(ERROR_INVALID_ACCESS, false);
    }
    let g = |o: usize| i16::from_le_bytes([rb[o], rb[o + 1]]) as i32;
    let (l, t, r, b) = (g(0), g(2), g(4), g(6));
    let (sw, sh) = coord(size);
    let (ax, ay) = coord(at);
    let (sw, sh, ax, ay) = (sw as i32, sh as i32, ax as i32, ay as i32);
    if l > r || t > b || ax >= sw || ay >= sh || ax < 0 || ay < 0 || l < 0 || t < 0 {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let s = env.con.buffers.screens[&id].clone();
    if l >= s.width as i32 || t >= s.height as i32 {
        // Nothing of the buffer is inside: success, the region as it was.
        return true;
    }
    let r = r.min(l + sw - ax - 1).min(s.width as i32 - 1);
    let b = b.min(t + sh - ay - 1).min(s.height as i32 - 1);
    let mut s = s;
    for y in t..=b {
        for x in l..=r {
            let k = ((ay + y - t) * sw + (ax + x - l)) as u32 * 4;
            let i = s.index(x as u16, y as u16);
            if write {
                let c = env.read_bytes(buf + k, 4).unwrap_or(vec![0; 4]);
                let ch = u16::from_le_bytes([c[0], c[1]]);
                let ch = if wide {
                    ch
                } else {
                    super::codepage::ansi_to_wide(c[0])
                };
                s.cells[i] = (ch, u16::from_le_bytes([c[2], c[3]]));
            } else {
                let (ch, a) = s.cells[i];
                let ch = if wide {
                    ch
                } else {
                    super::codepage::wide_to_ansi(ch) as u16
                };
                let mut v = ch.to_le_bytes().to_vec();
                v.extend(a.to_le_bytes());
                env.mem.poke(buf + k, &v);
            }
        }
    }
    if write {
        env.con.buffers.screens.insert(id, s);
    }
    let out: Vec<u8> = [l, t, r, b]
        .iter()
        .flat_map(|v| (*v as i16).to_le_bytes())
        .collect();
    env.mem.poke(region, &out);
    true
}

/// ScrollConsoleScreenBuffer: moves the `scroll` rectangle to `dest`,
/// fills what it leaves with `fill`; only cells inside `clip` (default:
/// the buffer) change.
fn scroll(env: &mut Env, h: u32, rect: u32, clip: u32, dest: u32, fill: u32, wide: bool) -> bool {
    let Some(id) = buffer_of(env, h) else {
        return env.fail(err::INVALID_HANDLE, false);
    };
    let read_rect = |env: &Env, p: u32| -> Option<(i32, i32, i32, i32)> {
        let b = env.read_bytes(p, 8)?;
        let g = |o: usize| i16::from_le_bytes([b[o], b[o + 1]]) as i32;
        Some((g(0), g(2), g(4), g(6)))
    };
    let Some((l, t, r, b)) = read_rect(env, rect) else {
        return env.fail(ERROR_INVALID_ACCESS, false);
    };
    let f = env.read_bytes(fill, 4).unwrap_or(vec![b' ', 0, 7, 0]);
    let fch = if wide {
        u16::from_le_bytes([f[0], f[1]])
    } else {
        super::codepage::ansi_to_wide(f[0])
    };
    let fattr = u16::from_le_bytes([f[2], f[3]]);
    let s = env.con.buffers.screens[&id].clone();
    let (bw, bh) = (s.width as i32, s.height as i32);
    let (l, t, r, b) = (l.max(0), t.max(0), r.min(bw - 1), b.min(bh - 1));
    if l > r || t > b {
        return env.fail(err::INVALID_PARAMETER, false);
    }
    let (cl, ct, cr, cb) = if clip == 0 {
        (0, 0, bw - 1, bh - 1)
    } else {
        match read_rect(env, clip) {
            Some((a, b2, c, d)) => (a.max(0), b2.max(0), c.min(bw - 1), d.min(bh - 1)),
            None => return env.fail(ERROR_INVALID_ACCESS, false),
        }
    };
    let inside = |x: i32, y: i32| x >= cl && x <= cr && y >= ct && y <= cb;
    let (dx, dy) = coord(dest);
    let (dx, dy) = (dx as i32, dy as i32);
    let mut n = s.clone();
    for y in t..=b {
        for x in l..=r {
            if inside(x, y) {
                let i = n.index(x as u16, y as u16);
                n.cells[i] = (fch, fattr);
            }
        }
    }
    for y in t..=b {
        for x in l..=r {
            let (tx, ty) = (dx + x - l, dy + y - t);
            if tx >= 0 && ty >= 0 && tx < bw && ty < bh && inside(tx, ty) {
                let i = n.index(tx as u16, ty as u16);
                n.cells[i] = s.cells[s.index(x as u16, y as u16)];
            }
        }
    }
    env.con.buffers.screens.insert(id, n);
    true
}

fn create_buffer(env: &mut Env, flags: u32, data: u32) -> u32 {
    if env.con.detached {
        return env.fail(err::INVALID_HANDLE, u32::MAX);
    }
    // CONSOLE_TEXTMODE_BUFFER is the only kind.
    if flags != 1 || data != 0 {
        return env.fail(err::INVALID_PARAMETER, u32::MAX);
    }
    let bufs = &mut env.con.buffers;
    let base = bufs.screens[&bufs.active].clone();
    let mut s = ScreenBuffer::new(base.width, base.height, base.attr);
    s.window = base.window;
    s.cursor_size = base.cursor_size;
    s.colors = base.colors;
    // A new buffer's popups take the character attributes it was given.
    s.popup_attr = base.attr;
    let id = bufs.next;
    bufs.next += 1;
    bufs.screens.insert(id, s);
    env.handles.add(Object::Console(ConsoleKind::Buffer(id)))
}

/// The INPUT_RECORD of a key event has its character at offset 14; the A
/// calls hand it over in the ANSI code page.
fn record_char(rec: &mut [u8; 20], to_wide: bool) {
    if u16::from_le_bytes([rec[0], rec[1]]) != 1 {
        return;
    }
    let c = u16::from_le_bytes([rec[14], rec[15]]);
    let v = if to_wide {
        super::codepage::ansi_to_wide(c as u8)
    } else {
        super::codepage::wide_to_ansi(c) as u16
    };
    rec[14..16].copy_from_slice(&v.to_le_bytes());
}

fn write_input(env: &mut Env, h: u32, recs: u32, n: u32, written: u32, wide: bool) -> bool {
    if written == 0 || (recs == 0 && n > 0) {
        return env.fail(ERROR_INVALID_ACCESS, false);
    }
    if !is_input(env, h) {
        env.mem.poke_u32(written, 0);
        return env.fail(err::INVALID_HANDLE, false);
    }
    let mut k = 0;
    for i in 0..n {
        let Some(b) = env.read_bytes(recs + 20 * i, 20) else {
            break;
        };
        let mut rec = [0u8; 20];
        rec.copy_from_slice(&b);
        if !wide {
            record_char(&mut rec, true);
        }
        // A mouse move written alone after a queued mouse move replaces it,
        // as conhost does (the count still says it was written); a list
        // written in one call is queued whole.
        let moved = |r: &[u8; 20]| {
            r[0] == 2 && r[1] == 0 && u32::from_le_bytes([r[16], r[17], r[18], r[19]]) == 1
        };
        let q = &mut env.con.buffers.input;
        match q.back_mut() {
            Some(last) if n == 1 && moved(&rec) && moved(last) => *last = rec,
            _ => q.push_back(rec),
        }
        k += 1;
    }
    env.con.buffers.queued = true;
    env.threads.epoch += 1;
    env.mem.poke_u32(written, k);
    true
}

fn read_input(env: &mut Env, h: u32, buf: u32, n: u32, got: u32, wide: bool, remove: bool) -> bool {
    if got == 0 || (buf == 0 && n > 0) {
        return env.fail(ERROR_INVALID_ACCESS, false);
    }
    if !is_input(env, h) {
        return env.fail(err::INVALID_HANDLE, false);
    }
    let k = (n as usize).min(env.con.buffers.input.len());
    let mut out = Vec::with_capacity(20 * k);
    for i in 0..k {
        let mut rec = env.con.buffers.input[i];
        if !wide {
            record_char(&mut rec, false);
        }
        out.extend(rec);
    }
    if remove {
        env.con.buffers.input.drain(..k);
    }
    env.mem.poke(buf, &out);
    env.mem.poke_u32(got, k as u32);
    true
}

crate::dll! { "(kernel32 console buffers)";
    stdcall fn GetConsoleScreenBufferInfo(env, h: u32, out: u32) -> bool { screen_info(env, h, out) }
    stdcall fn GetConsoleScreenBufferInfoEx(env, h: u32, out: u32) -> bool { screen_info_ex(env, h, out) }
    stdcall fn SetConsoleScreenBufferInfoEx(env, h: u32, p: u32) -> bool { set_screen_info_ex(env, h, p) }
    stdcall fn SetConsoleScreenBufferSize(env, h: u32, size: u32) -> bool { set_size(env, h, size) }
    stdcall fn SetConsoleCursorPosition(env, h: u32, pos: u32) -> bool { set_cursor(env, h, pos) }
    stdcall fn SetConsoleWindowInfo(env, h: u32, absolute: bool, rect: u32) -> bool { set_window(env, h, absolute, rect) }
    stdcall fn SetConsoleTextAttribute(env, h: u32, a: u32) -> bool {
        match screen(env, h) { Some(s) => { s.attr = a as u16; true } None => env.fail(err::INVALID_HANDLE, false) }
    }
    stdcall fn GetConsoleCursorInfo(env, h: u32, out: u32) -> bool {
        let Some(s) = screen(env, h).cloned() else { return env.fail(err::INVALID_HANDLE, false) };
        if out == 0 { return env.fail(ERROR_INVALID_ACCESS, false); }
        let mut b = s.cursor_size.to_le_bytes().to_vec();
        b.extend((s.cursor_visible as u32).to_le_bytes());
        env.mem.poke(out, &b).is_some()
    }
    stdcall fn SetConsoleCursorInfo(env, h: u32, info: u32) -> bool {
        let size = env.mem.peek_u32(info);
        let vis = env.mem.peek_u32(info + 4).unwrap_or(0);
        let Some(s) = screen(env, h) else { return env.fail(err::INVALID_HANDLE, false) };
        let Some(size) = size else { return env.fail(ERROR_INVALID_ACCESS, false) };
        // The cursor's size is a percentage of the cell, 1 to 100.
        if !(1..=100).contains(&size) { return env.fail(err::INVALID_PARAMETER, false); }
        s.cursor_size = size;
        s.cursor_visible = vis != 0;
        true
    }
    stdcall fn GetLargestConsoleWindowSize(env, h: u32) -> u32 {
        if buffer_of(env, h).is_none() { return env.fail(err::INVALID_HANDLE, 0); }
        WIDTH as u32 | (HEIGHT as u32) << 16
    }
    stdcall fn CreateConsoleScreenBuffer(env, access: u32, share: u32, sa: u32, flags: u32, data: u32) -> u32 { create_buffer(env, flags, data) }
    stdcall fn SetConsoleActiveScreenBuffer(env, h: u32) -> bool {
        match buffer_of(env, h) { Some(id) => { env.con.buffers.active = id; true } None => env.fail(err::INVALID_HANDLE, false) }
    }
    stdcall fn WriteConsoleOutputCharacterA(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { write_cells(env, h, s, n, at, count, Part::CharA) }
    stdcall fn WriteConsoleOutputCharacterW(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { write_cells(env, h, s, n, at, count, Part::CharW) }
    stdcall fn WriteConsoleOutputAttribute(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { write_cells(env, h, s, n, at, count, Part::Attr) }
    stdcall fn ReadConsoleOutputCharacterA(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { read_cells(env, h, s, n, at, count, Part::CharA) }
    stdcall fn ReadConsoleOutputCharacterW(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { read_cells(env, h, s, n, at, count, Part::CharW) }
    stdcall fn ReadConsoleOutputAttribute(env, h: u32, s: u32, n: u32, at: u32, count: u32) -> bool { read_cells(env, h, s, n, at, count, Part::Attr) }
    stdcall fn FillConsoleOutputCharacterA(env, h: u32, c: u32, n: u32, at: u32, count: u32) -> bool { fill_cells(env, h, c, n, at, count, Part::CharA) }
    stdcall fn FillConsoleOutputCharacterW(env, h: u32, c: u32, n: u32, at: u32, count: u32) -> bool { fill_cells(env, h, c, n, at, count, Part::CharW) }
    stdcall fn FillConsoleOutputAttribute(env, h: u32, a: u32, n: u32, at: u32, count: u32) -> bool { fill_cells(env, h, a, n, at, count, Part::Attr) }
    stdcall fn WriteConsoleOutputA(env, h: u32, buf: u32, size: u32, at: u32, region: u32) -> bool { output_rect(env, h, buf, size, at, region, false, true) }
    stdcall fn WriteConsoleOutputW(env, h: u32, buf: u32, size: u32, at: u32, region: u32) -> bool { output_rect(env, h, buf, size, at, region, true, true) }
    stdcall fn ReadConsoleOutputA(env, h: u32, buf: u32, size: u32, at: u32, region: u32) -> bool { output_rect(env, h, buf, size, at, region, false, false) }
    stdcall fn ReadConsoleOutputW(env, h: u32, buf: u32, size: u32, at: u32, region: u32) -> bool { output_rect(env, h, buf, size, at, region, true, false) }
    stdcall fn ScrollConsoleScreenBufferA(env, h: u32, rect: u32, clip: u32, dest: u32, fill: u32) -> bool { scroll(env, h, rect, clip, dest, fill, false) }
    stdcall fn ScrollConsoleScreenBufferW(env, h: u32, rect: u32, clip: u32, dest: u32, fill: u32) -> bool { scroll(env, h, rect, clip, dest, fill, true) }
    stdcall fn WriteConsoleInputA(env, h: u32, recs: u32, n: u32, written: u32) -> bool { write_input(env, h, recs, n, written, false) }
    stdcall fn WriteConsoleInputW(env, h: u32, recs: u32, n: u32, written: u32) -> bool { write_input(env, h, recs, n, written, true) }
    stdcall fn ReadConsoleInputA(env, h: u32, buf: u32, n: u32, got: u32) -> bool { read_input(env, h, buf, n, got, false, true) }
    stdcall fn ReadConsoleInputW(env, h: u32, buf: u32, n: u32, got: u32) -> bool { read_input(env, h, buf, n, got, true, true) }
    stdcall fn PeekConsoleInputA(env, h: u32, buf: u32, n: u32, got: u32) -> bool { read_input(env, h, buf, n, got, false, false) }
    stdcall fn PeekConsoleInputW(env, h: u32, buf: u32, n: u32, got: u32) -> bool { read_input(env, h, buf, n, got, true, false) }
    stdcall fn GetNumberOfConsoleInputEvents(env, h: u32, out: u32) -> bool {
        if !is_input(env, h) { return env.fail(err::INVALID_HANDLE, false); }
        if out == 0 { return env.fail(ERROR_INVALID_ACCESS, false); }
        let n = env.con.buffers.input.len() as u32;
        env.mem.poke_u32(out, n).is_some()
    }
    stdcall fn FlushConsoleInputBuffer(env, h: u32) -> bool {
        if !is_input(env, h) { return env.fail(err::INVALID_HANDLE, false); }
        env.con.buffers.input.clear();
        env.con.buffers.queued = true;
        true
    }
    // One raster font, 8x16 pixels, index 0.
    stdcall fn GetConsoleFontSize(env, h: u32, index: u32) -> u32 {
        if buffer_of(env, h).is_none() { return env.fail(err::INVALID_HANDLE, 0); }
        if index != 0 { return env.fail(err::INVALID_PARAMETER, 0); }
        8 | 16 << 16
    }
    stdcall fn GetCurrentConsoleFont(env, h: u32, max: bool, out: u32) -> bool {
        if buffer_of(env, h).is_none() { return env.fail(err::INVALID_HANDLE, false); }
        let b = [0u8, 0, 0, 0, 8, 0, 16, 0];
        env.mem.poke(out, &b).is_some() || env.fail(ERROR_INVALID_ACCESS, false)
    }
    stdcall fn GetCurrentConsoleFontEx(env, h: u32, max: bool, out: u32) -> bool {
        // CONSOLE_FONT_INFOEX: cbSize 84, nFont, size, family, weight, face.
        if env.mem.peek_u32(out) != Some(84) { return env.fail(err::INVALID_PARAMETER, false); }
        if buffer_of(env, h).is_none() { return env.fail(err::INVALID_HANDLE, false); }
        let mut b = 84u32.to_le_bytes().to_vec();
        b.extend(0u32.to_le_bytes());
        b.extend([8, 0, 16, 0]);
        b.extend(0x30u32.to_le_bytes());
        b.extend(400u32.to_le_bytes());
        let face: Vec<u8> = "Terminal".encode_utf16().chain(std::iter::repeat(0)).take(32).flat_map(u16::to_le_bytes).collect();
        b.extend(face);
        env.mem.poke(out, &b).is_some()
    }
    stdcall fn SetCurrentConsoleFontEx(env, h: u32, max: bool, p: u32) -> bool {
        if env.mem.peek_u32(p) != Some(84) { return env.fail(err::INVALID_PARAMETER, false); }
        buffer_of(env, h).is_some() || env.fail(err::INVALID_HANDLE, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processed_output_wraps_and_scrolls() {
        let mut s = ScreenBuffer::new(4, 2, 7);
        let t: Vec<u16> = "ab\tc\r\nxyzw!".encode_utf16().collect();
        s.put_text(&t);
        let row = |s: &ScreenBuffer, y: usize| -> String {
            s.cells[y * 4..y * 4 + 4]
                .iter()
                .map(|c| c.0 as u8 as char)
                .collect()
        };
        // "ab" then a tab to column 4 wraps, "c" on row 1, CR LF scrolls,
        // "xyzw" fills the last row and wraps into a scroll, "!" follows.
        assert_eq!(row(&s, 0), "xyzw");
        assert_eq!(row(&s, 1), "!   ");
        assert_eq!(s.cursor, (1, 1));
        s.resize(6, 3);
        assert_eq!(row(&s, 0), "xyzw");
        assert_eq!((s.width, s.height, s.cells.len()), (6, 3, 18));
    }
}
