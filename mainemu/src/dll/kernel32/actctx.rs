//! kernel32's activation-context calls (CreateActCtx, Activate/Deactivate,
//! AddRef/Release, GetCurrentActCtx, QueryActCtx, FindActCtxSectionString).
//!
//! Owns the argument checks and the handle life cycle: a context is created
//! from a manifest file that exists in the guest's drives and lives as an
//! `Object::Other("activation context")` handle; activation pushes a cookie
//! on a per-process stack. It must not model side-by-side assemblies: no
//! manifest is parsed and no DLL redirection happens (a lookup in a context
//! finds nothing, ERROR_SXS_KEY_NOT_FOUND), so programs fall back to the
//! ordinary search order, as on a system without the assembly installed.

use super::file::{path_arg, resolve};
use crate::dll::Env;
use crate::handles::Object;

const INVALID_HANDLE_VALUE: u32 = 0xFFFF_FFFF;
const ERROR_INVALID_PARAMETER: u32 = 87;
const ERROR_SXS_KEY_NOT_FOUND: u32 = 14007;
/// ACTCTX_FLAG_RESOURCE_NAME_VALID .. ACTCTX_FLAG_HMODULE_VALID (every
/// flag Windows defines); others are refused.
const ACTCTX_FLAGS_KNOWN: u32 = 0xFF;
const ACTCTX_FLAG_HMODULE_VALID: u32 = 0x80;

/// CreateActCtxA/W: ACTCTX {cbSize, dwFlags, lpSource, ...}. A NULL
/// pointer, a short cbSize, an unknown flag or a NULL lpSource (without a
/// module) is ERROR_INVALID_PARAMETER; a source that does not exist gives
/// the file error (ERROR_FILE_NOT_FOUND / ERROR_PATH_NOT_FOUND).
fn create(env: &mut Env, ctx: u32, wide: bool) -> u32 {
    let (Some(size), Some(flags), Some(src)) = (
        env.mem.peek_u32(ctx),
        env.mem.peek_u32(ctx + 4),
        env.mem.peek_u32(ctx + 8),
    ) else {
        return env.fail(ERROR_INVALID_PARAMETER, INVALID_HANDLE_VALUE);
    };
    // cbSize: at least up to lpSource (12 bytes); Windows takes the v1 size 32.
    if ctx == 0 || size < 12 || flags & !ACTCTX_FLAGS_KNOWN != 0 {
        return env.fail(ERROR_INVALID_PARAMETER, INVALID_HANDLE_VALUE);
    }
    if src == 0 && flags & ACTCTX_FLAG_HMODULE_VALID == 0 {
        return env.fail(ERROR_INVALID_PARAMETER, INVALID_HANDLE_VALUE);
    }
    if src != 0 {
        let Some(p) = path_arg(env, src, wide) else {
            return INVALID_HANDLE_VALUE;
        };
        match resolve(env, &p) {
            Ok(h) if h.is_file() => {}
            Ok(h) => {
                let code = crate::files::missing_code(&h);
                return env.fail(code, INVALID_HANDLE_VALUE);
            }
            Err(e) => return env.fail(e, INVALID_HANDLE_VALUE),
        }
    }
    env.handles.add(Object::Other("activation context"))
}

fn is_ctx(env: &Env, h: u32) -> bool {
    matches!(
        env.handles.get(h),
        Some(Object::Other("activation context"))
    )
}

crate::dll! { "(kernel32 activation contexts)";
    stdcall fn CreateActCtxA(env, ctx: u32) -> u32 { create(env, ctx, false) }
    stdcall fn CreateActCtxW(env, ctx: u32) -> u32 { create(env, ctx, true) }
    // The cookie is the stack depth after the push (never 0).
    stdcall fn ActivateActCtx(env, h: u32, cookie: u32) -> bool {
        if cookie == 0 || (h != 0 && !is_ctx(env, h)) { return env.fail(ERROR_INVALID_PARAMETER, false); }
        env.k32.actctx_stack.push(h);
        env.mem.poke_u32(cookie, env.k32.actctx_stack.len() as u32);
        true
    }
    // Deactivating pops down to the cookie's frame; a cookie that is not on
    // the stack is ERROR_INVALID_PARAMETER (Windows raises
    // STATUS_SXS_INVALID_DEACTIVATION for some of these; failing is softer).
    stdcall fn DeactivateActCtx(env, flags: u32, cookie: u32) -> bool {
        let n = cookie as usize;
        if n == 0 || n > env.k32.actctx_stack.len() { return env.fail(ERROR_INVALID_PARAMETER, false); }
        env.k32.actctx_stack.truncate(n - 1);
        true
    }
    stdcall fn AddRefActCtx(env, h: u32) {}
    // A context is released when its handle is closed (one reference here).
    stdcall fn ReleaseActCtx(env, h: u32) {
        if is_ctx(env, h) { env.handles.close(h); }
    }
    stdcall fn GetCurrentActCtx(env, out: u32) -> bool {
        if out == 0 { return env.fail(ERROR_INVALID_PARAMETER, false); }
        let top = env.k32.actctx_stack.last().copied().unwrap_or(0);
        env.mem.poke_u32(out, top);
        true
    }
    stdcall fn ZombifyActCtx(env, h: u32) -> bool {
        if is_ctx(env, h) { true } else { env.fail(ERROR_INVALID_PARAMETER, false) }
    }
    // No manifest is parsed: there is nothing to report about a context.
    stdcall fn QueryActCtxW(env, flags: u32, h: u32, sub: u32, class: u32, buf: u32, cap: u32, need: u32) -> bool {
        env.fail(ERROR_INVALID_PARAMETER, false)
    }
    stdcall fn FindActCtxSectionStringA(env, flags: u32, guid: u32, section: u32, name: u32, out: u32) -> bool {
        env.fail(ERROR_SXS_KEY_NOT_FOUND, false)
    }
    stdcall fn FindActCtxSectionStringW(env, flags: u32, guid: u32, section: u32, name: u32, out: u32) -> bool {
        env.fail(ERROR_SXS_KEY_NOT_FOUND, false)
    }
    stdcall fn FindActCtxSectionGuid(env, flags: u32, guid: u32, section: u32, find: u32, out: u32) -> bool {
        env.fail(ERROR_SXS_KEY_NOT_FOUND, false)
    }
}
