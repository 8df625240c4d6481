//! PIC, PIT, keyboard controller, CMOS/RTC, OPL2 timers and the small
//! system ports, driven through `Devices` ports at exact dispatches. Expected
//! dispatches were computed independently (ceil(k * 4e6 / hz) by hand /
//! Python) and are written here as literals.

use shared_ir::flags::Width;
use toyvm::machine::devices::Devices;
use toyvm::machine::scheduler::{DISPATCHES_PER_SECOND, KBD_BYTE_DISPATCHES};

fn out(d: &mut Devices, port: u16, v: u8, now: u64) {
    let mut ram = vec![0u8; 0x1000];
    d.io_write(port, Width::W8, v as u32, now, &mut ram);
}

fn inb(d: &mut Devices, port: u16, now: u64) -> u8 {
    let mut ram = vec![0u8; 0x1000];
    d.io_read(port, Width::W8, now, &mut ram) as u8
}

fn bios() -> Devices {
    let mut d = Devices::new();
    d.init_bios_defaults(0);
    d
}

// ---------------------------------------------------------------- PIC

#[test]
fn pic_priority_and_nonspecific_eoi() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    assert_eq!(inb(&mut d, 0x21, 0), 0xB8);
    assert_eq!(inb(&mut d, 0xA1, 0), 0xFF);
    d.pic.raise(1);
    d.pic.raise(0);
    assert!(d.irq_pending());
    assert_eq!(d.acknowledge_irq(), 0x08);
    // IRQ 1 waits behind IRQ 0 in service.
    assert!(!d.irq_pending());
    out(&mut d, 0x20, 0x0B, 0); // OCW3: read ISR
    assert_eq!(inb(&mut d, 0x20, 0), 0x01);
    out(&mut d, 0x20, 0x0A, 0); // OCW3: read IRR
    assert_eq!(inb(&mut d, 0x20, 0), 0x02);
    out(&mut d, 0x20, 0x20, 0); // non-specific EOI
    assert!(d.irq_pending());
    assert_eq!(d.acknowledge_irq(), 0x09);
    out(&mut d, 0x20, 0x20, 0);
    assert!(!d.irq_pending());
}

#[test]
fn pic_higher_priority_nests_and_specific_eoi() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    d.pic.raise(1);
    assert_eq!(d.acknowledge_irq(), 0x09);
    d.pic.raise(0);
    assert!(d.irq_pending(), "IRQ 0 beats IRQ 1 in service");
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x0B, 0);
    assert_eq!(inb(&mut d, 0x20, 0), 0x03);
    out(&mut d, 0x20, 0x61, 0); // specific EOI, level 1
    assert_eq!(inb(&mut d, 0x20, 0), 0x01);
    out(&mut d, 0x20, 0x20, 0);
    assert_eq!(inb(&mut d, 0x20, 0), 0x00);
}

#[test]
fn pic_mask_latches_request_and_cascade() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    out(&mut d, 0x21, 0xB9, 0); // mask IRQ 0 too
    d.pic.raise(0);
    assert!(!d.irq_pending());
    out(&mut d, 0x21, 0xB8, 0);
    assert!(d.irq_pending(), "the masked request stayed in IRR");
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x20, 0);

    // Slave: IRQ 8 through the master's IR2.
    out(&mut d, 0xA1, 0xFE, 0);
    d.pic.raise(8);
    assert!(d.irq_pending());
    assert_eq!(d.acknowledge_irq(), 0x70);
    assert_eq!(d.pic.master.isr, 0x04);
    assert_eq!(d.pic.slave.isr, 0x01);
    out(&mut d, 0xA0, 0x20, 0);
    out(&mut d, 0x20, 0x20, 0);
    assert_eq!((d.pic.master.isr, d.pic.slave.isr), (0, 0));
    // Bus IRQ 2 is IRQ 9 on the AT.
    out(&mut d, 0xA1, 0xFD, 0);
    d.pic.raise(2);
    assert_eq!(d.acknowledge_irq(), 0x71);
}

