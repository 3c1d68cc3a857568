#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the Debian packages (make deb), install them into this system with
# dpkg -i, and check them as a user of the packages meets them:
#   1. the control fields: names from the soname, the version from
#      include/weft/version.h, dpkg's architecture, the -dev package's
#      dependency on the runtime package of exactly its version, the runtime
#      package's libc dependency and shlibs line;
#   2. dpkg -L lists exactly the files each package should hold, and the
#      dynamic linker's cache knows libweft.so.<soversion> (the postinst's
#      ldconfig);
#   3. programs built against the installed copy with nothing pointing the
#      tools at it (no PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, rpath or
#      LD_LIBRARY_PATH) build and run: pkg-config --cflags --libs weft, and
#      find_package(weft) (tests/install/consumer: weft::weft and
#      weft::weft_static, weft.hpp too when there is a C++ compiler);
#      weft-trace2svg runs from PATH;
#   4. dpkg -r removes both and leaves none of their files, no directory of
#      weft's own, and no libweft in ldconfig's cache; dpkg -P then leaves
#      dpkg's database without them.
# Lintian, where installed, reports too, without deciding the result (the
# packages are built outside a Debian source package, which it expects).
#
#   tools/check_deb.sh        as root, on a Debian or Ubuntu system (CI)
#
# It installs into /usr, so it refuses to run where the packages or any of
# their files are already installed (a make install PREFIX=/usr): dpkg -i
# would take those files over and dpkg -r would then delete them. The
# packages it installs are removed on the way out, whether it passed or not.
set -eu
cd "$(dirname "$0")/.."

say() { echo "check_deb: $*"; }
fail() {
    echo "check_deb: FAILED: $*" >&2
    exit 1
}

if ! command -v dpkg >/dev/null 2>&1; then
    say "not a dpkg system: Debian packages cannot be installed here"
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    say "must run as root: it installs the packages into the system with dpkg -i"
    say "(make deb builds them as any user; dpkg-deb -c lists their files)"
    exit 1
fi

build=${DEB_BUILD:-build/deb}
version_part() { sed -n "s/^#define WEFT_VERSION_$1 \([0-9]*\)$/\1/p" include/weft/version.h; }
major=$(version_part MAJOR)
minor=$(version_part MINOR)
version=$major.$minor.$(version_part PATCH)
# The soname's version, by CMakeLists.txt's rule: MAJOR.MINOR before 1.0.
if [ "$major" = 0 ]; then soversion=$major.$minor; else soversion=$major; fi
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
libdir=/usr/lib/$multiarch
runtime=libweft$soversion
dev=libweft-dev
runtime_deb=$build/${runtime}_${version}_$arch.deb
dev_deb=$build/${dev}_${version}_$arch.deb

# What dpkg -L must list, files and links (directories aside), sorted.
runtime_files="$libdir/libweft.so.$soversion
$libdir/libweft.so.$version
/usr/share/doc/$runtime/copyright"
dev_files="/usr/bin/weft-trace2svg
/usr/include/weft.h
/usr/include/weft.hpp
/usr/include/weft/config.h
/usr/include/weft/join.h
/usr/include/weft/version.h
$libdir/cmake/weft/weftConfig.cmake
$libdir/cmake/weft/weftConfigVersion.cmake
$libdir/cmake/weft/weftTargets-relwithdebinfo.cmake
$libdir/cmake/weft/weftTargets.cmake
$libdir/libweft.a
$libdir/libweft.so
$libdir/pkgconfig/weft.pc
/usr/share/doc/$dev/copyright
/usr/share/doc/weft/LICENSE"
weft_dirs="/usr/include/weft $libdir/cmake/weft /usr/share/doc/weft /usr/share/doc/$runtime
/usr/share/doc/$dev"

status() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true; }
for p in $runtime $dev; do
    case $(status "$p") in
    "" | "un "*) ;;
    *) fail "$p is already known to dpkg ($(status "$p")): remove it (dpkg -P $p) first" ;;
    esac
done
for f in $runtime_files $dev_files; do
    if [ -e "$f" ] || [ -L "$f" ]; then
        fail "$f exists already (make uninstall PREFIX=/usr?): dpkg -r would delete it"
    fi
done

