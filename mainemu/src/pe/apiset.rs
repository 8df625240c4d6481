//! API set names (`api-ms-win-*`, `ext-ms-*`): virtual DLL names that
//! Windows 7+ redirects to a host DLL. Programs built with MSVC's universal
//! CRT import `api-ms-win-crt-*-l1-1-0.dll`, which is ucrtbase.
//!
//! Owns the redirection table only; it must not know what the host DLLs export.

/// Prefix → host DLL, checked in order (longest prefixes first where they overlap).
const TABLE: &[(&str, &str)] = &[
    ("api-ms-win-crt-", "ucrtbase.dll"),
    ("api-ms-win-core-rtlsupport-", "ntdll.dll"),
    ("api-ms-win-core-", "kernel32.dll"),
    ("api-ms-win-security-", "advapi32.dll"),
    ("api-ms-win-eventing-", "advapi32.dll"),
];

/// The host DLL an API set name redirects to, or `None` when `name` is not an
/// API set (or one this table does not know). Case-insensitive; the `.dll`
/// suffix is optional.
pub fn resolve(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if !(lower.starts_with("api-ms-") || lower.starts_with("ext-ms-")) {
        return None;
    }
    TABLE
        .iter()
        .find(|(p, _)| lower.starts_with(p))
        .map(|(_, host)| *host)
}

/// The DLL a program's import names, after API set redirection, lowercased
/// with a `.dll` suffix (the key the DLL layer uses).
pub fn canonical(name: &str) -> String {
    let host = resolve(name)
        .map(str::to_string)
        .unwrap_or_else(|| name.to_ascii_lowercase());
    if host.ends_with(".dll") || host.contains('.') {
        host
    } else {
        format!("{host}.dll")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirection_table() {
        let cases = [
            (
                "api-ms-win-crt-runtime-l1-1-0.dll",
                Some("ucrtbase.dll"),
                "ucrtbase.dll",
            ),
            (
                "API-MS-WIN-CRT-STDIO-L1-1-0.DLL",
                Some("ucrtbase.dll"),
                "ucrtbase.dll",
            ),
            (
                "api-ms-win-core-synch-l1-2-0",
                Some("kernel32.dll"),
                "kernel32.dll",
            ),
            (
                "api-ms-win-core-rtlsupport-l1-1-0.dll",
                Some("ntdll.dll"),
                "ntdll.dll",
            ),
            (
                "ext-ms-win-foo-l1-1-0.dll",
                None,
                "ext-ms-win-foo-l1-1-0.dll",
            ),
            ("KERNEL32.dll", None, "kernel32.dll"),
            ("msvcrt", None, "msvcrt.dll"),
        ];
        for (name, r, c) in cases {
            assert_eq!(resolve(name), r, "{name}");
            assert_eq!(canonical(name), c, "{name}");
        }
    }
}