#[test]
fn pic_spurious_irq7_and_rotation_and_aeoi() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    // Nothing pending: INTA answers IR7 and sets no ISR bit.
    assert_eq!(d.acknowledge_irq(), 0x0F);
    assert_eq!(d.pic.master.isr, 0);
    // Set priority: IR6 lowest, so IR7 is highest.
    out(&mut d, 0x21, 0x00, 0);
    out(&mut d, 0x20, 0xC6, 0);
    d.pic.raise(0);
    d.pic.raise(7);
    assert_eq!(d.acknowledge_irq(), 0x0F);
    assert_eq!(d.pic.master.isr, 0x80);
    // Rotate on non-specific EOI: IR7 becomes lowest, IR0 highest.
    out(&mut d, 0x20, 0xA0, 0);
    assert_eq!(d.pic.master.lowest_priority, 7);
    assert_eq!(d.acknowledge_irq(), 0x08);
    // Re-init with auto-EOI: no ISR bit.
    for (p, v) in [
        (0x20, 0x11),
        (0x21, 0x08),
        (0x21, 0x04),
        (0x21, 0x03),
        (0x21, 0x00),
    ] {
        out(&mut d, p, v, 0);
    }
    d.pic.raise(3);
    assert_eq!(d.acknowledge_irq(), 0x0B);
    assert_eq!(d.pic.master.isr, 0);
}

#[test]
fn pic_poll_command() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    d.pic.raise(1);
    out(&mut d, 0x20, 0x0C, 0); // OCW3 poll
    assert_eq!(inb(&mut d, 0x20, 0), 0x81);
    assert_eq!(d.pic.master.isr, 0x02);
    assert!(!d.irq_pending());
}

#[test]
fn hostile_port_writes_do_not_panic() {
    let mut d = bios();
    let mut ram = vec![0u8; 0x2000];
    let mut now = 0;
    let mut x: u32 = 0x1234_5678;
    for _ in 0..200_000 {
        // xorshift: deterministic "random" ports and values
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let port = match x & 7 {
            0 => (x >> 8) as u16 & 0xFF,
            1 => 0x220 + ((x >> 8) as u16 & 0x0F),
            2 => 0x3C0 + ((x >> 8) as u16 & 0x1F),
            3 => 0x40 + ((x >> 8) as u16 & 3),
            _ => (x >> 8) as u16,
        };
        let w = match (x >> 28) & 3 {
            0 => Width::W16,
            1 => Width::W32,
            _ => Width::W8,
        };
        if x & 0x100 != 0 {
            d.io_write(port, w, x >> 3, now, &mut ram);
        } else {
            d.io_read(port, w, now, &mut ram);
        }
        d.vga_write(0xA0000 + (x >> 11) % 0x20000, x as u8);
        d.vga_read(0xA0000 + (x >> 9) % 0x20000);
        if d.irq_pending() {
            d.acknowledge_irq();
        }
        now += (x & 0x3F) as u64;
        let e = d.next_event();
        if e <= now {
            d.advance(now, &mut ram);
        }
    }
    let f = d.render();
    assert_eq!(f.rgb.len(), f.width as usize * f.height as usize * 3);
    let _ = d.frame_edges_in(now, now + 100_000);
}

// ---------------------------------------------------------------- PIT

#[test]
fn pit_irq0_edges_on_exact_dispatches() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    // Channel 0: mode 3, 65536 ticks; edge k at ceil(65536k * 4e6 / 1193182).
    assert_eq!(d.next_event(), 219_702);
    d.advance(219_701, &mut ram);
    assert!(!d.irq_pending());
    d.advance(219_702, &mut ram);
    assert!(d.irq_pending());
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x20, 219_702);
    assert_eq!(d.next_event(), 439_404);
    d.advance(439_404, &mut ram);
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x20, 439_404);
    assert_eq!(d.next_event(), 659_105);
}

