//! SHELL32.dll: drag-and-drop registration, which has no source of drops
//! here (DragAcceptFiles accepts, DragQueryFile finds no files). Every
//! other export stays a named stub.
//!
//! Owns these calls' conventions; must not touch host state.

crate::dll! { "shell32.dll";
    stdcall fn DragAcceptFiles(env, _h: u32, _accept: u32) {}
    stdcall fn DragFinish(env, _drop: u32) {}
    stdcall fn DragQueryFileW(env, _drop: u32, _i: u32, _buf: u32, _n: u32) -> u32 { 0 }
}
