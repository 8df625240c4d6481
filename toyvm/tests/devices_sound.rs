//! Sound Blaster DSP and 8237 DMA through ports at exact dispatches.
//! Time constant A6h = 90 µs per byte = 360 dispatches; D3h = 45 µs = 180.

use shared_ir::flags::Width;
use toyvm::machine::devices::Devices;

struct Rig {
    d: Devices,
    ram: Vec<u8>,
}

impl Rig {
    fn new() -> Rig {
        // PIC as the BIOS leaves it; the PIT is left unprogrammed so the
        // only events are the Sound Blaster's.
        let mut d = Devices::new();
        d.pic.init_bios_defaults();
        let mut ram = vec![0u8; 0x40000];
        // The buffer at 2:1000h holds (i * 7) & 0xFF at byte i.
        for i in 0..0x10000usize {
            ram[0x21000 + i] = (i * 7) as u8;
        }
        Rig { d, ram }
    }
    fn out(&mut self, port: u16, v: u8, now: u64) {
        self.d
            .io_write(port, Width::W8, v as u32, now, &mut self.ram);
    }
    fn inb(&mut self, port: u16, now: u64) -> u8 {
        self.d.io_read(port, Width::W8, now, &mut self.ram) as u8
    }
    fn dsp(&mut self, v: u8, now: u64) {
        self.out(0x22C, v, now);
    }
    /// DMA channel 1: page 2, address 1000h, `count` = bytes - 1.
    fn dma1(&mut self, mode: u8, count: u16, now: u64) {
        self.out(0x0A, 0x05, now); // mask ch1
        self.out(0x0C, 0x00, now);
        self.out(0x0B, mode, now);
        self.out(0x02, 0x00, now);
        self.out(0x02, 0x10, now);
        self.out(0x83, 0x02, now);
        self.out(0x03, count as u8, now);
        self.out(0x03, (count >> 8) as u8, now);
        self.out(0x0A, 0x01, now); // unmask
    }
    fn dma1_position(&mut self, now: u64) -> (u16, u16) {
        self.out(0x0C, 0, now);
        let a = self.inb(0x02, now) as u16 | (self.inb(0x02, now) as u16) << 8;
        let c = self.inb(0x03, now) as u16 | (self.inb(0x03, now) as u16) << 8;
        (a, c)
    }
}

