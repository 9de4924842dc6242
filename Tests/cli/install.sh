#!/usr/bin/env bash
# The installer into a throwaway root, LCDd, the service, the Debian package.
# Runs alone in a scratch folder of its own: Tests/cli/install.sh PATH/TO/acapella
source "$(dirname "$0")/lib.sh"

# The installer, into a throwaway root; the unit passes systemd's checks.
stage="$work/stage"
expect "install into a throwaway root" 0 env DESTDIR="$stage" deploy/install --program "$acapella" --no-system --lcd &&
  check "binary installed" test -x "$stage/usr/local/bin/acapella" &&
  check "songs installed" test -s "$stage/usr/local/share/acapella/songs/amazing-grace.acasong" &&
  check "controls installed" test -s "$stage/usr/local/share/acapella/controls.json" &&
  check "settings in /etc/acapella" test -s "$stage/etc/acapella/acapella.json" &&
  check "controls in /etc/acapella" test -s "$stage/etc/acapella/controls.json" &&
  check "unit installed" test -s "$stage/etc/systemd/system/acapella.service" &&
  check "unit runs the installed binary" contains "$(cat "$stage/etc/systemd/system/acapella.service")" "ExecStart=/usr/local/bin/acapella run" &&
  check "USB sticks mounted as they come (udev rule)" contains "$(cat "$stage/etc/udev/rules.d/90-acapella-usb.rules" 2>/dev/null)" "systemd-mount --no-block --collect" &&
  check "limits installed" contains "$(cat "$stage/etc/security/limits.d/acapella.conf")" "rtprio 95" &&
  check "LCDd set up when asked" test -s "$stage/etc/LCDd.conf"
drivers="/usr/lib/$(ACAPELLA_DPKG_ARCH="$(dpkg --print-architecture)" bash -c 'case $ACAPELLA_DPKG_ARCH in amd64) echo x86_64-linux-gnu;; arm64) echo aarch64-linux-gnu;; armhf) echo arm-linux-gnueabihf;; esac')/lcdproc/"
check "LCDd finds its drivers here" contains "$(cat "$stage/etc/LCDd.conf")" "DriverPath=$drivers"
check "this machine has that driver folder" test -d "$drivers"
check "32-bit Raspberry Pi OS gets its driver folder" contains "$(ACAPELLA_DPKG_ARCH=armhf deploy/lcdd-conf < Config/LCDd.conf)" "DriverPath=/usr/lib/arm-linux-gnueabihf/lcdproc/"
check "64-bit Raspberry Pi OS gets its driver folder" contains "$(ACAPELLA_DPKG_ARCH=arm64 deploy/lcdd-conf < Config/LCDd.conf)" "DriverPath=/usr/lib/aarch64-linux-gnu/lcdproc/"
# LCDd loads a driver from that folder (the text one: no display here) and runs until stopped.
expect "LCDd runs with the installed configuration" 124 timeout 3 /usr/sbin/LCDd -c "$stage/etc/LCDd.conf" -d text -f -s 0 -p 14999
sed 's#^DriverPath=.*#DriverPath=/usr/lib/nowhere/lcdproc/#' "$stage/etc/LCDd.conf" > "$work/LCDd-wrong.conf"
expect "LCDd with a wrong driver folder stops at once (so the check above means something)" 1 timeout 3 /usr/sbin/LCDd -c "$work/LCDd-wrong.conf" -d text -f -s 0 -p 14998
# A user's settings survive a reinstall; the new defaults go beside them.
printf '{ "countIn": 2 }\n' > "$stage/etc/acapella/acapella.json"
expect "reinstall over edited settings" 0 env DESTDIR="$stage" deploy/install --program "$acapella" --no-system &&
  check "the user's settings are kept" equals "$(cat "$stage/etc/acapella/acapella.json")" '{ "countIn": 2 }' &&
  check "reinstall says so" contains "$out" "kept your $stage/etc/acapella/acapella.json"
# Checked as it would run from the staged binary (verify also checks that ExecStart exists).
mkdir -p "$work/unit"
sed "s#/usr/local/bin/acapella#$stage/usr/local/bin/acapella#" "$stage/etc/systemd/system/acapella.service" > "$work/unit/acapella.service"
expect "systemd accepts the unit" 0 systemd-analyze verify --man=no "$work/unit/acapella.service"
check "the unit has a memory ceiling that leaves the machine alive" grep -q '^MemoryMax=60%' "$work/unit/acapella.service"
check "and keeps the box the last the out-of-memory killer takes" grep -q '^OOMScoreAdjust=-500' "$work/unit/acapella.service"
expect "systemd-analyze security" 0 systemd-analyze security --offline=true --no-pager "$work/unit/acapella.service"
exposure="$(sed -n 's/.*Overall exposure level for acapella.service: \([0-9.]*\) .*/\1/p' <<<"$out")"
echo "   systemd-analyze security: exposure $exposure"
check "the unit's exposure is at most 4.0 (OK)" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 4.0) }'
expect "the installed box finds its songs" 0 "$stage/usr/local/bin/acapella" run --data "$work/box2" --seconds 1 --device sim:speed=4 &&
  check "installed box ready" contains "$err" "ready: Amazing Grace"
