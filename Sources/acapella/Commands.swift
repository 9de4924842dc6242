import AcapellaCLI
import AcapellaControl
import AcapellaDevices
import AcapellaEngine
import AcapellaMusicXML
import AcapellaProject
import AcapellaScore
import Foundation

/// The subcommand table.
let commands: [Subcommand] = [
    Subcommand(
        name: "check", summary: "validate song files; one line per error",
        positionals: "FILE…", positionalCount: 1...Int.max,
        options: [OptionSpec(names: ["--quiet", "-q"], valueName: nil, help: "print nothing for valid files")],
        details: "Exit status 0 when every file is valid, 1 otherwise. Errors go to stderr as\nFILE:LINE:COL: error: MESSAGE (measure N).",
        run: runCheck),
    Subcommand(
        name: "import", summary: "convert MusicXML (.musicxml, .xml, .mxl) to .acasong, with an import report",
        positionals: "IN", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT", help: "write the .acasong here (default: standard output)", writes: true),
            OptionSpec(names: ["--parts"], valueName: "NAMES", help: "keep only these parts (names as imported), comma-separated, in this order"),
        ] + importOptionSpecs,
        details: """
            The report (stderr) has one line per kind of thing skipped or changed, with a count and
            the first measure (as the score numbers it).
            Closed score (Soprano and Alto on one staff, as two voices or chords) becomes one part
            per voice, named from the part name ("Soprano Alto" → Soprano, Alto; "SATB" → S, A, T,
            B; otherwise "Choir 1"…); a keyboard part stays one part (its top notes) unless --split.
            Repeats are written out in singing order, each pass singing its own line of words; the
            song's 'written:' line keeps the measure numbers of the score.
            """,
        run: runImport),
    Subcommand(
        name: "new", summary: "create a project (NAME.acaproj) from a song",
        positionals: "NAME.acaproj", positionalCount: 1...1,
        options: [OptionSpec(names: ["--song"], valueName: "SONG", help: "the song: .acasong or MusicXML", required: true)],
        details: "The project is a folder: manifest.json, score.acasong and takes/. The manifest: docs/guide/projects.md.",
        run: runNew),
    Subcommand(
        name: "record", summary: "record a part of a project (non-interactive: plays, records, stops by itself)",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part to record"),
            OptionSpec(names: ["--parts"], valueName: "PART=INPUT,…", help: "several parts at once, each from its input (1-based): Soprano=1,Alto=2,Tenor=3,Bass=4; a take each"),
            OptionSpec(names: ["--range"], valueName: "A-B", help: "punch in over measures A to B (one measure of pre-roll); default: the whole song"),
            OptionSpec(names: ["--loop"], valueName: "N", help: "loop recording: N passes over --range after a count-in, one take each"),
            OptionSpec(names: ["--device"], valueName: "DEVICE", help: "alsa[:NAME][@period=N,…] or sim[:latency=FRAMES,reported=FRAMES,period=FRAMES,speed=X,bleed=G,noise=A,inputs=N,crosstalk=G] (default: the first card, else sim)"),
            OptionSpec(names: ["--count-in"], valueName: "N", help: "measures of count-in for a whole-song take (default 1)"),
            OptionSpec(names: ["--singer"], valueName: "on|off", help: "the simulated room's singer sings the part (default on)"),
            OptionSpec(names: ["--detune"], valueName: "CENTS", help: "the simulated singer sings CENTS sharp, or flat when negative (default 0)"),
            OptionSpec(names: ["--late"], valueName: "MS", help: "the simulated singer enters MS late, or early when negative (default 0)"),
            OptionSpec(names: ["--drift"], valueName: "CENTS", help: "the simulated singer's pitch drifts CENTS a minute, sinking when negative (default 0)"),
            OptionSpec(names: ["--tempo"], valueName: "PERCENT", help: "sung at this tempo, 50 to 150 % of the written one, like 90 (0.9 reads the same; the take keeps it; the others' takes are stretched to it)"),
            OptionSpec(names: ["--transpose"], valueName: "N", help: "sung N semitones up (negative: down), -12 to 12"),
            OptionSpec(names: ["--as"], valueName: "NAME", help: "who sings: kept with the take, listed by 'takes' and after a merge"),
            OptionSpec(names: ["--progress"], valueName: nil, help: "print 'captured N' lines while recording"),
            OptionSpec(names: ["--guide"], valueName: nil, help: "keep the part's own guide tone on while recording (normally muted: you sing it)"),
            OptionSpec(names: ["--takes"], valueName: "stream|memory", help: "play the other parts' takes streamed from their files (default) or decoded into memory first"),
        ],
        details: "The simulated room feeds the playback back into the microphone after the round trip, with a\nsinger singing the part. The take lands in PROJECT/takes/ and becomes the part's active take.",
        run: runRecord),
    Subcommand(
        name: "devices", summary: "list sound cards with what each PCM device can do, MIDI ports and GPIO chips",
        positionals: "", positionalCount: 0...0, options: [], details: "", run: runDevices),
    Subcommand(
        name: "calibrate", summary: "measure the output-to-input round trip and store it for the device's route",
        positionals: "", positionalCount: 0...0,
        options: [
            OptionSpec(names: ["--device"], valueName: "DEVICE", help: "alsa[:NAME][@period=N,periods=N,rate=HZ] or sim[:latency=…,reported=…] (default: the first card, else sim)"),
            OptionSpec(names: ["--store"], valueName: "FILE", help: "the calibration store (default: calibration.json in the data directory)", writes: true),
        ],
        details: "Plays a 1 s sweep and records it through a loopback (a cable, or headphones held to the\nmicrophone), cross-correlates, and stores the trim over the device's own figure for this route\n(card, device, rate, period, buffer). Recording uses it; each take records which it used.\nThe data directory is $ACAPELLA_DATA_DIR, else $XDG_DATA_HOME/acapella, else ~/.local/share/acapella.",
        run: runCalibrate),
    Subcommand(
        name: "midi-learn", summary: "bind the next MIDI event (note, controller press, program change) to an action, or a fader to a part's level or pan",
        positionals: "ACTION | part-level PART | part-pan PART", positionalCount: 1...2,
        options: [
            OptionSpec(names: ["--config"], valueName: "FILE", help: "the controls file to change (default: controls.json in the data directory, started from the shipped defaults)"),
            OptionSpec(names: ["--timeout"], valueName: "SECONDS", help: "how long to wait for the event (default 30)"),
        ],
        details: "Actions: " + ControlAction.names + ".\npart-level N and part-pan N bind the next controller moved to part N's level or pan (N: 1…, or\n'reference' for the reference recording): the live mixer, on the box at once, saved with the session.\nThe file is rewritten atomically; other bindings of the same event are replaced.",
        run: runMIDILearn),
    Subcommand(
        name: "pitch", summary: "track the pitch of a recording (YIN) and print it as CSV",
        positionals: "FILE", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--song"], valueName: "SONG", help: "the song the recording sings (cents against its notes)"),
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part sung (with --song)"),
            OptionSpec(names: ["--offset"], valueName: "N", help: "file frame N + s holds song sample s (a take's alignment; default 0)"),
            OptionSpec(names: ["--truth"], valueName: "CSV", help: "a truth track (time,f0 per hop): print the accuracy figures instead"),
            OptionSpec(names: ["--hop"], valueName: "N", help: "samples between estimates (default 512 at 48 kHz)"),
        ],
        details: "Each line is stamped at the centre of the audio the estimate used. Unvoiced frames print 0 Hz.",
        run: runPitch),
    Subcommand(
        name: "notes", summary: "split any recording into notes, with no score (onset, offset, pitch) as CSV and MIDI",
        positionals: "FILE", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--midi"], valueName: "OUT.mid", help: "also write the notes as a Standard MIDI File (60 BPM: a quarter note is a second)", writes: true),
        ],
        details: "Pitch is tracked without a score (no octave slips on voices whose upper harmonics are stronger\nthan the fundamental); a note never spans a breath or a consonant; vibrato and a note sung off\npitch stay one note; a held pitch sung again splits where the level dips 6 dB. Each line: onset\nand offset in seconds, the nearest note (MIDI and name), the sung pitch against it in cents\n(the median over the note: vibrato centres) and in Hz.",
        run: runNotes),
    Subcommand(
        name: "run", summary: "the box: play, record and rehearse hands-free (console keys, MIDI, foot switch)",
        positionals: "", positionalCount: 0...0,
        options: [
            OptionSpec(names: ["--song"], valueName: "NAME|PATH", help: "the song to start with (default: the first in the library)"),
            OptionSpec(names: ["--part"], valueName: "NAME|N", help: "the part to record: its name, as every other --part takes, or its number (default 2)"),
            OptionSpec(names: ["--parts"], valueName: "PART=INPUT,…", help: "record several parts at once, each from its input: Soprano=1,Alto=2 or 1=1,2=2 (a take each; r, the foot switch and the page start them all)"),
            OptionSpec(names: ["--device"], valueName: "DEVICE", help: "alsa[:NAME] or sim[:…] (default: the first card, else the simulated room in real time)"),
            OptionSpec(names: ["--project"], valueName: "PATH", help: "rehearse this project (.acaproj) first, its song with it"),
            OptionSpec(names: ["--data"], valueName: "DIR", help: "where projects are kept (default: the data directory)"),
            OptionSpec(names: ["--controls"], valueName: "FILE", help: "the controls file (default: controls.json in the data directory, else the shipped one)"),
            OptionSpec(names: ["--config"], valueName: "FILE", help: "settings (default: /etc/acapella/acapella.json, else the shipped Config/acapella.json)"),
            OptionSpec(names: ["--seconds"], valueName: "S", help: "quit after S seconds (demos, tests)"),
            OptionSpec(names: ["--play"], valueName: nil, help: "start playing at once"),
            OptionSpec(names: ["--takes"], valueName: "stream|memory", help: "play takes streamed from their files (default) or decoded into memory first"),
            OptionSpec(names: ["--once"], valueName: nil, help: "play the song through once, then quit (demos)"),
            OptionSpec(names: ["--verse"], valueName: "N", help: "the verse the lyric line follows (default 1; v steps through them)"),
            OptionSpec(names: ["--web"], valueName: "PORT|off", help: "the web page's port, or off (default: web.port in the settings, 8080)"),
        ],
        details: "Keys: space play/pause, r record, s stop, p/o punch in/out, [ ] loop from/to here, l loop, , . measure,\n< > part, { } song, k keep, d discard, u undo, n my note, w punch the worst, v verse, - + tempo, c count-in,\nm metronome, M mute, S solo, C calibrate, ? help, Q safe shutdown (q quits). Without a sound card the simulated room plays and a\nsynthetic singer sings the part. Without a terminal (a service) it runs until stopped (SIGTERM), driven by\nMIDI and the foot switch.",
        run: runBox),
    Subcommand(
        name: "analyze", summary: "how a take was sung: every note's pitch and entry, a score per measure, where to punch in",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part's newest take (default: the project's newest take)"),
            OptionSpec(names: ["--take"], valueName: "ID", help: "this take"),
            OptionSpec(names: ["--json"], valueName: nil, help: "the analysis as JSON (the shape: docs/guide/analysis.md)"),
            OptionSpec(names: ["--svg"], valueName: "OUT.svg", help: "a plot: the written notes as bars with their words, the sung pitch over them coloured by its error", writes: true),
            OptionSpec(names: ["--for-box"], valueName: nil, help: "one line of JSON, the summary and the page's notes: what the box runs, in a process of its own, after a take"),
        ],
        details: "For every note the take covers: sung or missed, the pitch's centre against the written note in\ncents (the centre of the vibrato when there is some), its steadiness, the vibrato's rate and\nextent, and the entry against the score in ms (where the note's sound rises). Notes off by\n15 cents or more, or entering 40 ms or more early or late, are named; measures scoring below\n75 are merged into ranges to punch in, a measure of margin each side.",
        run: runAnalyze),
    Subcommand(
        name: "blend", summary: "how the parts' playing takes sounded together: chords, drift, entries, balance",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--json"], valueName: nil, help: "the blend as JSON: the ensemble, each part, every chord and common entry"),
            OptionSpec(names: ["--svg"], valueName: "OUT.svg", help: "a plot: each part's pitch at every chord, the ensemble's line", writes: true),
            OptionSpec(names: ["--for-box"], valueName: nil, help: "the JSON on one line: what the box runs, in a process of its own, for the page"),
        ],
        details: "Each part's playing take is analysed as 'analyze' does. Wherever two or more parts sing together:\neach upper part's interval above the lowest, as sung, against equal temperament and just\nintonation (cents); the ensemble's pitch (the mean of the parts') and its drift in cents a minute;\neach part's offset from the ensemble; how far apart the parts entered where they begin a note\ntogether (ms); each take's loudness (LUFS) against the parts' mean. A part 15 cents or more\noff the chord, or entering 40 ms or more from the others, is named.",
        run: runBlend),
    Subcommand(
        name: "correct", summary: "put a take's notes in tune: a corrected copy as a new take (the take as sung stays)",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part's take that plays (default: the project's newest take)"),
            OptionSpec(names: ["--take"], valueName: "ID", help: "this take"),
            OptionSpec(names: ["--notes"], valueName: "all|flagged|m.7-9", help: "which notes (default flagged: those 15 cents or more off)"),
            OptionSpec(names: ["--strength"], valueName: "0..1", help: "how far towards the written pitch (default 1: all the way)"),
            OptionSpec(names: ["--for-box"], valueName: "OUT.wav", help: "the corrected audio to OUT.wav, the notes moved one a line, the project only read: what the box runs", writes: true),
        ],
        details: "From the take's analysis: each chosen note's sung centre is moved to the written pitch by one\nshift over the note (Rubber Band, formants kept), so its vibrato and its life stay the singer's;\nthe glides between notes are kept (20 ms crossfades inside the note) and every other sample is\nthe take's own. The copy is a new take, kept and playing; the take as sung stays, kept.\nEach note moved is listed.",
        run: runCorrect),
    Subcommand(
        name: "export", summary: "pack a project into one file to carry away (NAME.acaproj.zip)",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [OptionSpec(names: ["-o", "--output"], valueName: "NAME.acaproj.zip", help: "the bundle", required: true, writes: true)],
        details: "The bundle is a zip of the project as a reader sees it: the manifest, the song, and every\nfinished take with its sidecar (a take still being recorded is left out). Audio is stored, text\ncompressed; the file appears under its name only when whole.",
        run: runExport),
    Subcommand(
        name: "import-project", summary: "unpack a project bundle (NAME.acaproj.zip) as a project",
        positionals: "FILE", positionalCount: 1...1,
        options: [OptionSpec(names: ["--into"], valueName: "DIR", help: "where the project goes (default: the current folder)", writes: true)],
        details: "Every entry must be the manifest, the song or a take's audio or sidecar under one NAME.acaproj/\nfolder (no other path, no links, every take's record beside its audio, at most \(ProjectBundle.maximumEntries) files and \(ProjectBundle.maximumBytes >> 30) GiB). The project is unpacked into a\nhidden folder beside, opened and checked like any project, and only then given its name; a\nproject of that name already there is never touched.",
        run: runImportProject),
    Subcommand(
        name: "merge", summary: "bring the takes of other projects or bundles of the same song into one project",
        positionals: "INTO.acaproj FROM…", positionalCount: 2...200,
        options: [],
        details: "Each FROM is a project or a bundle (NAME.acaproj.zip) of the same song (the same parts, timing\nand notes; another arrangement or edit is refused with the reason). Every take is copied with\nits singer, box, date and alignment under its own file name (each box names its takes apart);\nnothing is ever overwritten, and a take already here is not copied twice. A part that has a\ntake playing keeps it; choose another with 'acapella takes INTO activate ID'. Ends with each\npart's takes by singer and box.",
        run: runMerge),
    Subcommand(
        name: "takes", summary: "list or change a project's takes",
        positionals: "PROJECT [list|activate ID|nudge ID ±SAMPLES|gain ID ±DB|name ID [NAME]|delete ID|undo|recover]", positionalCount: 1...4,
        options: [],
        details: "delete marks a take discarded (its file stays, nothing is ever removed; activate brings it\nback); undo discards the newest take and brings back the part's previous one; gain sets a take's\nlevel in playback and mixes (-60 to +12 dB); name gives a take a name of up to 60 characters\n(without NAME, or with '', its name goes); recover reopens the project, repairing takes left by\na crash and rebuilding a damaged manifest. The list gives each take's singer, box and date.",
        run: runTakes),
    Subcommand(
        name: "reference", summary: "a recording to sing with: add (converted, placed by --offset or --align), show, align, offset, remove",
        positionals: "show|add|align|offset|remove PROJECT [FILE|SECONDS]", positionalCount: 2...3,
        options: [
            OptionSpec(names: ["--offset"], valueName: "SECONDS", help: "add: where the song starts in the recording (negative: the recording starts into the song)"),
            OptionSpec(names: ["--align"], valueName: nil, help: "add: find where the song starts by comparing the recording with the song's guide tones"),
            OptionSpec(names: ["--lyrics"], valueName: "FILE.lrc", help: "add: its lyrics in time (default: an .lrc of the same name beside it)"),
        ],
        details: "Any file libsndfile reads (WAV, FLAC, Ogg Vorbis, Opus, MP3, AIFF) is converted to the\nproject's rate with libsoxr and kept as one channel in PROJECT/reference/. It plays after the\nsong's parts like one more part ('Reference': level, pan, mute and solo in 'acapella session'),\non the song's timeline, at the written tempo and key only; 'mix --reference include' mixes it.\n--align compares onsets per pitch class with the song's guide tones and says how sure it is; a\nrecording at another tempo (over 1 %), or one that does not follow the song steadily, is\nrefused rather than guessed. align places an added recording again; offset SECONDS sets it.",
        run: runReference),
    Subcommand(
        name: "usb", summary: "what the box does with a USB stick: songs in from acapella/songs/, results out to acapella/export/",
        positionals: "STICK", positionalCount: 1...1,
        options: [OptionSpec(names: ["--data"], valueName: "DIR", help: "the data directory (default $ACAPELLA_DATA_DIR, else ~/.local/share/acapella)")],
        details: "STICK is where the stick is mounted; it needs an acapella/ folder. Songs in acapella/songs/ join\nyour library (DATA/songs/, MusicXML imported). Every project with takes goes to\nacapella/export/SONG/: mix.flac, mix.mp3 and mix.m4a (as last rehearsed), practice-PART.mp3 for each part,\nand SONG.acaproj.zip. Each file is flushed under a hidden name before it is named; the stick is\nflushed at the end. The running box does the same by itself when a stick is mounted.",
        run: runUSB),
    Subcommand(
        name: "web", summary: "the web page's pairing: 'forget' signs out every phone the box remembers",
        positionals: "forget", positionalCount: 1...1,
        options: [OptionSpec(names: ["--data"], valueName: "DIR", help: "the data directory (default $ACAPELLA_DATA_DIR, else ~/.local/share/acapella)")],
        details: "Phones stay paired across restarts (DATA/web-pairing.json keeps each one only as its token's\nSHA-256). 'forget' signs every one out and sets a new pairing code for the next start; it\nneeds the box stopped (sudo systemctl stop acapella): while it runs, the page's 'Sign out every\nphone…' does the same at once.",
        run: runWeb),
    Subcommand(
        name: "songs", summary: "list the box's songs (shipped and yours) with their tags; MusicXML dropped into songs/ is imported first",
        positionals: "", positionalCount: 0...0,
        options: [
            OptionSpec(names: ["--tag"], valueName: "TAG", help: "only the songs with this tag (easy, SATB, hymn…)"),
            OptionSpec(names: ["--data"], valueName: "DIR", help: "the data directory (default $ACAPELLA_DATA_DIR, else ~/.local/share/acapella)"),
        ],
        details: "Your songs live in DATA/songs/: drop .acasong, .musicxml, .xml or .mxl files there (the box\nnotices them while it runs). Each MusicXML file is imported beside itself as NAME.acasong with its\nreport NAME.import.txt; one that cannot be imported stays, its error in NAME.EXT.error.txt.",
        run: runSongs),
    Subcommand(
        name: "session", summary: "show or change a project's mix and settings as last rehearsed (what the box resumes and mix uses)",
        positionals: "PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part --volume, --pan, --mute, --solo and --takes change"),
            OptionSpec(names: ["--volume"], valueName: "DB", help: "the part's level against the default, -60 to +12 dB"),
            OptionSpec(names: ["--pan"], valueName: "X", help: "the part's place, -1 (left) to 1 (right)"),
            OptionSpec(names: ["--mute"], valueName: "on|off", help: "the part silent"),
            OptionSpec(names: ["--solo"], valueName: "on|off", help: "the part soloed (with any soloed, the others are silent)"),
            OptionSpec(names: ["--takes"], valueName: "on|off", help: "the part's takes play (off: its guide tones sing, the takes kept)"),
            OptionSpec(names: ["--tempo"], valueName: "PERCENT", help: "tempo, 50 to 150 % of written, like 90 (0.9 reads the same)"),
            OptionSpec(names: ["--transpose"], valueName: "N", help: "semitones, -12 to 12"),
            OptionSpec(names: ["--loop"], valueName: "A-B|off", help: "the loop's measures, or off"),
            OptionSpec(names: ["--count-in"], valueName: "N", help: "measures of count-in, 0 to 4"),
            OptionSpec(names: ["--metronome"], valueName: "on|off", help: "the metronome while playing"),
            OptionSpec(names: ["--line-grid"], valueName: "8|16|8t|16t", help: "the grid a line played on the keyboard (L) is written on, for this song (default 16)"),
            OptionSpec(names: ["--reset"], valueName: nil, help: "back to the defaults first"),
        ],
        details: "Kept in PROJECT/session.json. The box saves it as you change tempo, key, count-in, loop,\nmetronome, verse and solo, and starts from it; 'acapella mix PROJECT' mixes with its levels, places, mutes,\nsolos, tempo and key unless told otherwise (--tempo, --transpose, --session ignore).",
        run: runSession),
    Subcommand(
        name: "mix", summary: "render a song or project to a loudness-normalized audio file",
        positionals: "SONG_OR_PROJECT", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT", help: "the audio file: .wav, .flac, .ogg, .opus, .mp3 or .m4a", required: true, writes: true),
            OptionSpec(names: ["--lufs"], valueName: "LUFS", help: "integrated loudness target (default -16)"),
            OptionSpec(names: ["--tones"], valueName: "include|omit", help: "guide tones of parts without takes (default include)"),
            OptionSpec(names: ["--practice"], valueName: "PART", help: "practice track: PART forward, the others 9 dB quieter"),
            OptionSpec(names: ["--take"], valueName: "ID", help: "a project's take ID heard with the others: its part's only take, at the tempo and key it was sung in"),
            OptionSpec(names: ["--tempo"], valueName: "PERCENT", help: "tempo, 25 to 400 % of written, like 90 (0.9 reads the same; default 100)"),
            OptionSpec(names: ["--transpose"], valueName: "N", help: "semitones up or down (default 0)"),
            OptionSpec(names: ["--bits"], valueName: "16|24", help: "sample size for .wav and .flac (default 16)"),
            OptionSpec(names: ["--verse"], valueName: "N|all", help: "the verse whose words go with the mix, or all: the song once per verse (default 1)"),
            OptionSpec(names: ["--session"], valueName: "use|ignore", help: "a project's mix as last rehearsed (levels, pans, mutes, solos, tempo, key; default use)"),
            OptionSpec(names: ["--reference"], valueName: "include|omit", help: "a project's reference recording in the mix, where it lines up with the song (default omit)"),
        ],
        details: "The mix is normalized to the loudness target (EBU R128) under a -1 dBTP true-peak ceiling,\nthrough a soft-knee limiter. In a project, the active takes replace their parts' tones; a take\nrecorded at another tempo or key than the mix is left out and named. When the song has words,\ntheir timed lines are written beside the mix as OUT.lrc (the practice part's, else the first\npart's with words). With --verse all each take plays again in every verse.",
        run: runMix),
    Subcommand(
        name: "export-midi", summary: "write a song as a Standard MIDI File: tempo map, meters, keys, a named track per part, lyrics",
        positionals: "SONG", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT.mid", help: "the MIDI file", required: true, writes: true),
            OptionSpec(names: ["--verse"], valueName: "N", help: "whose words go in as lyric events (default 1; 0: none)"),
            OptionSpec(names: ["--transpose"], valueName: "N", help: "semitones up (+) or down (-)"),
        ],
        details: "Format 1 at 960 ticks a quarter (the song's own: every note on its exact tick): a conductor track\nwith the title, the tempo map, meters and key signatures, then a track per part named after it\n(General MIDI Choir Aahs), tied notes as one, each syllable a lyric event on its note (a\nsyllable the word goes on from ends in '-').",
        run: runExportMIDI),
    Subcommand(
        name: "export-lrc", summary: "write a song's words as timed lyrics (LRC): a line a phrase, every syllable stamped",
        positionals: "SONG", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT.lrc", help: "the lyrics file", required: true, writes: true),
            OptionSpec(names: ["--verse"], valueName: "N", help: "which verse (default 1)"),
            OptionSpec(names: ["--part"], valueName: "NAME", help: "whose words (default: the first part with words)"),
            OptionSpec(names: ["--tempo"], valueName: "PERCENT", help: "the tempo of the track they go with, 25 to 400 % of written, like 90 (0.9 reads the same; default 100)"),
            OptionSpec(names: ["--lines-only"], valueName: nil, help: "no word stamps (for players that show them as text)"),
        ],
        details: "Times to the millisecond from the song's tempo map, from the song's start (as in a mix): a line\nevery four measures ([mm:ss.xxx]), each syllable stamped (<mm:ss.xxx>, enhanced LRC), the title\nand composer as [ti:] and [ar:].",
        run: runExportLRC),
    Subcommand(
        name: "engrave", summary: "engrave a song (.acasong or MusicXML) as notation: SVG for the screen, PDF to print",
        positionals: "SONG", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["-o", "--output"], valueName: "OUT.svg|OUT.pdf", help: "the engraved score: one long SVG, or PDF pages", required: true, writes: true),
            OptionSpec(names: ["--part"], valueName: "NAME[,NAME…]", help: "only these parts (default: all, a vocal score)"),
            OptionSpec(names: ["--verse"], valueName: "N", help: "only verse N's words (default: every verse, stacked)"),
            OptionSpec(names: ["--highlight"], valueName: "PART", help: "draw PART in colour (a singer's own)"),
            OptionSpec(names: ["--closed"], valueName: nil, help: "closed score: two parts a staff (S+A, T+B), stems up and down, words between"),
            OptionSpec(names: ["--page"], valueName: "a4|letter", help: "page width (default a4)"),
            OptionSpec(names: ["--width"], valueName: "MM", help: "page width in millimetres (overrides --page)"),
            OptionSpec(names: ["--embed-font"], valueName: nil, help: "put the music font in the SVG (a standalone file)"),
            OptionSpec(names: ["--timemap"], valueName: "OUT.json", help: "every onset's tick, song sample, notes, measure and place on the page", writes: true),
        ] + importOptionSpecs,
        details: "Notation in the Bravura font (SMuFL), words in Gentium Book Plus measured with FreeType: spacing by\nduration, systems justified to the page, beams by the beat (within a melisma where there are\nwords), accidentals from the key and the measure, lyrics with hyphens and extenders, fermatas,\narticulations, breaths, slurs, dynamics and hairpins, expression text and rehearsal marks. A\nMusicXML file is printed as written — repeat barlines, endings, signs — unless --unfold asks for\nthe order it is sung in (the web page's). Every note is an SVG group with its part, measure, tick,\nsong sample, MIDI note and lyric.",
        run: runEngrave),
    Subcommand(
        name: "page-score", summary: "engrave a song for the web page (what the box runs in a process of its own)",
        positionals: "SONG", positionalCount: 1...1,
        options: [
            OptionSpec(names: ["--part"], valueName: "NAME", help: "the part drawn in colour", required: true),
            OptionSpec(names: ["--out"], valueName: "DIR", help: "where score.svg.gz and timemap.json are written", required: true),
            OptionSpec(names: ["--width"], valueName: "MM", help: "systems this wide (a phone's page); default one long line"),
            OptionSpec(names: ["--background"], valueName: nil, help: "at a lower priority (nice 10), beside a box that is playing"),
        ] + importOptionSpecs,
        details: "The box runs this when a song is loaded, wide and narrow, so that the engraving of a long score\n(hundreds of megabytes while laid out) never grows the box itself. Each file is written whole\nbefore it is named; the SVG gzip-compressed as it is made. Prints what it made and its peak memory.",
        run: runPageScore),
    Subcommand(
        name: "dump", summary: "print a song (.acasong or MusicXML) as JSON (the shape: docs/reference/json.md)",
        positionals: "FILE", positionalCount: 1...1,
        options: [OptionSpec(names: ["--json"], valueName: nil, help: "JSON output (the only format, and the default)")] + importOptionSpecs,
        details: "", run: runDump),
    Subcommand(
        name: "format", summary: "print a song in canonical form (or rewrite it with --write)",
        positionals: "FILE", positionalCount: 1...1,
        options: [OptionSpec(names: ["--write", "-w"], valueName: nil, help: "replace the file with its canonical form")],
        details: "Canonical form: fixed header order, explicit defaults, one space between tokens,\nfour measures per line each closed by a '|' barline check, lyrics after their part.",
        run: runFormat),
    Subcommand(
        name: "info", summary: "summarize songs: parts, ranges, measures, length",
        positionals: "FILE…", positionalCount: 1...Int.max,
        options: [OptionSpec(names: ["--rate"], valueName: "HZ", help: "sample rate for the length in samples (default 48000)")],
        details: "", run: runInfo),
    Subcommand(
        name: "version", summary: "print the versions of acapella and its libraries",
        positionals: "", positionalCount: 0...0, options: [], details: "", run: runVersion),
]

