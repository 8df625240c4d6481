//! SECUR32.dll: GetUserNameEx over the fixed identity of [`super::advapi32`]
//! (user `mainemu` on the stand-alone machine MAINEMU, no domain).
//!
//! Owns these calls' conventions; must not touch host state.

use super::advapi32::{user_name, USER};
use super::Env;

/// EXTENDED_NAME_FORMAT values.
const NAME_SAM_COMPATIBLE: u32 = 2;
const NAME_DISPLAY: u32 = 3;
const ERROR_MORE_DATA: u32 = 234;

fn user_name_ex(env: &mut Env, format: u32, buf: u32, size: u32, wide: bool) -> bool {
    let name = match format {
        NAME_SAM_COMPATIBLE => format!("MAINEMU\\{USER}"),
        NAME_DISPLAY => USER.to_string(),
        // The other formats need a domain: ERROR_NONE_MAPPED, as on a stand-alone machine.
        _ => return env.fail(1332, false),
    };
    // Unlike GetUserName, a short buffer is ERROR_MORE_DATA (Wine's whoami
    // sizes its buffer with a NULL call and accepts only that code).
    // On success the size is the length without the NUL (GetUserName counts it).
    let ok = user_name(env, &name, buf, size, wide);
    if ok {
        let n = env.mem.peek_u32(size).unwrap_or(1);
        env.mem.poke_u32(size, n.saturating_sub(1));
    } else if env.last_error == crate::files::err::INSUFFICIENT_BUFFER {
        env.last_error = ERROR_MORE_DATA;
    }
    ok
}

crate::dll! { "secur32.dll";
    stdcall fn GetUserNameExA(env, format: u32, buf: u32, size: u32) -> bool { user_name_ex(env, format, buf, size, false) }
    stdcall fn GetUserNameExW(env, format: u32, buf: u32, size: u32) -> bool { user_name_ex(env, format, buf, size, true) }
}