#[test]
fn pit_no_drift_over_ten_hours() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    // Count every IRQ 0 through one hour, acknowledging each one.
    let hour = 3600 * DISPATCHES_PER_SECOND;
    let mut edges = 0u64;
    loop {
        let e = d.next_event();
        if e > hour {
            break;
        }
        d.advance(e, &mut ram);
        assert_eq!(d.acknowledge_irq(), 0x08);
        out(&mut d, 0x20, 0x20, e);
        edges += 1;
    }
    // floor(3600 * 1193182 / 65536) = 65543
    assert_eq!(edges, 65_543);
    // Ten hours (+12345 dispatches) later: 42954555682 ticks since load,
    // mode 3 with 65536: 64956 counting down in the low half.
    let now = 36_000 * DISPATCHES_PER_SECOND + 12_345;
    out(&mut d, 0x43, 0x00, now); // latch channel 0
    let lo = inb(&mut d, 0x40, now);
    let hi = inb(&mut d, 0x40, now);
    assert_eq!(u16::from_le_bytes([lo, hi]), 64_956);
    // Read-back status: OUT low, mode 3, LSB/MSB.
    out(&mut d, 0x43, 0xE2, now);
    assert_eq!(inb(&mut d, 0x40, now), 0x36);
    // The millionth edge from load is exactly where the formula says.
    let mut d2 = bios();
    let k = 1_000_000u64;
    let e = toyvm::machine::scheduler::dispatch_of_tick(0, 65_536 * k, 1_193_182);
    assert_eq!(e, 219_701_604_617);
    d2.advance(e - 1, &mut ram);
    d2.pic.master.irr = 0;
    d2.advance(e - 1, &mut ram);
    assert_eq!(d2.pic.master.irr & 1, 0);
    d2.advance(e, &mut ram);
    assert_eq!(d2.pic.master.irr & 1, 1);
}

#[test]
fn pit_mode2_latch_readback_and_deferred_reload() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    out(&mut d, 0x43, 0x34, 0); // ch0, LSB/MSB, mode 2
    out(&mut d, 0x40, 0xE8, 0);
    out(&mut d, 0x40, 0x03, 0); // 1000
                                // 1193 ticks at dispatch 4000: 1000 - 193 = 807.
    out(&mut d, 0x43, 0x00, 4000);
    assert_eq!(inb(&mut d, 0x40, 4000), 0x27);
    assert_eq!(inb(&mut d, 0x40, 4001), 0x03);
    out(&mut d, 0x43, 0xE2, 4000);
    assert_eq!(inb(&mut d, 0x40, 4000), 0xB4); // OUT high, LSB/MSB, mode 2

    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    out(&mut d, 0x43, 0x34, 0);
    out(&mut d, 0x40, 0xE8, 0);
    out(&mut d, 0x40, 0x03, 0);
    // At dispatch 2000 (596 ticks in) a new count 500 is written: it takes
    // over at the end of the running period, tick 1000 = dispatch 3353.
    out(&mut d, 0x40, 0xF4, 2000);
    out(&mut d, 0x40, 0x01, 2000);
    assert_eq!(d.next_event(), 3353);
    let mut ram = vec![0u8; 16];
    d.advance(3353, &mut ram);
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x20, 3353);
    assert_eq!(d.next_event(), 5029); // tick 1500
    out(&mut d, 0x43, 0x00, 4000);
    let v = inb(&mut d, 0x40, 4000) as u16 | (inb(&mut d, 0x40, 4000) as u16) << 8;
    assert_eq!(v, 307); // 500 - (1193 - 1000)
}

#[test]
fn pit_mode0_one_shot_and_control_word_edge() {
    let mut d = Devices::new();
    d.pic.init_bios_defaults();
    out(&mut d, 0x43, 0x30, 1000); // ch0 mode 0: OUT low
    out(&mut d, 0x40, 100, 1000);
    out(&mut d, 0x40, 0, 1000);
    assert_eq!(d.next_event(), 1336); // 1000 + ceil(100 * 4e6 / 1193182)
    let mut ram = vec![0u8; 16];
    d.advance(1336, &mut ram);
    assert_eq!(d.acknowledge_irq(), 0x08);
    out(&mut d, 0x20, 0x20, 1336);
    assert_eq!(d.next_event(), u64::MAX);
    // Mode 0 after terminal count keeps counting down through FFFFh.
    out(&mut d, 0x43, 0x00, 1336 + 4);
    let v = inb(&mut d, 0x40, 1340) as u16 | (inb(&mut d, 0x40, 1340) as u16) << 8;
    // ticks at 340 dispatches after load: floor(340 * 1193182 / 4e6) = 101
    assert_eq!(v, 0xFFFF);
    // A mode 3 control word while OUT is low raises OUT: an IRQ 0 edge.
    out(&mut d, 0x43, 0x30, 2000); // mode 0 again: OUT low
    assert_eq!(d.pic.master.irr & 1, 0);
    out(&mut d, 0x43, 0x36, 2001); // mode 3: OUT high
    assert_eq!(d.pic.master.irr & 1, 1);
}

