#!/usr/bin/env python3
"""Crash consistency for real: replays a device-mapper log-writes log
(Tests/hil/scenarios.sh section 8 records it in the VM) prefix by prefix —
every disk a power cut could have left, the writes that reached it in the
order they did — and checks each as the box would find it at the next boot:

  - the file system mounts (its journal replayed) and the project opens,
    for reading and for writing (a writer repairs what a crash left);
  - no file is half-written under a final name: the manifest and every
    sidecar parse, the song is whole, a take copied in by the merge and every
    file the USB export wrote are, when present, byte for byte the final one;
  - no take is lost beyond the last 0.25 s: the take being recorded, once
    repaired, is a prefix of the final take sample for sample, its length
    never goes back from one prefix to the next, and never jumps by more
    than the file's flush interval (0.25 s, 12,000 frames) and the piece
    the recorder last handed it (up to 4,096 frames): so a cut anywhere
    loses at most what was sung since the last flush, 0.34 s at worst.

The log's format is the kernel's (drivers/md/dm-log-writes.c): a super
block (magic, version, entries, sector size), then for each entry a
sector-sized header (sector, sectors, flags, data length; a mark's name
after it) and the written sectors. Needs root (loop devices, mount).

Usage: replay.py CRASH_DIR ACAPELLA
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

crash, acapella = sys.argv[1], sys.argv[2]
MAGIC = 0x6A736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8
FLUSH_FRAMES = 12_000  # the take file's fsync interval: 0.25 s at 48 kHz
PIECE_FRAMES = 4_096   # the recorder hands the file its frames in pieces of up to this many
failures = []


def fail(text):
    failures.append(text)
    if len(failures) <= 10:
        print("FAIL " + text, flush=True)


def read_log(path):
    """Entries: (flags, byte offset on the disk, data offset in the log, length, mark)."""
    entries = []
    with open(path, "rb") as log:
        magic, version, count, sector = struct.unpack("<QQQI", log.read(28))
        if magic != MAGIC or version != 1:
            sys.exit(f"replay: {path} is not a log-writes log")
        position = sector
        for _ in range(count):
            log.seek(position)
            header = log.read(sector)
            start, sectors, flags, length = struct.unpack("<QQQQ", header[:32])
            position += sector
            mark = header[32:32 + length].decode(errors="replace") if flags & MARK else None
            size = 0 if flags & DISCARD else sectors * sector
            entries.append((flags, start * sector, position, sectors * sector, mark))
            position += size
    return entries, sector


def apply(log, image, entry):
    flags, offset, data, length, _ = entry
    if flags & MARK or length == 0:
        return False
    if flags & DISCARD:
        image.seek(offset)
        image.write(bytes(length))
        return True
    log.seek(data)
    image.seek(offset)
    image.write(log.read(length))
    return True


def wav_samples(path):
    """A mono float WAV's samples as bytes (the data chunk), or None."""
    try:
        with open(path, "rb") as wav:
            blob = wav.read()
    except OSError:
        return None
    if blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        return None
    at = 12
    while at + 8 <= len(blob):
        name, size = blob[at:at + 4], struct.unpack("<I", blob[at + 4:at + 8])[0]
        if name == b"data":
            return blob[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    return None


def run(*arguments):
    return subprocess.run([acapella, *arguments], capture_output=True, text=True, timeout=60)


entries, sector = read_log(crash + "/log.img")
marks = {entry[4]: index for index, entry in enumerate(entries) if entry[4]}
final = crash + "/final"
take_id = open(crash + "/take").read().strip()
final_manifest = json.load(open(final + "/projects/hymn.acaproj/manifest.json"))
take_file = next(t["file"] for t in final_manifest["takes"] if str(t["id"]) == take_id)
final_take = wav_samples(final + "/projects/hymn.acaproj/" + take_file)
phases = [("take", marks["begin"], marks["take"]), ("keep", marks["take"], marks["keep"]),
          ("merge", marks["keep"], marks["merge"]), ("usb", marks["merge"], marks["usb"])]
size = max(offset + length for _, offset, _, length, _ in entries if length) + (1 << 20)
work = tempfile.mkdtemp()
base = work + "/base.img"
mount = work + "/mnt"
os.makedirs(mount)
with open(base, "wb") as image:
    image.truncate(size)
checked = {name: 0 for name, _, _ in phases}
lengths = []  # the repaired take's frames, prefix after prefix, in the take phase
begin_files = None
try:
    with open(crash + "/log.img", "rb") as log, open(base, "r+b") as image:
        for index in range(marks["begin"] + 1):
            apply(log, image, entries[index])
        for index in range(marks["begin"] + 1, marks["usb"] + 1):
            if not apply(log, image, entries[index]):
                continue  # a flush or a mark: the disk holds what it held
            image.flush()
            phase = next(name for name, start, end in phases if start < index <= end)
            checked[phase] += 1
            copy = work + "/check.img"
            subprocess.run(["cp", "--sparse=always", base, copy], check=True)
            loop = subprocess.run(["losetup", "-f", "--show", copy], capture_output=True, text=True, check=True).stdout.strip()
            try:
                mounted = subprocess.run(["mount", "-t", "ext4", loop, mount], capture_output=True, text=True)
                if mounted.returncode != 0:
                    fail(f"prefix {index} ({phase}): the file system does not mount: {mounted.stderr.strip()}")
                    continue
                try:
                    project = mount + "/data/projects/hymn.acaproj"
                    # Under final names: whole, or not there.
                    for name in ["manifest.json"] + [f"takes/{n}" for n in os.listdir(project + "/takes") if n.endswith(".json") and not n.startswith(".")]:
                        try:
                            json.load(open(project + "/" + name))
                        except (OSError, ValueError) as error:
                            fail(f"prefix {index} ({phase}): {name} is half-written under its name ({error})")
                    if open(project + "/score.acasong", "rb").read() != open(final + "/projects/hymn.acaproj/score.acasong", "rb").read():
                        fail(f"prefix {index} ({phase}): the song is not whole")
                    if begin_files is None:
                        begin_files = set(os.listdir(project + "/takes"))
                    for name in os.listdir(project + "/takes"):
                        path = f"takes/{name}"
                        if name.startswith(".") or not name.endswith(".wav") or path == take_file or name in begin_files:
                            continue
                        if open(project + "/" + path, "rb").read() != open(final + "/projects/hymn.acaproj/" + path, "rb").read():
                            fail(f"prefix {index} ({phase}): {path} (merged in) is not the whole take under its name")
                    export = mount + "/stick/acapella/export"
                    for folder, _, files in os.walk(export):
                        for name in files:
                            if name.startswith("."):
                                continue
                            relative = os.path.relpath(folder + "/" + name, mount)
                            if open(folder + "/" + name, "rb").read() != open(final + "/" + relative, "rb").read():
                                fail(f"prefix {index} ({phase}): {relative} is on the stick under its name but not whole")
                    # The project opens, to read and to write (a writer repairs).
                    listed = run("takes", project)
                    if listed.returncode != 0:
                        fail(f"prefix {index} ({phase}): the project does not open: {listed.stderr.strip()[:200]}")
                    repaired = run("takes", project, "recover")
                    if repaired.returncode != 0:
                        fail(f"prefix {index} ({phase}): the project cannot be repaired: {repaired.stderr.strip()[:200]}")
                    # The take: a prefix of the final one, sample for sample.
                    samples = wav_samples(project + "/" + take_file)
                    frames = 0 if samples is None else len(samples) // 4
                    if samples is not None and samples != final_take[:len(samples)]:
                        fail(f"prefix {index} ({phase}): the take's {frames} frames are not the final take's first ones")
                    if phase == "take":
                        lengths.append((index, frames))
                    elif frames != len(final_take) // 4:
                        fail(f"prefix {index} ({phase}): the finished take has {frames} frames, not {len(final_take) // 4}")
                finally:
                    subprocess.run(["umount", mount], check=True)
            finally:
                subprocess.run(["losetup", "-d", loop], check=True)
finally:
    shutil.rmtree(work, ignore_errors=True)

# No take lost beyond the last flush: its length never goes back, never jumps by more than one flush.
steps = [(b[1] - a[1], b[0]) for a, b in zip(lengths, lengths[1:])]
back = [(index, step) for step, index in steps if step < 0]
if back:
    fail(f"the take got shorter from one prefix to the next at {back[:3]}")
largest = max((step for step, _ in steps), default=0)
if largest > FLUSH_FRAMES + PIECE_FRAMES:
    fail(f"the take jumped by {largest} frames between two prefixes: a cut just before lost {largest / 48000:.2f} s")
total = sum(checked.values())
print(("PASS" if not failures else "FAIL") + f" crash consistency: {total} prefixes of the write log replayed, mounted and opened "
      f"(take {checked['take']}, keep {checked['keep']}, merge {checked['merge']}, USB export {checked['usb']}); "
      f"{len(failures)} failures; the take recovered to within {largest / 48000:.3f} s of its last flush at every prefix "
      f"({lengths[-1][1] if lengths else 0} of {len(final_take) // 4} frames by the end of the recording)", flush=True)
sys.exit(1 if failures else 0)
