//! Minimized programs of divergences fixed in the µop arms, one case table
//! run by every arm in lockstep: each must end exactly as `l1` does, with the
//! exit code the program computes.

use oracle::compare::{lockstep, Options};
use oracle::spec::RunSpec;

/// Every arm these programs must agree on, reference first.
const ARMS: &str = "l1,l0,only-naive,only-baseline,only-all,only-t2,uop,uop2,jit";

/// A line at FFF0h whose last instruction (`mov al, 11h`) ends exactly at
/// the 64 KiB end of CS (copied there by the program), called twice; between the calls the program patches
/// that instruction's immediate to 22h. PSP:0000 is made a `ret`, so the IP
/// wrap to 0 returns to the caller. Found by `oracle fuzz` (random bytes
/// reaching FFFFh): the lowering gave such a line a one-byte code range, the
/// patch did not retire the program, and only-naive exited 11h, not 22h.
fn line_ending_at_ffff() -> Vec<u8> {
    let mut v: Vec<u8> = vec![
        0xBC, 0x00, 0x80, // mov sp, 8000h (the stack away from the line)
        0xBE, 0x00, 0x00, // mov si, LINE (patched below)
        0xBF, 0xF0, 0xFF, // mov di, FFF0h
        0xB9, 0x10, 0x00, // mov cx, 16
        0xFC, 0xF3, 0xA4, // cld; rep movsb: the line to CS:FFF0h
        0xC6, 0x06, 0x00, 0x00, 0xC3, // mov byte [0000h], C3h (ret)
        0xE8, 0x00, 0x00, // call FFF0h (rel16 patched below)
        0xC6, 0x06, 0xFF, 0xFF, 0x22, // mov byte [FFFFh], 22h
        0xE8, 0x00, 0x00, // call FFF0h
        0xB4, 0x4C, 0xCD, 0x21, // mov ah, 4Ch; int 21h (exit code AL)
    ];
    for at in [20usize, 28] {
        let rel = 0xFFF0u16.wrapping_sub(0x100 + at as u16 + 3);
        v[at + 1..at + 3].copy_from_slice(&rel.to_le_bytes());
    }
    let line = 0x100 + v.len() as u16;
    v[4..6].copy_from_slice(&line.to_le_bytes());
    v.extend_from_slice(&[0x90; 14]); // nop x 14: FFF0h..FFFDh
    v.extend_from_slice(&[0xB0, 0x11]); // mov al, 11h at FFFEh, ending at FFFFh
    v
}

/// MOV SS's interrupt shadow in 32-bit protected-mode code. The program
/// enters protected mode by itself (a GDT with 32-bit code, data and
/// 16-bit code at its own base), loads SS, and the instruction under the
/// shadow is `cmp eax, 12345678h` (3D id, five bytes in 32-bit code); then
/// it returns to real mode and exits with AL. Found by the dos-real sweep
/// (3DFONTZ and five more efliks asm32 programs under CWSDPMI): the µop
/// arms ran a shadowed instruction from a real-mode block, decoded 16-bit
/// (`cmp ax, 5678h; xor al, 12h`), and exited 6Ah where l1 exits 78h.
/// Assembled with nasm from:
///
/// ```text
/// ; MOV SS's interrupt shadow in 32-bit protected-mode code: the instruction
/// ; under the shadow must be decoded 32-bit (3D id, 5 bytes), not as the
/// ; 16-bit 3D iw + 34 12 (XOR AL,12h) a real-mode block would make of it.
/// org 100h
/// bits 16
/// start:
///   cli
///   mov ax, cs
///   mov [rmseg], ax            ; the far jump back to real mode
///   movzx eax, ax
///   shl eax, 4
///   mov ebx, eax
///   add ebx, gdt
///   mov [gdtr+2], ebx          ; GDTR base: linear address of gdt
///   mov [gdt+8+2], ax          ; base 15..0 of the three descriptors
///   mov [gdt+16+2], ax
///   mov [gdt+24+2], ax
///   shr eax, 16
///   mov [gdt+8+4], al          ; base 23..16
///   mov [gdt+16+4], al
///   mov [gdt+24+4], al
///   lgdt [gdtr]
///   mov eax, cr0
///   or al, 1
///   mov cr0, eax
///   jmp 08h:pm32
/// bits 32
/// pm32:
///   mov eax, 12345678h
///   mov bx, 10h
///   mov ss, bx                 ; the shadow covers the next instruction
///   cmp eax, 12345678h
///   jmp 18h:pm16
/// bits 16
/// pm16:
///   mov bx, 10h
///   mov ds, bx
///   mov ss, bx
///   mov ebx, cr0
///   and bl, 0FEh
///   mov cr0, ebx
///   db 0EAh                    ; jmp far rmseg:real
///   dw real
/// rmseg: dw 0
/// real:
///   mov bx, cs
///   mov ds, bx
///   mov ss, bx
///   sti
///   mov ah, 4Ch                ; exit code AL: 78h (6Ah after a 16-bit decode)
///   int 21h
/// align 8
/// gdt:
///   dq 0
///   db 0FFh, 0FFh, 0, 0, 0, 9Ah, 40h, 0     ; 08h: 32-bit code, base patched
///   db 0FFh, 0FFh, 0, 0, 0, 92h, 00h, 0     ; 10h: data, 64 KiB
///   db 0FFh, 0FFh, 0, 0, 0, 9Ah, 00h, 0     ; 18h: 16-bit code
/// gdtr:
///   dw 31
///   dd 0
/// ```
fn pm32_shadow_step() -> Vec<u8> {
    vec![
        0xFA, 0x8C, 0xC8, 0xA3, 0x6F, 0x01, 0x66, 0x0F, 0xB7, 0xC0, 0x66, 0xC1, 0xE0, 0x04, 0x66,
        0x89, 0xC3, 0x66, 0x81, 0xC3, 0x80, 0x01, 0x00, 0x00, 0x66, 0x89, 0x1E, 0xA2, 0x01, 0xA3,
        0x8A, 0x01, 0xA3, 0x92, 0x01, 0xA3, 0x9A, 0x01, 0x66, 0xC1, 0xE8, 0x10, 0xA2, 0x8C, 0x01,
        0xA2, 0x94, 0x01, 0xA2, 0x9C, 0x01, 0x0F, 0x01, 0x16, 0xA0, 0x01, 0x0F, 0x20, 0xC0, 0x0C,
        0x01, 0x0F, 0x22, 0xC0, 0xEA, 0x45, 0x01, 0x08, 0x00, 0xB8, 0x78, 0x56, 0x34, 0x12, 0x66,
        0xBB, 0x10, 0x00, 0x8E, 0xD3, 0x3D, 0x78, 0x56, 0x34, 0x12, 0xEA, 0x5C, 0x01, 0x00, 0x00,
        0x18, 0x00, 0xBB, 0x10, 0x00, 0x8E, 0xDB, 0x8E, 0xD3, 0x0F, 0x20, 0xC3, 0x80, 0xE3, 0xFE,
        0x0F, 0x22, 0xC3, 0xEA, 0x71, 0x01, 0x00, 0x00, 0x8C, 0xCB, 0x8E, 0xDB, 0x8E, 0xD3, 0xFB,
        0xB4, 0x4C, 0xCD, 0x21, 0x90, 0x90, 0x90, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x9A, 0x40, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x92,
        0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x9A, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00, 0x00,
        0x00,
    ]
}