# The installed box as the service starts it: stdin on /dev/null, no time limit; idle; SIGTERM.
"$stage/usr/local/bin/acapella" run --data "$work/box-service" --device sim:speed=1 </dev/null 2>"$work/service.err" &
service=$!
for _ in $(seq 50); do grep -q "ready:" "$work/service.err" && break; sleep 0.1; done
sleep 2
check "the installed box idles without a terminal" kill -0 "$service"
kill -TERM "$service"; wait "$service"; service_status=$?
check "and stops cleanly on SIGTERM" equals "$service_status" "0"
check "saying why it keeps running" contains "$(cat "$work/service.err")" "no terminal: running until stopped (SIGTERM)"
# What a user added stays through an uninstall.
printf 'acasong 1\npart S [treble]\nC4 1 |\n' > "$stage/usr/local/share/acapella/songs/mine.acasong"
mkdir -p "$stage/var/lib/acapella/projects/mine.acaproj"
expect "uninstall from the throwaway root" 0 env DESTDIR="$stage" deploy/install --uninstall --no-system &&
  check "binary removed" test ! -e "$stage/usr/local/bin/acapella" &&
  check "unit removed" test ! -e "$stage/etc/systemd/system/acapella.service" &&
  check "shipped songs removed" test ! -e "$stage/usr/local/share/acapella/songs/amazing-grace.acasong" &&
  check "the user's song kept" test -s "$stage/usr/local/share/acapella/songs/mine.acasong" &&
  check "the user's settings kept" test -s "$stage/etc/acapella/acapella.json" &&
  check "the user's projects kept" test -d "$stage/var/lib/acapella/projects/mine.acaproj"

# The Debian package, installed into a throwaway root by dpkg.
if [[ -n "${ACAPELLA_SKIP_PACKAGE:-}" ]]; then
  skipped "PACKAGE CHECKS SKIPPED (ACAPELLA_SKIP_PACKAGE is set)"
else
  expect "build the .deb" 0 Tests/cached-checkout static deploy/package -o "$work/deb"
  deb="$(tail -n 1 <<<"$out")"
  check "the .deb is there" test -s "$deb"
  expect "the .deb's control" 0 dpkg-deb -I "$deb" &&
    check "built for this machine" contains "$out" "Architecture: $(dpkg --print-architecture)" &&
    check "needs Debian's libraries, not the toolchain" bash -c "grep -q 'Depends:.*libasound2.*libsndfile1' <<<'$out' && ! grep -qi swift <<<'$out'"
  expect "apt resolves the .deb" 0 apt-get install --simulate "$deb" && check "apt would install it" contains "$out" "Inst acapella"
  debroot="$work/debroot"
  mkdir -p "$debroot/var/lib/dpkg/info" "$debroot/var/lib/dpkg/updates" && touch "$debroot/var/lib/dpkg/status" "$debroot/var/lib/dpkg/available"
  dpkg_root=(dpkg "--root=$debroot" --force-script-chrootless --force-depends --log=/dev/null)
  expect "dpkg installs it into a throwaway root" 0 "${dpkg_root[@]}" -i "$deb" &&
    check "the program" test -x "$debroot/usr/bin/acapella" &&
    check "the songs" test -s "$debroot/usr/share/acapella/songs/silent-night.acasong" &&
    check "the music font and its licence" test -s "$debroot/usr/share/acapella/fonts/bravura/Bravura.otf" -a -s "$debroot/usr/share/acapella/fonts/bravura/OFL.txt" &&
    check "the text font and its licence" test -s "$debroot/usr/share/acapella/fonts/gentium/GentiumBookPlus-Regular.ttf" -a -s "$debroot/usr/share/acapella/fonts/gentium/OFL.txt" &&
    check "the unit runs /usr/bin/acapella" contains "$(cat "$debroot/lib/systemd/system/acapella.service")" "ExecStart=/usr/bin/acapella run" &&
    check "the settings, as conffiles" contains "$(dpkg "--root=$debroot" -s acapella)" "/etc/acapella/acapella.json"
  expect "the packaged program engraves" 0 "$debroot/usr/bin/acapella" engrave "$debroot/usr/share/acapella/songs/silent-night.acasong" -o "$work/packaged.pdf" &&
    check "in both shipped fonts" bash -c "pdffonts '$work/packaged.pdf' | grep -q Bravura && pdffonts '$work/packaged.pdf' | grep -q GentiumBookPlus"
  expect "the packaged box runs" 0 "$debroot/usr/bin/acapella" run --data "$work/box3" --seconds 1 --device sim:speed=4 &&
    check "packaged box ready" contains "$err" "ready: Amazing Grace"
  printf '{ "countIn": 0 }\n' > "$debroot/etc/acapella/acapella.json"
  expect "an upgrade over edited settings" 0 "${dpkg_root[@]}" --force-confold -i "$deb" &&
    check "the edited conffile is kept" equals "$(cat "$debroot/etc/acapella/acapella.json")" '{ "countIn": 0 }'
  mkdir -p "$debroot/var/lib/acapella/projects/mine.acaproj"
  expect "dpkg removes it" 0 "${dpkg_root[@]}" -r acapella &&
    check "the program is gone" test ! -e "$debroot/usr/bin/acapella" &&
    check "the settings stay" test -s "$debroot/etc/acapella/acapella.json" &&
    check "the projects stay" test -d "$debroot/var/lib/acapella/projects/mine.acaproj"
fi

finish
