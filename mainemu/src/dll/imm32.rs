//! IMM32.dll: the input method manager of a machine with no IME installed
//! (a Western Windows): no window has an input context, so ImmGetContext
//! answers NULL and the calls taking a context fail; ImmDisableIME
//! succeeds (there is nothing to disable). Programs that import imm32 for
//! East Asian input (user32's message tests do) take their no-IME paths.
//!
//! Owns these answers only; must not hold state or send IME messages.

crate::dll! { "imm32.dll";
    stdcall fn ImmDisableIME(env, thread: u32) -> bool { true }
    stdcall fn ImmGetContext(env, hwnd: u32) -> u32 { 0 }
    stdcall fn ImmReleaseContext(env, hwnd: u32, himc: u32) -> bool { true }
    stdcall fn ImmAssociateContext(env, hwnd: u32, himc: u32) -> u32 { 0 }
    stdcall fn ImmIsIME(env, hkl: u32) -> bool { false }
    stdcall fn ImmGetOpenStatus(env, himc: u32) -> bool { false }
    stdcall fn ImmSetOpenStatus(env, himc: u32, open: u32) -> bool { false }
    stdcall fn ImmNotifyIME(env, himc: u32, action: u32, index: u32, value: u32) -> bool { false }
    stdcall fn ImmSetCompositionStringA(env, himc: u32, index: u32, comp: u32, comp_len: u32, read: u32, read_len: u32) -> bool { false }
    stdcall fn ImmSetCompositionStringW(env, himc: u32, index: u32, comp: u32, comp_len: u32, read: u32, read_len: u32) -> bool { false }
    // IMM_ERROR_GENERAL: no context to read from.
    stdcall fn ImmGetCompositionStringA(env, himc: u32, index: u32, buf: u32, len: u32) -> i32 { -2 }
    stdcall fn ImmGetCompositionStringW(env, himc: u32, index: u32, buf: u32, len: u32) -> i32 { -2 }
}