/// A far CALL whose second push faults after its first push overwrote the
/// CALL's own bytes. The program writes `nop; nop; call far [fp]` at CS:0000
/// (the PSP, SS = CS) and `mov sp, 3` plus 13 NOPs at FFF0h, and jumps
/// there: the line wraps to 0, the CALL pushes CS at SS:0001 (over its own
/// opcode byte) and then IP at SS:FFFFh, which faults (#SS), and #SS cannot
/// be delivered with SP = 3 either: a triple fault at the CALL. Found by
/// `oracle fuzz` (seed 1046481116, program 1138): the µop arms stored CS,
/// fell back at the second store's limit check, and the L1 side re-ran the
/// CALL from its now-overwritten bytes (`01 1E ..`, an ADD). Fixed by
/// checking both slots before the first store (lower/stack.rs). Assembled
/// with nasm from:
///
/// ```text
/// org 100h
///   mov sp, 8000h
///   mov word [fp], target
///   mov [fp+2], cs
///   mov byte [0], 90h
///   mov byte [1], 90h
///   mov byte [2], 0FFh
///   mov byte [3], 1Eh
///   mov word [4], fp
///   mov di, 0FFF0h
///   mov byte [di], 0BCh
///   mov word [di+1], 3
///   add di, 3
///   mov cx, 13
///   mov al, 90h
///   cld
///   rep stosb
///   jmp word 0FFF0h
/// target:
///   mov ax, 4C02h
///   int 21h
/// fp: dd 0
/// ```
fn far_call_push_faults() -> Vec<u8> {
    vec![
        0xBC, 0x00, 0x80, 0xC7, 0x06, 0x45, 0x01, 0x40, 0x01, 0x8C, 0x0E, 0x47, 0x01, 0xC6, 0x06,
        0x00, 0x00, 0x90, 0xC6, 0x06, 0x01, 0x00, 0x90, 0xC6, 0x06, 0x02, 0x00, 0xFF, 0xC6, 0x06,
        0x03, 0x00, 0x1E, 0xC7, 0x06, 0x04, 0x00, 0x45, 0x01, 0xBF, 0xF0, 0xFF, 0xC6, 0x05, 0xBC,
        0xC7, 0x45, 0x01, 0x03, 0x00, 0x83, 0xC7, 0x03, 0xB9, 0x0D, 0x00, 0xB0, 0x90, 0xFC, 0xF3,
        0xAA, 0xE9, 0xB0, 0xFE, 0xB8, 0x02, 0x4C, 0xCD, 0x21, 0x00, 0x00, 0x00, 0x00,
    ]
}

/// (name, program, the end every arm must reach)
fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        ("line_ending_at_ffff", line_ending_at_ffff(), "exited 34"),
        ("pm32_shadow_step", pm32_shadow_step(), "exited 120"),
        ("far_call_push_faults", far_call_push_faults(), "stopped: triple fault: vector 12 could not be delivered (#12 while pushing the frame, SS:SP 0131:0003, IVT limit 0x3FF)"),
    ]
}

#[test]
fn fixed_divergences_stay_fixed_under_every_arm() {
    let dir = std::env::temp_dir().join(format!("oracle-arm-regressions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arms = oracle::arms::parse_list(ARMS).unwrap();
    for (name, prog, end) in cases() {
        let path = dir.join(format!("{name}.com"));
        std::fs::write(&path, &prog).unwrap();
        let ls = lockstep(
            &RunSpec::new(&path, 100_000),
            &arms,
            &Options::default(),
            &mut |_| {},
        )
        .unwrap();
        for a in &ls.arms {
            assert!(a.diff.is_none(), "{name}: {} diverged from l1", a.arm);
            assert_eq!(a.last.end, end, "{name} under {}", a.arm);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
