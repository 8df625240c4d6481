//! UXTHEME.dll: visual styles are never active here (the desktop draws the
//! classic look), so IsThemeActive and IsAppThemed answer FALSE and
//! programs fall back to the classic drawing they already have.
//!
//! Owns these answers only; must not draw or hold state.

crate::dll! { "uxtheme.dll";
    stdcall fn IsThemeActive(env) -> bool { false }
    stdcall fn IsAppThemed(env) -> bool { false }
}