func runImport(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let names = arguments.value("--parts").map { $0.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) } }
    if let names {
        guard !names.contains(where: \.isEmpty) else { throw CLIError("--parts expects part names separated by commas, like \"Soprano,Alto\"; an empty name was given") }
        if let twice = names.first(where: { name in names.filter { $0.lowercased() == name.lowercased() }.count > 1 }) {
            throw CLIError("--parts names '\(twice)' twice; each part can be chosen once")
        }
    }
    if let output = arguments.value("--output") {
        do { try Folders.checkWritableFile(output) } catch { throw CLIError(error.description, exitCode: 1) }
    }
    let result = try importMusicXML(path, options: importOptions(arguments, partNames: names))
    for line in result.report.lines { writeError("\(path): \(line)") }
    let text = Acasong.serialize(result.score)
    if let output = arguments.value("--output") {
        do { try AtomicFile.write(Array(text.utf8), to: output) } catch { throw CLIError(error.description, exitCode: 1) }
        writeError("wrote \(output): \(result.score.parts.count) parts, \(measureCount(result.score)) measures")
    } else {
        print(text, terminator: "")
    }
    return 0
}

func measureCount(_ score: Score) -> Int {
    score.endTick == 0 ? 0 : score.meterMap.measure(containing: score.endTick - 1)
}