#[test]
fn pit_channel2_gate_and_port61() {
    let mut d = bios();
    out(&mut d, 0x43, 0xB0, 0); // ch2 LSB/MSB mode 0
    out(&mut d, 0x42, 0xA9, 0);
    out(&mut d, 0x42, 0x04, 0); // 1193 ticks ≈ 1 ms
                                // Gate is low: nothing counts yet.
    assert_eq!(inb(&mut d, 0x61, 50_000) & 0x20, 0);
    out(&mut d, 0x61, 0x01, 100); // gate on, speaker off
                                  // OUT2 rises at 100 + ceil(1193 * 4e6 / 1193182) = 100 + 4000.
    assert_eq!(inb(&mut d, 0x61, 4099) & 0x20, 0);
    assert_eq!(inb(&mut d, 0x61, 4100) & 0x20, 0x20);
    assert_eq!(inb(&mut d, 0x61, 4100) & 0x03, 0x01);
    // Speaker edges are counted.
    out(&mut d, 0x61, 0x03, 5000);
    out(&mut d, 0x61, 0x01, 6000);
    assert_eq!(d.speaker.changes, 3);
    // Refresh toggle: bit 4 flips every 18 ticks (60.34 dispatches).
    let a = inb(&mut d, 0x61, 0) & 0x10;
    let b = inb(&mut d, 0x61, 61) & 0x10;
    assert_ne!(a, b);
}

#[test]
fn pit_mode3_counts_by_two_and_bcd() {
    let mut d = Devices::new();
    out(&mut d, 0x43, 0x76, 0); // ch1 LSB/MSB mode 3
    out(&mut d, 0x41, 100, 0);
    out(&mut d, 0x41, 0, 0);
    // 10 ticks at dispatch 34 (floor(34 * 1193182 / 4e6) = 10): 100 - 20.
    out(&mut d, 0x43, 0x40, 34);
    assert_eq!(inb(&mut d, 0x41, 34), 80);
    // BCD: ch1 mode 2, count 1000 decimal written as 1000h.
    out(&mut d, 0x43, 0x75, 0);
    out(&mut d, 0x41, 0x00, 0);
    out(&mut d, 0x41, 0x10, 0);
    out(&mut d, 0x43, 0x40, 4000); // 1193 ticks: 1000 - 193 = 807 → 0807h
    assert_eq!(inb(&mut d, 0x41, 4000), 0x07);
    assert_eq!(inb(&mut d, 0x41, 4000), 0x08);
}

// ------------------------------------------------------ keyboard, 8042

#[test]
fn keyboard_scripted_keys_and_irq1() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    assert_eq!(d.load_key_script("0x1E@5000, 0x9E@5000").unwrap(), 2);
    assert_eq!(d.next_event().min(5000), 5000);
    d.pic.master.irr = 0;
    d.advance(4999, &mut ram);
    assert_eq!(inb(&mut d, 0x64, 4999) & 1, 0);
    d.advance(5000, &mut ram);
    assert_eq!(d.pic.master.irr & 0x02, 0x02);
    assert_eq!(inb(&mut d, 0x64, 5000) & 1, 1);
    assert_eq!(inb(&mut d, 0x60, 5001), 0x1E);
    // Reading again before the next byte arrives returns the same byte.
    assert_eq!(inb(&mut d, 0x60, 5002), 0x1E);
    assert_eq!(inb(&mut d, 0x64, 5002) & 1, 0);
    // The break code follows one byte time after the read.
    assert_eq!(
        d.next_event().min(5001 + KBD_BYTE_DISPATCHES),
        5001 + KBD_BYTE_DISPATCHES
    );
    assert_eq!(inb(&mut d, 0x64, 5000 + KBD_BYTE_DISPATCHES) & 1, 0);
    assert_eq!(inb(&mut d, 0x64, 5001 + KBD_BYTE_DISPATCHES) & 1, 1);
    assert_eq!(inb(&mut d, 0x60, 5001 + KBD_BYTE_DISPATCHES), 0x9E);
}

