//! UCRTBASE.dll (and the `api-ms-win-crt-*` API sets that redirect to it):
//! the exports mainemu implements, each declared once.
//!
//! Owns ucrtbase's export table; bodies shared with msvcrt in [`super::crt`].

use super::crt;

crate::dll! { "ucrtbase.dll";
    @also crt::common::DLL;
}
