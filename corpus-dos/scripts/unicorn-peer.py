#!/usr/bin/env python3
# unicorn-peer.py -- dev-only third opinion (pip install unicorn): runs compute-only COM
# and MZ EXE programs (no devices, no #DE) under unicorn (QEMU TCG) with a minimal DOS
# shim and prints their output. Used to decide who is right when DOSBox 0.74 and our
# expectation disagree, and as a second loader for the EXE family (an independent MZ
# loader: relocations, SS:SP, min/max alloc sizing, PSP memory-top word and MCBs).
#
#   unicorn-peer.py [--png DIR] [--count] [--fill SEED] [--clobber] PROG.COM|PROG.EXE ...
#
# INT 21h: 02 09 25 35 3D 3E 3F 42 48 49 4A 4C (files relative to the program's
# directory); INT 10h AH=00 is accepted (mode 13h memory at A000 is plain RAM, so
# CRCs of mode 13h frames come out as on a VGA); other BIOS calls stop the run.
# --png writes the A000 frame of each program through the default VGA palette.
# --count prints the number of instructions executed (each REP element counts once:
# roughly the dispatch count of the lab's clock), to size `@budget`.
# --fill fills free memory (and VRAM before a mode set clears it) with a pseudo-random
# pattern from SEED instead of zeros: a program whose CRC changes reads memory it
# never wrote (e.g. leftovers of the previous program in a DOSBox batch).
# --clobber writes 32 pseudo-random bytes below SS:SP at every basic block while IF=1,
# as interrupts do at unpredictable times: a program whose CRC changes reads stack
# memory below SP (timing-dependent on a real machine).
import os
import struct
import sys
import zlib

from unicorn import Uc, UcError, UC_ARCH_X86, UC_MODE_16, UC_HOOK_INTR, UC_HOOK_CODE, UC_HOOK_BLOCK
from unicorn.x86_const import (UC_X86_REG_AX, UC_X86_REG_BX, UC_X86_REG_CX, UC_X86_REG_DX,
                               UC_X86_REG_DS, UC_X86_REG_ES, UC_X86_REG_SS, UC_X86_REG_CS,
                               UC_X86_REG_SP, UC_X86_REG_IP, UC_X86_REG_EFLAGS)

PSP = 0x1000          # PSP segment; memory from the program's MCB to A000 is DOS's
TOP = 0xA000