#[test]
fn keyboard_controller_commands_and_a20() {
    let mut d = bios();
    assert!(!d.a20_enabled());
    out(&mut d, 0x64, 0xAA, 10);
    assert_eq!(inb(&mut d, 0x64, 10) & 1, 1);
    assert_eq!(inb(&mut d, 0x60, 10), 0x55);
    out(&mut d, 0x64, 0x20, 20_000);
    assert_eq!(inb(&mut d, 0x60, 20_000), 0x45);
    out(&mut d, 0x64, 0xD1, 30_000);
    out(&mut d, 0x60, 0xDF, 30_001);
    assert!(d.a20_enabled());
    out(&mut d, 0x64, 0xD0, 40_000);
    assert_eq!(inb(&mut d, 0x60, 40_000) & 0x02, 0x02);
    out(&mut d, 0x64, 0xD1, 50_000);
    out(&mut d, 0x60, 0xDD, 50_001);
    assert!(!d.a20_enabled());
    // Fast A20 through port 92h.
    out(&mut d, 0x92, 0x02, 60_000);
    assert!(d.a20_enabled());
    assert_eq!(inb(&mut d, 0x92, 60_000), 0x02);
    // Keyboard reset answers FAh AAh.
    out(&mut d, 0x60, 0xFF, 70_000);
    assert_eq!(inb(&mut d, 0x60, 70_000), 0xFA);
    assert_eq!(inb(&mut d, 0x60, 70_000 + KBD_BYTE_DISPATCHES), 0xAA);
    // FEh pulses reset.
    assert!(!d.take_reset_request());
    out(&mut d, 0x64, 0xFE, 80_000);
    assert!(d.take_reset_request());
}

// ------------------------------------------------------------ CMOS/RTC

#[test]
fn rtc_time_from_epoch_plus_guest_clock() {
    let mut d = bios();
    let rd = |d: &mut Devices, r: u8, now: u64| {
        out(d, 0x70, r, now);
        inb(d, 0x71, now)
    };
    assert_eq!(rd(&mut d, 0x00, 0), 0x00);
    assert_eq!(rd(&mut d, 0x07, 0), 0x01);
    assert_eq!(rd(&mut d, 0x08, 0), 0x01);
    assert_eq!(rd(&mut d, 0x09, 0), 0x94);
    assert_eq!(rd(&mut d, 0x32, 0), 0x19);
    assert_eq!(rd(&mut d, 0x06, 0), 7); // Saturday
                                        // 1994-01-02 01:01:01, a Sunday.
    let now = (25 * 3600 + 61) * DISPATCHES_PER_SECOND;
    assert_eq!(rd(&mut d, 0x00, now), 0x01);
    assert_eq!(rd(&mut d, 0x02, now), 0x01);
    assert_eq!(rd(&mut d, 0x04, now), 0x01);
    assert_eq!(rd(&mut d, 0x07, now), 0x02);
    assert_eq!(rd(&mut d, 0x06, now), 1);
    // Update in progress during the last 244 µs of each second.
    assert_eq!(rd(&mut d, 0x0A, DISPATCHES_PER_SECOND - 977) & 0x80, 0);
    assert_eq!(rd(&mut d, 0x0A, DISPATCHES_PER_SECOND - 976) & 0x80, 0x80);
    // Memory sizes and status D.
    assert_eq!(rd(&mut d, 0x15, 0), 0x80);
    assert_eq!(rd(&mut d, 0x16, 0), 0x02);
    assert_eq!(rd(&mut d, 0x0D, 0), 0x80);
    // Setting the minutes shifts the clock.
    out(&mut d, 0x70, 0x02, now);
    out(&mut d, 0x71, 0x30, now);
    assert_eq!(rd(&mut d, 0x02, now + DISPATCHES_PER_SECOND), 0x30);
    assert_eq!(rd(&mut d, 0x00, now + DISPATCHES_PER_SECOND), 0x02);
    // NMI mask bit.
    assert!(d.nmi_enabled());
    out(&mut d, 0x70, 0x80, now);
    assert!(!d.nmi_enabled());
}

