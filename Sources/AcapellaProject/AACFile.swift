internal import CFFmpeg
import Foundation

/// FFmpeg's functions, once `AACEncoder.load` has opened it.
private var ff: acapella_ffmpeg { acapella_ffmpeg().pointee }

/// AAC-LC in an MP4 container (`.m4a`, what phones keep) through FFmpeg:
/// libavcodec's own AAC encoder, libavformat's `ipod` muxer (the M4A
/// brand) with the index moved to the front (`+faststart`: a phone starts
/// playing while it downloads) and the encoder's priming samples in the
/// edit list (so a decoder gives back exactly the frames written). Tags as
/// iTunes-style metadata. Written to `temporary`; the caller renames it.
/// The corresponding C functions are `avformat_alloc_output_context2`,
/// `avcodec_open2`, `avcodec_send_frame`, `avcodec_receive_packet`,
/// `av_interleaved_write_frame` and `av_write_trailer`.
final class AACEncoder {
    /// Stereo at 192 kb/s: transparent for voices in listening tests of
    /// FFmpeg's encoder at this rate, about 1.4 MB a minute.
    static let bitRate = 192_000

    private let name: String
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    // Every stored property has a value before anything can throw: `deinit`
    // then frees what an initializer that failed midway had made.
    private var stream: UnsafeMutablePointer<AVStream>?
    private var frameSize = 1024
    private var filled = 0
    private var pts: Int64 = 0
    private var finished = false

    /// `name` is the path errors name (the finished file's).
    init(writing temporary: String, named name: String, sampleRate: Int, tags: AudioTags) throws(AudioFileError) {
        self.name = name
        try AACEncoder.load(for: name)
        func failed(_ what: String, _ code: Int32 = 0) -> AudioFileError {
            AudioFileError(description: "\(name): \(what)" + (code == 0 ? "" : ": " + AACEncoder.message(code)))
        }
        var context: UnsafeMutablePointer<AVFormatContext>?
        var status = ff.avformat_alloc_output_context2(&context, nil, "ipod", temporary)
        guard status >= 0, let context else { throw failed("FFmpeg has no M4A muxer", status) }
        format = context
        guard let encoder = ff.avcodec_find_encoder(AV_CODEC_ID_AAC) else { throw failed("FFmpeg has no AAC encoder") }
        guard let stream = ff.avformat_new_stream(context, nil) else { throw failed("FFmpeg could not add a stream") }
        self.stream = stream  // freed with the format context
        guard let codec = ff.avcodec_alloc_context3(encoder) else { throw failed("FFmpeg could not make an encoder") }
        self.codec = codec
        codec.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        codec.pointee.sample_rate = Int32(sampleRate)
        codec.pointee.bit_rate = Int64(AACEncoder.bitRate)
        codec.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        ff.av_channel_layout_default(&codec.pointee.ch_layout, 2)
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 { codec.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        status = ff.avcodec_open2(codec, encoder, nil)
        guard status >= 0 else { throw failed("FFmpeg's AAC encoder refused \(sampleRate) Hz stereo", status) }
        status = ff.avcodec_parameters_from_context(stream.pointee.codecpar, codec)
        guard status >= 0 else { throw failed("FFmpeg could not describe the stream", status) }
        stream.pointee.time_base = codec.pointee.time_base
        frameSize = Int(codec.pointee.frame_size > 0 ? codec.pointee.frame_size : 1024)
        guard let frame = ff.av_frame_alloc(), let packet = ff.av_packet_alloc() else { throw failed("out of memory") }
        self.frame = frame
        self.packet = packet
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = Int32(sampleRate)
        frame.pointee.nb_samples = Int32(frameSize)
        status = ff.av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout)
        guard status >= 0 else { throw failed("FFmpeg could not set the channels", status) }
        status = ff.av_frame_get_buffer(frame, 0)
        guard status >= 0 else { throw failed("out of memory", status) }
        for (key, value) in tags.mp4 { _ = ff.av_dict_set(&context.pointee.metadata, key, value, 0) }
        status = ff.avio_open(&context.pointee.pb, temporary, AVIO_FLAG_WRITE)
        guard status >= 0 else { throw failed("cannot write", status) }
        var options: OpaquePointer?
        _ = ff.av_dict_set(&options, "movflags", "+faststart", 0)
        status = ff.avformat_write_header(context, &options)
        ff.av_dict_free(&options)
        guard status >= 0 else { throw failed("FFmpeg could not start the file", status) }
    }

