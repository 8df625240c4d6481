#!/usr/bin/env python3
"""Generates toyvm/tests/fpu_data/cases.rs, the expected-value table of
toyvm/tests/fpu_cases.rs.

The expected values are computed here independently of the Rust soft-float:
operands are decoded to exact rationals (fractions.Fraction), the exact result
is formed (sums, products, quotients, square roots bracketed by integer square
roots, remainders by exact integer division; transcendental functions by
mpmath at 320 bits), and rounded by a separate implementation of the x87
rounding rules (four rounding modes, precision control, extended exponent
range, tininess after rounding, masked underflow denormalizes).

Run:  python3 toyvm/tests/fpu_gen/gen_cases.py > toyvm/tests/fpu_data/cases.rs
Deterministic: the pseudo-random operands come from a fixed seed.
"""
import random
from fractions import Fraction as Fr

import mpmath as mp

mp.mp.prec = 320

IE, DE, ZE, OE, UE, PE, SF = 1, 2, 4, 8, 16, 32, 64
C0, C1, C2, C3 = 0x100, 0x200, 0x400, 0x4000
FLAGS = 0x7F | C1  # what arithmetic cases check by default

EXT = dict(emin=-16382, emax=16383, prec=64)
DBL = dict(emin=-1022, emax=1023, prec=53)
SGL = dict(emin=-126, emax=127, prec=24)
INDEF = (0xFFFF << 64) | 0xC000000000000000
INF = (0x7FFF << 64) | (1 << 63)
NINF = (0xFFFF << 64) | (1 << 63)


def f80(sign, biased, sig):
    return ((sign << 15 | biased) << 64) | sig


def decode80(bits):
    """Exact value of a finite 80-bit encoding, or None for inf/NaN."""
    se = bits >> 64
    sig = bits & ((1 << 64) - 1)
    sign = -1 if se & 0x8000 else 1
    e = se & 0x7FFF
    if e == 0x7FFF:
        return None
    if e == 0:
        return sign * Fr(sig, 1 << (16382 + 63)) if sig else Fr(0)
    return sign * Fr(sig) * Fr(2) ** (e - 16383 - 63)


def neg0(bits):
    return (bits >> 79) & 1