func runCheck(_ arguments: ParsedArguments) throws -> Int32 {
    var failed = false
    for path in arguments.positionals {
        do {
            let score = MusicXML.isFile(path) ? try importMusicXML(path).score : try Acasong.parse(bytes: readSongBytes(path), file: path)
            if !arguments.flags.contains("--quiet") {
                print("\(path): ok — \(score.parts.count) part\(score.parts.count == 1 ? "" : "s"), \(measureCount(score)) measures")
            }
        } catch let errors as ScoreErrors {
            failed = true
            for error in errors.errors { writeError(error.description) }
        } catch let error as CLIError {
            failed = true
            if !error.alreadyReported { writeError(error.description) }
        }
    }
    return failed ? 1 : 0
}

func runDump(_ arguments: ParsedArguments) throws -> Int32 {
    let score = try loadScore(arguments.positionals[0], options: importOptions(arguments))
    print(score.jsonText(), terminator: "")
    return 0
}

func runFormat(_ arguments: ParsedArguments) throws -> Int32 {
    let path = arguments.positionals[0]
    let canonical = Acasong.serialize(try loadScore(path))
    if arguments.flags.contains("--write") {
        do { try AtomicFile.write(Array(canonical.utf8), to: path) } catch { throw CLIError(error.description, exitCode: 1) }
    } else {
        print(canonical, terminator: "")
    }
    return 0
}

