//! Coverage report of the naive lowering: which instruction forms lower and
//! which fall back (and why), over a fixed list of real-mode forms. Weighting
//! by corpus execution is toyvm's census (`toyvm census --coverage`). Each
//! form is lowered twice: in any machine state (`LowerOpts::default()`) and
//! under every assumption a driver may guarantee (`ASSUMED`, what toyvm's
//! DOS driver guarantees in real mode), so INT, FWAIT and x87 forms show
//! both ways. It owns the list and the report only.

use super::{lower_line_opts, LowerOpts};
use crate::machine::RealMode16;
use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

/// One form: its bytes (16-bit code).
pub const FORMS: &[&[u8]] = &[
    &[0x01, 0xD8],                   // add ax,bx
    &[0x00, 0xE3],                   // add bl,ah
    &[0x03, 0x47, 0x04],             // add ax,[bx+4]
    &[0x01, 0x07],                   // add [bx],ax
    &[0x66, 0x01, 0xD8],             // add eax,ebx
    &[0x83, 0xC0, 0x05],             // add ax,5
    &[0x80, 0x3E, 0x34, 0x12, 0x07], // cmp byte [1234],7
    &[0x11, 0xCA],                   // adc dx,cx
    &[0x19, 0xCA],                   // sbb dx,cx
    &[0x85, 0xC0],                   // test ax,ax
    &[0x40],                         // inc ax
    &[0xFE, 0x0F],                   // dec byte [bx]
    &[0xF7, 0xD8],                   // neg ax
    &[0xF7, 0xD0],                   // not ax
    &[0x8B, 0x04],                   // mov ax,[si]
    &[0x89, 0x05],                   // mov [di],ax
    &[0xB8, 0x34, 0x12],             // mov ax,1234
    &[0xC6, 0x07, 0x01],             // mov byte [bx],1
    &[0x8E, 0xD8],                   // mov ds,ax
    &[0x8E, 0xD0],                   // mov ss,ax
    &[0x8C, 0xC8],                   // mov ax,cs
    &[0x8D, 0x40, 0x04],             // lea ax,[bx+si+4]
    &[0x93],                         // xchg ax,bx
    &[0x87, 0x07],                   // xchg [bx],ax
    &[0x0F, 0xB6, 0xC3],             // movzx ax,bl
    &[0x0F, 0xBE, 0x07],             // movsx ax,byte [bx]
    &[0x98],                         // cbw
    &[0x99],                         // cwd
    &[0xD1, 0xE0],                   // shl ax,1
    &[0xC1, 0xE8, 0x04],             // shr ax,4
    &[0xD3, 0xF8],                   // sar ax,cl
    &[0xD2, 0xD0],                   // rcl al,cl
    &[0xD3, 0x07],                   // rol word [bx],cl
    &[0x50],                         // push ax
    &[0x58],                         // pop ax
    &[0x1E],                         // push ds
    &[0x1F],                         // pop ds
    &[0x6A, 0x05],                   // push 5
    &[0x9C],                         // pushf
    &[0x9D],                         // popf
    &[0xF7, 0xE3],                   // mul bx
    &[0xF6, 0xF3],                   // div bl
    &[0xF7, 0xFB],                   // idiv bx
    &[0x69, 0xC3, 0x10, 0x00],       // imul ax,bx,16
    &[0xF8],                         // clc
    &[0xF5],                         // cmc
    &[0xFC],                         // cld
    &[0xFA],                         // cli
    &[0xFB],                         // sti
    &[0xE4, 0x40],                   // in al,40
    &[0xEE],                         // out dx,al
    &[0xAA],                         // stosb
    &[0xF3, 0xAB],                   // rep stosw
    &[0xAC],                         // lodsb
    &[0xF3, 0xA4],                   // rep movsb
    &[0xA4],                         // movsb
    &[0xAE],                         // scasb
    &[0x75, 0x02],                   // jnz +2
    &[0xEB, 0xFE],                   // jmp $
    &[0xE8, 0x00, 0x01],             // call near
    &[0xC3],                         // ret
    &[0xC2, 0x04, 0x00],             // ret 4
    &[0xE2, 0xFE],                   // loop
    &[0xE3, 0x02],                   // jcxz
    &[0xFF, 0xE3],                   // jmp bx
    &[0xFF, 0x17],                   // call [bx]
    &[0xEA, 0x00, 0x01, 0x00, 0x10], // jmp far
    &[0xCB],                         // retf
    &[0xCD, 0x21],                   // int 21
    &[0xCF],                         // iret
    &[0xF4],                         // hlt
    &[0x27],                         // daa
    &[0xD7],                         // xlat
    &[0xC9],                         // leave
    &[0x0F, 0xA3, 0xC3],             // bt bx,ax
    &[0xD9, 0x07],                   // fld dword [bx]
    &[0xDF, 0xE0],                   // fnstsw ax
    &[0x9B],                         // wait
];