def ilog2(a):
    """floor(log2(a)) for a positive Fraction."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fr(2) ** e > a:
        e -= 1
    if Fr(2) ** (e + 1) <= a:
        e += 1
    return e


def round_units(q, rc, sign):
    """Rounds a non-negative Fraction q to an integer per rc; returns (n, inexact, up)."""
    n = q.numerator // q.denominator
    rem = q - n
    if rem == 0:
        return n, False, False
    if rc == 0:
        up = rem > Fr(1, 2) or (rem == Fr(1, 2) and n % 2 == 1)
    elif rc == 1:
        up = sign
    elif rc == 2:
        up = not sign
    else:
        up = False
    return n + (1 if up else 0), True, up


def round_value(v, rc=0, p=64, fmt=EXT, sign_of_zero=0):
    """x87 rounding of an exact rational into fmt with p significand bits.
    Returns (value Fraction or 'inf', sign, flags, up)."""
    if v == 0:
        return Fr(0), sign_of_zero, 0, False
    sign = 1 if v < 0 else 0
    a = abs(v)
    p = min(p, fmt["prec"])
    e = ilog2(a)
    unit = Fr(2) ** (e - p + 1)
    n, inexact, up = round_units(a / unit, rc, sign)
    val = n * unit
    flags = 0
    if val >= Fr(2) ** fmt["emin"]:
        if val >= Fr(2) ** (fmt["emax"] + 1):
            flags |= OE | PE
            to_inf = rc == 0 or (rc == 1 and sign) or (rc == 2 and not sign)
            if to_inf:
                return "inf", sign, flags, True
            maxf = (Fr(2) ** p - 1) * Fr(2) ** (fmt["emax"] - p + 1)
            return maxf, sign, flags, False
        return val, sign, (PE if inexact else 0), up
    # tiny: masked underflow denormalizes
    unit2 = max(unit, Fr(2) ** (fmt["emin"] - fmt["prec"] + 1))
    n2, inexact2, up2 = round_units(a / unit2, rc, sign)
    if inexact2:
        flags |= UE | PE
    return n2 * unit2, sign, flags, up2


def enc_ext(val, sign):
    if val == "inf":
        return f80(sign, 0x7FFF, 1 << 63)
    if val == 0:
        return f80(sign, 0, 0)
    e = ilog2(val)
    if e < -16382:
        sig = val / Fr(2) ** (-16382 - 63)
        assert sig.denominator == 1
        return f80(sign, 0, int(sig))
    sig = val / Fr(2) ** (e - 63)
    assert sig.denominator == 1, val
    return f80(sign, e + 16383, int(sig))


def enc_ieee(val, sign, fmt, ebits):
    fbits = fmt["prec"] - 1
    if val == "inf":
        return (sign << (ebits + fbits)) | (((1 << ebits) - 1) << fbits)
    if val == 0:
        return sign << (ebits + fbits)
    e = ilog2(val)
    bias = fmt["emax"]
    if e < fmt["emin"]:
        frac = val / Fr(2) ** (fmt["emin"] - fbits)
        assert frac.denominator == 1
        return (sign << (ebits + fbits)) | int(frac)
    frac = val / Fr(2) ** (e - fbits) - (1 << fbits)
    assert frac.denominator == 1
    return (sign << (ebits + fbits)) | ((e + bias) << fbits) | int(frac)


def rnd80(v, rc=0, p=64, sign_of_zero=0):
    val, sign, flags, up = round_value(v, rc, p, EXT, sign_of_zero)
    return enc_ext(val, sign), flags | (C1 if up else 0)


def mpf_to_fr(x):
    sign, m, e, _ = mp.mpf(x)._mpf_  # man_exp drops the sign
    v = Fr(int(m)) * Fr(2) ** int(e)
    return -v if sign else v


def irrational(x):
    """An mpmath value as a Fraction nudged off any representable boundary
    (the true value is irrational; 320-bit precision dwarfs 64)."""
    return mpf_to_fr(x)


# ---------------------------------------------------------------- cases

cases = []


def case(name, code, stack, st, sw=0, sw_mask=FLAGS, cw=0x037F, mem=b"", mem_out=None, mem_out_len=0):
    cases.append(
        dict(name=name, code=code, stack=stack, st=st, sw=sw, sw_mask=sw_mask, cw=cw, mem=mem, mem_out=mem_out)
    )


def cw_of(rc, pc=3):
    return 0x0040 | 0x3F | (pc << 8) | (rc << 10)


rng = random.Random(0x387486)


def rand_normal(emin=-40, emax=40):
    e = rng.randint(emin, emax)
    sig = (1 << 63) | rng.getrandbits(63)
    return f80(rng.getrandbits(1), e + 16383, sig)


def pc_bits(pc):
    return {0: 24, 2: 53, 3: 64}[pc]


BIN = {
    "fadd": (bytes([0xD8, 0xC1]), lambda a, b: a + b),
    "fsub": (bytes([0xD8, 0xE1]), lambda a, b: a - b),
    "fsubr": (bytes([0xD8, 0xE9]), lambda a, b: b - a),
    "fmul": (bytes([0xD8, 0xC9]), lambda a, b: a * b),
    "fdiv": (bytes([0xD8, 0xF1]), lambda a, b: a / b),
    "fdivr": (bytes([0xD8, 0xF9]), lambda a, b: b / a),
}

# Random basic arithmetic in every rounding mode and precision.
for opname, (code, fn) in BIN.items():
    for rc in range(4):
        for pc in (0, 2, 3):
            for k in range(6):
                a, b = rand_normal(), rand_normal()
                va, vb = decode80(a), decode80(b)
                exact = fn(va, vb)
                zsign = 1 if rc == 1 else 0
                r, fl = rnd80(exact, rc, pc_bits(pc), zsign)
                case(f"{opname} rc{rc} pc{pc} #{k}", code, [a, b], [r, b], fl, cw=cw_of(rc, pc))

# Exact cancellation gives +0, or -0 when rounding down.
one = f80(0, 0x3FFF, 1 << 63)
for rc in range(4):
    z = f80(1 if rc == 1 else 0, 0, 0)
    case(f"x-x zero sign rc{rc}", BIN["fsub"][0], [one, one], [z, one], 0, cw=cw_of(rc))
# Signed zeros.
PZ, NZ = f80(0, 0, 0), f80(1, 0, 0)
case("-0 + -0 = -0", BIN["fadd"][0], [NZ, NZ], [NZ, NZ], 0)
case("-0 + +0 = +0", BIN["fadd"][0], [NZ, PZ], [PZ, PZ], 0)
case("-0 * +3 = -0", BIN["fmul"][0], [NZ, f80(0, 0x4000, 0xC000000000000000)], [NZ, f80(0, 0x4000, 0xC000000000000000)], 0)

# Infinities and invalid operations.
case("inf - inf invalid", BIN["fsub"][0], [INF, INF], [INDEF, INF], IE)
case("0 * inf invalid", BIN["fmul"][0], [PZ, INF], [INDEF, INF], IE)
case("0 / 0 invalid", BIN["fdiv"][0], [PZ, NZ], [INDEF, NZ], IE)
case("inf / inf invalid", BIN["fdiv"][0], [INF, NINF], [INDEF, NINF], IE)
case("1 / 0 zero divide", BIN["fdiv"][0], [one, NZ], [NINF, NZ], ZE)
case("1 / -inf = -0", BIN["fdiv"][0], [one, NINF], [NZ, NINF], 0)
case("inf + 1 = inf", BIN["fadd"][0], [INF, one], [INF, one], 0)
# Unmasked zero divide: destination unchanged, ES and B set.
case("1 / 0 unmasked ZE", BIN["fdiv"][0], [one, PZ], [one, PZ], ZE | 0x80 | 0x8000, sw_mask=0xFFFF & ~0x3800 & ~C0 & ~C2 & ~C3 & ~C1, cw=0x037F & ~ZE)

# NaN propagation.
QNAN_A = f80(0, 0x7FFF, 0xC000000000000001)
QNAN_B = f80(1, 0x7FFF, 0xC000000000000002)
SNAN_A = f80(0, 0x7FFF, 0x8000000000000005)
SNAN_B = f80(0, 0x7FFF, 0x8000000000000009)
case("qnan + 1 = qnan", BIN["fadd"][0], [QNAN_A, one], [QNAN_A, one], 0)
case("1 + qnan = qnan", BIN["fadd"][0], [one, QNAN_B], [QNAN_B, QNAN_B], 0)
case("qnan + qnan larger significand", BIN["fadd"][0], [QNAN_A, QNAN_B], [QNAN_B, QNAN_B], 0)
case("snan + 1 -> quiet, IE", BIN["fadd"][0], [SNAN_A, one], [SNAN_A | (1 << 62), one], IE)
case("snan + qnan -> the qnan, IE", BIN["fmul"][0], [SNAN_B, QNAN_A], [QNAN_A, QNAN_A], IE)
case("snan + snan larger significand", BIN["fadd"][0], [SNAN_A, SNAN_B], [SNAN_B | (1 << 62), SNAN_B], IE)
case("qnan / 0 no ZE", BIN["fdiv"][0], [QNAN_A, PZ], [QNAN_A, PZ], 0)
UNNORMAL = f80(0, 0x3FFF, 0x4000000000000000)
case("unnormal operand invalid", BIN["fadd"][0], [UNNORMAL, one], [INDEF, one], IE)
PSEUDO_INF = f80(0, 0x7FFF, 0)
case("pseudo-infinity invalid", BIN["fmul"][0], [one, PSEUDO_INF], [INDEF, PSEUDO_INF], IE)

# Denormals: DE on operands, masked underflow, overflow per rounding mode.
DEN = f80(0, 0, 0x0000000000001234)
PSEUDO_DEN = f80(0, 0, 0x8000000000000001)
r, fl = rnd80(decode80(DEN) + decode80(DEN))
case("denormal + denormal", BIN["fadd"][0], [DEN, DEN], [r, DEN], fl | DE)
r, fl = rnd80(decode80(PSEUDO_DEN) * 2)
case("pseudo-denormal * 2", BIN["fmul"][0], [PSEUDO_DEN, f80(0, 0x4000, 1 << 63)], [r, f80(0, 0x4000, 1 << 63)], fl | DE)
tiny = f80(0, 1, 0xC000000000000001)
for rc in range(4):
    r, fl = rnd80(decode80(tiny) / 3, rc)
    case(f"underflow to denormal rc{rc}", BIN["fdiv"][0], [tiny, f80(0, 0x4000, 0xC000000000000000)], [r, f80(0, 0x4000, 0xC000000000000000)], fl, cw=cw_of(rc))
    for pc in (0, 2):
        r, fl = rnd80(decode80(tiny) / 3, rc, pc_bits(pc))
        case(f"underflow to denormal rc{rc} pc{pc}", BIN["fdiv"][0], [tiny, f80(0, 0x4000, 0xC000000000000000)], [r, f80(0, 0x4000, 0xC000000000000000)], fl, cw=cw_of(rc, pc))
# Far below the smallest denormal: zero, or the smallest denormal when rounding away.
t = f80(0, 0x0100, 0x8000000000000000)
for rc in range(4):
    for sgn in (0, 1):
        a = t | (sgn << 79)
        r, fl = rnd80(decode80(a) * decode80(t), rc, 64, sgn)
        case(f"underflow below denormals rc{rc} sign{sgn}", BIN["fmul"][0], [a, t], [r, t], fl, cw=cw_of(rc))
big = f80(0, 0x7FFE, 0xF000000000000000)
for rc in range(4):
    for sgn in (0, 1):
        a = big | (sgn << 79)
        r, fl = rnd80(decode80(a) * 2, rc)
        case(f"overflow rc{rc} sign{sgn}", BIN["fadd"][0], [a, a], [r, a], fl, cw=cw_of(rc))
# Precision control keeps the extended exponent range.
r, fl = rnd80(decode80(big) * 2 * Fr(1, 4), 0, 24)
case("pc24 keeps extended range", BIN["fmul"][0], [big, f80(0, 0x3FFE, 1 << 63)], [rnd80(decode80(big) / 2, 0, 24)[0], f80(0, 0x3FFE, 1 << 63)], rnd80(decode80(big) / 2, 0, 24)[1], cw=cw_of(0, 0))
# Unmasked overflow to a register: exponent wrapped by 24576.
a = f80(0, 0x7FFE, 0x8000000000000000)
wrapped = f80(0, 0x7FFF - 24576, 0x8000000000000000)
case("unmasked overflow wraps exponent", BIN["fadd"][0], [a, a], [wrapped, a], OE | 0x80, sw_mask=0x7F | 0x80, cw=0x037F & ~OE)

# Square root.
def isqrt(n):
    return mp.isqrt(n) if hasattr(mp, "isqrt") else int(mp.floor(mp.sqrt(n)))


def sqrt_exact(v):
    """sqrt(v) as a Fraction off boundaries when irrational."""
    import math
    N = 300 + max(0, -ilog2(v))
    scaled = v * Fr(4) ** N
    n = scaled.numerator // scaled.denominator
    r = math.isqrt(n)
    if r * r == n and scaled.denominator == 1:
        return Fr(r, 2 ** N)
    return Fr(2 * r + 1, 2 ** (N + 1))


for rc in range(4):
    for pc in (0, 2, 3):
        for k in range(5):
            a = rand_normal(-100, 100) & ~(1 << 79)
            r, fl = rnd80(sqrt_exact(decode80(a)), rc, pc_bits(pc))
            case(f"fsqrt rc{rc} pc{pc} #{k}", bytes([0xD9, 0xFA]), [a], [r], fl, cw=cw_of(rc, pc))
case("fsqrt 2", bytes([0xD9, 0xFA]), [f80(0, 0x4000, 1 << 63)], [rnd80(sqrt_exact(Fr(2)))[0]], rnd80(sqrt_exact(Fr(2)))[1])
case("fsqrt -0 = -0", bytes([0xD9, 0xFA]), [NZ], [NZ], 0)
case("fsqrt -1 invalid", bytes([0xD9, 0xFA]), [one | (1 << 79)], [INDEF], IE)
v = Fr((1 << 24) + 1) ** 2 / 4  # (m + 1/2)^2 at 24 bits: exact tie for pc24
a = enc_ext(v, 0)
for rc in range(4):
    r, fl = rnd80(sqrt_exact(v), rc, 24)
    case(f"fsqrt pc24 tie rc{rc}", bytes([0xD9, 0xFA]), [a], [r], fl, cw=cw_of(rc, 0))
r, fl = rnd80(sqrt_exact(decode80(DEN)))
case("fsqrt denormal", bytes([0xD9, 0xFA]), [DEN], [r], fl | DE)

# FRNDINT in every mode (precision control does not apply).
for rc in range(4):
    for v in (Fr(5, 2), Fr(-5, 2), Fr(7, 2), Fr(1, 3), Fr(-2, 3), Fr(123456789, 1000)):
        a = rnd80(v)[0]
        n, inexact, up = round_units(abs(decode80(a)), rc, decode80(a) < 0)
        res = enc_ext(Fr(n), 1 if decode80(a) < 0 else 0)
        case(f"frndint {v} rc{rc}", bytes([0xD9, 0xFC]), [a], [res], (PE if inexact else 0) | (C1 if up else 0), cw=cw_of(rc, 0))

# FPREM / FPREM1: exact remainders, quotient bits, partial remainder.
def prem_expect(a, b, nearest):
    va, vb = decode80(a), decode80(b)
    ea, eb = ilog2(abs(va)), ilog2(abs(vb))
    d = ea - eb
    if d >= 64:
        n = 32 + (d & 31)
        scale = Fr(2) ** (d - n)
        q = int(abs(va) / (abs(vb) * scale))
        r = abs(va) - q * abs(vb) * scale
        if va < 0:
            r = -r
        partial = True
    else:
        t = abs(va) / abs(vb)
        q = t.numerator // t.denominator
        if nearest:
            rem = t - q
            if rem > Fr(1, 2) or (rem == Fr(1, 2) and q % 2 == 1):
                q += 1
        r = abs(va) - q * abs(vb)
        if va < 0:
            r = -r
        partial = False
    bits, _ = rnd80(r, 0, 64, neg0(a))
    sw = (C0 if q & 4 else 0) | (C3 if q & 2 else 0) | (C1 if q & 1 else 0) | (C2 if partial else 0)
    return bits, sw


for k in range(24):
    a = rand_normal(-5, 70 if k % 3 == 0 else 20)
    b = rand_normal(-5, 5)
    for nearest, code in ((False, bytes([0xD9, 0xF8])), (True, bytes([0xD9, 0xF5]))):
        r, sw = prem_expect(a, b, nearest)
        case(f"fprem{'1' if nearest else ''} #{k}", code, [a, b], [r, b], sw, sw_mask=0x7F | C0 | C1 | C2 | C3)
for va_, vb_ in ((Fr(3, 4), Fr(1)), (Fr(-3, 4), Fr(1)), (Fr(3, 2), Fr(1)), (Fr(5, 2), Fr(1)), (Fr(1, 2), Fr(1)), (Fr(-7), Fr(2))):
    a, b = enc_ext(abs(va_), 1 if va_ < 0 else 0), enc_ext(vb_, 0)
    for nearest, code in ((False, bytes([0xD9, 0xF8])), (True, bytes([0xD9, 0xF5]))):
        r, sw = prem_expect(a, b, nearest)
        case(f"fprem{'1' if nearest else ''} {va_} by {vb_}", code, [a, b], [r, b], sw, sw_mask=0x7F | C0 | C1 | C2 | C3)
a, b = f80(0, 0x4000 + 100, 0xC90FDAA22168C234), f80(0, 0x3FFF, 0xC90FDAA22168C235)
r, sw = prem_expect(a, b, False)
case("fprem partial (diff 100)", bytes([0xD9, 0xF8]), [a, b], [r, b], sw, sw_mask=0x7F | C0 | C1 | C2 | C3)
case("fprem inf invalid", bytes([0xD9, 0xF8]), [INF, one], [INDEF, one], IE, sw_mask=0x7F)
case("fprem by zero invalid", bytes([0xD9, 0xF8]), [one, PZ], [INDEF, PZ], IE, sw_mask=0x7F)

# FSCALE and FXTRACT.
for n in (-20000, -16400, -3, 0, 7, 16000, 20000):
    x = f80(0, 0x3FFF, 0xB000000000000000)
    nb = rnd80(Fr(n) + (Fr(1, 2) if n >= 0 else -Fr(1, 2)))[0]  # non-integer: truncated
    r, fl = rnd80(decode80(x) * Fr(2) ** n)
    case(f"fscale by {n}.5", bytes([0xD9, 0xFD]), [x, nb], [r, nb], fl)
case("fscale 0 by +inf invalid", bytes([0xD9, 0xFD]), [PZ, INF], [INDEF, INF], IE)
case("fscale 1 by -inf = 0", bytes([0xD9, 0xFD]), [one, NINF], [PZ, NINF], 0)
x = rnd80(Fr(-1234567, 1000))[0]
case("fxtract -1234.567", bytes([0xD9, 0xF4]), [x], [f80(1, 0x3FFF, x & ((1 << 64) - 1)), enc_ext(Fr(10), 0)], 0)
case("fxtract 0 -> ZE", bytes([0xD9, 0xF4]), [NZ], [NZ, NINF], ZE)
case("fxtract denormal", bytes([0xD9, 0xF4]), [DEN], [f80(0, 0x3FFF, 0x1234 << 51), enc_ext(Fr(16382 + 51), 1)], DE)

# Comparisons and classification.
CMP = C0 | C2 | C3 | C1 | 0x7F
two = f80(0, 0x4000, 1 << 63)
for name, code, pops in (("fcom", bytes([0xD8, 0xD1]), 0), ("fcomp", bytes([0xD8, 0xD9]), 1), ("fcompp", bytes([0xDE, 0xD9]), 2), ("fucom", bytes([0xDD, 0xE1]), 0), ("fucompp", bytes([0xDA, 0xE9]), 2)):
    for a, b, sw in ((one, two, C0), (two, one, 0), (one, one, C3), (PZ, NZ, C3), (NINF, one, C0), (DEN, PZ, 0)):
        st = [a, b][pops:] if pops < 2 else []
        case(f"{name} {a:x} {b:x}", code, [a, b], st, sw | (DE if a == DEN else 0), sw_mask=CMP)
    quiet = name.startswith("fucom")
    st = [QNAN_A, one][pops:] if pops < 2 else []
    case(f"{name} qnan", code, [QNAN_A, one], st, C0 | C2 | C3 | (0 if quiet else IE), sw_mask=CMP)
    st = [SNAN_A, one][pops:] if pops < 2 else []
    case(f"{name} snan", code, [SNAN_A, one], st, C0 | C2 | C3 | IE, sw_mask=CMP)
case("ftst -1", bytes([0xD9, 0xE4]), [one | (1 << 79)], [one | (1 << 79)], C0, sw_mask=CMP)
case("ftst +0", bytes([0xD9, 0xE4]), [PZ], [PZ], C3, sw_mask=CMP)
case("ftst qnan", bytes([0xD9, 0xE4]), [QNAN_A], [QNAN_A], C0 | C2 | C3 | IE, sw_mask=CMP)
FXAM = C0 | C1 | C2 | C3
for name, v, sw in (
    ("+normal", one, C2),
    ("-normal", one | (1 << 79), C2 | C1),
    ("+0", PZ, C3),
    ("-0", NZ, C3 | C1),
    ("+inf", INF, C2 | C0),
    ("-inf", NINF, C2 | C0 | C1),
    ("qnan", QNAN_A, C0),
    ("-qnan", QNAN_B, C0 | C1),
    ("snan", SNAN_A, C0),
    ("denormal", DEN, C3 | C2),
    ("pseudo-denormal", PSEUDO_DEN, C3 | C2),
    ("unnormal", UNNORMAL, 0),
    ("pseudo-infinity", PSEUDO_INF, 0),
):
    case(f"fxam {name}", bytes([0xD9, 0xE5]), [v], [v], sw, sw_mask=FXAM)
case("fxam empty", bytes([0xD9, 0xE5]), [], [], C3 | C0, sw_mask=C0 | C2 | C3)

# Memory loads.
def mem_case(name, code, mem, expect_st, sw=0, cw=0x037F, stack=None, sw_mask=FLAGS):
    case(name, code, stack or [], expect_st, sw, sw_mask=sw_mask, cw=cw, mem=mem)


mem_case("fld m32 1.5", bytes([0xD9, 0x07]), (0x3FC00000).to_bytes(4, "little"), [f80(0, 0x3FFF, 0xC000000000000000)])
mem_case("fld m32 denormal", bytes([0xD9, 0x07]), (0x00000001).to_bytes(4, "little"), [enc_ext(Fr(2) ** -149, 0)], DE)
mem_case("fld m32 snan", bytes([0xD9, 0x07]), (0x7F800001).to_bytes(4, "little"), [f80(0, 0x7FFF, 0xC000010000000000)], IE)
mem_case("fld m64 -inf", bytes([0xDD, 0x07]), (0xFFF0000000000000).to_bytes(8, "little"), [NINF])
mem_case("fld m64 denormal", bytes([0xDD, 0x07]), (0x0000000000000003).to_bytes(8, "little"), [enc_ext(3 * Fr(2) ** -1074, 0)], DE)
mem_case("fld m64 0.1", bytes([0xDD, 0x07]), (0x3FB999999999999A).to_bytes(8, "little"), [enc_ext(Fr(0x1999999999999A, 2 ** 56), 0)])
mem_case("fld m80 snan no IE", bytes([0xDB, 0x2F]), SNAN_A.to_bytes(10, "little")[:8] + (SNAN_A >> 64).to_bytes(2, "little"), [SNAN_A])
mem_case("fild m16 -32768", bytes([0xDF, 0x07]), (0x8000).to_bytes(2, "little"), [enc_ext(Fr(32768), 1)])
mem_case("fild m32 123456789", bytes([0xDB, 0x07]), (123456789).to_bytes(4, "little"), [enc_ext(Fr(123456789), 0)])
mem_case("fild m64 min", bytes([0xDF, 0x2F]), (1 << 63).to_bytes(8, "little"), [enc_ext(Fr(2) ** 63, 1)])
mem_case("fbld -123456789012345678", bytes([0xDF, 0x27]), bytes([0x78, 0x56, 0x34, 0x12, 0x90, 0x78, 0x56, 0x34, 0x12, 0x80]), [enc_ext(Fr(123456789012345678), 1)])
mem_case("fbld -0", bytes([0xDF, 0x27]), bytes([0] * 9 + [0x80]), [NZ])
mem_case("fiadd m16", bytes([0xDE, 0x07]), (7).to_bytes(2, "little"), [enc_ext(Fr(8), 0)], stack=[one])
mem_case("fadd m32 denormal DE", bytes([0xD8, 0x07]), (1).to_bytes(4, "little"), [rnd80(1 + Fr(2) ** -149)[0]], rnd80(1 + Fr(2) ** -149)[1] | DE, stack=[one])
mem_case("fdivr m64", bytes([0xDC, 0x3F]), (0x4024000000000000).to_bytes(8, "little"), [rnd80(Fr(10, 3))[0]], rnd80(Fr(10, 3))[1], stack=[enc_ext(Fr(3), 0)])

# Memory stores.
def store_case(name, code, value, size, expect, sw=0, cw=0x037F, pops=0):
    st = [] if pops else [value]
    case(name, code, [value], st, sw, cw=cw, mem=bytes([0xAA] * 10), mem_out=expect.to_bytes(size, "little") if isinstance(expect, int) else expect)


for rc in range(4):
    for k in range(6):
        a = rand_normal(-30, 30)
        va = decode80(a)
        val, sign, fl, up = round_value(va, rc, 24, SGL)
        store_case(f"fst m32 rc{rc} #{k}", bytes([0xD9, 0x17]), a, 4, enc_ieee(val, sign, SGL, 8), fl | (C1 if up else 0), cw_of(rc))
        val, sign, fl, up = round_value(va, rc, 53, DBL)
        store_case(f"fst m64 rc{rc} #{k}", bytes([0xDD, 0x17]), a, 8, enc_ieee(val, sign, DBL, 11), fl | (C1 if up else 0), cw_of(rc))
    for v in (Fr(5, 2), Fr(-5, 2), Fr(-7, 3), Fr(32767), Fr(65535, 2)):
        a = rnd80(v)[0]
        n, inexact, up = round_units(abs(decode80(a)), rc, decode80(a) < 0)
        n = -n if decode80(a) < 0 else n
        if -32768 <= n <= 32767:
            store_case(f"fist m16 {v} rc{rc}", bytes([0xDF, 0x17]), a, 2, n & 0xFFFF, (PE if inexact else 0) | (C1 if up else 0), cw_of(rc))
        else:
            store_case(f"fist m16 {v} rc{rc} overflow", bytes([0xDF, 0x17]), a, 2, 0x8000, IE, cw_of(rc))
# Single/double underflow and overflow on store.
tiny_s = rnd80(Fr(3, 2) * Fr(2) ** -140)[0]
val, sign, fl, up = round_value(decode80(tiny_s), 0, 24, SGL)
store_case("fst m32 denormal result", bytes([0xD9, 0x17]), tiny_s, 4, enc_ieee(val, sign, SGL, 8), fl | (C1 if up else 0))
huge = rnd80(Fr(2) ** 200)[0]
store_case("fst m32 overflow", bytes([0xD9, 0x17]), huge, 4, 0x7F800000, OE | PE | C1)
store_case("fst m32 overflow rz", bytes([0xD9, 0x17]), huge, 4, 0x7F7FFFFF, OE | PE, cw_of(3))
store_case("fst m32 qnan", bytes([0xD9, 0x17]), QNAN_B, 4, 0xFFC00000, 0)
store_case("fst m64 snan", bytes([0xDD, 0x17]), SNAN_B, 8, 0x7FF8000000000000, IE)
store_case("fstp m80", bytes([0xDB, 0x3F]), SNAN_A, 10, SNAN_A, 0, pops=1)
store_case("fist m32 overflow", bytes([0xDB, 0x17]), rnd80(Fr(2) ** 31)[0], 4, 0x80000000, IE)
store_case("fist m32 nan", bytes([0xDB, 0x17]), QNAN_A, 4, 0x80000000, IE)
store_case("fistp m64 -2^63", bytes([0xDF, 0x3F]), enc_ext(Fr(2) ** 63, 1), 8, 1 << 63, 0, pops=1)
store_case("fistp m64 2^63 overflow", bytes([0xDF, 0x3F]), enc_ext(Fr(2) ** 63, 0), 8, 1 << 63, IE, pops=1)
store_case("fbstp 123456789012345678", bytes([0xDF, 0x37]), enc_ext(Fr(123456789012345678), 0), 10, bytes([0x78, 0x56, 0x34, 0x12, 0x90, 0x78, 0x56, 0x34, 0x12, 0x00]), 0, pops=1)
store_case("fbstp -2.5 rn", bytes([0xDF, 0x37]), rnd80(Fr(-5, 2))[0], 10, bytes([2] + [0] * 8 + [0x80]), PE, pops=1)
store_case("fbstp 10^18 invalid", bytes([0xDF, 0x37]), enc_ext(Fr(10) ** 18, 0), 10, bytes([0] * 7 + [0xC0, 0xFF, 0xFF]), IE, pops=1)
# Unmasked invalid on store: memory unchanged, no pop.
case("fistp m16 overflow unmasked", bytes([0xDF, 0x1F]), [enc_ext(Fr(40000), 0)], [enc_ext(Fr(40000), 0)], IE | 0x80, sw_mask=0xFF, cw=0x037E, mem=bytes([0xAA] * 10), mem_out=bytes([0xAA, 0xAA]))

# Stack faults.
case("fadd empty st1 underflow", BIN["fadd"][0], [one], [INDEF], IE | SF, sw_mask=0x7F | C1)
case("fld1 onto full stack overflow", bytes([0xD9, 0xE8]), [one] * 8, [INDEF] + [one] * 7, IE | SF | C1, sw_mask=0x7F | C1)
case("fst m32 empty underflow", bytes([0xD9, 0x17]), [], [], IE | SF, sw_mask=0x7F | C1, mem=bytes([0xAA] * 4), mem_out=(0xFFC00000).to_bytes(4, "little"))
case("fld1 overflow unmasked", bytes([0xD9, 0xE8]), [one] * 8, [one] * 8, IE | SF | C1 | 0x80 | 0x8000, sw_mask=0xFFFF & ~0x3800, cw=0x037E)
case("fxch with empty st1", bytes([0xD9, 0xC9]), [two], [INDEF, two], IE | SF, sw_mask=0x7F | C1)

# Constants in every rounding mode.
CONSTS = {
    "fldpi": (0xEB, mp.pi),
    "fldl2e": (0xEA, 1 / mp.log(2)),
    "fldl2t": (0xE9, mp.log(10, 2)),
    "fldlg2": (0xEC, mp.log10(2)),
    "fldln2": (0xED, mp.log(2)),
}
for name, (op, val) in CONSTS.items():
    for rc in range(4):
        r, _ = rnd80(irrational(val), rc)
        case(f"{name} rc{rc}", bytes([0xD9, op]), [], [r], 0, sw_mask=0x7F | C1, cw=cw_of(rc))
case("fld1", bytes([0xD9, 0xE8]), [], [one], 0)
case("fldz", bytes([0xD9, 0xEE]), [], [PZ], 0)

# Transcendentals (rounded per RC from 320-bit mpmath values).
PIO2_66 = Fr((0xC90FDAA22168C234 << 2) | 3, 2 ** 65)


def x87_trig(v):
    """(sin, cos) of v with the x87's 66-bit pi/2 reduction."""
    a = abs(v)
    k = int(a / PIO2_66)
    r = a - k * PIO2_66
    if r > PIO2_66 / 2:
        k += 1
        r -= PIO2_66
    rm = mp.mpf(r.numerator) / r.denominator
    s, c = mp.sin(rm), mp.cos(rm)
    s, c = [(s, c), (c, -s), (-s, -c), (-c, s)][k % 4]
    if v < 0:
        s = -s
    return s, c


