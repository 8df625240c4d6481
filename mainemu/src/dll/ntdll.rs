//! NTDLL.dll: the exports mainemu implements, each declared once.
//!
//! Owns the bodies of ntdll's calls; must not touch host state directly.

crate::dll! { "ntdll.dll";
    stdcall fn RtlGetLastWin32Error(env) -> u32 { env.last_error }
    stdcall fn RtlSetLastWin32Error(env, code: u32) { env.last_error = code; }
    stdcall fn NtCurrentTeb(env) -> u32 { 0 }
}