#[test]
fn rtc_periodic_interrupt_on_irq8() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    out(&mut d, 0xA1, 0xFE, 0); // unmask IRQ 8
    out(&mut d, 0x70, 0x0B, 0);
    out(&mut d, 0x71, 0x42, 0); // PIE, 24 h; rate 6 = 1024 Hz
    let e = d.next_event().min(3907);
    assert_eq!(e, 3907); // ceil(4e6 / 1024)
    d.advance(3907, &mut ram);
    assert_eq!(d.pic.slave.irr & 1, 1);
    assert_eq!(d.acknowledge_irq(), 0x70);
    // The line stays up until register C is read.
    out(&mut d, 0x70, 0x0C, 5000);
    assert_eq!(inb(&mut d, 0x71, 5000), 0xC0);
    assert_eq!(inb(&mut d, 0x71, 5000), 0x00);
    out(&mut d, 0xA0, 0x20, 5000);
    out(&mut d, 0x20, 0x20, 5000);
    assert!(d.next_event() <= 7813);
    d.advance(7812, &mut ram);
    assert_eq!(d.pic.slave.irr & 1, 0);
    d.advance(7813, &mut ram);
    assert_eq!(d.pic.slave.irr & 1, 1);
}

// ---------------------------------------------------------------- OPL2

#[test]
fn opl2_timer_detection_sequence() {
    let mut d = bios();
    let w = |d: &mut Devices, r: u8, v: u8, now: u64| {
        out(d, 0x388, r, now);
        out(d, 0x389, v, now);
    };
    w(&mut d, 4, 0x60, 0);
    w(&mut d, 4, 0x80, 0);
    assert_eq!(inb(&mut d, 0x388, 0) & 0xE0, 0x00);
    w(&mut d, 2, 0xFF, 1000);
    w(&mut d, 4, 0x21, 1000); // start timer 1 (80 µs = 320 dispatches)
    assert_eq!(inb(&mut d, 0x388, 1319), 0x06);
    assert_eq!(inb(&mut d, 0x388, 1320), 0xC6);
    assert_eq!(inb(&mut d, 0x388, 99_999) & 0xE0, 0xC0);
    w(&mut d, 4, 0x60, 100_000);
    w(&mut d, 4, 0x80, 100_000);
    assert_eq!(inb(&mut d, 0x388, 100_000) & 0xE0, 0x00);
    // Timer 2: 320 µs per count, preset FEh: 2 × 1280 dispatches.
    w(&mut d, 3, 0xFE, 200_000);
    w(&mut d, 4, 0x42, 200_000); // start T2, mask T1
    assert_eq!(inb(&mut d, 0x228, 202_559) & 0xE0, 0x00);
    assert_eq!(inb(&mut d, 0x228, 202_560) & 0xE0, 0xA0);
}

// ------------------------------------------------------ misc ports

#[test]
fn unclaimed_ports_and_game_port() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    assert_eq!(d.io_read(0x378, Width::W8, 0, &mut ram), 0xFF);
    assert_eq!(d.io_read(0x2F8, Width::W16, 0, &mut ram), 0xFFFF);
    d.io_write(0x2F8, Width::W8, 1, 0, &mut ram);
    let u = d.unclaimed_ports();
    assert_eq!(u.len(), 3);
    assert_eq!((u[0].port, u[0].reads, u[0].writes), (0x2F8, 1, 1));
    assert_eq!((u[1].port, u[1].reads, u[1].writes), (0x2F9, 1, 0));
    assert_eq!((u[2].port, u[2].reads, u[2].writes), (0x378, 1, 0));
    assert_eq!(inb(&mut d, 0x201, 0), 0xFF);
    // POST code port 80h holds its value.
    out(&mut d, 0x80, 0x42, 0);
    assert_eq!(inb(&mut d, 0x80, 0), 0x42);
    // Mono CRTC ports are not decoded while the VGA is in colour mode.
    assert_eq!(inb(&mut d, 0x3B5, 0), 0xFF);
    assert!(d.unclaimed_ports().iter().any(|p| p.port == 0x3B5));
}