def trig_cases(x_bits, rc=0, label=""):
    v = decode80(x_bits)
    s, c = x87_trig(v)
    rs, fs = rnd80(irrational(s), rc)
    rcv, fc = rnd80(irrational(c), rc)
    cw = cw_of(rc)
    case(f"fsin {label} rc{rc}", bytes([0xD9, 0xFE]), [x_bits], [rs], fs, cw=cw)
    case(f"fcos {label} rc{rc}", bytes([0xD9, 0xFF]), [x_bits], [rcv], fc, cw=cw)
    rt, ft = rnd80(irrational(s / c), rc)
    case(f"fptan {label} rc{rc}", bytes([0xD9, 0xF2]), [x_bits], [one, rt], ft, cw=cw)
    case(f"fsincos {label} rc{rc}", bytes([0xD9, 0xFB]), [x_bits], [rcv, rs], (fs | fc) & ~C1 | (fc & C1), cw=cw)


for rc in range(4):
    for k in range(5):
        trig_cases(rand_normal(-6, 3), rc, f"#{k}")
trig_cases(rnd80(Fr(1, 2))[0], 0, "0.5")
trig_cases(rnd80(irrational(mp.pi))[0], 0, "fldpi")
trig_cases(f80(0, 0x3FFF + 40, 0xDEADBEEF12345678), 0, "2^40 arg")
trig_cases(f80(0, 0x3FFF + 62, 0xFFFFFFFFFFFFFFFF), 0, "2^63- arg")
case("fsin 2^63 out of range", bytes([0xD9, 0xFE]), [f80(0, 0x3FFF + 63, 1 << 63)], [f80(0, 0x3FFF + 63, 1 << 63)], C2, sw_mask=0x7F | C2)
case("fptan 2^63 out of range", bytes([0xD9, 0xF2]), [f80(0, 0x3FFF + 63, 1 << 63)], [f80(0, 0x3FFF + 63, 1 << 63)], C2, sw_mask=0x7F | C2)
case("fsin inf invalid", bytes([0xD9, 0xFE]), [INF], [INDEF], IE, sw_mask=0x7F | C2)
case("fsin -0", bytes([0xD9, 0xFE]), [NZ], [NZ], 0)
case("fcos 0", bytes([0xD9, 0xFF]), [PZ], [one], 0)
xd = Fr(2) ** -16400
r, fl = rnd80(xd - xd ** 3 / 6 + xd ** 5 / 120)  # below mpmath's working precision
case("fsin denormal", bytes([0xD9, 0xFE]), [enc_ext(Fr(2) ** -16400, 0)], [r], fl | DE)