fn fnv(bytes: impl Iterator<Item = u8>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[test]
fn dsp_reset_version_and_identification() {
    let mut r = Rig::new();
    r.out(0x226, 1, 10);
    r.out(0x226, 0, 20);
    assert_eq!(r.inb(0x22E, 30) & 0x80, 0x80);
    assert_eq!(r.inb(0x22A, 30), 0xAA);
    assert_eq!(r.inb(0x22E, 30) & 0x80, 0x00);
    assert_eq!(r.inb(0x22C, 30) & 0x80, 0x00, "ready for a command");
    r.dsp(0xE1, 40);
    assert_eq!((r.inb(0x22A, 41), r.inb(0x22A, 42)), (3, 2));
    r.dsp(0xE0, 50);
    r.dsp(0x5A, 51);
    assert_eq!(r.inb(0x22A, 52), 0xA5);
    r.dsp(0xD1, 60);
    r.dsp(0xD8, 61);
    assert_eq!(r.inb(0x22A, 62), 0xFF);
    r.dsp(0xD3, 63);
    r.dsp(0xD8, 64);
    assert_eq!(r.inb(0x22A, 65), 0x00);
    // Mixer registers are stored; writing register 0 resets them.
    r.out(0x224, 0x22, 70);
    r.out(0x225, 0x33, 70);
    assert_eq!(r.inb(0x225, 71), 0x33);
    r.out(0x224, 0x00, 72);
    r.out(0x225, 0x00, 72);
    r.out(0x224, 0x22, 73);
    assert_eq!(r.inb(0x225, 73), 0x99);
}

#[test]
fn single_cycle_dma_block_end_and_position_mid_transfer() {
    let mut r = Rig::new();
    r.out(0x21, 0x38, 0); // unmask IRQ 7
    r.dma1(0x49, 999, 0); // single, read (memory → device), ch1
    r.dsp(0x40, 5000);
    r.dsp(0xA6, 5000); // 90 µs per byte
    r.dsp(0x14, 10_000);
    r.dsp(0xE7, 10_000);
    r.dsp(0x03, 10_000); // 1000 bytes, starts at dispatch 10000
    assert_eq!(r.d.next_event(), 10_000 + 1000 * 360);
    // 36005 dispatches in: floor(36005 / 360) = 100 bytes consumed.
    assert_eq!(r.dma1_position(46_005), (0x1064, 999 - 100));
    assert_eq!(r.dma1_position(46_359), (0x1064, 899));
    assert_eq!(r.dma1_position(46_360), (0x1065, 898)); // byte 101 at 10000 + 101 * 360
    r.d.advance(369_999, &mut r.ram);
    assert!(!r.d.irq_pending());
    r.d.advance(370_000, &mut r.ram);
    assert!(r.d.irq_pending());
    assert_eq!(r.d.acknowledge_irq(), 0x0F);
    assert_eq!(r.d.sb.samples, 1000);
    assert_eq!(
        r.d.sb.sample_hash,
        fnv((0..1000usize).map(|i| (i * 7) as u8))
    );
    assert_eq!(r.d.sb.sample_hash, 0xc4c8_06d8_c888_8735);
    // Terminal count: status bit 1 (cleared by the read), channel masked.
    assert_eq!(r.inb(0x08, 370_001) & 0x02, 0x02);
    assert_eq!(r.inb(0x08, 370_001) & 0x02, 0x00);
    assert!(r.d.dma.channel(1).masked);
    assert_eq!(r.dma1_position(370_002), (0x1000 + 1000, 0xFFFF));
    // Acknowledge at the DSP, EOI at the PIC.
    r.inb(0x22E, 370_010);
    assert!(!r.d.sb.irq_pending);
    r.out(0x20, 0x20, 370_011);
    assert_eq!(r.d.next_event(), u64::MAX);
}

#[test]
fn auto_init_block_irqs_on_exact_dispatches() {
    let mut r = Rig::new();
    r.out(0x21, 0x38, 0);
    r.dma1(0x59, 2047, 0); // auto-init, 2048-byte buffer
    r.dsp(0x40, 0);
    r.dsp(0xD3, 0); // 45 µs per byte = 180 dispatches
    r.dsp(0x48, 0);
    r.dsp(0xFF, 0);
    r.dsp(0x03, 0); // block 1024 bytes
    r.dsp(0x1C, 1000);
    let mut ends = Vec::new();
    let mut now = 1000;
    while ends.len() < 4 {
        let e = r.d.next_event();
        now = now.max(e);
        r.d.advance(e, &mut r.ram);
        while r.d.irq_pending() {
            let v = r.d.acknowledge_irq();
            if v == 0x0F {
                ends.push(e);
                r.inb(0x22E, e);
            }
            r.out(0x20, 0x20, e);
        }
    }
    assert_eq!(ends, vec![185_320, 369_640, 553_960, 738_280]);
    // Halfway through the fifth block the DMA buffer wrapped twice.
    let (a, c) = r.dma1_position(738_280 + 512 * 180);
    assert_eq!((a, c), (0x1000 + 512, 2047 - 512));
    // Exit auto-init: the current block still ends, then nothing.
    r.dsp(0xDA, 740_000);
    assert_eq!(r.d.next_event(), 922_600);
    r.d.advance(922_600, &mut r.ram);
    assert!(r.d.sb.irq_pending);
    assert!(!r.d.sb.dma_active());
    assert_eq!(r.d.sb.samples, 5 * 1024);
    let _ = now;
}

#[test]
fn sample_rate_command_and_stall_on_masked_dma() {
    let mut r = Rig::new();
    r.dma1(0x49, 0xFFFF, 0);
    r.dsp(0x41, 0);
    r.dsp(0x56, 0);
    r.dsp(0x22, 0); // 22050 Hz
    r.dsp(0x14, 100);
    r.dsp(0xFF, 100);
    r.dsp(0x03, 100); // 1024 bytes
    assert_eq!(r.d.next_event(), 100 + 185_760); // ceil(1024 * 4e6 / 22050)
                                                 // Mask the channel at 50_000: the DSP stalls until it is unmasked.
    r.out(0x0A, 0x05, 50_000);
    assert!(r.d.next_event() > 10_000_000);
    let (_, c) = r.dma1_position(60_000);
    // floor(49_900 * 22050 / 4e6) = 275 bytes were consumed before.
    assert_eq!(c, 0xFFFF - 275);
    r.out(0x0A, 0x01, 100_000);
    // 749 bytes left from dispatch 100000: ceil(749 * 4e6 / 22050).
    assert_eq!(r.d.next_event(), 100_000 + 135_874);
}

#[test]
fn direct_dac_force_irq_and_pause() {
    let mut r = Rig::new();
    r.dsp(0x10, 0);
    r.dsp(0x80, 0);
    r.dsp(0x10, 1);
    r.dsp(0x7F, 1);
    assert_eq!(r.d.sb.samples, 2);
    assert_eq!(r.d.sb.sample_hash, fnv([0x80u8, 0x7F].into_iter()));
    r.dsp(0xF2, 10);
    assert_eq!(r.d.pic.master.irr & 0x80, 0x80);
    r.inb(0x22E, 11);
    // Pause/continue shifts the block end by the pause length.
    r.dma1(0x49, 0xFFFF, 20);
    r.dsp(0x40, 20);
    r.dsp(0xA6, 20);
    r.dsp(0x14, 100);
    r.dsp(99, 100);
    r.dsp(0, 100); // 100 bytes: ends at 100 + 36000
    r.dsp(0xD0, 1000); // floor(900/360) = 2 bytes in
    assert_eq!(r.d.next_event(), u64::MAX);
    r.dsp(0xD4, 5000); // 98 left
    assert_eq!(r.d.next_event(), 5000 + 98 * 360);
    // Silence (80h): an IRQ after the given number of sample times, no DMA.
    let mut r = Rig::new();
    r.dsp(0x40, 0);
    r.dsp(0xA6, 0);
    r.dsp(0x80, 10);
    r.dsp(9, 10);
    r.dsp(0, 10);
    assert_eq!(r.d.next_event(), 10 + 3600);
}

#[test]
fn dma_registers_flip_flop_and_masks() {
    let mut r = Rig::new();
    r.out(0x0C, 0, 0);
    r.out(0x04, 0x34, 0); // ch2 address
    r.out(0x04, 0x12, 0);
    r.out(0x05, 0xFF, 0);
    r.out(0x05, 0x00, 0);
    r.out(0x0C, 0, 0);
    assert_eq!((r.inb(0x04, 0), r.inb(0x04, 0)), (0x34, 0x12));
    assert_eq!((r.inb(0x05, 0), r.inb(0x05, 0)), (0xFF, 0x00));
    r.out(0x0F, 0x0A, 0); // mask 1 and 3
    assert_eq!(r.inb(0x0F, 0) & 0x0F, 0x0A);
    r.out(0x0E, 0, 0); // clear all masks
    assert_eq!(r.inb(0x0F, 0) & 0x0F, 0x00);
    r.out(0x81, 0x07, 0); // ch2 page
    assert_eq!(r.d.dma.channel(2).page, 0x07);
    // 16-bit controller ports hold their values too.
    r.out(0xD8, 0, 0);
    r.out(0xC4, 0x11, 0);
    r.out(0xC4, 0x22, 0);
    assert_eq!(r.d.dma.channel(5).base_addr, 0x2211);
}

/// Invariant 4: what the guest sees (samples heard, DMA position, RAM) does
/// not depend on how often the machine calls `advance` between events.
#[test]
fn polling_frequency_does_not_change_results() {
    fn run(poll_every: u64) -> (u64, u64, u64, Vec<(u16, u16)>) {
        let mut r = Rig::new();
        r.out(0x21, 0x38, 0);
        r.dma1(0x59, 2047, 0);
        r.dsp(0x40, 0);
        r.dsp(0xD3, 0);
        r.dsp(0x48, 0);
        r.dsp(0xFF, 0);
        r.dsp(0x01, 0); // 512-byte blocks
        r.dsp(0x1C, 10);
        let mut positions = Vec::new();
        for now in 11..1_000_000u64 {
            if now >= r.d.next_event() || (poll_every > 0 && now % poll_every == 0) {
                r.d.advance(now, &mut r.ram);
            }
            while r.d.irq_pending() {
                if r.d.acknowledge_irq() == 0x0F {
                    r.inb(0x22E, now);
                }
                r.out(0x20, 0x20, now);
            }
            // The "program" rewrites its buffer and polls the DMA position.
            if now % 50_000 == 0 {
                r.ram[0x21000 + (now / 50_000 % 2048) as usize * 37 % 2048] = now as u8 ^ 0x5A;
            }
            if now % 100_003 == 0 {
                positions.push(r.dma1_position(now));
            }
        }
        let h = r.d.state_hash(1_000_000, &mut r.ram);
        (r.d.sb.samples, r.d.sb.sample_hash, h, positions)
    }
    let a = run(0);
    // Ten blocks end by 1e6: floor((1e6 - 10) / (512 * 180)) = 10; samples
    // reach the hash at block ends and port accesses only.
    assert_eq!(a.0, 10 * 512);
    assert_eq!(run(1), a);
    assert_eq!(run(97), a);
    assert_eq!(run(4096), a);
}