def vga_default_palette():
    """The VGA BIOS default 256-colour palette (6-bit components scaled to 8 bits)."""
    pal = []
    ega = [(0, 0, 0), (0, 0, 42), (0, 42, 0), (0, 42, 42), (42, 0, 0), (42, 0, 42), (42, 21, 0),
           (42, 42, 42), (21, 21, 21), (21, 21, 63), (21, 63, 21), (21, 63, 63), (63, 21, 21),
           (63, 21, 63), (63, 63, 21), (63, 63, 63)]
    pal += ega
    grey = [0, 5, 8, 11, 14, 17, 20, 24, 28, 32, 36, 40, 45, 50, 56, 63]
    pal += [(g, g, g) for g in grey]
    for hi, lo in ((63, 0), (63, 31), (63, 45), (28, 0), (28, 14), (28, 20), (16, 0), (16, 8),
                   (16, 11)):
        ramp = [lo, lo + (hi - lo) // 4, lo + (hi - lo) // 2, lo + 3 * (hi - lo) // 4, hi]
        ring = []
        for i in range(24):         # blue -> magenta -> red -> yellow -> green -> cyan -> blue
            s, k = divmod(i, 4)
            up, down = ramp[k], ramp[4 - k]
            ring.append([(up, lo, hi), (hi, lo, down), (hi, up, lo), (down, hi, lo),
                         (lo, hi, up), (lo, down, hi)][s])
        pal += ring
    pal += [(0, 0, 0)] * (256 - len(pal))
    return [tuple(c * 255 // 63 for c in rgb) for rgb in pal]


def write_png(path, w, h, rgb_rows):
    raw = b"".join(b"\0" + bytes(r) for r in rgb_rows)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)


class Dos:
    def __init__(self, uc, progdir):
        self.uc, self.dir = uc, progdir
        self.files, self.next_handle = {}, 5

    # -- memory arena: MCBs from PSP-1 up to TOP
    def mcb(self, seg):
        t, owner, size = struct.unpack("<BHH", self.uc.mem_read(seg * 16, 5))
        return t, owner, size

    def set_mcb(self, seg, t, owner, size):
        self.uc.mem_write(seg * 16, struct.pack("<BHH", t, owner, size))

    def chain(self):
        seg, out = PSP - 1, []
        while True:
            t, owner, size = self.mcb(seg)
            out.append((seg, t, owner, size))
            if t == ord("Z"):
                return out
            seg += size + 1

    def relink(self, blocks):
        """blocks: [(seg, owner, size)] contiguous; merge free neighbours, rewrite MCBs."""
        merged = []
        for b in blocks:
            if merged and merged[-1][1] == 0 and b[1] == 0:
                s, o, z = merged[-1]
                merged[-1] = (s, 0, z + 1 + b[2])
            else:
                merged.append(b)
        for i, (s, o, z) in enumerate(merged):
            self.set_mcb(s, ord("Z") if i == len(merged) - 1 else ord("M"), o, z)

    def alloc(self, paras, owner):
        ch = self.chain()
        for i, (s, t, o, z) in enumerate(ch):
            if o == 0 and z >= paras:
                blocks = [(a, b, c) for a, _, b, c in ch]
                rest = z - paras
                blocks[i] = (s, owner, paras)
                if rest:
                    blocks.insert(i + 1, (s + 1 + paras, 0, rest - 1))
                self.relink(blocks)
                return s + 1, None
        return None, max([z for _, _, o, z in ch if o == 0] or [0])

    def resize(self, seg, paras):
        ch = self.chain()
        blocks = [(a, b, c) for a, _, b, c in ch]
        for i, (s, o, z) in enumerate(blocks):
            if s == seg - 1:
                avail = z + (1 + blocks[i + 1][2] if i + 1 < len(blocks) and blocks[i + 1][1] == 0 else 0)
                if paras > avail:
                    return avail
                if i + 1 < len(blocks) and blocks[i + 1][1] == 0:
                    blocks.pop(i + 1)
                blocks[i] = (s, o, paras)
                if avail > paras:
                    blocks.insert(i + 1, (s + 1 + paras, 0, avail - paras - 1))
                self.relink(blocks)
                return None
        return 0

    def free(self, seg):
        ch = self.chain()
        blocks = [(a, (0 if a == seg - 1 else b), c) for a, _, b, c in ch]
        self.relink(blocks)


def load(uc, path):
    data = open(path, "rb").read()
    psp = bytearray(256)                 # INT 20h, empty command tail
    psp[0:2] = b"\xcd\x20"
    psp[0x81] = 0x0D
    uc.mem_write(PSP * 16, bytes(psp))
    if data[:2] in (b"MZ", b"ZM"):
        cblp, cp, crlc, hdr, mina, maxa, ss, sp, _, ip, cs, lfarlc = struct.unpack_from("<12H", data, 2)
        size = cp * 512 - hdr * 16 - ((512 - cblp) if cblp else 0)
        image = data[hdr * 16: hdr * 16 + size]
        load_seg = PSP + 0x10
        uc.mem_write(load_seg * 16, image)
        for i in range(crlc):
            off, seg = struct.unpack_from("<HH", data, lfarlc + 4 * i)
            a = (load_seg + seg) * 16 + off
            w = struct.unpack("<H", uc.mem_read(a, 2))[0]
            uc.mem_write(a, struct.pack("<H", (w + load_seg) & 0xFFFF))
        imgp = (size + 15) // 16
        free = TOP - PSP - 1
        need_min, need_max = 0x10 + imgp + mina, 0x10 + imgp + maxa
        if need_min > free:
            raise SystemExit(f"{path}: not enough memory")
        memsize = min(free, need_max)
        regs = dict(cs=(load_seg + cs) & 0xFFFF, ip=ip, ss=(load_seg + ss) & 0xFFFF, sp=sp)
    else:
        uc.mem_write(PSP * 16 + 0x100, data)
        memsize = TOP - PSP - 1
        regs = dict(cs=PSP, ip=0x100, ss=PSP, sp=0xFFFE)
        uc.mem_write(PSP * 16 + 0xFFFE, b"\0\0")
    uc.mem_write(PSP * 16 + 2, struct.pack("<H", PSP + memsize))
    uc.mem_write((PSP - 1) * 16, struct.pack("<BHH", ord("M") if memsize < TOP - PSP - 1 else ord("Z"), PSP, memsize))
    if memsize < TOP - PSP - 1:
        rest = TOP - PSP - 1 - memsize - 1
        uc.mem_write((PSP + memsize) * 16, struct.pack("<BHH", ord("Z"), 0, rest))
    return regs


def fill_pattern(seed, n):
    out, x = bytearray(n), seed & 0xFFFFFFFF
    for i in range(0, n, 4):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        out[i:i + 4] = x.to_bytes(4, "little")
    return bytes(out[:n])


def run(path, limit=400_000_000, png_dir=None, count=False, fill=None, clobber=False):
    uc = Uc(UC_ARCH_X86, UC_MODE_16)
    uc.mem_map(0, 0x110000)
    if fill is not None:
        uc.mem_write(0x500, fill_pattern(fill, 0xB0000 - 0x500))
    uc.mem_write(0xF0000, b"\xcf" * 256)
    for i in range(256):
        uc.mem_write(i * 4, struct.pack("<HH", i, 0xF000))
    regs = load(uc, path)
    dos = Dos(uc, os.path.dirname(os.path.abspath(path)))
    out = []
    state = {}
    R = uc.reg_read
    W = uc.reg_write

    def setcf(cf):
        fl = R(UC_X86_REG_EFLAGS)
        W(UC_X86_REG_EFLAGS, (fl | 1) if cf else (fl & ~1))

    def err(code):
        W(UC_X86_REG_AX, code)
        setcf(True)

    def int21(uc):
        ax = R(UC_X86_REG_AX)
        ah, al = ax >> 8, ax & 0xFF
        ds, dx, bx, cx = R(UC_X86_REG_DS), R(UC_X86_REG_DX), R(UC_X86_REG_BX), R(UC_X86_REG_CX)
        if ah == 0x09:
            a, s = ds * 16 + dx, b""
            while True:
                c = bytes(uc.mem_read(a, 1))
                if c == b"$":
                    break
                s += c
                a += 1
            out.append(s.decode("latin-1"))
        elif ah == 0x02:
            out.append(chr(dx & 0xFF))
        elif ah == 0x4C:
            state["exit"] = al
            uc.emu_stop()
        elif ah == 0x25:
            uc.mem_write(al * 4, struct.pack("<HH", dx, ds))
        elif ah == 0x35:
            o, s = struct.unpack("<HH", uc.mem_read(al * 4, 4))
            W(UC_X86_REG_BX, o)
            W(UC_X86_REG_ES, s)
        elif ah == 0x3D:
            name = bytes(uc.mem_read(ds * 16 + dx, 128)).split(b"\0")[0].decode("latin-1")
            p = os.path.join(dos.dir, name)
            if not os.path.isfile(p):
                return err(2)
            h = dos.next_handle
            dos.next_handle += 1
            dos.files[h] = [open(p, "rb").read(), 0]
            W(UC_X86_REG_AX, h)
            setcf(False)
        elif ah == 0x3E:
            if dos.files.pop(bx, None) is None:
                return err(6)
            setcf(False)
        elif ah == 0x3F:
            f = dos.files.get(bx)
            if f is None:
                return err(6)
            chunk = f[0][f[1]: f[1] + cx]
            uc.mem_write(ds * 16 + dx, chunk)
            f[1] += len(chunk)
            W(UC_X86_REG_AX, len(chunk))
            setcf(False)
        elif ah == 0x42:
            f = dos.files.get(bx)
            if f is None:
                return err(6)
            off = (cx << 16) | dx
            base = [0, f[1], len(f[0])][al]
            pos = (base + (off - (1 << 32) if off & 0x80000000 else off)) & 0xFFFFFFFF
            f[1] = pos
            W(UC_X86_REG_AX, pos & 0xFFFF)
            W(UC_X86_REG_DX, pos >> 16)
            setcf(False)
        elif ah == 0x48:
            seg, largest = dos.alloc(bx, PSP)
            if seg is None:
                W(UC_X86_REG_BX, largest)
                return err(8)
            W(UC_X86_REG_AX, seg)
            setcf(False)
        elif ah == 0x49:
            dos.free(R(UC_X86_REG_ES))
            setcf(False)
        elif ah == 0x4A:
            r = dos.resize(R(UC_X86_REG_ES), bx)
            if r is not None:
                W(UC_X86_REG_BX, r)
                return err(8)
            setcf(False)
        else:
            print("unhandled int21", hex(ah), file=sys.stderr)
            uc.emu_stop()

    def hook_intr(uc, intno, ud):
        if intno == 0x21:
            return int21(uc)
        if intno == 0x10 and R(UC_X86_REG_AX) >> 8 == 0:
            if not R(UC_X86_REG_AX) & 0x80:      # a mode set clears video memory
                uc.mem_write(0xA0000, bytes(0x10000))
            return
        sp, ss = R(UC_X86_REG_SP), R(UC_X86_REG_SS)
        fl = R(UC_X86_REG_EFLAGS) & 0xFFFF
        cs, ip = R(UC_X86_REG_CS), R(UC_X86_REG_IP)
        o, s = struct.unpack("<HH", uc.mem_read(intno * 4, 4))
        if s == 0xF000:
            print("unhandled int", hex(intno), hex(R(UC_X86_REG_AX)), file=sys.stderr)
            uc.emu_stop()
            return
        sp = (sp - 6) & 0xFFFF
        uc.mem_write(ss * 16 + sp, struct.pack("<HHH", ip, cs, fl))
        W(UC_X86_REG_SP, sp)
        W(UC_X86_REG_EFLAGS, fl & ~0x300)
        W(UC_X86_REG_CS, s)
        W(UC_X86_REG_IP, o)

    uc.hook_add(UC_HOOK_INTR, hook_intr)
    if clobber:
        junk = [fill_pattern(i * 7919 + 1, 32) for i in range(64)]
        k = [0]

        def hook_block(uc, addr, size, ud):
            if R(UC_X86_REG_EFLAGS) & 0x200:
                ss, sp = R(UC_X86_REG_SS), R(UC_X86_REG_SP)
                if sp >= 32:
                    uc.mem_write(ss * 16 + sp - 32, junk[k[0] & 63])
                    k[0] += 1
        uc.hook_add(UC_HOOK_BLOCK, hook_block)
    if count:
        n = [0]

        def hook_code(uc, addr, size, ud):
            n[0] += 1
        uc.hook_add(UC_HOOK_CODE, hook_code)
    for r in (UC_X86_REG_DS, UC_X86_REG_ES):
        W(r, PSP)
    W(UC_X86_REG_CS, regs["cs"])
    W(UC_X86_REG_SS, regs["ss"])
    W(UC_X86_REG_SP, regs["sp"])
    W(UC_X86_REG_EFLAGS, 0x202)
    try:
        uc.emu_start(regs["cs"] * 16 + regs["ip"], 0xFFFFFFF, count=limit)
    except UcError as e:
        out.append(f"[error {e} at {R(UC_X86_REG_CS):x}:{R(UC_X86_REG_IP):x}]")
    if "exit" not in state:
        out.append(f"[stopped at {R(UC_X86_REG_CS):x}:{R(UC_X86_REG_IP):x}]")
    if png_dir:
        pal = vga_default_palette()
        vram = bytes(uc.mem_read(0xA0000, 64000))
        rows = [[c for i in vram[y * 320:(y + 1) * 320] for c in pal[i]] for y in range(200)]
        write_png(os.path.join(png_dir, os.path.basename(path).split(".")[0] + ".png"), 320, 200, rows)
    if count:
        out.append(f" [{n[0]} instructions]")
    return "".join(out).strip()


def main(argv):
    png, count, fill, clobber = None, False, None, False
    while argv[:1] in (["--png"], ["--count"], ["--fill"], ["--clobber"]):
        if argv[0] == "--png":
            png, argv = argv[1], argv[2:]
        elif argv[0] == "--fill":
            fill, argv = int(argv[1], 0), argv[2:]
        elif argv[0] == "--clobber":
            clobber, argv = True, argv[1:]
        else:
            count, argv = True, argv[1:]
    for p in argv:
        print(p.split("/")[-1], run(p, png_dir=png, count=count, fill=fill, clobber=clobber))


if __name__ == "__main__":
    main(sys.argv[1:])
