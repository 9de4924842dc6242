#!/usr/bin/env bash
# A USB stick pulled out mid-export, 20 times (issue 21): a project with a
# take on every part is exported to an ext4 image on a loop device
# (`acapella usb`, the job the box runs when a stick is mounted), and the
# stick is unmounted under it at a moment that moves from trial to trial.
# In odd trials the export runs on and must notice the stick is gone and
# say so; in even ones it is killed at the same instant, so the image keeps
# exactly what had been written when the stick went. After each trial the image
# is mounted again and every file under its final name must be byte for
# byte what an undisturbed export writes (0 half-written files named as if
# complete); the project on the box must not have changed by one byte; the
# songs the stick brought are whole. Needs root (mount, loop devices);
# says SKIPPED otherwise.
# Usage: Tests/usb/pull-out.sh PATH/TO/acapella [TRIALS]
set -uo pipefail
acapella="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
trials="${2:-20}"
cd "$(dirname "$0")/../.."
if [[ "$(id -u)" != 0 ]] || ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
  echo "usb pull-out: SKIPPED (needs root, mkfs.ext4 and loop devices)" | tee -a "${ACAPELLA_SKIPS:-/dev/null}"
  exit 0
fi
work="$(mktemp -d)"
cleanup() {
  for point in "$work/stick" "$work/check"; do mountpoint -q "$point" 2>/dev/null && umount -l "$point"; done
  rm -rf "$work"
}
trap cleanup EXIT
export ACAPELLA_BOX_ID=pullout
data="$work/data"
mkdir -p "$data/projects" "$work/stick" "$work/check" "$work/plain/acapella/songs"
project="$data/projects/amazing-grace.acaproj"
"$acapella" new "$project" --song Songs/amazing-grace.acasong >/dev/null || exit 1
for part in Soprano Alto Tenor Bass; do
  "$acapella" record "$project" --part "$part" --device sim:speed=0 >/dev/null 2>&1 || { echo "usb pull-out: could not record $part"; exit 1; }
done
songs=../shared/data/musicxml
have_songs=0
[[ -f "$songs/bach_bwv66.6.mxl" ]] && have_songs=1
snapshot() { (cd "$data/projects" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum); }
before="$(snapshot)"

# What an undisturbed export writes.
(( have_songs )) && cp "$songs/bach_bwv66.6.mxl" "$work/plain/acapella/songs/"
"$acapella" usb "$work/plain" --data "$data" >/dev/null 2>"$work/ref.err" || { echo "usb pull-out: the reference export failed: $(cat "$work/ref.err")"; exit 1; }
reference="$(cd "$work/plain/acapella/export" && find . -type f ! -name '.*' -print0 | sort -z | xargs -0 sha256sum)"
files="$(wc -l <<<"$reference")"
rm -rf "$data/songs"

truncate -s 256M "$work/stick.img" && mkfs.ext4 -q -F "$work/stick.img" || { echo "usb pull-out: cannot make the image"; exit 1; }
pulled=0 finished=0 halfwritten=0 changed=0 leftovers=0 broken_songs=0 unsaid=0
for trial in $(seq "$trials"); do
  mount -o loop "$work/stick.img" "$work/stick" || { echo "usb pull-out: trial $trial: cannot mount"; exit 1; }
  rm -rf "$work/stick/acapella" && mkdir -p "$work/stick/acapella/songs"
  (( have_songs )) && cp "$songs/bach_bwv66.6.mxl" "$work/stick/acapella/songs/"
  sync
  "$acapella" usb "$work/stick" --data "$data" >"$work/trial.out" 2>"$work/trial.err" &
  job=$!
  # Pulled out somewhere in the export (it takes about a second here).
  sleep "0.$(printf '%03d' $(( (trial * 7919) % 1000 )))"
  if (( trial % 2 == 0 )); then kill -9 $job; fi
  umount -l "$work/stick"
  wait $job 2>/dev/null
  status=$?
  (( trial % 2 == 0 )) && status=9
  if [[ $status == 0 ]]; then finished=$((finished + 1)); else pulled=$((pulled + 1)); fi
  if [[ $status != 0 && $status != 9 ]] && ! grep -q "the USB stick was removed before the end" "$work/trial.err"; then
    unsaid=$((unsaid + 1))
    echo "usb pull-out: trial $trial: failed without saying the stick went: $(cat "$work/trial.err")"
  fi
  # The stick again: what is named is whole.
  for _ in $(seq 50); do mount -o loop "$work/stick.img" "$work/check" 2>/dev/null && break; sleep 0.1; done
  if [[ -d "$work/check/acapella/export" ]]; then
    while read -r sum name; do
      [[ -z "$name" ]] && continue
      if ! grep -qF "$sum  $name" <<<"$reference"; then
        halfwritten=$((halfwritten + 1))
        echo "usb pull-out: trial $trial: $name is not what the export writes"
      fi
    done < <(cd "$work/check/acapella/export" && find . -type f ! -name '.*' -print0 | sort -z | xargs -0 -r sha256sum)
    leftovers=$((leftovers + $(find "$work/check/acapella/export" -name '.partial-*' | wc -l)))
  fi
  umount "$work/check"
  # The box's side: the project untouched, the songs brought in whole.
  if [[ "$(snapshot)" != "$before" ]]; then changed=$((changed + 1)); echo "usb pull-out: trial $trial: the project changed"; fi
  for song in "$data"/songs/*.mxl; do
    [[ -e "$song" ]] || continue
    cmp -s "$song" "$songs/bach_bwv66.6.mxl" || { broken_songs=$((broken_songs + 1)); echo "usb pull-out: trial $trial: $song is not the stick's song"; }
  done
  rm -rf "$data/songs"
done 2>>"$work/shell.err"  # (the shell's "Killed" notices for the killed exports)
echo "usb pull-out: $trials trials ($pulled pulled out mid-export, half of them with the export killed at that instant; $finished finished first; $files files per export): $halfwritten files half-written under a final name, $changed changes to the project, $broken_songs songs brought in broken, $unsaid removals not said; $leftovers hidden partial files left on the stick"
[[ $halfwritten == 0 && $changed == 0 && $broken_songs == 0 && $unsaid == 0 && $pulled -ge $((trials / 2)) ]]