#[test]
fn key_script_names_schedule_make_and_break() {
    let keys = toyvm::machine::scheduler::parse_key_script("a@100 esc@7").unwrap();
    let codes: Vec<(u64, u8)> = keys.iter().map(|k| (k.dispatch, k.scancode)).collect();
    let hold = toyvm::machine::scheduler::KEY_HOLD_DISPATCHES;
    assert_eq!(
        codes,
        vec![(7, 0x01), (100, 0x1E), (7 + hold, 0x81), (100 + hold, 0x9E)]
    );
}

#[test]
fn pit_mode1_one_shot_on_channel2_gate() {
    let mut d = bios();
    out(&mut d, 0x43, 0xB2, 0); // ch2 LSB/MSB mode 1
    out(&mut d, 0x42, 100, 0);
    out(&mut d, 0x42, 0, 0);
    // Not triggered yet: OUT high.
    assert_eq!(inb(&mut d, 0x61, 1000) & 0x20, 0x20);
    out(&mut d, 0x61, 0x01, 2000); // gate rising edge: trigger
    assert_eq!(inb(&mut d, 0x61, 2000) & 0x20, 0x00);
    assert_eq!(inb(&mut d, 0x61, 2335) & 0x20, 0x00);
    assert_eq!(inb(&mut d, 0x61, 2336) & 0x20, 0x20); // ceil(100 * 4e6 / 1193182) = 336
                                                      // Retrigger restarts the count.
    out(&mut d, 0x61, 0x00, 3000);
    out(&mut d, 0x61, 0x01, 3001);
    assert_eq!(inb(&mut d, 0x61, 3336) & 0x20, 0x00);
    assert_eq!(inb(&mut d, 0x61, 3337) & 0x20, 0x20);
}

#[test]
fn rtc_binary_and_12_hour_modes() {
    let mut d = bios();
    let rd = |d: &mut Devices, r: u8, now: u64| {
        out(d, 0x70, r, now);
        inb(d, 0x71, now)
    };
    let now = (13 * 3600 + 59 * 60 + 58) * DISPATCHES_PER_SECOND; // 13:59:58
    out(&mut d, 0x70, 0x0B, 0);
    out(&mut d, 0x71, 0x04, 0); // binary, 12-hour
    assert_eq!(rd(&mut d, 0x04, now), 0x81); // 1 PM
    assert_eq!(rd(&mut d, 0x02, now), 59);
    assert_eq!(rd(&mut d, 0x09, now), 94);
    // SET freezes the clock.
    out(&mut d, 0x70, 0x0B, now);
    out(&mut d, 0x71, 0x86, now); // SET, binary, 24 h
    assert_eq!(rd(&mut d, 0x00, now + 5 * DISPATCHES_PER_SECOND), 58);
    out(&mut d, 0x70, 0x0B, now + 5 * DISPATCHES_PER_SECOND);
    out(&mut d, 0x71, 0x06, now + 5 * DISPATCHES_PER_SECOND);
    assert_eq!(rd(&mut d, 0x00, now + 6 * DISPATCHES_PER_SECOND), 59);
}

#[test]
fn keyboard_disabled_drops_scripted_keys() {
    let mut d = bios();
    let mut ram = vec![0u8; 16];
    out(&mut d, 0x64, 0xAD, 0); // disable keyboard
    d.schedule_key(100, 0x1E);
    d.advance(100, &mut ram);
    assert_eq!(inb(&mut d, 0x64, 100) & 1, 0);
    out(&mut d, 0x64, 0xAE, 200);
    d.schedule_key(300, 0x1F);
    d.advance(300, &mut ram);
    assert_eq!(inb(&mut d, 0x60, 300), 0x1F);
    assert_eq!(toyvm::machine::devices::sb::BLASTER, "A220 I7 D1 T4");
}