/// Every assumption a driver may guarantee (`LowerOpts`), all promised.
pub const ASSUMED: LowerOpts = LowerOpts {
    ivt_at_zero: true,
    wait_is_nop: true,
    x87: true,
};

/// One row: the form as text, and either the E1 ops it lowered to or why
/// not, in any machine state and under [`ASSUMED`].
pub struct Row {
    pub form: String,
    pub result: Result<usize, &'static str>,
    pub assumed: Result<usize, &'static str>,
}

/// Lowers `bytes` alone under `opts` and encodes it: E1 ops, or why not.
fn lower_alone(bytes: &[u8], opts: LowerOpts) -> Result<usize, &'static str> {
    let line = lower_line_opts(&RealMode16, opts, 0x1000, 0x100, bytes, 1);
    match line.program {
        Some(p) => crate::e1::encode::encode_program(&p)
            .map(|e| e.ops)
            .map_err(|_| "encode"),
        None => Err(line.stop.unwrap_or("?")),
    }
}

/// Lowers every form alone and reports.
pub fn coverage_rows() -> Vec<Row> {
    let mut f = IntelFormatter::new();
    FORMS
        .iter()
        .map(|bytes| {
            let mut dec = Decoder::with_ip(16, bytes, 0x100, DecoderOptions::NONE);
            let ins = dec.decode();
            let mut form = String::new();
            f.format(&ins, &mut form);
            Row {
                form,
                result: lower_alone(bytes, LowerOpts::default()),
                assumed: lower_alone(bytes, ASSUMED),
            }
        })
        .collect()
}

/// The report as a Markdown table.
pub fn coverage_markdown() -> String {
    let rows = coverage_rows();
    let lowered = rows.iter().filter(|r| r.result.is_ok()).count();
    let assumed = rows.iter().filter(|r| r.assumed.is_ok()).count();
    let mut s = format!(
        "{lowered} of {} forms lower in any machine state, {assumed} under the driver's assumptions (IVT at 0, FWAIT a NOP, x87 in the engine); the rest fall back to L1 for that instruction.\n\n| form | E1 ops, any state (incl. the 3 of every program: clock.check, count, exit/link) | E1 ops, assumed |\n|---|---|---|\n",
        rows.len()
    );
    let cell = |r: Result<usize, &str>| match r {
        Ok(n) => n.to_string(),
        Err(why) => format!("fallback: {why}"),
    };
    for r in rows {
        s += &format!(
            "| `{}` | {} | {} |\n",
            r.form,
            cell(r.result),
            cell(r.assumed)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_lowered_form_verifies_and_the_report_prints() {
        use super::{lower_line_opts, LowerOpts, ASSUMED};
        use crate::machine::RealMode16;
        for bytes in super::FORMS {
            for opts in [LowerOpts::default(), ASSUMED] {
                let l = lower_line_opts(&RealMode16, opts, 0x1000, 0x100, bytes, 1);
                if let Some(p) = l.program {
                    crate::ir::verify::verify(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
                }
            }
        }
        let rows = super::coverage_rows();
        // An assumption only ever adds forms.
        assert!(rows.iter().all(|r| r.result.is_err() || r.assumed.is_ok()));
        let md = super::coverage_markdown();
        assert!(md.contains("add ax,bx"));
    }
}
