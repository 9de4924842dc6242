@testable import AcapellaStatus
import Testing

@Suite struct ReadoutTests {
    static let recording = ReadoutState(
        song: "Amazing Grace", part: "Alto", mode: .recording, measure: 12, beat: 3, tempo: 72, loop: "5-8", takes: 2,
        inputDB: -12.3, note: "F#4", cents: 17.6, lyric: "was blind, but now I see")
    static let flat = ReadoutState(song: "Chorale from Cantata BWV 26: Ach wie flüchtig, ach wie nichtig", part: "Tenor", mode: .playing, measure: 7, beat: 1,
                                   tempo: 60, takes: 1, note: "D3", cents: -23.4)
    static let stopped = ReadoutState(song: "Ode to Joy", part: "Soprano", mode: .stopped, measure: 1, beat: 1, tempo: 96.4)
    static let review = ReadoutState(song: "Silent Night", part: "Bass", mode: .review, measure: 1, beat: 1, tempo: 60, takes: 3,
                                     message: "take 3 recorded (41.0 s): space hears it with the others, k keeps, d discards")

    @Test func consoleFrames() {
        #expect(Readout.console(Self.recording, width: 40, height: 10) == [
            "Amazing Grace — Alto                    ",
            "REC   bar 12.3  ♩=72  loop 5-8  takes 2 ",
            "                                        ",
            "  -50 -------------|----#------- +50    ",
            "  F#4  +18 cents                        ",
            "                                        ",
            "input ###################..... -12.3 dB ",
            "                                        ",
            "  was blind, but now I see              ",
            "o punch out  s stop  ? keys             ",
        ])
        let wide = Readout.console(Self.stopped, width: 60, height: 12)
        #expect(wide.count == 12 && wide.allSatisfy { $0.count == 60 })
        #expect(wide[1] == "STOP  bar 1.1  ♩=96  takes 0" + String(repeating: " ", count: 32))
        #expect(wide[3] == "  -50 -----------------------|---------------------- +50    ")
        #expect(wide[4].hasPrefix("  (rest)") && wide[6].hasPrefix("input ...") && wide[6].contains("-inf dB"))
        // Too small a terminal still gets the 40×10 frame.
        #expect(Readout.console(Self.stopped, width: 20, height: 5).count == 10)
        // The last note's word (the grade's centre) beside the needle's note.
        var worded = Self.recording
        worded.lastNote = "E4"
        worded.lastCents = -4.4
        #expect(Readout.console(worded, width: 60, height: 10)[4] == "  F#4  +18 cents   last note E4 -4" + String(repeating: " ", count: 26))
    }

    /// The footer follows the state: at TAKE? it says what to press, and a
    /// message (what the last key did) stands in the lyric's place.
    @Test func footerAndMessage() {
        let frame = Readout.console(Self.review, width: 40, height: 10)
        #expect(frame[0] == "Silent Night — Bass                     ")
        #expect(frame[1] == "TAKE? bar 1.1  ♩=60  takes 3            ")
        #expect(frame[8] == "  take 3 recorded (41.0 s): space hears ")
        #expect(frame[9] == "k keep  d discard  space listen         ")
        for mode in ReadoutMode.allCases { #expect(Readout.footer(mode).count <= 40, "\(mode) footer fits 40 columns") }
        #expect(Readout.footer(.countIn) == "s stop  r record or not  ? keys")
        #expect(Readout.footer(.playing) == "space pause  p punch in  s stop  ? keys")
    }

    /// `?` pages the keys into the readout: two columns when it is wide,
    /// several pages when it is small, every key on some page.
    @Test func keyHelpIsPaged() {
        let keys = (1...29).map { "k\($0)    action \($0)" }
        let wide = Readout.helpPages(keys, width: 80, height: 14)
        #expect(wide.count == 2 && wide[0].count == 10 && wide[0][0] == "k1    action 1".padding(toLength: 18) + "k11    action 11")
        let narrow = Readout.helpPages(keys, width: 40, height: 10)
        #expect(narrow.count == 3, "6 lines a page, two columns of 18: \(narrow.map(\.count))")
        let shown = narrow.flatMap { $0 }.joined(separator: "\n")
        #expect(keys.allSatisfy { key in shown.contains(key + " ") || shown.contains(key + "\n") || shown.hasSuffix(key) })
        var state = Self.stopped
        state.helpPage = 1
        let frame = Readout.console(state, width: 80, height: 14, keys: keys)
        #expect(frame[2].hasPrefix("keys, page 2 of 2 (? next page, any other key closes):"))
        #expect(frame[3].hasPrefix("k21    action 21") && frame[13].hasPrefix("space play"))
    }

    /// 16×2: where you are (short title, part, takes), then what is
    /// happening (state, measure, needle, cents); at TAKE? what to press.
    /// 20×4 adds the tempo and the lyric line.
    @Test func lcdFrames() {
        #expect(Readout.lcd(Self.recording, columns: 16, rows: 2) == ["Amazing Alto  T2", "REC  12 ..|# +18"])
        #expect(Readout.lcd(Self.recording, columns: 20, rows: 4) == ["Amazing Grace       ", "Alto     T2  72bpm  ", "REC  12.3 ...|#. +18", "was blind, but now I"])
        #expect(Readout.lcd(Self.stopped, columns: 16, rows: 2) == ["Ode Soprano   T0", "STOP 1  ..|.    "])
        #expect(Readout.lcd(Self.review, columns: 16, rows: 2) == ["TAKE? Bass    T3", "k keep d discard"])
        #expect(Readout.lcd(Self.review, columns: 20, rows: 4)[2...] == ["TAKE? space: listen ", "k keep  d discard   "])
        // A flat reading: its minus sign stands apart from the needle's track.
        #expect(Readout.lcd(Self.flat, columns: 16, rows: 2) == ["BWV 26 Tenor  T1", "PLAY 7  .#|. -23"])
        #expect(Readout.lcd(Self.flat, columns: 20, rows: 4)[2] == "PLAY 7.1  ..#|.. -23")
        // At review with the take's analysis: its score, then the keys, the worst notes and the punch in turn.
        var analysed = Self.review
        analysed.takeSummary = TakeSummary(takeID: 3, score: 86, sung: 27, notes: 28, worst: ["m7 saved -32c", "m9 late 80ms"], punch: 11...13)
        #expect((0..<5).map { turn -> String in
            analysed.summaryTurn = turn
            return Readout.lcd(analysed, columns: 16, rows: 2)[1]
        } == ["k keep d discard", "m7 saved -32c   ", "m9 late 80ms    ", "w punch 11-13   ", "k keep d discard"])
        #expect(Readout.lcd(analysed, columns: 16, rows: 2)[0] == "TAKE? 86 Bass T3")
        analysed.summaryTurn = 3
        #expect(Readout.lcd(analysed, columns: 20, rows: 4)[2...] == ["TAKE? 86/100 27/28  ", "w punch 11-13       "])
        // When a song is ready: the web page's address and pairing code, while stopped.
        var web = Self.stopped
        web.web = WebBanner(host: "acapella.local", port: 8080, code: "042917")
        #expect(Readout.lcd(web, columns: 16, rows: 2) == ["acapella.local  ", ":8080 code042917"])
        #expect(Readout.lcd(web, columns: 20, rows: 4) == ["Ode to Joy          ", "web page:           ", "acapella.local:8080 ", "code 042917         "])
        var short = web
        short.web = WebBanner(host: "box.local", port: 80, code: "042917")
        #expect(Readout.lcd(short, columns: 16, rows: 2) == ["box.local       ", "code 042917     "])
        #expect(Readout.console(web, width: 80, height: 14, keys: [])[8].contains("web page: http://acapella.local:8080/  code 042917"))
        var playing = web
        playing.mode = .playing
        #expect(Readout.lcd(playing, columns: 16, rows: 2)[1].hasPrefix("PLAY"))
        for state in [Self.recording, Self.flat, Self.stopped, Self.review, web, short] {
            #expect(Readout.lcd(state, columns: 16, rows: 2).allSatisfy { $0.count == 16 && $0.unicodeScalars.allSatisfy(\.isASCII) })
        }
    }

    /// Titles shortened for the LCD still tell the songs apart: the three
    /// Bach chorales by their catalogue numbers, not "Chorale from Cantata".
    @Test func shortTitlesStayDistinct() {
        let library = ["Chorale from Cantata BWV 26: Ach wie flüchtig, ach wie nichtig", "Chorale from Cantata BWV 40: Freuet euch, ihr Christen alle",
                       "Chorale from Cantata BWV 66, Erfreut euch, ihr Herzen (final chorale)", "Allor che ignuda d'herb et fior la terra",
                       "My Bonnie Lies Over the Ocean", "Row, Row, Row Your Boat", "Amazing Grace", "Ode to Joy"]
        let short = ShortTitle.distinct(library, width: 10)
        #expect(short == ["BWV 26", "BWV 40", "BWV 66", "Allor che", "My Bonnie", "Row, Row", "Amazing", "Ode to Joy"])
        #expect(Set(short).count == short.count)
        #expect(ShortTitle.distinct(["Hymn: Come Thou Fount", "Hymn: Come, Ye Thankful"], width: 6) == ["Come", "Come 2"])
        #expect(ShortTitle.make("The Water Is Wide", width: 10) == "Water Is")
    }

    @Test func needleAndMeterEnds() {
        #expect(Readout.needle(-80, width: 11) == "<----|-----")
        #expect(Readout.needle(80, width: 11) == "-----|---->")
        #expect(Readout.needle(0, width: 11) == "-----#-----")
        #expect(Readout.needle(-10, width: 7, track: ".") == "..#|...")
        #expect(Readout.meter(0, clipped: true, width: 10) == "######CLIP")
        #expect(Readout.meter(-30, clipped: false, width: 10) == "#####.....")
    }
}