for rc in range(4):
    for k in range(5):
        y, x = rand_normal(-8, 8), rand_normal(-8, 8)
        vy, vx = decode80(y), decode80(x)
        r, fl = rnd80(irrational(mp.atan2(mp.mpf(vy.numerator) / vy.denominator, mp.mpf(vx.numerator) / vx.denominator)), rc)
        case(f"fpatan rc{rc} #{k}", bytes([0xD9, 0xF3]), [x, y], [r], fl, cw=cw_of(rc))
        x = rand_normal(-20, 20) & ~(1 << 79)
        vx = decode80(x)
        val = mp.log(mp.mpf(vx.numerator) / vx.denominator, 2) * (mp.mpf(vy.numerator) / vy.denominator)
        r, fl = rnd80(irrational(val), rc)
        case(f"fyl2x rc{rc} #{k}", bytes([0xD9, 0xF1]), [x, y], [r], fl, cw=cw_of(rc))
        x = rand_normal(-30, -3)
        vx = decode80(x)
        val = mp.log1p(mp.mpf(vx.numerator) / vx.denominator) / mp.log(2) * (mp.mpf(vy.numerator) / vy.denominator)
        r, fl = rnd80(irrational(val), rc)
        case(f"fyl2xp1 rc{rc} #{k}", bytes([0xD9, 0xF9]), [x, y], [r], fl, cw=cw_of(rc))
        x = rand_normal(-30, -1)
        vx = decode80(x)
        val = mp.expm1(mp.log(2) * (mp.mpf(vx.numerator) / vx.denominator))
        r, fl = rnd80(irrational(val), rc)
        case(f"f2xm1 rc{rc} #{k}", bytes([0xD9, 0xF0]), [x], [r], fl, cw=cw_of(rc))