func formatDuration(samples: Int64, rate: Int) -> String {
    let tenths = (samples * 10 + Int64(rate) / 2) / Int64(rate)
    return "\(tenths / 600):" + String(format: "%02d.%d", Int(tenths / 10 % 60), Int(tenths % 10))
}

func runInfo(_ arguments: ParsedArguments) throws -> Int32 {
    let rate = try arguments.int("--rate", default: 48_000, range: 8_000...384_000)
    for (index, path) in arguments.positionals.enumerated() {
        if index > 0 { print("") }
        print(try songSummary(loadScore(path), rate: rate))
    }
    return 0
}

/// A few lines a singer can read: title, shape, length, and each part's range.
func songSummary(_ score: Score, rate: Int) throws -> String {
    let timeMap = try TimeMap(tempos: score.tempos, sampleRate: rate)
    let samples = timeMap.sample(atTick: score.endTick)
    var lines: [String] = []
    lines.append([score.title ?? "(untitled)", score.composer].compactMap { $0 }.joined(separator: " — "))
    let meters = score.meters.map { "\($0.meter)" }.joined(separator: ", ")
    let tempos = score.tempos.map { "\($0.tempo)" }.joined(separator: ", ")
    let pickup = score.pickupTicks > 0 ? " + pickup" : ""
    lines.append("  \(measureCount(score)) measures\(pickup) in \(meters); \(score.keys[0].key); ♩ = \(tempos)")
    if !score.tags.isEmpty { lines.append("  tags: " + score.tags.joined(separator: ", ")) }
    if score.verseCount > 1 { lines.append("  words: \(score.verseCount) verses (mix --verse N|all, v in the box)") }
    if !score.writtenMeasures.isEmpty { lines.append("  repeats written out: \(score.writtenMeasures.count) measures sung from \(Set(score.writtenMeasures).count) written") }
    lines.append("  length \(formatDuration(samples: samples, rate: rate)) = \(samples) samples at \(rate) Hz")
    let nameWidth = max(8, score.parts.map(\.name.count).max() ?? 0) + 2
    for part in score.parts {
        let pitches = part.notes.compactMap(\.pitch)
        let low = pitches.min { $0.midi < $1.midi }.map(\.description) ?? "-"
        let high = pitches.max { $0.midi < $1.midi }.map(\.description) ?? "-"
        let attacks = part.notes.indices.filter { part.isAttack(at: $0) }.count
        let syllables = part.notes.filter { $0.lyric != nil }.count
        lines.append("  " + part.name.padding(to: nameWidth) + part.effectiveClef.rawValue.padding(to: 11)
            + "\(low)–\(high)".padding(to: 10) + "\(attacks) notes" + (syllables > 0 ? ", \(syllables) syllables" : ""))
    }
    return lines.joined(separator: "\n")
}