    deinit {
        ff.av_frame_free(&frame)
        ff.av_packet_free(&packet)
        ff.avcodec_free_context(&codec)
        if let format {
            if format.pointee.pb != nil { _ = ff.avio_closep(&format.pointee.pb) }
            ff.avformat_free_context(format)
        }
    }

    /// Appends stereo frames, a codec frame (1024 samples) at a time.
    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        guard let frame, !finished else { throw AudioFileError(description: "\(name): already finished") }
        var done = 0
        while done < frames {
            if filled == 0 {
                let status = ff.av_frame_make_writable(frame)
                guard status >= 0 else { throw AudioFileError(description: "\(name): \(AACEncoder.message(status))") }
            }
            let count = min(frameSize - filled, frames - done)
            let planes = frame.pointee.extended_data!
            planes[0]!.withMemoryRebound(to: Float.self, capacity: frameSize) { $0.advanced(by: filled).update(from: left + done, count: count) }
            planes[1]!.withMemoryRebound(to: Float.self, capacity: frameSize) { $0.advanced(by: filled).update(from: right + done, count: count) }
            filled += count
            done += count
            if filled == frameSize { try send(frame) }
        }
    }

    /// Sends what is buffered (a last, shorter frame), drains the encoder,
    /// writes the index and closes the file.
    func finish() throws(AudioFileError) {
        guard let frame, let format, !finished else { return }
        if filled > 0 {
            frame.pointee.nb_samples = Int32(filled)
            try send(frame)
        }
        try send(nil)
        finished = true
        let status = ff.av_write_trailer(format)
        var closeStatus: Int32 = 0
        if format.pointee.pb != nil { closeStatus = ff.avio_closep(&format.pointee.pb) }
        guard status >= 0, closeStatus >= 0 else {
            throw AudioFileError(description: "\(name): write failed while closing: \(AACEncoder.message(status < 0 ? status : closeStatus))")
        }
    }

    /// One frame (or nil: the end) into the encoder, its packets to the file.
    private func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(AudioFileError) {
        guard let codec, let packet, let format, let stream else { return }
        if let frame {
            frame.pointee.pts = pts
            pts += Int64(frame.pointee.nb_samples)
            filled = 0
        }
        var status = ff.avcodec_send_frame(codec, frame)
        guard status >= 0 else { throw AudioFileError(description: "\(name): the AAC encoder failed: \(AACEncoder.message(status))") }
        while true {
            status = ff.avcodec_receive_packet(codec, packet)
            if status == acapella_averror_eagain() || status == acapella_averror_eof() { return }
            guard status >= 0 else { throw AudioFileError(description: "\(name): the AAC encoder failed: \(AACEncoder.message(status))") }
            ff.av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            status = ff.av_interleaved_write_frame(format, packet)
            guard status >= 0 else { throw AudioFileError(description: "\(name): write failed: \(AACEncoder.message(status))") }
        }
    }

    /// FFmpeg opened (on first use: `cffmpeg.h`), its own log silenced (its
    /// muxer's notes and the encoder's statistics would land in the box's
    /// journal): what fails is said in the box's words, with FFmpeg's reason
    /// from the error code; FFmpeg not there is said as such.
    static func load(for path: String) throws(AudioFileError) {
        var why = [CChar](repeating: 0, count: 256)
        guard acapella_ffmpeg_load(&why, why.count) == 1 else {
            throw AudioFileError(description: "\(path): " + String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                                 + " (install Debian's libavformat to read and write .m4a)")
        }
        ff.av_log_set_level(AV_LOG_QUIET)
    }

    /// FFmpeg's words for an error code.
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        _ = ff.av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Any file FFmpeg's demuxers and decoders read (AAC in MP4 from a phone,
/// what libsndfile does not), decoded to interleaved floats a chunk at a
/// time: `body` gets each chunk, its frames and the channel count.
/// Returns channels and rate. The corresponding C functions are
/// `avformat_open_input`, `av_find_best_stream`, `av_read_frame`,
/// `avcodec_send_packet` and `avcodec_receive_frame`.
enum FFmpegDecoder {
    /// The channels of the file's audio, or nil when FFmpeg cannot open it
    /// or it holds no audio.
    static func channels(_ path: String) -> Int? {
        guard let (format, index, _) = try? openAudio(path) else { return nil }
        defer { close(format) }
        let channels = Int(format.pointee.streams[Int(index)]!.pointee.codecpar.pointee.ch_layout.nb_channels)
        return channels > 0 ? channels : nil
    }

