#!/usr/bin/env python3
"""Prints the 128-bit constant tables of toyvm/src/cpu/fpu/transcendental.rs.

Each constant is (exp, sig) with value = sig / 2^127 * 2^exp, sig rounded to
nearest at 128 bits, computed with mpmath at 400 bits. Run:
    python3 toyvm/tests/fpu_gen/constants.py
"""
import mpmath as mp

mp.mp.prec = 400


def wide(x):
    x = mp.mpf(x)
    assert x > 0
    e = int(mp.floor(mp.log(x, 2)))
    # correct e for rounding near powers of two
    while x >= mp.mpf(2) ** (e + 1):
        e += 1
    while x < mp.mpf(2) ** e:
        e -= 1
    sig = int(mp.nint(x / mp.mpf(2) ** e * mp.mpf(2) ** 127))
    if sig >> 128:
        sig >>= 1
        e += 1
    return e, sig


def show(name, x):
    e, s = wide(x)
    return f"pub const {name}: Wide = Wide::c({e}, 0x{s:032X});"


print(show("PI", mp.pi))
print(show("PI_2", mp.pi / 2))
print(show("PI_4", mp.pi / 4))
print(show("PI_3_4", 3 * mp.pi / 4))
print(show("LN2", mp.log(2)))
print(show("LOG2_E", 1 / mp.log(2)))
print(show("LOG2_10", mp.log(10, 2)))
print(show("LOG10_2", mp.log10(2)))
print("/// atan(k/16) for k = 0..=16.")
print("pub const ATAN_K16: [Wide; 17] = [Wide::ZERO,")
for k in range(1, 17):
    e, s = wide(mp.atan(mp.mpf(k) / 16))
    print(f"    Wide::c({e}, 0x{s:032X}),")
print("];")
print("/// ln(k/32) for k = 22..=46 (index k - 22; ln 1 = 0 exactly).")
print("pub const LN_K32: [Wide; 25] = [")
for k in range(22, 47):
    if k == 32:
        print("    Wide::ZERO,")
        continue
    v = mp.log(mp.mpf(k) / 32)
    e, s = wide(abs(v))
    neg = "true" if v < 0 else "false"
    print(f"    Wide::cs({neg}, {e}, 0x{s:032X}),")
print("];")