func runVersion(_ arguments: ParsedArguments) throws -> Int32 {
    print("acapella 0.2.0 (acasong format 1, \(ticksPerQuarter) ticks per quarter)")
    print("libasound \(LibraryVersions.alsa), \(LibraryVersions.sndfile), libgpiod \(LibraryVersions.gpiod)")
    return 0
}

func runMix(_ arguments: ParsedArguments) throws -> Int32 {
    guard let output = arguments.value("--output") else { throw CLIError("mix needs -o OUT (.wav, .flac, .ogg, .opus, .mp3 or .m4a)") }
    guard AudioFileFormat(path: output) != nil else {
        throw CLIError("\(output): unknown audio format; use \(AudioFileFormat.listed)")
    }
    let request = try MixCommandOptions.parse(arguments)
    let source = arguments.positionals[0]
    let isProject = source.hasSuffix(".acaproj") || source.hasSuffix(".acaproj/")
    let showProgress = isatty(STDERR_FILENO) != 0
    let progress: (Double) -> Void = { fraction in if showProgress { drawProgress(fraction, label: fraction < 0.5 ? "rendering" : "writing  ") } }
    defer { if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) } }
    let result: ProjectMixResult
    if isProject {
        // One mix path: the same as the USB stick's and the page's downloads.
        let project = try openProject(source, for: .read)
        do { result = try ProjectExport.mix(project, request, to: output, progress: progress) } catch {
            throw CLIError("\(source): \(error.description)", exitCode: 1)
        }
        for note in result.notes { writeError("\(source): \(note)") }
    } else {
        if request.includeReference { throw CLIError("\(source): --reference include needs a project (a song has no reference recording)") }
        do { result = try SongMix.mix(try loadScore(source), request, to: output, progress: progress) } catch let error as MixdownError {
            throw CLIError("\(source): \(error.description)", exitCode: 1)
        }
    }
    let seconds = Double(result.frames) / Double(result.sampleRate)
    print(String(format: "wrote %@: %d:%04.1f, %.1f LUFS integrated, true peak %@", output,
                 Int(seconds) / 60, seconds.truncatingRemainder(dividingBy: 60), result.loudness.integratedLUFS, result.loudness.truePeakText)
          + (result.passes > 1 ? ", \(result.passes) verses" + (isProject ? " (takes play in each)" : "") : ""))
    if let lyrics = result.lyrics {
        let path = (output as NSString).deletingPathExtension + ".lrc"
        do {
            try Data(lyrics.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIError("\(path): cannot write the words: \(error.localizedDescription)", exitCode: 1)
        }
        print("wrote \(path): the words, line by line")
    }
    return 0
}

/// A one-line progress bar redrawn in place (only on a terminal).
func drawProgress(_ fraction: Double, label: String) {
    let width = 30
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
    FileHandle.standardError.write(Data("\r\(label) \(bar) \(Int(fraction * 100))%".utf8))
}

