#!/usr/bin/env bash
# Builds the mainemu test programs (sources here) into OUT (default
# target/mainemu-programs) with mingw-w64 (gcc-mingw-w64-i686). Idempotent and
# safe to run from several test binaries at once (flock). CI installs the
# compiler; the tests call this script.
set -euo pipefail
src="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$src/../../../target/mainemu-programs}"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
cc=i686-w64-mingw32-gcc
# -s: no symbols; -O1: small, readable code. Newer than the binary = rebuilt.
build() { # name, then extra args
  local name=$1; shift
  if [ ! -e "$out/$name" ] || [ -n "$(find "$src" -newer "$out/$name" -name "*.[chrd]*" | head -1)" ]; then
    "$@"
  fi
}
for p in hello cmdline heap fileio files crtio threads seh smc compute shell; do
  build $p.exe $cc -O1 -s -o "$out/$p.exe" "$src/$p.c"
done
# GUI programs (docs/mainemu-gui.md): console subsystem, so they print what they drew.
for p in gdi_shapes gdi_bits gdi_text gdi_styles dialog; do
  build $p.exe $cc -O1 -s -o "$out/$p.exe" "$src/$p.c" -lgdi32 -luser32
done
build gui_window.res.o i686-w64-mingw32-windres "$src/gui_window.rc" -o "$out/gui_window.res.o"
build gui_window.exe $cc -O1 -s -o "$out/gui_window.exe" "$src/gui_window.c" "$out/gui_window.res.o" -lgdi32 -luser32
build testdll.res.o i686-w64-mingw32-windres "$src/testdll.rc" -o "$out/testdll.res.o"
build testdll.dll $cc -O1 -s -shared -o "$out/testdll.dll" "$src/testdll.c" "$src/testdll.def" "$out/testdll.res.o" -Wl,--out-implib,"$out/libtestdll.a"
build resources.res.o i686-w64-mingw32-windres "$src/resources.rc" -o "$out/resources.res.o"
build resources.exe $cc -O1 -s -o "$out/resources.exe" "$src/resources.c" "$out/resources.res.o"
build usedll.exe $cc -O1 -s -o "$out/usedll.exe" "$src/usedll.c" "$out/libtestdll.a"