/// Note names in a key: flats in flat keys, sharps otherwise; key
/// signatures moved by a transposition.
@Suite struct NoteNameTests {
    @Test func spelledInTheKey() {
        #expect(NoteName.name(68, fifths: -3) == "Ab4")
        #expect(NoteName.name(68, fifths: 0) == "G#4")
        #expect(NoteName.name(70, fifths: -1) == "Bb4")
        #expect(NoteName.name(61, fifths: 2) == "C#4")
        #expect(NoteName.name(69, fifths: -5) == "A4")
        #expect(NoteName.name(-1, fifths: -2) == "B-2" && NoteName.name(10, fifths: -2) == "Bb-1")
    }

    @Test func keysMovedByATransposition() {
        #expect(NoteName.fifths(-1, transposedBy: 2) == 1)     // F major up a tone: G major
        #expect(NoteName.fifths(-3, transposedBy: -3) == 0)    // E♭ major down a minor third: C major
        #expect(NoteName.fifths(0, transposedBy: 1) == -5)     // C up a semitone: D♭ (5 flats), not C♯ (7 sharps)
        #expect(NoteName.fifths(-6, transposedBy: 0) == -6 && NoteName.fifths(6, transposedBy: 0) == 6)
        #expect(NoteName.fifths(2, transposedBy: 12) == 2)
    }
}
