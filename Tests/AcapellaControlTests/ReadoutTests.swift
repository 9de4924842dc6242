@testable import AcapellaControl
import Testing

@Suite struct ReadoutTests {
    static let recording = ReadoutState(
        song: "Amazing Grace", part: "Alto", state: "recording", measure: 12, beat: 3, tempo: 72, loop: "5–8", takes: 2,
        inputDB: -12.3, note: "F#4", cents: 17.6, lyric: "was blind, but now I see")
    static let stopped = ReadoutState(song: "Ode to Joy", part: "Soprano", state: "stopped", measure: 1, beat: 1, tempo: 96.4)

    @Test func consoleFrames() {
        let frame = Readout.console(Self.recording, width: 40, height: 10)
        #expect(frame == [
            "Amazing Grace — Alto                    ",
            "REC   bar 12.3   ♩ = 72   loop 5–8   tak",
            "                                        ",
            "  -50 -------------|----#------- +50    ",
            "  F#4  +18 cents                        ",
            "                                        ",
            "input ###################..... -12.3 dB ",
            "                                        ",
            "  was blind, but now I see              ",
            "space play  r record  s stop  ? keys  q ",
        ])
        let wide = Readout.console(Self.stopped, width: 60, height: 12)
        #expect(wide.count == 12 && wide.allSatisfy { $0.count == 60 })
        #expect(wide[1] == "STOP  bar 1.1   ♩ = 96   takes 0                            ")
        #expect(wide[3] == "  -50 -----------------------|---------------------- +50    ")
        #expect(wide[4].hasPrefix("  (rest)") && wide[6].hasPrefix("input ...") && wide[6].contains("-inf dB"))
        // Too small a terminal still gets the 40×10 frame.
        #expect(Readout.console(Self.stopped, width: 20, height: 5).count == 10)
    }

    @Test func lcdFrames() {
        #expect(Readout.lcd(Self.recording, columns: 16, rows: 2) == ["REC 12.3 F#4    ", "------|-#---+18 "])
        #expect(Readout.lcd(Self.recording, columns: 20, rows: 4) == ["Amazing Grace       ", "REC 12.3 72bpm Alto ", "F#4 +18 cents       ", "--------|--#----+18 "])
        #expect(Readout.lcd(Self.stopped, columns: 16, rows: 2) == ["STOP 1.1        ", "------|-----    "])
    }

    @Test func needleAndMeterEnds() {
        #expect(Readout.needle(-80, width: 11) == "<----|-----")
        #expect(Readout.needle(80, width: 11) == "-----|---->")
        #expect(Readout.needle(0, width: 11) == "-----#-----")
        #expect(Readout.meter(0, clipped: true, width: 10) == "######CLIP")
        #expect(Readout.meter(-30, clipped: false, width: 10) == "#####.....")
    }
}