    /// `path` opened (FFmpeg's log silenced) and its audio stream found,
    /// with the decoder for it; the caller closes it (`close`).
    private static func openAudio(_ path: String) throws(AudioFileError) -> (UnsafeMutablePointer<AVFormatContext>, Int32, UnsafePointer<AVCodec>) {
        try AACEncoder.load(for: path)
        var format: UnsafeMutablePointer<AVFormatContext>?
        var status = ff.avformat_open_input(&format, path, nil, nil)
        guard status >= 0, let opened = format else { throw failed(path, "cannot read", status) }
        status = ff.avformat_find_stream_info(opened, nil)
        var decoder: UnsafePointer<AVCodec>?
        let index = status >= 0 ? ff.av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0) : status
        guard index >= 0, let decoder else {
            close(opened)
            throw status < 0 ? failed(path, "not audio FFmpeg can read", status) : failed(path, "no audio in it", index)
        }
        return (opened, index, decoder)
    }

    private static func close(_ format: UnsafeMutablePointer<AVFormatContext>) {
        var closing: UnsafeMutablePointer<AVFormatContext>? = format
        ff.avformat_close_input(&closing)
    }

    private static func failed(_ path: String, _ what: String, _ code: Int32) -> AudioFileError {
        AudioFileError(description: "\(path): \(what): \(AACEncoder.message(code))")
    }

    static func decode(_ path: String, _ body: (ArraySlice<Float>, Int, Int, Int) -> Void) throws(AudioFileError) -> (channels: Int, sampleRate: Int) {
        func failed(_ what: String, _ code: Int32) -> AudioFileError { Self.failed(path, what, code) }
        let (format, index, decoder) = try openAudio(path)
        defer { close(format) }
        var status: Int32
        var codec = ff.avcodec_alloc_context3(decoder)
        defer { ff.avcodec_free_context(&codec) }
        guard let codec else { throw AudioFileError(description: "\(path): out of memory") }
        status = ff.avcodec_parameters_to_context(codec, format.pointee.streams[Int(index)]!.pointee.codecpar)
        guard status >= 0 else { throw failed("cannot decode", status) }
        status = ff.avcodec_open2(codec, decoder, nil)
        guard status >= 0 else { throw failed("cannot decode", status) }
        let channels = Int(codec.pointee.ch_layout.nb_channels)
        let sampleRate = Int(codec.pointee.sample_rate)
        guard channels > 0, sampleRate > 0 else { throw AudioFileError(description: "\(path): its audio names no channels or rate") }
        // The header's length, a hint only (a hostile file may claim anything): rescaled by FFmpeg
        // (no overflow), and no more than the file's bytes could hold at a generous 1 bit a frame.
        let stream = format.pointee.streams[Int(index)]!.pointee
        var size = stat()
        let bytes = stat(path, &size) == 0 ? Int64(size.st_size) : 0
        let claimed = stream.duration > 0 && stream.time_base.den > 0 && stream.time_base.num > 0
            ? ff.av_rescale_q(stream.duration, stream.time_base, AVRational(num: 1, den: Int32(sampleRate))) : 0
        let frameHint = Int(max(0, min(claimed, bytes * 8, 1 << 26)))
        var packet = ff.av_packet_alloc()
        var frame = ff.av_frame_alloc()
        defer { ff.av_packet_free(&packet); ff.av_frame_free(&frame) }
        guard let packet, let frame else { throw AudioFileError(description: "\(path): out of memory") }
        var chunk: [Float] = []
        func drain() throws(AudioFileError) {
            while true {
                let got = ff.avcodec_receive_frame(codec, frame)
                if got == acapella_averror_eagain() || got == acapella_averror_eof() { return }
                guard got >= 0 else { throw failed("damaged audio", got) }
                let frames = Int(frame.pointee.nb_samples)
                guard Int(frame.pointee.ch_layout.nb_channels) == channels else {
                    throw AudioFileError(description: "\(path): its channel count changes midway")
                }
                // (HE-AAC's implicit SBR decodes at twice the rate its header gives: not read as the wrong rate.)
                guard Int(frame.pointee.sample_rate) == sampleRate else {
                    throw AudioFileError(description: "\(path): decodes at \(frame.pointee.sample_rate) Hz, its header says \(sampleRate) Hz")
                }
                try interleave(frame, frames: frames, channels: channels, into: &chunk, path: path)
                body(chunk[0..<(frames * channels)], frames, channels, frameHint)
                ff.av_frame_unref(frame)
            }
        }
        var read: Int32 = 0
        while true {
            read = ff.av_read_frame(format, packet)
            guard read >= 0 else { break }
            defer { ff.av_packet_unref(packet) }
            guard packet.pointee.stream_index == index else { continue }
            status = ff.avcodec_send_packet(codec, packet)
            if status == acapella_averror_eagain() {
                // The decoder is full: what it holds taken out, the packet sent again.
                try drain()
                status = ff.avcodec_send_packet(codec, packet)
            }
            guard status >= 0 else { throw failed("damaged audio", status) }
            try drain()
        }
        // The end of the file, or a file cut short or damaged: said, not taken as a shorter recording.
        guard read == acapella_averror_eof() else { throw failed("damaged or cut short", read) }
        _ = ff.avcodec_send_packet(codec, nil)
        try drain()
        return (channels, sampleRate)
    }

    /// A decoded frame's samples, any of FFmpeg's common sample formats,
    /// as interleaved floats in `chunk`.
    private static func interleave(_ frame: UnsafeMutablePointer<AVFrame>, frames: Int, channels: Int, into chunk: inout [Float], path: String) throws(AudioFileError) {
        if chunk.count < frames * channels { chunk = [Float](repeating: 0, count: frames * channels) }
        let sampleFormat = AVSampleFormat(rawValue: frame.pointee.format)
        let planar = ff.av_sample_fmt_is_planar(sampleFormat) != 0
        let packed = ff.av_get_packed_sample_fmt(sampleFormat)
        guard let data = frame.pointee.extended_data else { throw AudioFileError(description: "\(path): a decoded frame without samples") }
        func sample(_ frameIndex: Int, _ channel: Int) -> (UnsafeMutablePointer<UInt8>, Int) {
            planar ? (data[channel]!, frameIndex) : (data[0]!, frameIndex * channels + channel)
        }
        let convert: (UnsafeMutablePointer<UInt8>, Int) -> Float
        switch packed {
        case AV_SAMPLE_FMT_FLT: convert = { base, at in base.withMemoryRebound(to: Float.self, capacity: at + 1) { $0[at] } }
        case AV_SAMPLE_FMT_DBL: convert = { base, at in base.withMemoryRebound(to: Double.self, capacity: at + 1) { Float($0[at]) } }
        case AV_SAMPLE_FMT_S16: convert = { base, at in base.withMemoryRebound(to: Int16.self, capacity: at + 1) { Float($0[at]) / 32_768 } }
        case AV_SAMPLE_FMT_S32: convert = { base, at in base.withMemoryRebound(to: Int32.self, capacity: at + 1) { Float($0[at]) / 2_147_483_648 } }
        case AV_SAMPLE_FMT_U8: convert = { base, at in (Float(base[at]) - 128) / 128 }
        default: throw AudioFileError(description: "\(path): decoded to samples the box does not read (\(ff.av_get_sample_fmt_name(sampleFormat).map { String(cString: $0) } ?? "?"))")
        }
        chunk.withUnsafeMutableBufferPointer { out in
            for index in 0..<frames {
                for channel in 0..<channels {
                    let (base, at) = sample(index, channel)
                    out[index * channels + channel] = convert(base, at)
                }
            }
        }
    }
}

extension AudioTags {
    /// The tags under FFmpeg's metadata keys (the MP4 muxer writes them as
    /// iTunes-style ©nam, ©ART, ©alb, ©cmt, ©day; the software as ©too,
    /// in place of FFmpeg's own name).
    var mp4: [(String, String)] {
        let all: [(String, String?)] = [("title", title), ("artist", artist), ("album", album), ("comment", comment), ("date", date),
                                        ("encoding_tool", software)]
        return all.compactMap { entry in entry.1.flatMap { $0.isEmpty ? nil : (entry.0, $0) } }
    }
}