work=$(mktemp -d)
installed=
cleanup() {
    if [ -n "$installed" ]; then
        dpkg -P "$dev" "$runtime" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# A log per step, shown when it fails.
step() {
    name=$1
    shift
    if ! "$@" >"$work/log" 2>&1; then
        cat "$work/log" >&2
        fail "$name"
    fi
    say "ok $name"
}

step "make deb" make --no-print-directory deb DEB_BUILD="$build"
for f in "$runtime_deb" "$dev_deb"; do
    [ -f "$f" ] || fail "make deb did not write $f: $(ls "$build"/*.deb 2>/dev/null)"
done

# 1. Control fields.
field() { dpkg-deb -f "$1" "$2"; }
expect_field() { # DEB FIELD VALUE
    [ "$(field "$1" "$2")" = "$3" ] || fail "$1: $2 is '$(field "$1" "$2")', not '$3'"
}
for f in "$runtime_deb" "$dev_deb"; do
    expect_field "$f" Version "$version"
    expect_field "$f" Architecture "$arch"
done
expect_field "$runtime_deb" Package "$runtime"
expect_field "$dev_deb" Package "$dev"
expect_field "$dev_deb" Depends "$runtime (= $version)"
case $(field "$runtime_deb" Depends) in
libc6*) ;;
*) fail "$runtime_deb: Depends is '$(field "$runtime_deb" Depends)', no libc6 (dpkg-shlibdeps)" ;;
esac
dpkg-deb -e "$runtime_deb" "$work/control"
shlibs="libweft $soversion $runtime (>= $version)"
[ "$(cat "$work/control/shlibs")" = "$shlibs" ] ||
    fail "$runtime_deb: shlibs is '$(cat "$work/control/shlibs")', not '$shlibs'"
say "ok control fields: $runtime and $dev $version $arch, $dev depends on $runtime (= $version)"

if command -v lintian >/dev/null 2>&1; then
    say "lintian (advisory):"
    lintian "$runtime_deb" "$dev_deb" || true
fi

# 2. Install; what dpkg -L lists.
installed=yes
step "dpkg -i" dpkg -i "$runtime_deb" "$dev_deb"
listed() { # PACKAGE: its files and links, sorted
    dpkg -L "$1" | while read -r p; do
        if [ -L "$p" ] || [ ! -d "$p" ]; then echo "$p"; fi
    done | sort
}
for p in $runtime $dev; do
    if [ "$p" = "$runtime" ]; then want=$runtime_files; else want=$dev_files; fi
    echo "$want" | sort >"$work/want"
    listed "$p" >"$work/got"
    if ! diff -u "$work/want" "$work/got" >&2; then
        fail "dpkg -L $p: not the expected files (- expected, + listed)"
    fi
    while read -r f; do
        [ -e "$f" ] || fail "$f is listed by dpkg -L $p but not there"
    done <"$work/got"
done
ldconfig -p | grep -q "libweft\.so\.$soversion " ||
    fail "ldconfig's cache does not list libweft.so.$soversion after installing"
say "ok dpkg -L: $(echo "$runtime_files" | wc -l) files in $runtime, $(echo "$dev_files" | wc -l) in $dev"

# 3. Consumers, found by the system's default search paths alone.
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
consumer=tests/install/consumer
[ "$(pkg-config --modversion weft)" = "$version" ] ||
    fail "pkg-config --modversion weft says '$(pkg-config --modversion weft)', not $version"
# The pkg-config line is a shell word list by design.
# shellcheck disable=SC2046
step "cc via pkg-config" cc "$consumer/consumer.c" -o "$work/app" $(pkg-config --cflags --libs weft)
step "run the pkg-config program" "$work/app"
# Through /lib on a merged-/usr system, where ld.so.conf lists /lib first.
ldd "$work/app" | grep -Eq "libweft\.so\.$soversion => (/usr)?/lib/$multiarch/libweft\.so\.$soversion " ||
    fail "the pkg-config program does not load $libdir/libweft.so.$soversion: $(ldd "$work/app")"
cxx=OFF
if command -v c++ >/dev/null 2>&1; then cxx=ON; fi
step "find_package(weft) configure" cmake -S "$consumer" -B "$work/cmake" -DWEFT_FROM=package \
    -DCONSUMER_CXX=$cxx
step "find_package(weft) build" cmake --build "$work/cmake"
step "run weft::weft" "$work/cmake/consumer"
step "run weft::weft_static" "$work/cmake/consumer_static"
if [ "$cxx" = ON ]; then
    step "run the C++ consumer" "$work/cmake/consumer_cpp"
fi
if command -v python3 >/dev/null 2>&1; then
    step "weft-trace2svg --help" weft-trace2svg --help
fi

# 4. Remove; nothing left.
step "dpkg -r" dpkg -r "$dev" "$runtime"
installed=
for p in $runtime $dev; do
    case $(status "$p") in
    "" | "un "* | "rc "*) ;;
    *) fail "$p is still '$(status "$p")' after dpkg -r" ;;
    esac
done
for f in $runtime_files $dev_files $weft_dirs; do
    if [ -e "$f" ] || [ -L "$f" ]; then fail "$f is left after dpkg -r"; fi
done
if ldconfig -p | grep -q "libweft\.so"; then
    fail "ldconfig's cache still lists libweft after dpkg -r (the postrm's ldconfig)"
fi
# The runtime package stays known to dpkg ("rc") while its postrm has a
# purge to run; purging leaves dpkg's database as it was.
step "dpkg -P" dpkg -P "$dev" "$runtime"
for p in $runtime $dev; do
    case $(status "$p") in
    "" | "un "*) ;;
    *) fail "$p is still '$(status "$p")' after dpkg -P" ;;
    esac
done
say "ok: $runtime and $dev $version install, build and run programs, and remove cleanly"
