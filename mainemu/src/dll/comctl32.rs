//! COMCTL32.dll: the common controls' registration calls. The standard
//! controls (button, static, edit, listbox) are user32's here, so
//! InitCommonControls(Ex) has nothing to register; the comctl32 classes
//! themselves (toolbar, status bar, list view, ...) are not modelled, and
//! every other export stays a named stub.
//!
//! Owns these calls' conventions; must not hold window logic.

crate::dll! { "comctl32.dll";
    stdcall fn InitCommonControls(env) {}
    stdcall fn InitCommonControlsEx(env, _icc: u32) -> bool { true }
}