PI80 = rnd80(irrational(mp.pi))
case("fpatan(+0, -0) = pi", bytes([0xD9, 0xF3]), [NZ, PZ], [PI80[0]], PI80[1])
case("fpatan(-0, +0) = -0", bytes([0xD9, 0xF3]), [PZ, NZ], [NZ], 0)
r = rnd80(irrational(-3 * mp.pi / 4))
case("fpatan(-inf, -inf) = -3pi/4", bytes([0xD9, 0xF3]), [NINF, NINF], [r[0]], r[1])
case("fyl2x(8) * 3 exact", bytes([0xD9, 0xF1]), [enc_ext(Fr(8), 0), enc_ext(Fr(3), 0)], [enc_ext(Fr(9), 0)], 0)
case("fyl2x(0) * 1 zero divide", bytes([0xD9, 0xF1]), [PZ, one], [NINF], ZE)
case("fyl2x(-1) invalid", bytes([0xD9, 0xF1]), [one | (1 << 79), one], [INDEF], IE)
case("fyl2x(1) * inf invalid", bytes([0xD9, 0xF1]), [one, INF], [INDEF], IE)
case("f2xm1 -1 = -0.5", bytes([0xD9, 0xF0]), [one | (1 << 79)], [enc_ext(Fr(1, 2), 1)], 0)
case("f2xm1 1 = 1", bytes([0xD9, 0xF0]), [one], [one], 0)
case("f2xm1 -0", bytes([0xD9, 0xF0]), [NZ], [NZ], 0)


# ---------------------------------------------------------------- output

def rust_bytes(b):
    return "&[" + ", ".join(f"0x{x:02X}" for x in b) + "]"


print("// Generated by toyvm/tests/fpu_gen/gen_cases.py; do not edit by hand.")
print("// Expected values: exact rationals and mpmath (320-bit), rounded by the")
print("// generator's own x87 rounding model.")
print("pub const CASES: &[Case] = &[")
for c in cases:
    stack = "&[" + ", ".join(f"0x{v:020X}" for v in c["stack"]) + "]"
    st = "&[" + ", ".join(f"0x{v:020X}" for v in c["st"]) + "]"
    mem_out = "None" if c["mem_out"] is None else f"Some({rust_bytes(c['mem_out'])})"
    name = c["name"].replace('"', "'")
    print(
        f'    Case {{ name: "{name}", code: {rust_bytes(c["code"])}, cw: 0x{c["cw"]:04X}, stack: {stack}, mem: {rust_bytes(c["mem"])}, st: {st}, sw: 0x{c["sw"]:04X}, sw_mask: 0x{c["sw_mask"]:04X}, mem_out: {mem_out} }},'
    )
print("];")
print(f"// {len(cases)} cases")
