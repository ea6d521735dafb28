#!/bin/sh
# make fio: a fio of FIO_MIN (3.41, the first with sprandom) or later for ssdpts's own use, built
# into build/fio/bin/fio, which ssdpts runs unless --fio PATH names another (docs/methodology.md#fio).
#
# The source is the upstream release tarball as Debian serves it: the original tarball
# (fio_X.orig.tar.gz) of the `fio` source package of Debian unstable (sid), from the Debian mirror
# apt uses here. Nothing but a package registry needs to be reachable. Its SHA-256 is checked along
# Debian's own chain of trust:
#   dists/sid/InRelease, its signature checked by gpgv against debian-archive-keyring
#   -> the SHA-256 of main/source/Sources.xz listed in it
#   -> the Checksums-Sha256 line of fio_X.orig.tar.gz in the fio stanza of Sources.xz
#   -> the tarball.
# Where each came from is written to build/fio/SOURCE.
#
# Quick and offline when built: nothing is fetched while build/fio/bin/fio runs and knows sprandom.
#
#   scripts/build-fio.sh [ROOT]    ROOT: the repository (default: this script's parent)
# Environment: FIO_MIN (3.41), FIO_SUITE (sid), DEBIAN_MIRROR (apt's, else http://deb.debian.org/debian),
# DEBIAN_KEYRING (/usr/share/keyrings/debian-archive-keyring.gpg), FIO_JOBS (the CPUs' count).
set -eu
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
DEST=$ROOT/build/fio
BIN=$DEST/bin/fio
MIN=${FIO_MIN:-3.41}
SUITE=${FIO_SUITE:-sid}
KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

say() { echo "make fio: $*"; }
die() { echo "make fio: $*" >&2; exit 1; }

# fio answers --cmdhelp=NAME of an option it does not know with "No such command" and status 0:
# the option's own line is the proof.
knows_sprandom() { "$1" --cmdhelp=sprandom 2>/dev/null | grep -q '^ *sprandom *:'; }

if [ -x "$BIN" ] && knows_sprandom "$BIN"; then
    say "$BIN ($("$BIN" --version)) is built; to build again: rm -r $DEST && make fio"
    exit 0
fi

mirror() {
    if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "${DEBIAN_MIRROR%/}"; return; fi
    m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -E '^[[:space:]]*(URIs:|deb[[:space:]])' | grep -oE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' |
        head -n 1 | tr -d '[:space:]') || true
    echo "${m:-http://deb.debian.org/debian}" | sed 's|/*$||'
}
MIRROR=$(mirror)
DL=$DEST/dl
mkdir -p "$DL" "$DEST/bin"

fetch() {  # URL FILE
    curl -fsSL --retry 2 --connect-timeout 20 -o "$2.part" "$1" || { rm -f "$2.part"; die "cannot fetch $1"; }
    mv "$2.part" "$2"
}

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

for tool in curl gpgv xz sha256sum cc make; do
    command -v "$tool" >/dev/null || die "$tool is missing (make fio installs it on Debian: run 'make fio')"
done
[ -r "$KEYRING" ] || die "no Debian archive keyring at $KEYRING to check the source against: install debian-archive-keyring"

say "source: $MIRROR, fio of Debian $SUITE"
fetch "$MIRROR/dists/$SUITE/InRelease" "$DL/InRelease"
gpgv --keyring "$KEYRING" "$DL/InRelease" >/dev/null 2>&1 ||
    die "the signature of $MIRROR/dists/$SUITE/InRelease does not check against $KEYRING: nothing built"
want=$(awk '/^SHA256:/ {s = 1; next} /^[^ ]/ {s = 0} s && $3 == "main/source/Sources.xz" {print $1}' "$DL/InRelease")
[ -n "$want" ] || die "InRelease of $SUITE lists no main/source/Sources.xz"
fetch "$MIRROR/dists/$SUITE/main/source/Sources.xz" "$DL/Sources.xz"
[ "$(sha_of "$DL/Sources.xz")" = "$want" ] || die "Sources.xz does not have the SHA-256 its signed InRelease gives: nothing built"

stanza=$(xz -dc "$DL/Sources.xz" | awk '/^Package: fio$/ {p = 1} p && /^$/ {exit} p')
[ -n "$stanza" ] || die "Debian $SUITE has no fio source package"
version=$(printf '%s\n' "$stanza" | sed -n 's/^Version: //p')
dir=$(printf '%s\n' "$stanza" | sed -n 's/^Directory: //p')
line=$(printf '%s\n' "$stanza" | awk '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0}
                                       s && $3 ~ /^fio_[^_]*\.orig\.tar\.(gz|xz|bz2)$/ {print $1, $3; exit}')
sum=${line%% *}
orig=${line#* }
[ -n "$version" ] && [ -n "$dir" ] && [ -n "$line" ] || die "the fio stanza of $SUITE's Sources names no original tarball"
upstream=${version#*:}
upstream=${upstream%-*}
if [ "$(printf '%s\n%s\n' "$MIN" "$upstream" | sort -V | head -n 1)" != "$MIN" ]; then
    die "Debian $SUITE has fio $upstream; ssdpts needs $MIN or later (sprandom): set FIO_SUITE or DEBIAN_MIRROR"
fi

tarball=$DL/$orig
if [ ! -f "$tarball" ] || [ "$(sha_of "$tarball")" != "$sum" ]; then
    say "fetching $orig"
    fetch "$MIRROR/$dir/$orig" "$tarball"
fi
[ "$(sha_of "$tarball")" = "$sum" ] || die "$orig does not have the SHA-256 Debian's signed Sources gives ($sum): nothing built"

src=$DEST/src
rm -rf "$src"
mkdir -p "$src"
tar -xf "$tarball" -C "$src" --strip-components=1
say "building fio $upstream in $src (./configure --disable-native && make)"
start=$(date +%s)
(cd "$src" && ./configure --disable-native >"$DEST/configure.log" 2>&1) || die "configure failed: see $DEST/configure.log"
(cd "$src" && make -j"${FIO_JOBS:-$(nproc)}" >"$DEST/make.log" 2>&1) || die "make failed: see $DEST/make.log"
install -m 0755 "$src/fio" "$BIN.new"
mv "$BIN.new" "$BIN"
knows_sprandom "$BIN" || die "$BIN was built but does not know sprandom"
cat >"$DEST/SOURCE" <<EOF
fio $upstream (Debian source package fio $version, $SUITE), built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - start)) s
tarball: $MIRROR/$dir/$orig
sha256: $sum
checked: Checksums-Sha256 of the fio stanza of $MIRROR/dists/$SUITE/main/source/Sources.xz (sha256 $want),
         listed in $MIRROR/dists/$SUITE/InRelease, whose signature gpgv checked against $KEYRING
configure: --disable-native
EOF
say "$BIN ($("$BIN" --version)) built in $(($(date +%s) - start)) s; ssdpts runs it unless --fio PATH names another"
